package partition

import (
	"container/list"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
)

// DefaultCompiledPartitionCacheCapacity is the number of compiled
// partitions kept when GDNN_COMPILED_PARTITION_CACHE_CAPACITY is not set.
const DefaultCompiledPartitionCacheCapacity = 1024

// SetCompiledPartitionCacheCapacity sets how many compiled partitions the
// process-wide LRU cache keeps (0 disables it; negative values are an
// error) and returns the previous capacity. Shrinking evicts the least
// recently used entries; a CompiledPartition already handed out stays valid.
func SetCompiledPartitionCacheCapacity(n int) (int, error) {
	if n < 0 {
		return compiledCache.capacity(), status.Errorf(status.InvalidArguments,
			"compiled partition cache capacity %d is negative", n)
	}
	return compiledCache.setCapacity(n), nil
}

// CompiledPartitionCacheCapacity returns the cache's capacity.
func CompiledPartitionCacheCapacity() int { return compiledCache.capacity() }

var compiledCache = newLRU(capacityFromEnv())

// capacityFromEnv reads GDNN_COMPILED_PARTITION_CACHE_CAPACITY; a value
// that is not a non-negative integer is ignored (the default applies).
func capacityFromEnv() int {
	if v, ok := os.LookupEnv("GDNN_COMPILED_PARTITION_CACHE_CAPACITY"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return n
		}
	}
	return DefaultCompiledPartitionCacheCapacity
}

// lru is a mutex-guarded least-recently-used map of compiled partitions.
type lru struct {
	mu    sync.Mutex
	cap   int
	order *list.List // front: most recent; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	key string
	val *CompiledPartition
}

func newLRU(capacity int) *lru {
	return &lru{cap: capacity, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) *CompiledPartition {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry).val
	}
	return nil
}

func (c *lru) put(key string, v *CompiledPartition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cap == 0 {
		return
	}
	if e, ok := c.items[key]; ok {
		e.Value.(*lruEntry).val = v
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key, v})
	c.evict()
}

func (c *lru) evict() {
	for c.order.Len() > c.cap {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.items, e.Value.(*lruEntry).key)
	}
}

func (c *lru) setCapacity(n int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.cap
	c.cap = n
	c.evict()
	return prev
}

func (c *lru) capacity() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cap
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// cacheKey identifies a compilation: the effective ISA, the partition's
// ops (kinds, ids, attributes, tensors) and the tensors given to Compile.
// Every value is written exactly (integers in full, floats by their bits,
// strings quoted): the String methods are for people, and print any
// unknown dim or stride as "?".
func cacheKey(p *Partition, inputs, outputs []graph.LogicalTensor, isa jit.ISA) string {
	var b strings.Builder
	// A compiled partition keeps the kernels of the ISA in force when it
	// was compiled; after jit.SetMaxISA a compile must not reuse them.
	b.WriteString(isa.String() + "|" + strconv.Quote(p.fpmath))
	for _, op := range p.ops {
		b.WriteString("|" + op.String())
		for _, n := range op.AttrNames() {
			a, _ := op.Attr(n)
			b.WriteString(" " + strconv.Quote(n) + "=" + a.Type.String() + ":")
			writeAttrKey(&b, a)
		}
		for _, t := range op.Inputs {
			b.WriteString(" i")
			writeTensorKey(&b, t)
		}
		for _, t := range op.Outputs {
			b.WriteString(" o")
			writeTensorKey(&b, t)
		}
	}
	b.WriteString("||")
	for _, t := range inputs {
		writeTensorKey(&b, t)
	}
	b.WriteString("||")
	for _, t := range outputs {
		writeTensorKey(&b, t)
	}
	return b.String()
}

// writeAttrKey writes a's value exactly.
func writeAttrKey(b *strings.Builder, a graph.Attr) {
	switch a.Type {
	case graph.AttrS64:
		b.WriteString(strconv.FormatInt(a.I, 10))
	case graph.AttrS64s:
		writeIntsKey(b, a.Is)
	case graph.AttrF32:
		b.WriteString(strconv.FormatUint(uint64(math.Float32bits(a.F)), 16))
	case graph.AttrF32s:
		b.WriteByte('[')
		for _, f := range a.Fs {
			b.WriteString(strconv.FormatUint(uint64(math.Float32bits(f)), 16) + ",")
		}
		b.WriteByte(']')
	case graph.AttrBool:
		b.WriteString(strconv.FormatBool(a.B))
	case graph.AttrString:
		b.WriteString(strconv.Quote(a.S))
	}
}

// writeTensorKey writes t's id, type, dims, layout, strides (strided
// layout) and property exactly.
func writeTensorKey(b *strings.Builder, t graph.LogicalTensor) {
	b.WriteString("lt(" + strconv.FormatUint(t.ID, 10) + " " + t.DataType.String() + " ")
	writeIntsKey(b, t.Dims)
	b.WriteString(" " + t.Layout.String())
	if t.Layout == graph.LayoutStrided {
		writeIntsKey(b, t.Strides)
	}
	if t.Layout == graph.LayoutBlocked {
		b.WriteString(strconv.Quote(t.Tag))
	}
	b.WriteString(" " + t.Property.String() + ")")
}

// writeIntsKey writes v in full, telling nil (unknown rank) from empty.
func writeIntsKey(b *strings.Builder, v []int64) {
	if v == nil {
		b.WriteString("nil")
		return
	}
	b.WriteByte('[')
	for _, x := range v {
		b.WriteString(strconv.FormatInt(x, 10) + ",")
	}
	b.WriteByte(']')
}

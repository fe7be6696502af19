package partition

import (
	"container/list"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit"
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
		return compiledCache.capacity(), graph.Errorf(graph.InvalidArguments,
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
func cacheKey(p *Partition, inputs, outputs []graph.LogicalTensor) string {
	var b strings.Builder
	// A compiled partition keeps the kernels of the ISA in force when it
	// was compiled; after jit.SetMaxISA a compile must not reuse them.
	b.WriteString(jit.EffectiveISA().String() + "|" + p.fpmath)
	for _, op := range p.ops {
		b.WriteString("|" + op.String())
		for _, n := range op.AttrNames() {
			a, _ := op.Attr(n)
			b.WriteString(" " + n + "=" + a.Type.String() + ":" + a.String())
		}
		for _, t := range op.Inputs {
			b.WriteString(" i" + t.String())
		}
		for _, t := range op.Outputs {
			b.WriteString(" o" + t.String())
		}
	}
	b.WriteString("||")
	for _, t := range inputs {
		b.WriteString(t.String())
	}
	b.WriteString("||")
	for _, t := range outputs {
		b.WriteString(t.String())
	}
	return b.String()
}

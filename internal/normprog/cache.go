package normprog

import (
	"container/list"
	"encoding/binary"
	"math"
	"sync"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
)

// cacheCap bounds the compiled problems Cached keeps: a framework calls a
// few shapes over and over, and each entry holds kernel names (the
// passes' machine code is the kernel cache's) or a fused kernel's own
// code, a page or two.
const cacheCap = 256

// cache keeps Execs by their problem and ISA, least recently used
// dropped first.
var cache = struct {
	sync.Mutex
	byKey map[string]*list.Element
	order list.List // front: most recently used
}{byKey: map[string]*list.Element{}}

type cached struct {
	key string
	e   *Exec
}

// Cached is New for callers that run the same problems again and again
// (package reduce's one-call functions): a problem compiled before, for
// the ISA in effect now, comes back without compiling again. Refusals
// are not kept.
func Cached(p *norm.Problem) (*Exec, error) {
	// The key is spelled on the stack and looked up without a string of
	// its own: a hit, the call a framework repeats, allocates nothing.
	var kb [256]byte
	isa, stamp := jit.ISAStamp()
	key := appendProblemKey(kb[:0], p, isa)
	cache.Lock()
	if el, ok := cache.byKey[string(key)]; ok {
		cache.order.MoveToFront(el)
		e := el.Value.(*cached).e
		cache.Unlock()
		return e, nil
	}
	cache.Unlock()
	// The caller's problem may live in its scratch: what is kept is a
	// copy.
	e, err := New(p.Clone(), nil)
	if err != nil {
		return nil, err
	}
	if jit.CapStamp() != stamp {
		return e, nil // compiled under another cap than the key's: not kept (jit.ISAStamp)
	}
	cache.Lock()
	defer cache.Unlock()
	if _, ok := cache.byKey[string(key)]; !ok {
		k := string(key)
		cache.byKey[k] = cache.order.PushFront(&cached{k, e})
		for cache.order.Len() > cacheCap {
			old := cache.order.Back()
			cache.order.Remove(old)
			delete(cache.byKey, old.Value.(*cached).key)
		}
	}
	return e, nil
}

// appendProblemKey appends to b the spelling of every field of p that a
// program depends on, and of the ISA it is compiled for.
func appendProblemKey(b []byte, p *norm.Problem, isa jit.ISA) []byte {
	put := func(v int64) { b = binary.AppendVarint(b, v) }
	put(int64(isa))
	put(int64(p.Kind))
	put(p.Axis)
	put(p.Groups)
	put(int64(math.Float32bits(p.Eps)))
	if p.InfAsZero {
		put(1)
	} else {
		put(0)
	}
	ints := func(s []int64) {
		put(int64(len(s)))
		for _, v := range s {
			put(v)
		}
	}
	ints(p.Dims)
	for _, o := range [...]*norm.Operand{&p.Src, &p.Dst, &p.Gamma, &p.Beta, &p.Mean, &p.Var, &p.Stats} {
		put(int64(o.DT))
		ints(o.Strides)
	}
	return b
}

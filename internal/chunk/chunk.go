// Package chunk cuts a strided problem into chunks along one kept dim
// and runs the chunks on jit's pool of goroutines, for the programs of
// compiled kernels (internal/normprog, internal/preop) whose passes over
// one chunk stay in a core's cache. Chunks depend on the problem alone and
// each runs whole on one goroutine, so results do not depend on the
// thread count.
package chunk

import (
	"sync"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/plan"
)

// Cut is how a problem is cut: Dim's iterations in chunks of Size, N
// chunks (the last may be shorter); Dim -1 is one chunk of everything.
type Cut struct {
	Dim  int
	Size int64
	N    int64
}

// Choose cuts a kept dim of size > 1 (one that kept accepts) into chunks
// of about budget bytes, an element costing elemBytes: the one with the
// largest stride (the outermost in memory), unless one of its
// iterations alone is over the budget. Then a chunk of it would not
// stay in a core's cache, and the few large chunks would share out
// badly over threads (GroupNorm's images, each of its groups a row):
// the dim whose iterations are the smallest is cut instead, the
// outermost of those within the budget if there are any, so long as
// its elements lie at least minCutStride bytes apart. Nearer ones would
// have every chunk read pieces of every cache line.
func Choose(dims, strides []int64, kept func(int) bool, elemBytes, budget int64) Cut {
	// per is the bytes of one iteration of dim i.
	per := func(i int) int64 {
		b := elemBytes
		for j, n := range dims {
			if j != i {
				b = plan.MulSat(b, n)
			}
		}
		return b
	}
	best := -1
	for i, n := range dims {
		if kept(i) && n > 1 && (best < 0 || strides[i] > strides[best]) {
			best = i
		}
	}
	if best < 0 {
		return Cut{Dim: -1, N: 1}
	}
	if per(best) > budget {
		for i, n := range dims {
			if !kept(i) || n <= 1 || i == best || plan.MulSat(strides[i], elemBytes) < minCutStride {
				continue
			}
			pi, pb := per(i), per(best)
			switch {
			case pi <= budget && pb <= budget:
				if strides[i] > strides[best] {
					best = i
				}
			case pi < pb:
				best = i
			}
		}
	}
	c := max(1, budget/max(per(best), 1))
	if c >= dims[best] {
		return Cut{Dim: -1, N: 1}
	}
	return Cut{Dim: best, Size: c, N: (dims[best] + c - 1) / c}
}

// minCutStride is the least distance in bytes between the elements of a
// dim Choose cuts in place of the outermost: a page.
const minCutStride = 4 << 10

// Start is chunk c's first iteration of the cut dim.
func (ct Cut) Start(c int64) int64 {
	if ct.Dim < 0 {
		return 0
	}
	return c * ct.Size
}

// Run calls f(s, c) for every chunk c on up to threads goroutines (the
// caller and jit's pool workers); the first error stops the others
// before their next chunk and is returned. Each goroutine takes what it
// keeps between its chunks (its scratch, which f may replace through s)
// from kept, a zero S when kept has none left, and puts it back after:
// taken from a Stash, not made by a function of the caller's, so that a
// Run allocates a fixed few objects whatever its chunks.
//
// f goes to the heap with the pool's job, and with it whatever it refers
// to; a caller whose run needs one thread (ct.Threads(threads) is 1) can
// call Serial instead, which keeps neither.
func Run[S any](ct Cut, threads int, kept *Stash[S], f func(s *S, c int64) error) error {
	threads = ct.Threads(threads)
	held := make([]*S, threads)
	err := jit.Parallel(threads, ct.N, func(w int, c int64) error {
		if held[w] == nil {
			held[w] = kept.Get()
		}
		return f(held[w], c)
	})
	for _, s := range held {
		if s != nil {
			kept.Put(s)
		}
	}
	return err
}

// Threads is how many of threads a Run of ct uses: no more than its
// chunks, and at least one.
func (ct Cut) Threads(threads int) int {
	return int(min(int64(max(threads, 1)), max(ct.N, 1)))
}

// Serial is Run on the calling goroutine alone, with one item from kept.
// It keeps neither f nor what f refers to, so that a caller's closure
// for it, and the variables the closure refers to, stay on the caller's
// stack: a run of one thread allocates nothing for its hand-off.
func Serial[S any](ct Cut, kept *Stash[S], f func(s *S, c int64) error) error {
	s := kept.Get()
	err := jit.Serial(ct.N, func(_ int, c int64) error { return f(s, c) })
	kept.Put(s)
	return err
}

// Stash keeps what Run's goroutines used (their scratch) for the next
// Run. Unlike a sync.Pool it never drops an item, and any goroutine
// takes any item: a Pool keeps an item put by a goroutine on one P
// where a goroutine on another P cannot take it, and the scratch would
// be allocated again on many Runs. It holds at most as many items as
// Runs ever used at once, each by pointer, so that a Run hands out what
// it took without a copy to the heap. The zero Stash is empty and ready.
type Stash[S any] struct {
	mu    sync.Mutex
	items []*S
}

// Get returns a kept item, or a new zero S when none is left.
func (s *Stash[S]) Get() *S {
	s.mu.Lock()
	n := len(s.items)
	if n == 0 {
		s.mu.Unlock()
		return new(S)
	}
	it := s.items[n-1]
	s.items[n-1] = nil
	s.items = s.items[:n-1]
	s.mu.Unlock()
	return it
}

// Put keeps it for a later Get.
func (s *Stash[S]) Put(it *S) {
	s.mu.Lock()
	s.items = append(s.items, it)
	s.mu.Unlock()
}

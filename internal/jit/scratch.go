package jit

import (
	"math/bits"
	"sync"
)

// Scratch buffers hold the f32 partial sums of two-stage reductions. They
// are pooled by power-of-two size class so that repeated Runs do not
// allocate; buffers above maxPooled are left to the GC instead of being
// kept, which bounds what the pool can hold on to.
const maxPooled = 64 << 20

var scratchPools [64]sync.Pool

// sizeClass returns the power-of-two class of n bytes.
func sizeClass(n int64) int {
	if n <= 1 {
		return 0
	}
	return bits.Len64(uint64(n - 1))
}

// getScratch returns a buffer of n bytes (its contents are garbage: every
// partial is written by stage 1 before stage 2 reads it) and the pool's
// handle on it, for putScratch (nil for a buffer too big to pool). The
// handle travels with the buffer so that returning it allocates nothing.
func getScratch(n int64) ([]byte, *[]byte) {
	if n > maxPooled {
		return make([]byte, n), nil
	}
	c := sizeClass(n)
	if p, ok := scratchPools[c].Get().(*[]byte); ok {
		return (*p)[:n], p
	}
	b := make([]byte, int64(1)<<c)
	return b[:n], &b
}

// putScratch returns the buffer behind handle h to its pool (nil: a
// buffer that is not pooled, or no buffer).
func putScratch(h *[]byte) {
	if h == nil {
		return
	}
	scratchPools[sizeClass(int64(cap(*h)))].Put(h)
}

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
// partial is written by stage 1 before stage 2 reads it).
func getScratch(n int64) []byte {
	if n > maxPooled {
		return make([]byte, n)
	}
	c := sizeClass(n)
	if p, ok := scratchPools[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, int64(1)<<c)
}

// putScratch returns b to its pool.
func putScratch(b []byte) {
	if cap(b) > maxPooled || cap(b) == 0 {
		return
	}
	c := sizeClass(int64(cap(b)))
	if int64(1)<<c != int64(cap(b)) {
		return // not one of ours
	}
	b = b[:cap(b)]
	scratchPools[c].Put(&b)
}

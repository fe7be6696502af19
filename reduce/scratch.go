package reduce

import "github.com/gdnn/gdnn/internal/norm"

// callInts hands out the small int64 slices (dims, strides) a call's
// descriptions are made of from one array, which stays on the call's
// stack as long as nothing keeps them: the caches that keep a
// description keep a copy. A call a framework repeats then allocates
// none of them. Past its capacity it allocates.
type callInts struct {
	buf [12 * norm.MaxRank]int64
	n   int
}

// make returns n int64 zeros.
func (a *callInts) make(n int) []int64 {
	if a.n+n > len(a.buf) {
		return make([]int64, n)
	}
	s := a.buf[a.n : a.n+n : a.n+n]
	a.n += n
	return s
}

// dense is the dense row-major strides of dims, with extra 0s after
// them.
func (a *callInts) dense(dims []int64, extra int) []int64 {
	return denseStridesInto(a.make(len(dims)+extra), dims)
}

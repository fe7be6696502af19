package plan

import "github.com/gdnn/gdnn/dtypes"

// dense returns row-major strides for dims.
func dense(dims ...int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

// keptDims returns dims with reduced ones set to 1 (the dst view).
func keptDims(dims []int64, red []bool) []int64 {
	out := append([]int64(nil), dims...)
	for i, r := range red {
		if r {
			out[i] = 1
		}
	}
	return out
}

// axes returns reduce flags for rank with the listed axes set.
func axes(rank int, ax ...int) []bool {
	r := make([]bool, rank)
	for _, a := range ax {
		r[a] = true
	}
	return r
}

// plain builds an f32 problem with dense src and dense dst view.
func plain(dims []int64, ax ...int) *Problem {
	red := axes(len(dims), ax...)
	return &Problem{
		SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: dims, SrcStrides: dense(dims...), Reduce: red,
		DstStrides: dense(keptDims(dims, red)...),
	}
}

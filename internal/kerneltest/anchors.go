package kerneltest

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// Anchor is one of the perf anchor shapes of shared/anchors
// (run_all.sh): a dense row-major src of Dims with Axes reduced.
type Anchor struct {
	Name string
	Dims []int64
	Axes []int
}

// Anchors are the shapes A-I that docs/PERFORMANCE.md reports on.
var Anchors = []Anchor{
	{"A", []int64{6, 12, 10, 24}, []int{2, 3}},
	{"B", []int64{64, 1024}, []int{1}},
	{"C", []int64{1024, 4096}, []int{1}},
	{"D", []int64{1024, 4096}, []int{0}},
	{"E", []int64{32, 256, 56, 56}, []int{2, 3}},
	{"F", []int64{32, 56, 56, 256}, []int{1, 2}},
	{"G", []int64{64, 1048576}, []int{1}},
	{"H", []int64{16777216}, []int{0}},
	{"I", []int64{8, 512, 4096}, []int{1}},
}

// DenseProblem is the problem over dims reducing axes with dense
// row-major src and dst (keep_dims), both of type dt.
func DenseProblem(dims []int64, axes []int, dt dtypes.DataType) *plan.Problem {
	rank := len(dims)
	p := &plan.Problem{SrcDT: dt, DstDT: dt, Dims: dims, SrcStrides: make([]int64, rank),
		Reduce: make([]bool, rank), DstStrides: make([]int64, rank)}
	for _, a := range axes {
		p.Reduce[a] = true
	}
	s, d := int64(1), int64(1)
	for i := rank - 1; i >= 0; i-- {
		p.SrcStrides[i] = s
		s *= dims[i]
		if !p.Reduce[i] {
			p.DstStrides[i] = d
			d *= dims[i]
		}
	}
	return p
}

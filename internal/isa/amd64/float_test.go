package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// ulp returns the spacing of dt's values at 1 (relative precision).
func ulp(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return 0x1p-8
	case dtypes.F16:
		return 0x1p-11
	}
	return 0x1p-24
}

// TestRealisticData checks long reductions of ordinary (inexact) values
// against the float64 reference with a tolerance that is a proof, not a
// guess: the inputs are positive, so any order of f32 additions of N
// terms has relative error at most (N-1)*2^-24 (the recursive-summation
// bound, which covers the kernel's split into independent accumulators);
// the reference's rounding of its float64 sum to f32 and the two true
// divisions add 2^-24 each, and rounding to the dst type half an ulp of
// that type on each side (the JIT's and the reference's): (N+3)*2^-24 +
// one dst ulp, relative.
func TestRealisticData(t *testing.T) {
	tgs := targets(t)
	r := rand.New(rand.NewSource(3))
	shapes := []kerneltest.Anchor{
		{Name: "long rows, odd tail", Dims: []int64{3, 100003}, Axes: []int{1}},
		{Name: "tall, narrow Inner (flat fold)", Dims: []int64{20000, 7}, Axes: []int{0}},
		{Name: "two reduced loops around a kept one", Dims: []int64{100, 50, 37}, Axes: []int{0, 2}},
		{Name: "anchor A", Dims: []int64{6, 12, 10, 24}, Axes: []int{2, 3}},
		{Name: "column with a tail block", Dims: []int64{257, 300}, Axes: []int{0}},
	}
	kerneltest.CheckRealisticData(t, tgs, r, shapes, dtPairs, func(pl *plan.Plan, dt dtypes.DataType) float64 {
		return float64(pl.N+3)*0x1p-24 + ulp(dt)
	})
}

package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// unitULP is the spacing of dt's values just above 1.
func unitULP(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return 0x1p-7
	case dtypes.F16:
		return 0x1p-10
	}
	return 0x1p-23
}

// TestRealisticData checks long reductions of ordinary (inexact) values
// in [0.5, 1.5) against the float64 reference with a tolerance that is a
// bound, not a guess: the inputs are positive, so any order of f32
// additions of N terms (the kernel's split into independent
// accumulators included) has relative error at most (N-1)*2^-24; the
// reference's rounding of its exact sum to f32 and the two f32 divisions
// add 2^-24 each; rounding to the dst type costs half a dst ulp on each
// side (the kernel's and the reference's), at most one unit ulp of
// relative error together.
func TestRealisticData(t *testing.T) {
	tgs := targets(t)
	r := rand.New(rand.NewSource(3))
	shapes := []kerneltest.Anchor{
		{Name: "long rows, odd tail", Dims: []int64{3, 20011}, Axes: []int{1}},
		{Name: "tall, narrow Inner (flat fold)", Dims: []int64{5000, 2}, Axes: []int{0}},
		{Name: "two reduced loops around a kept one", Dims: []int64{60, 30, 37}, Axes: []int{0, 2}},
		{Name: "grouped rows", Dims: []int64{6, 12, 10, 24}, Axes: []int{2, 3}},
		{Name: "column with a tail block", Dims: []int64{257, 131}, Axes: []int{0}},
	}
	kerneltest.CheckRealisticData(t, tgs, r, shapes, pairs, func(pl *plan.Plan, dt dtypes.DataType) float64 {
		return float64(pl.N+2)*0x1p-24 + unitULP(dt)
	})
}

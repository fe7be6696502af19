package arm64

import (
	"math"
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
	needARM64(t)
	r := rand.New(rand.NewSource(3))
	cases := []struct {
		dims []int64
		axes []int
	}{
		{[]int64{3, 20011}, []int{1}},         // long rows, odd tail
		{[]int64{5000, 2}, []int{0}},          // tall, narrow Inner (flat fold)
		{[]int64{60, 30, 37}, []int{0, 2}},    // two reduced loops around a kept one
		{[]int64{6, 12, 10, 24}, []int{2, 3}}, // grouped rows
		{[]int64{257, 131}, []int{0}},         // column with a tail block
	}
	for _, c := range cases {
		for _, pr := range pairs {
			p := kerneltest.DenseProblem(c.dims, c.axes, pr[0])
			p.DstDT = pr[1]
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			src, dst0 := make([]byte, sb), make([]byte, db)
			for i := int64(0); i < sb/int64(p.SrcDT.Size()); i++ {
				dtypes.StoreF32(p.SrcDT, src, i, 0.5+r.Float32())
			}
			want, outs := refResult(p, src, dst0, nil)
			tol := float64(pl.N+2)*0x1p-24 + unitULP(p.DstDT)
			k := compile(t, pl)
			got := append([]byte(nil), dst0...)
			k.RunBlocks(pl, src, got, nil, 0)
			k.Release()
			for i := range outs {
				g, w := float64(dtypes.LoadF32(p.DstDT, got, i)), float64(dtypes.LoadF32(p.DstDT, want, i))
				if math.Abs(g-w) > tol*math.Abs(w) {
					t.Fatalf("%v %v %v: dst[%d] = %v, want %v (relative tolerance %.3g)", c.dims, c.axes, pr, i, g, w, tol)
				}
			}
		}
	}
}

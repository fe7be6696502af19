package amd64

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// fillUniform fills a buffer of dt with values uniform in [0.5, 1.5), the
// anchors' input distribution.
func fillUniform(r *rand.Rand, dt dtypes.DataType, b []byte) {
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		dtypes.StoreF32(dt, b, i, 0.5+r.Float32())
	}
}

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
	isaList := isas(t)
	r := rand.New(rand.NewSource(3))
	shapes := []struct {
		dims []int64
		axes []int
	}{
		{[]int64{3, 100003}, []int{1}},        // long rows, odd tail
		{[]int64{20000, 7}, []int{0}},         // tall, narrow Inner (flat fold)
		{[]int64{100, 50, 37}, []int{0, 2}},   // two reduced loops around a kept one
		{[]int64{6, 12, 10, 24}, []int{2, 3}}, // anchor A
		{[]int64{257, 300}, []int{0}},         // column with a tail block
	}
	for _, s := range shapes {
		for _, pair := range dtPairs {
			p := kerneltest.DenseProblem(s.dims, s.axes, pair[0])
			p.DstDT = pair[1]
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			src, dst0 := make([]byte, sb), make([]byte, db)
			fillUniform(r, p.SrcDT, src)
			want, written := reference(p, src, dst0, nil)
			tol := float64(pl.N+3)*0x1p-24 + ulp(p.DstDT)
			for _, isa := range isaList {
				k := compile(t, pl, isa.o)
				got := append([]byte(nil), dst0...)
				k.RunBlocks(pl, src, got, nil, 0)
				k.Release()
				for i := range written {
					g, w := float64(dtypes.LoadF32(p.DstDT, got, i)), float64(dtypes.LoadF32(p.DstDT, want, i))
					if math.Abs(g-w) > tol*math.Abs(w) {
						t.Fatalf("%s %v %v %v: dst[%d] = %v, want %v (relative tolerance %.3g)",
							isa.name, s.dims, s.axes, pair, i, g, w, tol)
					}
				}
			}
		}
	}
}

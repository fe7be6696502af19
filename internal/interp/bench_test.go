package interp

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkInterp measures f32 means over dense tensors; bytes/s counts
// the src read.
func BenchmarkInterp(b *testing.B) {
	shapes := []struct {
		dims []int64
		axes []int
	}{
		{[]int64{1024, 4096}, []int{1}},
		{[]int64{1024, 4096}, []int{0}},
		{[]int64{32, 256, 56, 56}, []int{2, 3}},
		{[]int64{32, 56, 56, 256}, []int{1, 2}}, // NHWC spatial
		{[]int64{262144, 16}, []int{1}},         // short rows
		{[]int64{1024, 4096}, nil},              // identity copy
	}
	for _, s := range shapes {
		p := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: s.dims, Reduce: make([]bool, len(s.dims))}
		for _, a := range s.axes {
			p.Reduce[a] = true
		}
		p.SrcStrides = denseStrides(s.dims)
		view := append([]int64(nil), s.dims...)
		for i, r := range p.Reduce {
			if r {
				view[i] = 1
			}
		}
		p.DstStrides = denseStrides(view)
		pl, err := plan.Canonicalize(p)
		if err != nil {
			b.Fatal(err)
		}
		sb, _ := pl.SrcBytes()
		db, _ := pl.DstBytes()
		src, dst := make([]byte, sb), make([]byte, db)
		r := rand.New(rand.NewPCG(1, 1))
		fill(dtypes.F32, src, r.Float32)
		b.Run(fmt.Sprintf("%v_axes%v", s.dims, s.axes), func(b *testing.B) {
			b.SetBytes(sb)
			b.ResetTimer()
			for range b.N {
				if err := Run(pl, src, dst, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// denseStrides returns row-major strides for dims.
func denseStrides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

// BenchmarkInterpF64Pow measures the f64 interpreter's transcendental
// paths over normal data: the Lp norm of p 1.5 (|x|^p of every element,
// the root of every output) and the log-sum-exp (exp of every element,
// the log of every output), rows of 4096 reduced; bytes/s counts the src
// read.
func BenchmarkInterpF64Pow(b *testing.B) {
	for _, red := range []plan.Reduction{plan.AlgNormLpPowerPSum.Reduction(1.5, 0), plan.AlgNormLpMax.Reduction(1.5, 0), plan.LogSumExp} {
		dims := []int64{256, 4096}
		p := &plan.Problem{SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: dims, Reduce: []bool{false, true},
			SrcStrides: denseStrides(dims), DstStrides: []int64{1, 1}, Reduction: red}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			b.Fatal(err)
		}
		sb, _ := pl.SrcBytes()
		db, _ := pl.DstBytes()
		src, dst := make([]byte, sb), make([]byte, db)
		r := rand.New(rand.NewPCG(1, 1))
		for i := range int64(sb / 8) {
			plan.StoreF64(dtypes.F64, src, i, r.NormFloat64())
		}
		b.Run(red.String(), func(b *testing.B) {
			b.SetBytes(sb)
			b.ResetTimer()
			for range b.N {
				if err := Run(pl, src, dst, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

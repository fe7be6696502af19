package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkAnchors times one single-threaded call over the whole plan for
// each anchor shape and data type, JIT (each ISA) beside the interpreter.
// Bytes are src + dst, so MB/s reads as bandwidth.
func BenchmarkAnchors(b *testing.B) {
	kerneltest.BenchAnchors(b, targets(b), "jit-", func(r *rand.Rand, dt dtypes.DataType, src []byte) { fillExact(r, dt, src, false, 1) })
}

// BenchmarkEmit measures code generation (golang-asm dominates) for the
// anchor kernels and reports the code size.
func BenchmarkEmit(b *testing.B) {
	for _, a := range kerneltest.Anchors {
		for _, o := range []Options{{AVX512: true}, {}} {
			for _, alg := range []plan.Alg{plan.AlgMean, plan.AlgMax} {
				name := a.Name + "/avx2"
				if o.AVX512 {
					name = a.Name + "/avx512"
				}
				p := kerneltest.DenseProblem(a.Dims, a.Axes, dtypes.BF16)
				if alg != plan.AlgMean { // the mean keeps its old names
					name += "/" + alg.String()
					p.Reduction = alg.Reduction(0, 0)
				}
				pl, err := plan.Canonicalize(p)
				if err != nil {
					b.Fatal(err)
				}
				emitBench(b, name, pl, o)
			}
		}
	}
}

// emitBench times Emit of pl under o as sub-benchmark name, reporting
// the code's size.
func emitBench(b *testing.B, name string, pl *plan.Plan, o Options) {
	b.Run(name, func(b *testing.B) {
		var n int
		for i := 0; i < b.N; i++ {
			code, err := Emit(pl, o)
			if err != nil {
				b.Fatal(err)
			}
			n = len(code.Text)
		}
		b.ReportMetric(float64(n), "bytes")
	})
}

// BenchmarkInt8Anchors times the issue-24 int8 rows beside f32 of the same
// shape, one single-threaded call of the whole plan per op (a mean to the
// src type): u8 global average pooling (E, F), s8 row means (C, G), an s8
// full reduction (H). Bytes are src + dst.
func BenchmarkInt8Anchors(b *testing.B) {
	tgs := targets(b)
	rows := []struct {
		name string
		dt   dtypes.DataType
	}{{"E", dtypes.U8}, {"F", dtypes.U8}, {"C", dtypes.S8}, {"G", dtypes.S8}, {"H", dtypes.S8}}
	for _, row := range rows {
		var a kerneltest.Anchor
		for _, x := range kerneltest.Anchors {
			if x.Name == row.name {
				a = x
			}
		}
		for _, dt := range []dtypes.DataType{row.dt, dtypes.F32} {
			p := kerneltest.DenseProblem(a.Dims, a.Axes, dt)
			p.Reduction = plan.AlgMean.Reduction(0, 0)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				b.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			for _, tg := range tgs {
				b.Run(a.Name+"/"+dt.String()+"/jit-"+tg.Name, func(b *testing.B) {
					src, dst := make([]byte, sb), make([]byte, db)
					fillExact(rand.New(rand.NewSource(1)), dt, src, false, 1)
					kerneltest.BenchKernel(b, tg, pl, src, dst)
				})
			}
		}
	}
}

package amd64

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/cpubench"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
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

// BenchmarkF64PostOps times an f64 sum with post-ops (Add of an f64
// operand, one element per output, then ReLU), by row ([64,1024] over
// its last dim, in cache; [512,2048] from DRAM) and by column
// ([1024,64] over its first, in cache), the native kernel of each ISA
// beside the interpreter, with the process's CPU time (cpubench.Loop).
// Bytes are src + dst + operand.
func BenchmarkF64PostOps(b *testing.B) {
	post := []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F64, BinStrides: []int64{1, 0}}, {Kind: ops.ReLU}}
	for _, c := range []struct {
		name   string
		dims   []int64
		reduce []bool
		ds     []int64
		bs     []int64
	}{
		{"row", []int64{64, 1024}, []bool{false, true}, []int64{1, 0}, []int64{1, 0}},
		{"row-dram", []int64{512, 2048}, []bool{false, true}, []int64{1, 0}, []int64{1, 0}},
		{"column", []int64{1024, 64}, []bool{true, false}, []int64{0, 1}, []int64{0, 1}},
	} {
		postOps := append([]plan.PostOp(nil), post...)
		postOps[0].BinStrides = c.bs
		p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: c.dims,
			SrcStrides: []int64{c.dims[1], 1}, Reduce: c.reduce, DstStrides: c.ds, PostOps: postOps}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewSource(1))
		src, dst, bins := kerneltest.Buffers(b, p, 0,
			func(_ dtypes.DataType, s []byte) { kerneltest.FillWideGrid(r, s, false) },
			func(dt dtypes.DataType, s []byte) { kerneltest.FillWide(r, dt, s, false) })
		bytes := int64(len(src) + len(dst) + len(bins[0]))
		for _, tg := range targets(b) {
			b.Run("shape="+c.name+"/impl="+tg.Name, func(b *testing.B) {
				k := tg.Compile(b, pl)
				defer k.Release()
				b.SetBytes(bytes)
				cpubench.Loop(b, func() error {
					k.RunBlocks(pl, src, dst, bins, 0)
					return nil
				})
			})
		}
		b.Run("shape="+c.name+"/impl=interp", func(b *testing.B) {
			b.SetBytes(bytes)
			cpubench.Loop(b, func() error { return interp.Run(pl, src, dst, bins) })
		})
	}
}

// BenchmarkF64ExpLog times the f64 Exp and Log post-ops after the max
// of each pair of 16384 pairs of f64 (in cache), into f64: by row
// ([16384,2] over its last dim: the post-op on one output at a time)
// and by column ([2,16384] over its first: on a vector of outputs), the
// native kernel of AVX-512 and AVX2 beside the interpreter, with the
// process's CPU time (cpubench.Loop). Bytes are src + dst.
func BenchmarkF64ExpLog(b *testing.B) {
	for _, c := range []struct {
		shape string
		kind  ops.Kind
	}{{"row", ops.Exp}, {"row", ops.Log}, {"column", ops.Exp}, {"column", ops.Log}} {
		kind := c.kind
		p := &plan.Problem{Reduction: plan.AlgMax.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
			Dims: []int64{16384, 2}, SrcStrides: []int64{2, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0},
			PostOps: []plan.PostOp{{Kind: kind}}}
		if c.shape == "column" {
			p.Dims, p.SrcStrides, p.Reduce, p.DstStrides = []int64{2, 16384}, []int64{16384, 1}, []bool{true, false}, []int64{0, 1}
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewSource(1))
		src, dst, _ := kerneltest.Buffers(b, p, 0, func(_ dtypes.DataType, s []byte) { kerneltest.FillWideGrid(r, s, false) }, nil)
		if kind == ops.Log {
			// Positive inputs: the log's arithmetic, not its NaN lanes.
			for i := int64(0); i < int64(len(src)/8); i++ {
				plan.StoreF64(dtypes.F64, src, i, math.Abs(plan.LoadF64(dtypes.F64, src, i))+0.5)
			}
		}
		bytes := int64(len(src) + len(dst))
		for _, tg := range targets(b) {
			if tg.Name == "avx512bf16" {
				continue // the same f64 code as avx512
			}
			b.Run("shape="+c.shape+"/op="+kind.String()+"/impl="+tg.Name, func(b *testing.B) {
				k := tg.Compile(b, pl)
				defer k.Release()
				b.SetBytes(bytes)
				cpubench.Loop(b, func() error {
					k.RunBlocks(pl, src, dst, nil, 0)
					return nil
				})
			})
		}
		b.Run("shape="+c.shape+"/op="+kind.String()+"/impl=interp", func(b *testing.B) {
			b.SetBytes(bytes)
			cpubench.Loop(b, func() error { return interp.Run(pl, src, dst, nil) })
		})
	}
}

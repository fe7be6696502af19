package jit

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestNormKernelRowsStageExps: softmax rows not held in registers whose
// dst is 16-bit, or f32 and streamed, keep their exps in the call's
// scratch (the kernel is staged) where a row fits plan.NormStageBytes;
// past it a 16-bit dst's map computes them again and a streamed f32 dst
// keeps them in dst, streaming nothing. Either way each element is the
// regular f32-dst kernel's value (rounded to a 16-bit dst's type), bit
// for bit, and within the float64 reference's tolerance: rows with
// tails, all -Inf rows (with and without inf_as_zero), -Inf and NaN
// elements, rows apart, a post-op with a per-row operand, f32 and bf16
// src, the tensors next to guard pages, on every JIT ISA this machine
// runs (NEON streams nothing, so stages nothing for f32). A row held in
// registers (13 elements) stages nothing. Under GDNN_TEST_OUTPUTS=f32
// only the streamed f32 dst runs.
func TestNormKernelRowsStageExps(t *testing.T) {
	t.Logf("ISAs: %v", argISAs())
	for _, isa := range argISAs() {
		prev := SetMaxISA(isa)
		r := rand.New(rand.NewPCG(17, uint64(isa)))
		for _, c := range []struct {
			n      int64
			staged bool
		}{{13, false}, {161, true}, {203, true}, {1000, true}, {4096, true}, {4100, false}, {5003, false}} {
			for _, dst := range []dtypes.DataType{dtypes.BF16, dtypes.F16, dtypes.F32} {
				if kerneltest.OutputDT(dst) != dst {
					continue
				}
				src := []dtypes.DataType{dtypes.F32, dtypes.BF16}[r.IntN(2)]
				ic := interleaveCase{kind: kernelshape.NormSoftmax, infAsZero: r.IntN(2) == 0, n: c.n, rows: []int64{5},
					gap: int64(r.IntN(2) * 3), src: src, dst: dst, withPostOp: r.IntN(2) == 0}
				staged := c.staged
				if dst == dtypes.F32 {
					// Rows a whole number of vectors apart, so that the
					// streamed code runs (jit.streamAlign).
					ic.gap = (16 - c.n%16) % 16
					staged = staged && isa != NEON
				}
				checkStagedRows(t, isa, ic, staged, r)
			}
		}
		SetMaxISA(prev)
	}
}

// checkStagedRows runs c (a softmax into a 16-bit dst, or into f32
// streamed) and the same problem into f32, regular, and checks what
// TestNormKernelRowsStageExps says.
func checkStagedRows(t *testing.T, isa ISA, c interleaveCase, staged bool, r *rand.Rand) {
	t.Helper()
	name := fmt.Sprintf("%v %v: inf_as_zero=%v n=%d gap=%d %v:%v post=%v", isa, runtime.GOARCH, c.infAsZero, c.n, c.gap, c.src, c.dst, c.withPostOp)
	wide := c
	wide.dst = dtypes.F32
	pl, l := c.plan(t)
	wpl, _ := wide.plan(t)
	nrows := c.rows[0]
	span := l.span()
	// dst ends at a guard page and starts a whole number of vectors
	// before it: aligned for the streamed code.
	dstLen := (span + 15) / 16 * 16
	src := make([]byte, span*int64(c.src.Size()))
	x := make([][]float64, nrows)
	for i := range nrows {
		x[i] = make([]float64, c.n)
		for j := range c.n {
			v := float32(r.Float64()*40 - 20)
			switch {
			case i == 1, i == 2 && j == c.n/2:
				v = float32(math.Inf(-1))
			case i == 4 && j == c.n-1:
				v = float32(math.NaN())
			}
			dtypes.StoreF32(c.src, src, l.off(i)+j, v)
			x[i][j] = float64(dtypes.LoadF32(c.src, src, l.off(i)+j))
		}
	}
	var bias []byte
	if c.withPostOp {
		bias = make([]byte, span*4) // read at the rows' starts
		for i := range nrows {
			dtypes.StoreF32(dtypes.F32, bias, l.off(i), float32(r.Float64()-0.5))
		}
	}
	run := func(n *kernelshape.Norm, dt dtypes.DataType, wantStaged bool) []byte {
		k, why, err := CompileNorm(n)
		if err != nil || k == nil {
			t.Fatalf("%s: %v %s", name, err, why)
		}
		if k.staged != wantStaged {
			t.Fatalf("%s into %v: staged %v, want %v", name, dt, k.staged, wantStaged)
		}
		if n.StreamDst && isa != NEON && k.streamed == nil && wantStaged {
			t.Fatalf("%s: no streamed code", name)
		}
		f := kerneltest.NewFence(t, true)
		defer f.Free()
		dst := f.Place(make([]byte, dstLen*int64(dt.Size())))
		var bins [][]byte
		if bias != nil {
			bins = [][]byte{f.Place(bias)}
		}
		if err := k.Run(f.Place(src), dst, bins, 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return append([]byte(nil), dst...)
	}
	stream := c.dst == dtypes.F32
	got := run(&kernelshape.Norm{Kind: c.kind, Plan: pl, InfAsZero: c.infAsZero, StreamDst: stream}, c.dst, staged)
	f32 := run(&kernelshape.Norm{Kind: c.kind, Plan: wpl, InfAsZero: c.infAsZero}, dtypes.F32, false)
	want := make([]byte, len(got))
	for i := range span {
		dtypes.StoreF32(c.dst, want, i, dtypes.LoadF32(dtypes.F32, f32, i))
	}
	for i := range nrows {
		row := l.off(i)
		size := int64(c.dst.Size())
		if !bytes.Equal(got[row*size:(row+c.n)*size], want[row*size:(row+c.n)*size]) {
			for j := range c.n {
				if g, w := dtypes.LoadF32(c.dst, got, row+j), dtypes.LoadF32(c.dst, want, row+j); math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("%s: row %d element %d is %v, the f32 kernel's rounded %v", name, i, j, g, w)
				}
			}
		}
		b := 0.0
		if c.withPostOp {
			b = float64(dtypes.LoadF32(dtypes.F32, bias, row))
		}
		for j, w := range softmaxRef(c.kind, c.infAsZero, x[i]) {
			if c.withPostOp {
				w = math.Max(w+b, 0)
			}
			g := float64(dtypes.LoadF32(c.dst, got, row+int64(j)))
			tol := 1e-5*(math.Abs(w)+1) + math.Abs(w)*map[dtypes.DataType]float64{dtypes.F32: 0, dtypes.BF16: 1.0 / 128, dtypes.F16: 1.0 / 1024}[c.dst]
			if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) && math.Abs(g-w) > tol {
				t.Fatalf("%s: row %d element %d is %v, want %v", name, i, j, g, w)
			}
		}
	}
}

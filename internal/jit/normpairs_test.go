package jit

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// statPairCase is a layer, RMS or Lp norm problem for
// TestNormKernelStatRowPairs: rows (outer dims) of n elements, gap
// elements between rows, a per-element gamma and beta (Multiply, Add)
// after the normalization where affine, a residual sum x + skip formed
// into src before it where residual, a layer norm's mean and variance
// kept where stats.
type statPairCase struct {
	kind                    kernelshape.NormKind
	n, gap                  int64
	rows                    []int64
	src, dst                dtypes.DataType
	affine, residual, stats bool
	shared                  bool // the residual sums' rows share one row of src
	prefetch                bool // rows from memory (kernelshape.Norm.PrefetchRows)
	epsArg, epsAdded        bool
}

// TestNormKernelStatRowPairs: the kernel that takes layer norm, RMS norm
// and L1/L2 norm rows two at a time (rows not held in registers of at
// most 64 vectors, kernelshape's normSweptPairs) gives the one-row
// kernel's bits (kernelshape.Norm.OneRow) in dst, in the residual sum it
// writes to src and in the kept mean and variance, and values within
// the float64 reference's bound: row counts 1, 2, 3, 5 and 2x3 (an odd
// last row in a counted loop and in a fixed inner one; -short: 1, 2, 3
// and 2x3, and fewer row lengths), rows apart,
// every float type pair, gamma and beta, a residual sum (into src's rows
// or into one row they share, which keeps rows one at a time), data of mean
// 100 and spread 1 for the layer norm; tensors next to guard pages, at
// one and two threads. It checks that the rows are interleaved where
// they fit and not where they are longer, the eps is a run-time one or
// the rows are read from memory,
// on every JIT ISA this machine runs.
func TestNormKernelStatRowPairs(t *testing.T) {
	t.Logf("ISAs: %v", argISAs())
	dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.BF16}, {dtypes.BF16, dtypes.F16}}
	layouts := [][]int64{{1}, {2}, {3}, {5}, {2, 3}}
	kinds := []kernelshape.NormKind{kernelshape.NormLayer, kernelshape.NormRMS, kernelshape.NormL2, kernelshape.NormL1}
	lengths := []int64{1, 3, 16, 17, 100, 161, 768, 1025}
	if testing.Short() {
		// The AVX-512 stage (under Bochs on a CPU without AVX-512) and
		// the arm64 one under qemu: no pair, a pair, a pair and one
		// left, two nested loops; rows of a tail only, with a tail,
		// and of more than 64 vectors everywhere.
		layouts = [][]int64{{1}, {2}, {3}, {2, 3}}
		lengths = []int64{3, 17, 161, 1025}
	}
	lanes := map[ISA]int64{AVX512: 16, AVX2: 8, NEON: 4}
	for _, isa := range argISAs() {
		prev := SetMaxISA(isa)
		r := rand.New(rand.NewPCG(13, uint64(isa)))
		for _, n := range lengths {
			for _, rows := range layouts {
				for _, kind := range kinds {
					dt := dts[r.IntN(len(dts))]
					dt[1] = kerneltest.OutputDT(dt[1]) // f32 under GDNN_TEST_OUTPUTS=f32
					norm := kind == kernelshape.NormLayer || kind == kernelshape.NormRMS
					c := statPairCase{kind: kind, n: n, gap: int64(r.IntN(2) * 5), rows: rows, src: dt[0], dst: dt[1],
						affine: r.IntN(2) == 0, residual: norm && r.IntN(3) == 0, stats: kind == kernelshape.NormLayer && r.IntN(2) == 0,
						epsArg: r.IntN(6) == 0, epsAdded: !norm && r.IntN(2) == 0}
					c.shared = c.residual && r.IntN(2) == 0
					c.prefetch = r.IntN(5) == 0
					differs := checkStatPairs(t, isa, c, r)
					inner := rows[len(rows)-1]
					want := inner >= 2 && (n+lanes[isa]-1)/lanes[isa] <= 64 && !c.epsArg && !c.shared && !c.prefetch
					if differs != want {
						t.Errorf("%v %+v: rows interleaved %v, want %v", isa, c, differs, want)
					}
				}
			}
		}
		SetMaxISA(prev)
	}
}

// checkStatPairs runs case c through the default kernel and the one-row
// one, at one and two threads, compares them bit for bit and with the
// float64 reference, and reports whether the default kernel's code
// differs (interleaves rows).
func checkStatPairs(t *testing.T, isa ISA, c statPairCase, r *rand.Rand) bool {
	t.Helper()
	name := fmt.Sprintf("%v %+v", isa, c)
	l := newRowsLayout(c.rows, c.n, c.gap)
	rank := len(l.dims)
	nrows, off, span := l.nrows, l.off, l.span()
	along := make([]int64, rank) // per element of a row
	along[rank-1] = 1
	var post []plan.PostOp
	var rowSteps []int64 // the operands' steps along the row
	nres := 0
	if c.residual {
		add := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: l.str}
		post, rowSteps, nres = []plan.PostOp{add, add}, []int64{1, 1}, 2
	}
	if c.affine {
		post = append(post, plan.PostOp{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: along}, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: along})
		rowSteps = append(rowSteps, 1, 1)
	}
	if c.stats {
		stat := plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: l.alongRows()}
		post = append(post, stat, stat)
		rowSteps = append(rowSteps, 0, 0)
	}
	red := make([]bool, rank)
	red[rank-1] = true
	pl := rowsPlan(t, &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: c.src, DstDT: c.dst,
		Dims: l.dims, SrcStrides: l.str, Reduce: red, DstStrides: l.str, PostOps: post}, rowSteps)
	srcRows := span
	if c.shared {
		// As package normprog has a sum nobody keeps: one row of
		// scratch, which every row reuses.
		for i := range pl.Outer {
			pl.Outer[i].SrcStride = 0
		}
		srcRows = c.n
	}
	const eps = 1e-3
	mk := func(one bool) *kernelshape.Norm {
		return &kernelshape.Norm{Kind: c.kind, Plan: pl, Epsilon: eps, EpsArg: c.epsArg, EpsAdded: c.epsAdded, Residual: nres,
			KeepMean: c.stats, KeepVar: c.stats, PrefetchRows: c.prefetch, OneRow: one}
	}
	both, one := mk(false), mk(true)
	differs := !bytes.Equal(normCode(t, both, isa), normCode(t, one, isa))

	// x: the layer norm's of mean 100 and spread 1, the others' in
	// [-4, 4); with a residual sum, x and skip are f32 operands whose
	// sum goes to src.
	val := func() float32 {
		if c.kind == kernelshape.NormLayer {
			return float32(100 + r.Float64()*2 - 1)
		}
		return float32(r.Float64()*8 - 4)
	}
	src := make([]byte, srcRows*int64(c.src.Size()))
	var bins [][]byte
	if c.residual {
		x, skip := make([]byte, span*4), make([]byte, span*4)
		for i := range nrows {
			for j := range c.n {
				dtypes.StoreF32(dtypes.F32, x, off(i)+j, val())
				dtypes.StoreF32(dtypes.F32, skip, off(i)+j, float32(r.Float64()-0.5))
			}
		}
		bins = append(bins, x, skip)
	} else {
		for i := range nrows {
			for j := range c.n {
				dtypes.StoreF32(c.src, src, off(i)+j, val())
			}
		}
	}
	var gamma, beta []byte
	if c.affine {
		gamma, beta = make([]byte, 4*c.n), make([]byte, 4*c.n)
		for j := range c.n {
			dtypes.StoreF32(dtypes.F32, gamma, j, float32(0.5+r.Float64()))
			dtypes.StoreF32(dtypes.F32, beta, j, float32(r.Float64()-0.5))
		}
		bins = append(bins, gamma, beta)
	}
	type out struct{ src, dst, mean, vr []byte }
	run := func(n *kernelshape.Norm, atEnd bool, threads int) out {
		withThreads(t, threads)
		k, why, err := CompileNorm(n)
		if err != nil || k == nil {
			t.Fatalf("%s: %v %s", name, err, why)
		}
		f := kerneltest.NewFence(t, atEnd)
		defer f.Free()
		o := out{src: f.Place(append([]byte(nil), src...)), dst: f.Place(make([]byte, span*int64(c.dst.Size())))}
		fb := f.PlaceEach(bins)
		if c.stats {
			o.mean, o.vr = f.Place(make([]byte, span*4)), f.Place(make([]byte, span*4))
			fb = append(fb, o.mean, o.vr)
		}
		if err := k.Run(o.src, o.dst, fb, eps); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out{append([]byte(nil), o.src...), append([]byte(nil), o.dst...), append([]byte(nil), o.mean...), append([]byte(nil), o.vr...)}
	}
	want := run(one, true, 1)
	for _, atEnd := range []bool{true, false} {
		for _, threads := range []int{1, 2} {
			got := run(both, atEnd, threads)
			for _, b := range []struct {
				what      string
				got, want []byte
			}{{"src", got.src, want.src}, {"dst", got.dst, want.dst}, {"mean", got.mean, want.mean}, {"variance", got.vr, want.vr}} {
				if !bytes.Equal(b.got, b.want) {
					t.Fatalf("%s, at end %v, %d threads: %s differs from the one-row kernel's", name, atEnd, threads, b.what)
				}
			}
		}
	}
	for i := range nrows {
		x := make([]float64, c.n)
		for j := range c.n {
			if !c.residual {
				x[j] = float64(dtypes.LoadF32(c.src, want.src, off(i)+j))
				continue
			}
			// The sum in f32, rounded to src's type: in src's row, or
			// the last row's in the shared one.
			sum := dtypes.LoadF32(dtypes.F32, bins[0], off(i)+j) + dtypes.LoadF32(dtypes.F32, bins[1], off(i)+j)
			rounded := make([]byte, c.src.Size())
			dtypes.StoreF32(c.src, rounded, 0, sum)
			x[j] = float64(dtypes.LoadF32(c.src, rounded, 0))
			at := off(i) + j
			if c.shared {
				if i < nrows-1 {
					continue
				}
				at = j
			}
			if g := float64(dtypes.LoadF32(c.src, want.src, at)); g != x[j] {
				t.Fatalf("%s: row %d's residual sum %d is %v, want %v", name, i, j, g, x[j])
			}
		}
		if c.stats {
			m, v := meanVar(x)
			gm, gv := float64(dtypes.LoadF32(dtypes.F32, want.mean, off(i))), float64(dtypes.LoadF32(dtypes.F32, want.vr, off(i)))
			if math.Abs(gm-m) > 1e-6*math.Abs(m)+1e-6 || math.Abs(gv-v) > 1e-4*v+1e-6 {
				t.Fatalf("%s: row %d's mean and variance %v %v, want %v %v", name, i, gm, gv, m, v)
			}
		}
		ref := normRef(c.kind, c.epsAdded, x, eps)
		for j, w := range ref {
			if c.affine {
				w = w*float64(dtypes.LoadF32(dtypes.F32, gamma, int64(j))) + float64(dtypes.LoadF32(dtypes.F32, beta, int64(j)))
			}
			g := float64(dtypes.LoadF32(c.dst, want.dst, off(i)+int64(j)))
			tol := 1e-4*(math.Abs(w)+1) + math.Abs(w)*map[dtypes.DataType]float64{dtypes.F32: 0, dtypes.BF16: 1.0 / 128, dtypes.F16: 1.0 / 1024}[c.dst]
			if math.Abs(g-w) > tol {
				t.Fatalf("%s: row %d element %d is %v, want %v", name, i, j, g, w)
			}
		}
	}
	return differs
}

package jit

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/isa/amd64"
	"github.com/gdnn/gdnn/internal/isa/arm64"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// normCode emits n for isa as CompileNorm would, for comparing code.
func normCode(t *testing.T, n *kernelshape.Norm, isa ISA) []byte {
	t.Helper()
	var c plan.Code
	var err error
	if isa == NEON {
		c, err = arm64.EmitNorm(n)
	} else {
		c, err = amd64.EmitNorm(n, amd64Options(isa))
	}
	if err != nil {
		t.Fatalf("%v: %v", isa, err)
	}
	return c.Text
}

// interleaveCase is a softmax or log-softmax problem for
// TestNormKernelInterleavedRows: rows (outer dims) of n elements, the
// rows' element strides in src and dst (gaps between rows where they
// exceed the dense ones).
type interleaveCase struct {
	kind       kernelshape.NormKind
	infAsZero  bool
	n          int64
	rows       []int64 // outer dims, outermost first
	gap        int64   // elements between rows beyond n
	src, dst   dtypes.DataType
	withPostOp bool // a per-row Add and a ReLU after the normalization
	stats      bool // softmax's log-sum-exp kept (kernelshape.Norm.KeepLogSumExp)
}

// rowsLayout places rows (outer dims, outermost first) of n elements
// gap elements apart, and the outer loops gap elements apart too (so
// that they stay apart): the dims, their strides (elements), the row
// count.
type rowsLayout struct {
	rows, dims, str []int64
	n, nrows        int64
}

func newRowsLayout(rows []int64, n, gap int64) rowsLayout {
	l := rowsLayout{rows: rows, dims: append(append([]int64(nil), rows...), n), n: n, nrows: 1}
	l.str = make([]int64, len(l.dims))
	l.str[len(l.dims)-1] = 1
	s := n + gap
	for i := len(l.dims) - 2; i >= 0; i-- {
		l.str[i] = s
		s = s*l.dims[i] + gap
	}
	for _, d := range rows {
		l.nrows *= d
	}
	return l
}

// off is where row i's first element is.
func (l rowsLayout) off(i int64) int64 {
	o := int64(0)
	for d := len(l.rows) - 1; d >= 0; d-- {
		o += i % l.rows[d] * l.str[d]
		i /= l.rows[d]
	}
	return o
}

// span is how many elements the rows take, from the first one's start
// to the last one's end.
func (l rowsLayout) span() int64 { return l.off(l.nrows-1) + l.n }

// alongRows are strides of an operand of one value a row, laid out as
// the rows.
func (l rowsLayout) alongRows() []int64 {
	s := append([]int64(nil), l.str...)
	s[len(s)-1] = 0
	return s
}

// rowsPlan canonicalizes p, a normalization over its last dim, into
// the plan package normprog makes, with the row operands' steps
// rowSteps.
func rowsPlan(t *testing.T, p *plan.Problem, rowSteps []int64) *plan.Plan {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err == nil && len(pl.Reduced) == 0 {
		// Rows of one element, as package normprog makes their plan.
		if pl.HasInner {
			pl.Outer, pl.HasInner = append(pl.Outer, pl.Inner), false
		}
		pl.Reduced = []plan.Loop{{Size: 1, SrcStride: 1}}
	}
	if err != nil || len(pl.Reduced) != 1 || pl.HasInner {
		t.Fatalf("%v: plan %v %v", p.Dims, pl, err)
	}
	pl.Reduced[0].DstStride = 1
	pl.Reduced[0].BinStrides = rowSteps
	return pl
}

// plan returns c's kernel plan and its rows' layout.
func (c interleaveCase) plan(t *testing.T) (*plan.Plan, rowsLayout) {
	t.Helper()
	l := newRowsLayout(c.rows, c.n, c.gap)
	red := make([]bool, len(l.dims))
	red[len(l.dims)-1] = true
	var post []plan.PostOp
	var rowSteps []int64
	if c.withPostOp {
		post = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: l.alongRows()}, {Kind: ops.ReLU}}
		rowSteps = append(rowSteps, 0)
	}
	if c.stats {
		post = append(post, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: l.alongRows()})
		rowSteps = append(rowSteps, 0)
	}
	return rowsPlan(t, &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: c.src, DstDT: c.dst,
		Dims: l.dims, SrcStrides: l.str, Reduce: red, DstStrides: l.str, PostOps: post}, rowSteps), l
}

// TestNormKernelInterleavedRows: the kernel that takes softmax and
// log-softmax rows two at a time (held in registers, or not held and at
// most 64 vectors, their exps kept in dst or in the stage) gives the
// one-row kernel's bits (kernelshape.Norm.OneRow) for every row: row
// counts 1 to 7 (-short: 1, 2, 3 and 2x3), an odd last row in a counted
// loop and in a fixed inner one, rows apart, all -Inf rows (with and
// without inf_as_zero), -Inf and NaN elements, every float type pair, a
// post-op with a per-row operand, softmax's kept log-sum-exp; both
// against a float64 reference, with
// the tensors next to guard pages (f32 dsts only under
// GDNN_TEST_OUTPUTS=f32). It checks that the rows are in fact
// interleaved where the registers allow, on every JIT ISA this machine
// runs.
func TestNormKernelInterleavedRows(t *testing.T) {
	t.Logf("ISAs: %v", argISAs())
	dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}, {dtypes.F32, dtypes.BF16}}
	layouts := [][]int64{{1}, {2}, {3}, {4}, {5}, {7}, {2, 3}, {3, 2}, {2, 5}}
	if testing.Short() {
		// The AVX-512 stage (under Bochs on a CPU without AVX-512) and
		// the arm64 one under qemu: one row, a pair, a pair and one
		// left, and two nested loops.
		layouts = [][]int64{{1}, {2}, {3}, {2, 3}}
	}
	for _, isa := range argISAs() {
		prev := SetMaxISA(isa)
		r := rand.New(rand.NewPCG(11, uint64(isa)))
		interleaved := map[int64]bool{}
		for _, n := range []int64{1, 3, 4, 8, 13, 16, 17, 24, 33, 40, 64, 100, 128, 160, 161, 1025} {
			for _, rows := range layouts {
				for _, kind := range []kernelshape.NormKind{kernelshape.NormSoftmax, kernelshape.NormLogSoftmax} {
					dt := dts[r.IntN(len(dts))]
					dt[1] = kerneltest.OutputDT(dt[1]) // f32 under GDNN_TEST_OUTPUTS=f32
					c := interleaveCase{kind: kind, infAsZero: kind == kernelshape.NormSoftmax && r.IntN(2) == 0, n: n, rows: rows,
						gap: int64(r.IntN(2) * 3), src: dt[0], dst: dt[1], withPostOp: r.IntN(3) == 0,
						stats: kind == kernelshape.NormSoftmax && r.IntN(2) == 0}
					if checkInterleaved(t, isa, c, r) {
						interleaved[n] = true
					}
				}
			}
		}
		// The rows of the shortest lengths fit every ISA's registers two
		// at a time; S1's (128 f32) fit AVX-512's.
		for _, n := range []int64{1, 3, 4, 8, 13, 16} {
			if !interleaved[n] {
				t.Errorf("%v: rows of %d are never interleaved", isa, n)
			}
		}
		if isa == AVX512 && !interleaved[128] {
			t.Errorf("AVX-512: rows of 128 are not interleaved")
		}
		// Rows not held in registers are interleaved too, up to 64
		// vectors (kernelshape's normSweptPairMaxVecs).
		if !interleaved[161] {
			t.Errorf("%v: rows of 161 are not interleaved", isa)
		}
		if interleaved[1025] {
			t.Errorf("%v: rows of 1025, over 64 vectors, are interleaved", isa)
		}
		SetMaxISA(prev)
	}
}

// TestNormKernelLogRowGroups: the kernel that takes log-softmax rows
// that fit the registers four at a time, with one log of their sums
// packed in a register (kernelshape.NormRowPacker), f32's and bf16's
// (where bf16 is stored in pairs; GDNN_TEST_OUTPUTS=f32 makes its dst
// f32), gives the one-row kernel's bits and the float64 reference's
// values: row counts 1 to 9 (groups with 0 to 3 single rows after
// them), counted and fixed inner row loops, rows apart, all -Inf rows,
// -Inf and NaN elements, a post-op with a per-row operand, on every JIT
// ISA this machine runs.
func TestNormKernelLogRowGroups(t *testing.T) {
	t.Logf("ISAs: %v", argISAs())
	layouts := [][]int64{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {2, 4}, {3, 3}, {2, 5}, {4, 2}}
	for _, isa := range argISAs() {
		prev := SetMaxISA(isa)
		r := rand.New(rand.NewPCG(12, uint64(isa)))
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
			for _, n := range []int64{1, 3, 4, 13, 16, 17, 40, 64, 100, 128, 160} {
				for _, rows := range layouts {
					c := interleaveCase{kind: kernelshape.NormLogSoftmax, n: n, rows: rows, gap: int64(r.IntN(2) * 3),
						src: dt, dst: kerneltest.OutputDT(dt), withPostOp: r.IntN(3) == 0}
					checkInterleaved(t, isa, c, r)
				}
			}
		}
		SetMaxISA(prev)
	}
}

// checkInterleaved runs case c through the default kernel and the
// one-row one, compares them bit for bit and with the float64
// reference, and reports whether the default kernel's code differs
// (interleaves rows).
func checkInterleaved(t *testing.T, isa ISA, c interleaveCase, r *rand.Rand) bool {
	t.Helper()
	pl, l := c.plan(t)
	name := fmt.Sprintf("%v %v: %v inf_as_zero=%v n=%d rows=%v gap=%d %v:%v post=%v stats=%v", isa, runtime.GOARCH, c.kind, c.infAsZero,
		c.n, c.rows, c.gap, c.src, c.dst, c.withPostOp, c.stats)
	mk := func(one bool) *kernelshape.Norm {
		return &kernelshape.Norm{Kind: c.kind, Plan: pl, InfAsZero: c.infAsZero, OneRow: one, KeepLogSumExp: c.stats}
	}
	both, one := mk(false), mk(true)
	differs := !bytes.Equal(normCode(t, both, isa), normCode(t, one, isa))
	nrows, off := l.nrows, l.off
	if nrows < 2 && differs {
		t.Fatalf("%s: one row, and the code changed", name)
	}

	// The rows' contents: row 1 of every 3 all -Inf, row 2 with a -Inf,
	// row 4 with a NaN.
	span := l.span()
	src := make([]byte, span*int64(c.src.Size()))
	x := make([][]float64, nrows)
	for i := range nrows {
		x[i] = make([]float64, c.n)
		for j := range c.n {
			v := float32(r.Float64()*40 - 20)
			switch {
			case i%3 == 1, i%3 == 2 && j == c.n/2:
				v = float32(math.Inf(-1))
			case i == 4 && j == c.n-1:
				v = float32(math.NaN())
			}
			dtypes.StoreF32(c.src, src, off(i)+j, v)
			x[i][j] = float64(dtypes.LoadF32(c.src, src, off(i)+j))
		}
	}
	var bins [][]byte
	var bias []byte
	if c.withPostOp {
		bias = make([]byte, span*4) // read at the rows' starts
		for i := range nrows {
			dtypes.StoreF32(dtypes.F32, bias, off(i), float32(r.Float64()-0.5))
		}
		bins = [][]byte{bias}
	}
	// The stats go to the rows' first elements' places of a buffer of
	// src's span (the per-row operand's layout).
	run := func(n *kernelshape.Norm, atEnd bool) (dstOut, statsOut []byte) {
		k, why, err := CompileNorm(n)
		if err != nil || k == nil {
			t.Fatalf("%s: %v %s", name, err, why)
		}
		f := kerneltest.NewFence(t, atEnd)
		defer f.Free()
		dst := f.Place(make([]byte, span*int64(c.dst.Size())))
		var fb [][]byte
		for _, b := range bins {
			fb = append(fb, f.Place(b))
		}
		var stats []byte
		if c.stats {
			stats = f.Place(make([]byte, span*4))
			fb = append(fb, stats)
		}
		if err := k.Run(f.Place(src), dst, fb, 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return append([]byte(nil), dst...), append([]byte(nil), stats...)
	}
	for _, atEnd := range []bool{true, false} {
		got, gotStats := run(both, atEnd)
		want, wantStats := run(one, atEnd)
		if c.stats {
			for i := range nrows {
				g, w := dtypes.LoadF32(dtypes.F32, gotStats, off(i)), dtypes.LoadF32(dtypes.F32, wantStats, off(i))
				if math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("%s: row %d's stats are %v, the one-row kernel's %v", name, i, g, w)
				}
				ref := lseRef(c.infAsZero, x[i])
				if math.IsNaN(ref) != math.IsNaN(float64(g)) || !math.IsNaN(ref) && math.Abs(float64(g)-ref) > 1e-5*(math.Abs(ref)+1) {
					t.Fatalf("%s: row %d's stats are %v, want %v", name, i, g, ref)
				}
			}
		}
		for i := range nrows {
			for j := range c.n {
				e := off(i) + j
				g, w := dtypes.LoadF32(c.dst, got, e), dtypes.LoadF32(c.dst, want, e)
				if math.Float32bits(g) != math.Float32bits(w) {
					t.Fatalf("%s: row %d element %d is %v, the one-row kernel's %v", name, i, j, g, w)
				}
			}
			b := 0.0
			if c.withPostOp {
				b = float64(dtypes.LoadF32(dtypes.F32, bias, off(i)))
			}
			ref := softmaxRef(c.kind, c.infAsZero, x[i])
			for j, w := range ref {
				if c.withPostOp {
					w = math.Max(w+b, 0)
				}
				g := float64(dtypes.LoadF32(c.dst, got, off(i)+int64(j)))
				tol := 1e-5*(math.Abs(w)+1) + math.Abs(w)*map[dtypes.DataType]float64{dtypes.F32: 0, dtypes.BF16: 1.0 / 128, dtypes.F16: 1.0 / 1024}[c.dst]
				if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) && math.Abs(g-w) > tol {
					t.Fatalf("%s: row %d element %d is %v, want %v", name, i, j, g, w)
				}
			}
		}
	}
	return differs
}

// lseRef is a softmax row's stats in float64: max + log(sum(exp(x -
// max))), NaN for a row with a NaN or of -Inf only, or 0 for the latter
// with infAsZero.
func lseRef(infAsZero bool, x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	switch {
	case math.IsNaN(m):
		return m
	case math.IsInf(m, -1) && infAsZero:
		return 0
	case math.IsInf(m, -1):
		return math.NaN()
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// softmaxRef is softmax or log-softmax of one row in float64: a NaN
// gives NaNs, an all -Inf row NaNs, or with infAsZero (softmax) 0s.
func softmaxRef(k kernelshape.NormKind, infAsZero bool, x []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	out := make([]float64, len(x))
	if math.IsInf(m, -1) || math.IsNaN(m) {
		for i := range out {
			out[i] = math.NaN()
			if infAsZero && !math.IsNaN(m) {
				out[i] = 0
			}
		}
		return out
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	for i, v := range x {
		if k == kernelshape.NormLogSoftmax {
			out[i] = v - m - math.Log(s)
		} else {
			out[i] = math.Exp(v-m) / s
		}
	}
	return out
}

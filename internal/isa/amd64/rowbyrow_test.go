package amd64

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// rowByRowPlan is a stage-1 plan as the runtime makes for row-by-row
// sums (emitted with byRow): rows rows of w lanes, stride apart, summed
// into w f32 lanes.
func rowByRowPlan(sdt dtypes.DataType, rows, stride, w int64) *plan.Plan {
	return &plan.Plan{Stage: plan.SkipFinalize, SrcDT: sdt, DstDT: dtypes.F32, Div: 1, N: rows, Outputs: w,
		Reduced:  []plan.Loop{{Size: rows, SrcStride: stride}},
		HasInner: true, Inner: plan.Loop{Size: w, SrcStride: 1, DstStride: 1}}
}

// rowByRowKinds are the reductions TestRowByRow runs row by row: every
// combine, with and without a transform (|x| and x*x), as the stage-1
// chunks of the Lp norms and the fused pre-ops are.
var rowByRowKinds = []plan.Reduction{
	{Finalize: plan.FinalizeNone},
	{Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
	{Combine: plan.CombineMin, Finalize: plan.FinalizeNone},
	{Combine: plan.CombineMul, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformAbs, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformSquare, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
}

// TestRowByRow runs row-by-row reductions of every kind and src type on
// every ISA, with widths around the vector and loop-chunk sizes (all of
// them for the sum, a spread for the other kinds), back-to-back, padded
// and strided rows (strips), and src and dst against guard pages at
// either end, and compares them bit for bit with the float64 results,
// rounded to f32 after every combine, and with the interpreter (inputs
// are exact, NaN, infinities and signed zeros included; products take
// powers of two, so that they stay exact).
func TestRowByRow(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for _, red := range rowByRowKinds {
		for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			widths := []int64{1, 7, 8, 9, 16, 17, 31, 63, 64, 65, 100, 129, 1000}
			if red.Combine != plan.CombineAdd || red.Transform != plan.TransformNone {
				widths = []int64{1, 7, 9, 17, 31, 65, 100, 129}
			}
			for _, w := range widths {
				for _, rows := range []int64{1, 2, 5, 64} {
					// Back to back, padded, and strips of rows twice as
					// wide (jit's rowByRowWidth).
					for _, pad := range []int64{0, 3, w} {
						testRowByRow(t, r, red, sdt, rows, w, w+pad)
					}
				}
			}
		}
	}
}

// testRowByRow runs one row-by-row plan of red: rows rows of w lanes of
// sdt, stride apart.
func testRowByRow(t *testing.T, r *rand.Rand, red plan.Reduction, sdt dtypes.DataType, rows, w, stride int64) {
	t.Helper()
	pl := rowByRowPlan(sdt, rows, stride, w)
	pl.Reduction = red
	name := fmt.Sprintf("%v %v rows %d of %d, stride %d", red, sdt, rows, w, stride)
	src0 := make([]byte, ((rows-1)*stride+w)*int64(sdt.Size()))
	fillExact(r, sdt, src0, true, 50)
	if red.Combine == plan.CombineMul {
		for i := int64(0); i < int64(len(src0))/int64(sdt.Size()); i++ {
			if v := dtypes.LoadF32(sdt, src0, i); !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) && v != 0 {
				dtypes.StoreF32(sdt, src0, i, float32(math.Copysign(math.Ldexp(1, r.Intn(3)-1), float64(v))))
			}
		}
	}
	want, written := make([]byte, w*4), map[int64]bool{}
	for i := int64(0); i < w; i++ {
		written[i] = true
		acc := red.Identity()
		for j := int64(0); j < rows; j++ {
			acc = float32(red.CombineF64(float64(acc), red.TransformF64(float64(dtypes.LoadF32(sdt, src0, j*stride+i)))))
		}
		dtypes.StoreF32(dtypes.F32, want, i, acc)
	}
	viaInterp := make([]byte, w*4)
	if err := interp.Run(pl, src0, viaInterp, nil); err != nil {
		t.Fatalf("%s: interp.Run: %v", name, err)
	}
	if d := kerneltest.CompareExact(dtypes.F32, viaInterp, want, written, false); d != "" {
		t.Fatalf("%s: interpreter: %s", name, d)
	}
	for _, atEnd := range []bool{true, false} {
		fence := kerneltest.NewFence(t, atEnd)
		src, dst := fence.Place(src0), fence.Place(make([]byte, w*4))
		for _, isa := range isas(t) {
			for i := range dst {
				dst[i] = 0xA5
			}
			k := compileHinted(t, pl, byRow, isa.o)
			k.RunBlocks(pl, src, dst, nil, 0)
			k.Release()
			if d := kerneltest.CompareExact(dtypes.F32, dst, want, written, false); d != "" {
				t.Fatalf("%s, %s: %s", name, isa.name, d)
			}
		}
		fence.Free()
	}
}

// TestRowByRowChoice checks that the emitters reduce row by row exactly
// the plans that ask for it and have the shape and kind it needs (any,
// and log-sum-exp's exp on Zen cores only): others marked RowByRow get
// the same code as unmarked.
func TestRowByRowChoice(t *testing.T) {
	base := func() *plan.Plan { return rowByRowPlan(dtypes.BF16, 64, 4096, 4096) }
	cases := []struct {
		name string
		edit func(*plan.Plan)
		want bool
		zen  bool // wanted on Zen cores only
	}{
		{"stage-1 chunk", func(*plan.Plan) {}, true, false},
		{"f32 src", func(p *plan.Plan) { p.SrcDT = dtypes.F32 }, true, false},
		{"f16 src, padded rows", func(p *plan.Plan) { p.SrcDT = dtypes.F16; p.Reduced[0].SrcStride = 5000 }, true, false},
		{"max", func(p *plan.Plan) { p.Reduction = plan.AlgMax.Reduction(0, 0) }, true, false},
		{"min, f32 src", func(p *plan.Plan) { p.Reduction, p.SrcDT = plan.AlgMin.Reduction(0, 0), dtypes.F32 }, true, false},
		{"product", func(p *plan.Plan) { p.Reduction = plan.AlgMul.Reduction(0, 0) }, true, false},
		{"squares (L2's sums)", func(p *plan.Plan) { p.Reduction = plan.AlgNormLpSum.Reduction(2, 0) }, true, false},
		{"abs max", func(p *plan.Plan) {
			p.Reduction = plan.Reduction{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone}
		}, true, false},
		{"log-sum-exp's unshifted sums", func(p *plan.Plan) { p.Reduction, p.Stage = plan.LogSumExp, p.Stage|plan.Unshifted }, true, true},
		{"log-sum-exp's unshifted sums, f32 src", func(p *plan.Plan) {
			p.Reduction, p.Stage, p.SrcDT = plan.LogSumExp, p.Stage|plan.Unshifted, dtypes.F32
		}, true, true},
		{"a whole mean (finalized)", func(p *plan.Plan) { p.Stage, p.Div = 0, 64 }, false, false},
		{"bf16 dst", func(p *plan.Plan) { p.Stage, p.DstDT = 0, dtypes.BF16 }, false, false},
		{"post-op", func(p *plan.Plan) { p.Stage, p.PostOps = 0, []plan.PostOp{{Kind: ops.ReLU}} }, false, false},
		{"strided dst", func(p *plan.Plan) { p.Inner.DstStride = 2 }, false, false},
		{"kept outer loop", func(p *plan.Plan) {
			p.Outer = []plan.Loop{{Size: 2, SrcStride: 64 * 4096, DstStride: 4096}}
			p.Outputs *= 2
		}, false, false},
		{"two reduced loops", func(p *plan.Plan) {
			p.Reduced = []plan.Loop{{Size: 2, SrcStride: 1 << 20}, {Size: 64, SrcStride: 4096}}
			p.N *= 2
		}, false, false},
		{"nothing to sum", func(p *plan.Plan) { p.Reduced[0].Size = 0; p.N = 0 }, false, false},
	}
	for _, o := range []Options{{AVX512: true}, {}, {AVX512: true, Zen: true}, {Zen: true}} {
		for _, c := range cases {
			marked := base()
			c.edit(marked)
			plain := marked.Clone()
			a, err := EmitHinted(marked, byRow, o)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			b, err := Emit(plain, o)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want := c.want && (o.Zen || !c.zen)
			if got := string(a.Text) != string(b.Text); got != want {
				t.Errorf("%s (avx512 %v, zen %v): row-by-row code = %v, want %v", c.name, o.AVX512, o.Zen, got, want)
			}
		}
	}
}

// TestRowByRowPrefetch pins where Zen cores prefetch a stream of f32 rows
// (the partials row and the lines ahead within zenRowByRowL1) and that
// every other case keeps rowByRowAhead.
func TestRowByRowPrefetch(t *testing.T) {
	cases := []struct {
		zen          bool
		ssz          int64
		rowBytes, rb int64
		want         int64
	}{
		{true, 4, 16384, 16384, 8192},
		{true, 4, 12288, 12288, 12288},
		{true, 4, 8192, 8192, 16384},
		{true, 4, 2048, 2048, 16384},
		{true, 4, 8192, 10000, 20000}, // rows apart: whole rows
		{true, 2, 8192, 8192, 16384},  // 16-bit rows keep rowAhead
		{false, 4, 16384, 16384, 16384},
		{true, 4, 1 << 20, 1 << 20, 1 << 20}, // no room in L1: rowByRowAhead
	}
	for _, c := range cases {
		cf := Conf{tune: intelTuning}
		if c.zen {
			cf.tune = zenTuning
		}
		cf.f.ssz = c.ssz
		if got := cf.rowByRowPrefetch(c.rowBytes, c.rb); got != c.want {
			t.Errorf("zen %v, %d-byte elements: rowByRowPrefetch(%d, %d) = %d, want %d", c.zen, c.ssz, c.rowBytes, c.rb, got, c.want)
		}
	}
}

// TestRowByRowAhead pins the prefetch distance: rowAhead bytes when rows
// are back to back, whole rows otherwise, none past a displacement.
func TestRowByRowAhead(t *testing.T) {
	cases := []struct{ rowBytes, rb, want int64 }{
		{8192, 8192, 16384},
		{2048, 2048, 16384},
		{6000, 6000, 18000},
		{8192, 10000, 20000},
		{20000, 20000, 20000},
		{8192, 0, 0},
		{8192, math.MaxInt32, 0},
	}
	for _, c := range cases {
		if got := intelTuning.rowByRowAhead(c.rowBytes, c.rb); got != c.want {
			t.Errorf("rowByRowAhead(%d, %d) = %d, want %d", c.rowBytes, c.rb, got, c.want)
		}
	}
}

package arm64

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vfn"
)

// Differential tests of every reduction the emitter covers, against the
// float64 oracle (internal/oracle) and the interpreter. With exact data
// (multiples of 1/4 for sums, max and min; powers of two for products)
// every f32 intermediate is exact in any order, and the finalize's
// single f32 division or square root rounds as the oracle's float64
// result rounded to f32 does, so the comparisons are bit for bit (any
// NaN matches any NaN).

// reductions are the covered reductions, named.
var reductions = []struct {
	name string
	r    plan.Reduction
}{
	{"mean", plan.Reduction{}},
	{"sum", plan.AlgSum.Reduction(0, 0)},
	{"mul", plan.AlgMul.Reduction(0, 0)},
	{"max", plan.AlgMax.Reduction(0, 0)},
	{"min", plan.AlgMin.Reduction(0, 0)},
	{"abs>sum", plan.Reduction{Transform: plan.TransformAbs, Finalize: plan.FinalizeNone}},
	{"square>sum", plan.Reduction{Transform: plan.TransformSquare, Finalize: plan.FinalizeNone}},
	{"abs>max", plan.Reduction{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone}},
	{"square>min", plan.Reduction{Transform: plan.TransformSquare, Combine: plan.CombineMin, Finalize: plan.FinalizeNone}},
	{"abs>mul", plan.Reduction{Transform: plan.TransformAbs, Combine: plan.CombineMul, Finalize: plan.FinalizeNone}},
	{"norm_lp_max p1", plan.AlgNormLpMax.Reduction(1, 2.25)},
	{"norm_lp_max p2", plan.AlgNormLpMax.Reduction(2, 0.0625)},
	{"norm_lp_sum p1", plan.AlgNormLpSum.Reduction(1, -0.5)},
	{"norm_lp_sum p2", plan.AlgNormLpSum.Reduction(2, 0.25)},
	{"norm_lp_power_p_max p1", plan.AlgNormLpPowerPMax.Reduction(1, 1.5)},
	{"norm_lp_power_p_max p2", plan.AlgNormLpPowerPMax.Reduction(2, 0)},
	{"norm_lp_power_p_sum p1", plan.AlgNormLpPowerPSum.Reduction(1, 0)},
	{"norm_lp_power_p_sum p2", plan.AlgNormLpPowerPSum.Reduction(2, -0.75)},
}

// pow2Filler fills with ±1 (most), ±2 and ±1/2, and with specials one
// element in rate NaN, ±Inf or ±0: products of a few thousand stay
// exact and far from overflow in any order. With signs, only ±1: any
// number of them.
type pow2Filler struct {
	r     *rand.Rand
	rate  int
	signs bool
}

func (f pow2Filler) fill(dt dtypes.DataType, b []byte, specials bool) {
	if dt.IsInt8() {
		// ±1 and a rare 2 (no 1/2 in integers: 2s only grow, kept
		// far from f32 overflow), 0 as the special; u8 has no -1.
		for i := range b {
			v := [...]int{1, -1}[f.r.Intn(2)]
			switch {
			case !f.signs && f.r.Intn(64) == 0:
				v = 2
			case specials && f.r.Intn(f.rate) == 0:
				v = 0
			}
			if dt == dtypes.U8 && v < 0 {
				v = 1
			}
			b[i] = byte(v)
		}
		return
	}
	vals := [...]float32{1, -1, 1, -1, 1, -1, 2, -0.5}
	spec := [...]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1))}
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		v := vals[f.r.Intn(len(vals))]
		switch {
		case f.signs:
			v = float32(math.Copysign(1, float64(v)))
		case f.r.Intn(8) == 0:
			v = 1 / v
		}
		if specials && f.r.Intn(f.rate) == 0 {
			v = spec[f.r.Intn(len(spec))]
		}
		dtypes.StoreF32(dt, b, i, v)
	}
}

// signFiller fills with multiples of 1/4 in [0.25, 4] times sign (and,
// with specials, the exactFiller's specials): a max over negative data
// or a min over positive data would see any +0 filled into a tail. Sign
// 0 gives multiples of 1/4 in [-1, 1] instead.
type signFiller struct {
	r    *rand.Rand
	sign float32
}

func (f signFiller) fill(dt dtypes.DataType, b []byte, specials bool) {
	if dt.IsInt8() {
		// 1..16 times sign (u8 takes 0..16 for negative data), or
		// -1..1 for sign 0.
		switch {
		case f.sign > 0:
			kerneltest.FillInts(f.r, dt, b, 1, 16)
		case f.sign < 0 && dt == dtypes.U8:
			kerneltest.FillInts(f.r, dt, b, 0, 16)
		case f.sign < 0:
			kerneltest.FillInts(f.r, dt, b, -16, -1)
		default:
			kerneltest.FillInts(f.r, dt, b, -1, 1)
		}
		return
	}
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		v := f.sign * float32(1+f.r.Intn(16)) / 4
		if f.sign == 0 {
			v = float32(f.r.Intn(9)-4) / 4
		}
		if specials && f.r.Intn(16) == 0 {
			v = [...]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[f.r.Intn(3)]
		}
		dtypes.StoreF32(dt, b, i, v)
	}
}

// fillerFor returns data that keeps red's results exact and (with
// tails) shows a tail filled with anything but red's identity: powers of
// two for products (no zeros unless special), negative data for max,
// positive for min, and multiples of 1/4 otherwise. With long (up to a
// million elements per output) products see only ±1, and sums of
// squares multiples of 1/4 in [-1, 1], so that they stay exact.
func fillerFor(r *rand.Rand, red plan.Reduction, tails, long bool) func(dtypes.DataType, []byte, bool) {
	f := floatFillerFor(r, red, tails, long)
	// 8-bit integers: squares of small values and, in long sums, small
	// values, so that sums stay below 2^24 and exact in f32.
	lim := 0
	switch {
	case red.Transform == plan.TransformSquare && long:
		lim = 3
	case red.Transform == plan.TransformSquare:
		lim = 40
	case long && red.Combine == plan.CombineAdd:
		lim = 15
	}
	if lim == 0 {
		return f
	}
	return func(dt dtypes.DataType, b []byte, specials bool) {
		if dt.IsInt8() {
			kerneltest.FillInts(r, dt, b, -lim, lim)
			return
		}
		f(dt, b, specials)
	}
}

// floatFillerFor is fillerFor's choice by reduction; its fillers also
// give 8-bit integers of the same character.
func floatFillerFor(r *rand.Rand, red plan.Reduction, tails, long bool) func(dtypes.DataType, []byte, bool) {
	switch {
	case red.Combine == plan.CombineMul:
		return pow2Filler{r, 16, long}.fill
	case long && red.Transform == plan.TransformSquare:
		return signFiller{r, 0}.fill
	case tails && red.Combine == plan.CombineMax && red.Transform == plan.TransformNone:
		return signFiller{r, -1}.fill
	case tails && red.Combine == plan.CombineMin:
		return signFiller{r, 1}.fill
	}
	return exactFiller{r, 16}.fill
}

// kindResult computes p with plan stage st from the oracle into a copy
// of dst: a stage that skips the transform combines src as it is, one
// that skips the finalize writes the combined value; then the post-ops
// in f32 and the rounding to dst.
func kindResult(p *plan.Problem, st plan.Stage, src, dst []byte, bins [][]byte) (want []byte, outs map[int64]bool) {
	q := *p
	if st&plan.SkipTransform != 0 {
		q.Transform = plan.TransformNone
	}
	if st&plan.SkipFinalize != 0 {
		q.Finalize = plan.FinalizeNone
	}
	return kerneltest.Expect(p, oracle.Reduce(&q, src), dst, bins, func(o oracle.Output) float32 { return float32(o.Value) })
}

// checkKind runs p (its Reduction set) as a plan of stage st through
// the interpreter and the kernel, whole and in blocks of the outermost
// loop, against the oracle, bit for bit with zero signs (the kernel's
// outputs within vfn.Tolerance of the chain's last op). With fence the
// kernel's buffers sit against guard pages.
func checkKind(t *testing.T, r *rand.Rand, name string, p *plan.Problem, st plan.Stage, srcSpecials, binSpecials, tails, fence bool, blocks []int64) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("%s: Canonicalize(%+v): %v", name, p, err)
	}
	// A stage takes the problem's parts as they are: Canonicalize's
	// rewrite of a whole reduction of one element (OfOne) is not one.
	pl.Stage, pl.Reduction = st, p.Reduction
	src0, dst0, bins0 := buffersFor(t, fillerFor(r, p.Reduction, tails, false), p, srcSpecials, binSpecials)
	want, outs := kindResult(p, st, src0, dst0, bins0)

	viaInterp := append([]byte(nil), dst0...)
	if err := interp.Run(pl, src0, viaInterp, bins0); err != nil {
		t.Fatalf("%s: interp.Run: %v", name, err)
	}
	if d := kerneltest.CompareExact(p.DstDT, viaInterp, want, outs, false); d != "" {
		t.Fatalf("%s: interpreter disagrees with the oracle: %s\nproblem %+v\nplan %v", name, d, p, pl)
	}
	k := compile(t, pl)
	defer k.Release()
	src, dst, bins := src0, append([]byte(nil), dst0...), bins0
	var f *kerneltest.Fence
	if fence {
		f = kerneltest.NewFence(t, r.Intn(2) == 0)
		defer f.Free()
		src, dst, bins = f.Place(src0), f.Place(dst0), f.PlaceEach(bins0)
	}
	for _, blk := range blocks {
		copy(dst, dst0)
		k.RunBlocks(pl, src, dst, bins, blk)
		if d := kerneltest.CompareNear(p.DstDT, dst, want, outs, false, vfn.Tolerance(p.PostOps)); d != "" {
			t.Fatalf("%s: neon (blocks of %d): %s\nproblem %+v\nplan %v", name, blk, d, p, pl)
		}
	}
}

// TestKindsRandom runs random problems (ranks 0-5, padded and permuted
// strides, every dtype pair, post-op chains) of every covered reduction,
// with NaN and ±Inf among the data every third problem, and copies
// (plans that reduce nothing).
func TestKindsRandom(t *testing.T) {
	needARM64(t)
	n := 400
	if testing.Short() {
		n = 100
	}
	r := rand.New(rand.NewSource(21))
	for i := 0; i < n; i++ {
		p := randomProblem(r, 3000)
		name := "copy"
		if c := i % (len(reductions) + 1); c < len(reductions) {
			p.Reduction, name = reductions[c].r, reductions[c].name
		} else {
			// A copy reduces nothing: every dim kept, dst and operand
			// layouts over all of them.
			p.Reduction = plan.Copy
			clear(p.Reduce)
			p.DstStrides = stridesFor(r, p.Dims, r.Intn(5) == 0)
			for j := range p.PostOps {
				if p.PostOps[j].Kind.IsBinary() {
					p.PostOps[j].BinStrides = operandStrides(r, p.Dims)
				}
			}
		}
		checkKind(t, r, name, p, 0, i%3 == 0, i%5 == 0, i%2 == 0, false, []int64{0, 1 + r.Int63n(9)})
	}
}

// TestKindsStages runs plans that are one stage of a split reduction:
// SkipTransform (src holds partials, only combined), SkipFinalize (dst
// takes the combined values, f32, no post-ops) and both.
func TestKindsStages(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(22))
	for i := 0; i < 300; i++ {
		p := randomProblem(r, 3000)
		c := reductions[i%len(reductions)]
		p.Reduction = c.r
		st := plan.Stage(1 + i%3)
		if st&plan.SkipFinalize != 0 {
			p.DstDT, p.PostOps = dtypes.F32, nil
		}
		checkKind(t, r, c.name, p, st, i%4 == 0, false, i%2 == 0, false, []int64{0, 2})
	}
}

// TestKindsTails runs every kernel shape with every tail length 0..2V+3
// next to guard pages, on data that shows a partial vector filled with
// anything but the identity (max of negative values, min of positive
// ones, products without zeros): every reduction whose identity is not
// +0 at every length, the sums (whose tails the mean's tests cover too)
// two per length in turn.
func TestKindsTails(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(23))
	sums := 0
	for n := int64(0); n <= 2*lanes+3; n++ {
		for ci, c := range reductions {
			if c.r.Combine == plan.CombineAdd {
				if sums++; sums%6 >= 2 {
					continue
				}
			}
			pr := pairs[(int(n)+ci)%len(pairs)]
			bdt := floatTypes[(int(n)+ci)%len(floatTypes)]
			for _, s := range shapes(n, pr[0], pr[1], bdt) {
				s.p.Reduction = c.r
				checkKind(t, r, c.name+" "+s.name, s.p, 0, false, false, true, true, []int64{0, 3})
			}
		}
	}
}

// TestKindsSpecials runs max and min (plain and of |x|) over data of
// only signed zeros and of infinities and NaN, in every shape: NaN must
// win wherever it appears, and -0 order below +0.
func TestKindsSpecials(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(24))
	negZero := float32(math.Copysign(0, -1))
	sets := [][]float32{
		{0, negZero},
		{negZero, negZero, negZero, 0},
		{float32(math.Inf(1)), float32(math.Inf(-1)), negZero},
		{float32(math.Inf(-1)), float32(math.NaN()), 1, -1, 1, -1, 1, -1, 1, -1, 1, -1},
	}
	for _, n := range []int64{1, 3, 5, 9} {
		for _, set := range sets {
			fill := func(dt dtypes.DataType, b []byte, _ bool) {
				for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
					dtypes.StoreF32(dt, b, i, set[r.Intn(len(set))])
				}
			}
			for _, c := range reductions {
				if c.r.Combine != plan.CombineMax && c.r.Combine != plan.CombineMin {
					continue
				}
				for _, s := range shapes(n, dtypes.F32, dtypes.F32, dtypes.F32) {
					s.p.Reduction = c.r
					s.p.PostOps = nil
					pl, err := plan.Canonicalize(s.p)
					if err != nil {
						t.Fatal(err)
					}
					src, dst0, _ := buffersFor(t, fill, s.p, false, false)
					want, outs := kindResult(s.p, 0, src, dst0, nil)
					got := neon.Run(t, pl, src, dst0, nil)
					if d := kerneltest.CompareExact(s.p.DstDT, got, want, outs, false); d != "" {
						t.Fatalf("%s %s, values %v, n %d: %s", c.name, s.name, set, n, d)
					}
				}
			}
		}
	}
}

// TestKindsRealistic checks long reductions of inexact values against
// the oracle with tolerances that are bounds: for sums of positive terms
// (and products of terms near 1) each of the about N roundings costs at
// most 2^-24 relative, x*x and the finalize's eps add and root one more
// each, and rounding to dst half a dst ulp on either side; max and min
// pick an element and match exactly.
func TestKindsRealistic(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(25))
	cases := []struct {
		dims []int64
		axes []int
	}{
		{[]int64{3, 20011}, []int{1}},
		{[]int64{5000, 2}, []int{0}},
		{[]int64{60, 30, 37}, []int{0, 2}},
		{[]int64{6, 12, 10, 24}, []int{2, 3}},
		{[]int64{257, 131}, []int{0}},
	}
	for _, c := range cases {
		for ci, red := range reductions {
			pr := pairs[ci%len(pairs)]
			p := kerneltest.DenseProblem(c.dims, c.axes, pr[0])
			p.DstDT, p.Reduction = pr[1], red.r
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			src, dst0 := make([]byte, sb), make([]byte, db)
			for i := int64(0); i < sb/int64(p.SrcDT.Size()); i++ {
				v := 0.5 + r.Float32()
				if red.r.Combine == plan.CombineMul {
					v = 1 + (r.Float32()-0.5)/512
				}
				dtypes.StoreF32(p.SrcDT, src, i, v)
			}
			want, outs := kindResult(p, 0, src, dst0, nil)
			tol := float64(pl.N+4)*0x1p-24 + unitULP(p.DstDT)
			if red.r.Combine == plan.CombineMax || red.r.Combine == plan.CombineMin {
				tol = 0
			}
			got := neon.Run(t, pl, src, dst0, nil)
			for i := range outs {
				g, w := float64(dtypes.LoadF32(p.DstDT, got, i)), float64(dtypes.LoadF32(p.DstDT, want, i))
				if math.Abs(g-w) > tol*math.Abs(w) {
					t.Fatalf("%s %v %v %v: dst[%d] = %v, want %v (relative tolerance %.3g)", red.name, c.dims, c.axes, pr, i, g, w, tol)
				}
			}
		}
	}
}

// TestUnsupportedReductions checks that reductions without NEON code
// (|x|^p, roots other than 1 and 2) are Unimplemented, and that every
// covered one emits; on every GOARCH.
func TestUnsupportedReductions(t *testing.T) {
	mk := func(red plan.Reduction) *plan.Plan {
		p := &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	for _, red := range []plan.Reduction{
		plan.AlgNormLpSum.Reduction(3, 0),
		plan.AlgNormLpPowerPMax.Reduction(0.5, 1),
		{Transform: plan.TransformPow, P: 2, Finalize: plan.FinalizeNone},
		{Transform: plan.TransformSquare, Finalize: plan.FinalizeRootAddEps, P: 3},
	} {
		_, err := Emit(mk(red))
		if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), red.String()) {
			t.Errorf("Emit of %v: got %v, want Unimplemented naming it", red, err)
		}
	}
	for _, c := range reductions {
		if _, err := Emit(mk(c.r)); err != nil {
			t.Errorf("Emit of %s: %v", c.name, err)
		}
	}
}

// TestKindsDisassembly checks the instructions each part of a reduction
// becomes, with an independent decoder, on every GOARCH: the identity
// constant, the transform, the vertical and pairwise combines (UZP1/UZP2
// and FMUL where NEON has no pairwise form), the finalize.
func TestKindsDisassembly(t *testing.T) {
	row := func(red plan.Reduction, rowLen int64) *plan.Plan {
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32,
			Dims: []int64{8, rowLen}, SrcStrides: []int64{rowLen, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	cases := []struct {
		name      string
		pl        *plan.Plan
		want, not []string
	}{
		{"max", row(plan.AlgMax.Reduction(0, 0), 1001), []string{"fmax v", "fmaxp v", "mov v"}, []string{"fadd", "fdiv", "eor v"}},
		{"grouped min", row(plan.AlgMin.Reduction(0, 0), 15), []string{"fmin v", "fminp v0.4s, v0.4s, v2.4s"}, []string{"fadd", "fdiv"}},
		{"mul", row(plan.AlgMul.Reduction(0, 0), 1001), []string{"fmul v", "uzp1 v", "uzp2 v"}, []string{"fadd", "faddp"}},
		{"abs>sum", row(plan.AlgNormLpPowerPSum.Reduction(1, 0.5), 1001), []string{"fabs v", "fadd v", "faddp v"}, []string{"fdiv"}},
		{"L2", row(plan.AlgNormLpMax.Reduction(2, 0.5), 1001), []string{"fmul v16.4s, v16.4s, v16.4s", "fmax v", "fsqrt v"}, []string{"fdiv"}},
		{"sum", row(plan.AlgSum.Reduction(0, 0), 1001), []string{"fadd v", "faddp v"}, []string{"fdiv", "fmax", "fmul"}},
	}
	for _, c := range cases {
		code, err := Emit(c.pl)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var text []string
		for i, in := range disassemble(t, code.Text) {
			if strings.HasPrefix(in.text, ".inst") || strings.Contains(in.text, "undefined") || in.word == 0 {
				t.Errorf("%s: word %d (%08x) does not decode: %q", c.name, i, in.word, in.text)
			}
			text = append(text, in.text)
		}
		all := strings.Join(text, "\n")
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, all)
			}
		}
		for _, w := range c.not {
			if strings.Contains(all, w) {
				t.Errorf("%s: unexpected %q in\n%s", c.name, w, all)
			}
		}
	}
}

// TestManyBinaryOperands runs random problems of every covered reduction
// whose post-op chains carry 5 or 6 (plan.MaxBinary) binary operands of
// random kinds, types and broadcasts, with unary ops between them: one
// pointer register per operand, whole and in blocks, some against guard
// pages, against the oracle and the interpreter.
func TestManyBinaryOperands(t *testing.T) {
	needARM64(t)
	n := 300
	if testing.Short() {
		n = 60
	}
	r := rand.New(rand.NewSource(31))
	for i := 0; i < n; i++ {
		p := randomProblem(r, 3000)
		c := reductions[i%len(reductions)]
		p.Reduction = c.r
		withBinaries(r, p, plan.MaxBinary-r.Intn(2))
		checkKind(t, r, c.name, p, 0, i%3 == 0, i%5 == 0, i%2 == 0, i%4 == 0, []int64{0, 1 + r.Int63n(9)})
	}
}

// withBinaries appends post-ops to p, a random unary one before each
// binary one half of the time, until p has nbin binary post-ops.
func withBinaries(r *rand.Rand, p *plan.Problem, nbin int) {
	var unary, binary []ops.Kind
	for _, k := range kinds {
		if k.IsBinary() {
			binary = append(binary, k)
		} else if k != ops.Clamp && k != ops.LeakyReLU {
			unary = append(unary, k)
		}
	}
	kd := kerneltest.KeptDims(p)
	for p.BinaryCount() < nbin {
		if r.Intn(2) == 0 {
			p.PostOps = append(p.PostOps, plan.PostOp{Kind: unary[r.Intn(len(unary))]})
		}
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: binary[r.Intn(len(binary))],
			BinDT: kerneltest.OperandTypes[r.Intn(len(kerneltest.OperandTypes))], BinStrides: operandStrides(r, kd)})
	}
}

package vexp

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// The exp inside a sum of exps (an unshifted log-sum-exp's transform,
// plan.TransformExp) is cheaper than the Exp post-op's. A sum of n terms
// rounds at every add, up to n ulps in all, so an error per term of up to
// about |x| ulps is of the size a sum of more than |x| terms has anyway
// (and in the log it is an absolute error that small), while the exp's
// arithmetic, not memory, was what bounded log-sum-exp's speed. So:
//
//  1. Clamp x to [-87, Hi] (SumLoBits), keeping a NaN (AVX2 and NEON; AVX-512
//     needs no clamp: its VREDUCEPS and VSCALEFPS take the infinities and
//     the ends of the range as they are, with subnormal results too).
//  2. t = x * log2(e), rounded to f32; n = floor(t), f = t - n, so that
//     0 <= f <= 1: exact, except for -1 < t < 0, where t + 1 rounds (once;
//     AVX-512's VREDUCEPS may round it the other way than a subtraction).
//  3. p = SumPoly(f), a degree-5 polynomial for 2^f on [0, 1] fitted
//     to the relative error with c0 = 1 (so that e^0 is exactly 1), by
//     Horner's rule with FMAs.
//  4. The result is p * 2^n: AVX-512 by VSCALEFPS, the others by building
//     2^n in an f32's exponent bits. The clamp keeps n in [-126, 128], so
//     2^n is normal, or +Inf's bits at n = 128 (and e^x overflows there).
//     The bits come from one float add and a shift: n + SumScaleBits is
//     exact and holds n + 127 in its low mantissa bits, which a shift
//     left by MantBits moves into the exponent field (the rest shifts
//     out): one operation fewer than a conversion to integer and an
//     integer add of the bias. The product p * 2^n is exact: the clamp
//     lets n reach -126 only with f at least 0.48 (p above 1.39), so the
//     product is a normal f32, or +Inf at n = 128. So AVX2 and NEON fuse
//     it with the sum's add (acc + p * 2^n in one FMA, rounded once, as
//     the add alone was): the same bits, one instruction fewer.
//
// Against the Exp post-op's algorithm, there is no Cody-Waite reduction
// (the rounding of t costs up to |x| * 2^-24 of the result), one degree
// less, no NaN restore (arithmetic keeps a NaN a NaN) and, on AVX-512, no
// clamp and no split of 2^n: about half the instructions. Every result is
// within SumError(x) of e^x, relative, for -87 <= x, or +Inf where e^x
// is within that of overflowing f32 or beyond; a NaN for a NaN. Below -87
// the result is between +0 and e^-87 (1 + SumError(-87)) (on AVX-512,
// e^x itself): terms that small weigh nothing in a sum that
// plan.UnshiftedExact accepts (plan.UnshiftedFloor).

// SumLoBits is -87 as f32: e^-87 is above 2^-126, so 2^n stays normal.
const SumLoBits = 0xc2ae0000

// SumScaleBits is 2^23 + 127 as f32 (step 4): adding an integer-valued n
// in [-126, 128] to it is exact, and its low mantissa bits are then n +
// 127.
const SumScaleBits = 0x4b00007f

// SumPolyDegree is SumPoly's degree.
const SumPolyDegree = 5

// SumPoly holds the coefficients c0..c5 of the polynomial for 2^f on
// [0, 1], as f32 bits. c0 is 1 exactly (OneBits): at x = 0 both f and n
// are 0, so e^0 is exactly 1, and a log-sum-exp whose only finite term
// is 0 (a masked row, [0, -Inf, ...]) is exactly 0, as the interpreter
// and the shifted form give it (a c0 one step below 1, as a fit without
// the constraint has it, gives e^0 = 1 - 2^-24 and that row -2^-24).
//
// How c1..c5 were fitted, with p(f) = 1 + f q(f) and q of degree 4: a
// Remez exchange over six points in (0, 1] (the error at 0 is 0; each
// step's linear system solved in 40-digit arithmetic, the error's
// extrema found on 10^5 points in float64), minimising the largest
// |p(f)/2^f - 1| + r(f), where r(f) = 2^-24 2^-f (1 + f/2 + f^2/8)
// bounds the roundings of Horner's rule in f32 (the last FMA's half ulp
// of p, the ones before it scaled by f), so that the fit's own error is
// smaller where the rounding's is larger. Then the coefficients were
// rounded to f32, every choice within two f32 steps of each of c1..c5
// evaluated as the emitters evaluate it (FMA32, Horner's rule) on 2^18 +
// 1 points of [0, 1], the best 200 of them again on 2^22 + 1 points,
// and the best kept. TestSumPoly holds the result to SumPolyError.
var SumPoly = [SumPolyDegree + 1]uint32{OneBits, 0x3f31725a, 0x3e75ee38, 0x3d648766, 0x3c13df3c, 0x3af4437c}

// SumPolyError bounds the relative error of SumPoly, evaluated as the
// emitters do, against 2^f, in units of 2^-24, for every f32 f in [0, 1]
// (it is 2.333 at worst, near f = 0.926).
const SumPolyError = 2.34

// SumModel computes e^x by the steps of the emitters' exp for sums with
// the clamp (AVX2 and NEON), rounding every step to f32.
func SumModel(x float32) float32 {
	if x != x {
		return x
	}
	p, scale := sumFactors(x)
	return p * scale
}

// sumFactors returns SumModel's last two factors for x (not a NaN): the
// polynomial p = SumPoly(f) and 2^n, whose product is e^x.
func sumFactors(x float32) (p, scale float32) {
	x = min(max(x, f32(SumLoBits)), f32(HiBits))
	t := float32(x * f32(Log2eBits)) // rounded: Go may fuse x*log2e - n otherwise
	n := float32(math.Floor(float64(t)))
	f := t - n
	p = f32(SumPoly[SumPolyDegree])
	for k := SumPolyDegree - 1; k >= 0; k-- {
		p = FMA32(p, f, f32(SumPoly[k]))
	}
	return p, f32(math.Float32bits(n+f32(SumScaleBits)) << MantBits)
}

// SumError is the bound on the relative error of the exp for sums at x
// (-87 <= x, e^x finite): the rounding of t, |x| * 2^-24 of the result at
// most, and the rounding of log2(e) to f32, 0.224 |x| * 2^-24, with room
// to spare, plus the polynomial's own error and the roundings of
// Horner's rule, SumPolyError together, which stay below 4 * 2^-24 (the
// last product is exact: step 4).
func SumError(x float32) float64 {
	return (4 + 1.25*math.Abs(float64(x))) * 0x1p-24
}

// CheckSum reports whether got, the exp for sums of x (not a signalling
// NaN), keeps the contract above, and its error in units of 2^-24 of
// e^x, rounded up (0 where the contract asks for no accuracy).
func CheckSum(x, got float32) (int64, bool) {
	lo := f32(SumLoBits)
	switch {
	case x != x:
		return 0, got != got
	case x < lo:
		return 0, got >= 0 && float64(got) <= math.Exp(float64(lo))*(1+SumError(lo))
	}
	want := math.Exp(float64(x))
	if math.IsInf(float64(got), 1) {
		return 0, want*(1+SumError(x)) > math.MaxFloat32
	}
	e := math.Abs(float64(got)-want) / want
	return int64(math.Ceil(e / 0x1p-24)), e <= SumError(x)
}

// SumSweepPlan returns the plan of an unshifted log-sum-exp with one
// term per output over xs, as the stage plan.Unshifted|plan.SkipFinalize
// (so that its outputs are the exp for sums of xs, for CheckSumSweep),
// and its src bytes.
func SumSweepPlan(xs []float32) (*plan.Plan, []byte, error) {
	p, src := IdentityProblem(ops.Exp, xs)
	p.PostOps, p.Reduction = nil, plan.LogSumExp
	p.Dims, p.SrcStrides = append(p.Dims, 1), append(p.SrcStrides, 1)
	p.Reduce, p.DstStrides = append(p.Reduce, true), append(p.DstStrides, 0)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		return nil, nil, err
	}
	pl.Stage = plan.Unshifted | plan.SkipFinalize
	pl.Reduction = plan.LogSumExp // a stage keeps its alg: OfOne rewrites whole reductions
	return pl, src, nil
}

// CheckSumSweep holds dst, SumSweepPlan's output for xs, to CheckSum,
// as CheckSweep does the Exp post-op's.
func CheckSumSweep(xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	return CheckSweepOf("exp for sums", math.Exp, CheckSum, xs, dst)
}

// CheckSumModelSweep is CheckSumSweep for code that clamps (AVX2 and
// NEON), which must also give SumModel's value bit for bit (any NaN for a
// NaN): each of its steps is one f32 operation of the model.
func CheckSumModelSweep(xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	exact := func(x, got float32) (int64, bool) {
		u, ok := CheckSum(x, got)
		m := SumModel(x)
		return u, ok && (math.Float32bits(got) == math.Float32bits(m) || got != got && m != m)
	}
	return CheckSweepOf("exp for sums (SumModel's bits)", math.Exp, exact, xs, dst)
}

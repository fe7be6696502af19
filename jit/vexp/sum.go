package vexp

import (
	"math"

	"github.com/gdnn/gdnn/jit/plan"
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
//  3. p = SumPoly(f), a degree-5 minimax polynomial for 2^f on [0, 1]
//     (relative to 2^f), by Horner's rule with FMAs.
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

// SumPoly holds the coefficients c0..c5 of the minimax polynomial for 2^f
// on [0, 1], as f32 bits.
var SumPoly = [SumPolyDegree + 1]uint32{0x3f7fffff, 0x3f31727b, 0x3e75ead4, 0x3d64aa23, 0x3c134808, 0x3af61901}

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
// Horner's rule and of the last product, which stay below 4 * 2^-24.
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

// SumSweepProblem returns the problem of an unshifted log-sum-exp with
// one term per output over xs, and its src bytes: run as the stage
// plan.Unshifted|plan.SkipFinalize, its outputs are the exp for sums of
// xs, for CheckSumSweep.
func SumSweepProblem(xs []float32) (*plan.Problem, []byte) {
	p, src := IdentityProblem(plan.Exp, xs)
	p.PostOps, p.Reduction = nil, plan.LogSumExp
	p.Dims, p.SrcStrides = append(p.Dims, 1), append(p.SrcStrides, 1)
	p.Reduce, p.DstStrides = append(p.Reduce, true), append(p.DstStrides, 0)
	return p, src
}

// CheckSumSweep holds dst, SumSweepProblem's output for xs, to CheckSum,
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

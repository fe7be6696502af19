package vexp

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// MaxULP is the accuracy the emitters' exp is held to: within this many
// f32 ulps of float32(math.Exp(x)) for every finite x, with +Inf exactly
// where that overflows and the same NaN for a NaN. It is what tests that
// compare machine code with the interpreter allow for an Exp post-op.
const MaxULP = 1

// ULPs returns how many f32 values lie between a and b, plus one if they
// differ (0 when a == b; +0 and -0 are equal). Neither may be a NaN.
func ULPs(a, b float32) int64 {
	d := ordered(a) - ordered(b)
	if d < 0 {
		return -d
	}
	return d
}

// ordered maps f32 values onto integers in the same order, one apart per
// representable step.
func ordered(f float32) int64 {
	b := math.Float32bits(f)
	if b>>31 != 0 {
		return -int64(b &^ (1 << 31))
	}
	return int64(b)
}

// Sweep returns inputs for a test of an exp over the f32 bit patterns:
// the specials (zeros, infinities, NaNs of both signs and kinds with
// payloads, the largest and smallest magnitudes), the values within 16
// steps of every edge of the result (overflow, the smallest normal and
// the smallest subnormal result, the clamp bounds, 0), every step-th bit
// pattern over all of them, and every (step/8)-th pattern over
// [Lo, Hi], where the results are neither 0, 1 nor +Inf. step must be
// at least 8.
func Sweep(step uint32) []float32 {
	xs := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		f32(0x7fc00000), f32(0xffc00000), f32(0x7f800001), f32(0xff800001), // quiet and signalling NaNs
		f32(0x7fa5a5a5), f32(0xffd0beef), f32(0x7fffffff), f32(0xffffffff), // payloads
		// where an FMA's float64 sum lands on a tie of f32 values: the
		// hardware's single rounding (FMA32) and a double one part ways
		f32(0x343ffffd), f32(0xbb07a86a), f32(0xc110352e),
	}
	edges := []float32{
		float32(math.Log(math.MaxFloat32)),                 // the last finite result
		float32(math.Log(0x1p-126)),                        // the smallest normal result
		float32(math.Log(math.SmallestNonzeroFloat32)),     // the smallest subnormal result
		float32(math.Log(math.SmallestNonzeroFloat32 / 2)), // the last one that rounds up to it
		f32(LoBits), f32(HiBits), 0, 1, -1, 0.5 * math.Ln2, -0.5 * math.Ln2,
	}
	for _, e := range edges {
		b := math.Float32bits(e)
		for d := uint32(0); d <= 16; d++ {
			xs = append(xs, f32(b+d), f32(b-d))
		}
	}
	for b := uint64(0); b < 1<<32; b += uint64(step) {
		xs = append(xs, f32(uint32(b)))
	}
	fine := uint64(step / 8)
	for b := uint64(0); b <= uint64(HiBits&^(1<<31)); b += fine {
		xs = append(xs, f32(uint32(b)))
	}
	for b := uint64(1 << 31); b <= uint64(LoBits); b += fine {
		xs = append(xs, f32(uint32(b)))
	}
	return xs
}

// Check compares got, an exp's result for x, with plan.Eltwise's
// float32(math.Exp(x)) and returns the distance in ulps, and ok false
// when the result breaks the contract of MaxULP: a NaN must come out
// with the same bits, an overflow as exactly +Inf (and nothing else as
// +Inf), x at or below Lo as exactly +0.
func Check(x, got float32) (ulps int64, ok bool) {
	if x != x {
		return 0, math.Float32bits(got) == math.Float32bits(x)
	}
	want := float32(math.Exp(float64(x)))
	if got != got || math.IsInf(float64(want), 1) != math.IsInf(float64(got), 1) {
		return math.MaxInt64, false
	}
	if x <= f32(LoBits) {
		return 0, math.Float32bits(got) == 0
	}
	if math.IsInf(float64(want), 1) {
		return 0, true
	}
	ulps = ULPs(got, want)
	return ulps, ulps <= MaxULP
}

// Quiet returns x with a NaN made quiet, as arithmetic and conversions
// leave it.
func Quiet(x float32) float32 {
	if x != x {
		return f32(math.Float32bits(x) | 1<<22)
	}
	return x
}

// PostOpInput returns what reaches the post-op of IdentityProblem's
// kernel whose src holds x: x with a NaN made quiet, and -0 as +0 (that
// problem's value is the mean of one element, a sum from +0, as
// README's Semantics says).
func PostOpInput(x float32) float32 {
	if x == 0 {
		return 0
	}
	return Quiet(x)
}

// SweepProblem returns the problem that applies Exp to xs (an identity
// over len(xs) f32 elements with one post-op, so that lanes, tails and
// the scalar path all meet the specials) and its src bytes.
func SweepProblem(xs []float32) (*plan.Problem, []byte) { return IdentityProblem(ops.Exp, xs) }

// IdentityProblem returns the problem that applies the unary post-op
// kind to xs, as SweepProblem does Exp, and its src bytes.
func IdentityProblem(kind ops.Kind, xs []float32) (*plan.Problem, []byte) {
	n := int64(len(xs))
	p := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{n}, SrcStrides: []int64{1},
		Reduce: []bool{false}, DstStrides: []int64{1}, PostOps: []plan.PostOp{{Kind: kind}}}
	src := make([]byte, 4*n)
	for i, x := range xs {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(x))
	}
	return p, src
}

// CheckSweep holds dst, the SweepProblem's output for xs, to Check (a
// signalling NaN in xs is expected quietened: the load and the copy
// before the post-op quieten it, as the interpreter's conversions do).
// It returns the largest error in ulps and up to five descriptions of
// results that break the contract, with how many did.
func CheckSweep(xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	return CheckSweepOf("exp", math.Exp, Check, xs, dst)
}

// CheckSweepOf is CheckSweep for the function name, whose float64
// reference is ref and whose contract is check: the IdentityProblem's
// output dst for xs held to check.
func CheckSweepOf(name string, ref func(float64) float64, check func(x, got float32) (int64, bool),
	xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	for i, x := range xs {
		y := math.Float32frombits(binary.LittleEndian.Uint32(dst[4*i:]))
		u, ok := check(PostOpInput(x), y)
		if !ok {
			if nbad < 5 {
				bad = append(bad, fmt.Sprintf("%s(%v) (bits %#x) = %v (bits %#x), want %v", name, x, math.Float32bits(x),
					y, math.Float32bits(y), float32(ref(float64(x)))))
			}
			nbad++
			continue
		}
		worst = max(worst, u)
	}
	return worst, bad, nbad
}

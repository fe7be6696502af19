package vlog

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// Sweep returns inputs for a test of a log over the f32 bit patterns: the
// specials (zeros, infinities, NaNs of both signs and kinds with
// payloads, the largest and smallest magnitudes), the values within 16
// steps of every edge (the reduction's bounds Off and 2*Off in several
// binades, the smallest normal, the largest subnormal, 1 and its
// neighbours in the next binades), every pattern within 4096 steps of 1
// (where the result is tiny and all of r's bits count), every step-th
// bit pattern over all of them, and every (step/8)-th over the positive
// finite ones, where the result is neither a NaN nor infinite. step must
// be at least 8.
func Sweep(step uint32) []float32 {
	xs := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		f32(0x7fc00000), f32(0xffc00000), f32(0x7f800001), f32(0xff800001), // quiet and signalling NaNs
		f32(0x7fa5a5a5), f32(0xffd0beef), f32(0x7fffffff), f32(0xffffffff), // payloads
	}
	edges := []uint32{
		OffBits, TwoOffBits, OffBits - 1<<MantBits, TwoOffBits + 1<<MantBits, OffBits - 100<<MantBits,
		0x00aaaaab, 0x00555555, MinNormBits, OneBits, OneBits - 1<<MantBits, OneBits + 1<<MantBits, 0x00000010,
	}
	for _, b := range edges {
		for d := uint32(0); d <= 16; d++ {
			xs = append(xs, f32(b+d), f32(b-d))
		}
	}
	for d := uint32(0); d <= 4096; d++ {
		xs = append(xs, f32(OneBits+d), f32(OneBits-d))
	}
	for b := uint64(0); b < 1<<32; b += uint64(step) {
		xs = append(xs, f32(uint32(b)))
	}
	for b := uint64(0); b < InfBits; b += uint64(step / 8) {
		xs = append(xs, f32(uint32(b)))
	}
	return xs
}

// Check compares got, a log's result for x, with plan.Eltwise's
// float32(math.Log(x)) and returns the distance in ulps, and ok false
// when the result breaks the contract of MaxULP: a NaN x must come out
// with the same bits, any x < 0 as a NaN, log(±0) as -Inf, log(+Inf) as
// +Inf and log(1) as +0, exactly; every other result finite and within
// MaxULP.
func Check(x, got float32) (ulps int64, ok bool) {
	if x != x {
		return 0, math.Float32bits(got) == math.Float32bits(x)
	}
	want := float32(math.Log(float64(x)))
	switch {
	case want != want:
		return 0, got != got
	case math.IsInf(float64(want), 0) || want == 0:
		return 0, math.Float32bits(got) == math.Float32bits(want)
	case got != got || math.IsInf(float64(got), 0):
		return math.MaxInt64, false
	}
	ulps = vexp.ULPs(got, want)
	return ulps, ulps <= MaxULP
}

// SweepProblem returns the problem that applies Log to xs (an identity
// over len(xs) f32 elements with one post-op, so that lanes, tails and
// the scalar path all meet the specials) and its src bytes.
func SweepProblem(xs []float32) (*plan.Problem, []byte) { return vexp.IdentityProblem(ops.Log, xs) }

// CheckSweep holds dst, the SweepProblem's output for xs, to Check (a
// signalling NaN in xs is expected quietened, as for the exp: see
// vexp.CheckSweep). It returns the largest error in ulps and up to five
// descriptions of results that break the contract, with how many did.
func CheckSweep(xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	return vexp.CheckSweepOf("log", math.Log, Check, xs, dst)
}

// CheckModel returns a description of the results in dst, the
// SweepProblem's output for xs, that are not Model's bits (for
// vexp.PostOpInput(x), as CheckSweep), or "" when all are.
func CheckModel(xs []float32, dst []byte) string {
	n, first := 0, ""
	for i, x := range xs {
		x = vexp.PostOpInput(x)
		got, want := binary.LittleEndian.Uint32(dst[4*i:]), math.Float32bits(Model(x))
		if got != want {
			if n == 0 {
				first = fmt.Sprintf("log(%v) (bits %#x) = bits %#x, Model %#x", x, math.Float32bits(x), got, want)
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d results differ from vlog.Model, the first %s", n, len(xs), first)
}

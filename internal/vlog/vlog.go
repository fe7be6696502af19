// Package vlog describes the vector log that the emitters (amd64, arm64)
// generate for the Log post-op, once: its constants, and Model, the same
// steps in scalar Go, which is the algorithm's executable specification
// (it rounds every step as the machine code does, so the emitters'
// results are Model's bit for bit).
//
// The algorithm (a reduction by the bits of x, as in ARM's optimized
// routines, with the sum ordered for one ulp):
//
//  1. The specials are decided from x itself, at the end: a NaN x is
//     returned as it is (the same bits, as plan.Eltwise does), log(±0)
//     is -Inf, log(x < 0) (-Inf included) is a NaN, log(+Inf) is +Inf.
//     The steps below only ever see them as some finite garbage.
//  2. A subnormal x is multiplied by 2^23 (exact) and k starts at -23:
//     the integer steps below need a normal x, and flushing it to zero
//     would give -Inf where the result is about -100.
//  3. x = 2^k * m with m in [Off, 2*Off), Off = 2/3 rounded up, by
//     integer arithmetic on the bits: subtracting Off's bits carries
//     into the exponent field exactly when x's significand is at or
//     above Off's, so k is the arithmetic shift of the difference, and
//     its low 23 bits plus Off's bits are m. r = m - 1 is exact
//     (Sterbenz) and within [-1/3, 1/3]: a range centred on 0 keeps the
//     polynomial short, and log(1) comes out +0 exactly.
//  4. log(1 + r) = r + r^2 * P(r), P a degree-9 minimax polynomial for
//     (log1p(r) - r) / r^2 on the range of r (relative to log1p), by
//     Horner's rule with FMAs; c = (P * r) * r. The leading r is kept
//     out of the polynomial: it is exact, and r + c rounds once.
//  5. log(x) = k*Ln2Hi + (r + (c + k*Ln2Lo)), small terms first and the
//     largest last, in one FMA: Ln2Hi is ln2 with 15 significant bits,
//     so k*Ln2Hi is exact for every k (|k| <= 149), and rounding r + c
//     costs at most half an ulp of a result in the same binade (the
//     partial cancellation where k = ±1 meets m near 2*Off or Off).
//
// AVX-512 does steps 1 to 3 with its own instructions: VGETMANTPS and
// VGETEXPPS give the significand in [1, 2) and the exponent of any x
// (subnormals normalised), and halving a significand at or above 2*Off
// (adding one to k) gives step 3's m and k exactly; VFIXUPIMMPS sets the
// specials by x's class. Same m, k and steps after: the same bits.
//
// The emitters' results are within one f32 ulp of float32(math.Log(x))
// (plan.Eltwise) for every f32 x; their tests sweep the f32 bit patterns.
package vlog

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// The constants as f32 bit patterns, the form the emitters broadcast.
const (
	OffBits      = 0x3f2aaaab // Off, 2/3 rounded up: m's lower bound
	TwoOffBits   = 0x3faaaaab // 2*Off: a significand in [1, 2) at or above it is halved
	MantMask     = 0x007fffff // the significand field
	MantBits     = 23         // the exponent field's shift
	MinNormBits  = 0x00800000 // 2^-126, the smallest normal
	Scale23Bits  = 0x4b000000 // 2^23, the subnormals' scale
	NegScaleBits = 0xc1b80000 // -23.0, k's start for a scaled subnormal
	OneBits      = 0x3f800000
	HalfBits     = 0x3f000000
	Ln2HiBits    = 0x3f317200 // ln2 to 15 significant bits
	Ln2LoBits    = 0x35bfbe8e // ln2 - Ln2Hi, rounded to f32
	NegInfBits   = 0xff800000 // log(±0)
	InfBits      = 0x7f800000
	MaxBits      = 0x7f7fffff // MaxFloat32: above it only +Inf; unordered with a NaN
	NaNBits      = 0xffc00000 // log(x < 0): the NaN x86 gives an invalid operation
	PolyDegree   = 9
)

// Poly holds P's coefficients c0..c9 as f32 bits (c0 = -1/2, c1 = 1/3
// rounded, as log1p's series starts).
var Poly = [PolyDegree + 1]uint32{
	0xbf000000, 0x3eaaaaab, 0xbe7ffef8, 0x3e4ccc2b, 0xbe2adcb8,
	0x3e126ba2, 0xbdf8576e, 0x3dddb410, 0xbe064a6f, 0x3defc365,
}

// MaxULP is the accuracy the emitters' log is held to: within this many
// f32 ulps of float32(math.Log(x)) for every finite x > 0, the specials
// exact. It is the exp's, so vexp.Near serves chains ending in Log too.
const MaxULP = vexp.MaxULP

// EndsInLog reports whether Log is the last of ops (see vexp.EndsInExp
// for why tests put it last).
func EndsInLog(postOps []plan.PostOp) bool {
	return len(postOps) > 0 && postOps[len(postOps)-1].Kind == ops.Log
}

// Model computes log(x) by the emitters' steps, rounding every step to
// f32 as they do.
func Model(x float32) float32 {
	switch {
	case x != x:
		return x
	case x == 0:
		return f32(NegInfBits)
	case x < 0:
		return f32(NaNBits)
	case x > f32(MaxBits):
		return x
	}
	k := float32(0)
	if x < f32(MinNormBits) {
		x *= f32(Scale23Bits)
		k = f32(NegScaleBits)
	}
	u := math.Float32bits(x) - OffBits
	k += float32(int32(u) >> MantBits)
	r := f32(u&MantMask+OffBits) - 1
	p := f32(Poly[PolyDegree])
	for i := PolyDegree - 1; i >= 0; i-- {
		p = vexp.FMA32(p, r, f32(Poly[i]))
	}
	c := p * r
	c *= r
	c = vexp.FMA32(k, f32(Ln2LoBits), c)
	return vexp.FMA32(k, f32(Ln2HiBits), r+c)
}

func f32(b uint32) float32 { return math.Float32frombits(b) }

package dtypes

import "math"

// The f16 conversions on bit patterns, written for the bulk loops: the
// common case (a normal number in and out) is one unsigned range compare
// and a few integer operations, with no table and no loop, so each
// function inlines; zeros, subnormals, Inf and NaN go to an out-of-line
// function the branch predictor learns to skip on ordinary tensor data.

// f16ToF32Bits widens the f16 pattern h to f32 bits.
func f16ToF32Bits(h uint16) uint32 {
	sign := uint32(h&0x8000) << 16
	em := uint32(h & 0x7fff)
	// Normal: 0x0400 <= em < 0x7c00. Moving the exponent field from f16's
	// bias 15 to f32's 127 is adding 112 to it.
	if em-0x0400 < 0x7c00-0x0400 {
		return sign | (em<<13 + 112<<23)
	}
	return sign | f16SpecialToF32Bits(em)
}

// f16SpecialToF32Bits widens an unsigned f16 zero, subnormal, Inf or NaN.
//
//go:noinline
func f16SpecialToF32Bits(em uint32) uint32 {
	switch {
	case em == 0x7c00:
		return 0x7f800000
	case em > 0x7c00: // NaN: keep the payload, set the quiet bit
		return 0x7fc00000 | (em&0x03ff)<<13
	}
	// Zero or subnormal: em * 2^-24, exact in f32.
	return math.Float32bits(float32(em) * 0x1p-24)
}

// f32ToF16Bits rounds the f32 pattern u to f16, ties to even.
func f32ToF16Bits(u uint32) uint16 {
	sign := uint16(u>>16) & 0x8000
	a := u & 0x7fffffff
	// f16 normal range before rounding: 2^-14 <= |f| < 2^16. Rounding may
	// carry into the exponent, up to 0x7c00 (Inf) from 65520 on, which is
	// the right answer.
	if a-0x38800000 < 0x47800000-0x38800000 {
		// Half an f16 ulp minus one, plus the kept lsb: ties go to even.
		a += 0x0fff + (a>>13)&1
		return sign | uint16((a-112<<23)>>13)
	}
	return sign | f32SpecialToF16Bits(a)
}

// f32SpecialToF16Bits narrows an unsigned f32 outside f16's normal range:
// Inf, NaN, too large (Inf), or small enough for a subnormal or zero.
//
//go:noinline
func f32SpecialToF16Bits(a uint32) uint16 {
	switch {
	case a > 0x7f800000: // NaN: the upper payload, made quiet
		return uint16(0x7c00 | 0x0200 | (a&0x007fffff)>>13)
	case a >= 0x47800000:
		return 0x7c00
	}
	// Adding 0.5 puts the f16 subnormal's bits at the bottom of the sum's
	// mantissa, rounded to nearest even by the FPU; 2^-14's neighbours
	// round up into the smallest normal the same way.
	return uint16(math.Float32bits(math.Float32frombits(a)+0.5) - 0x3f000000)
}

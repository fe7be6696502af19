package dtypes

import "math"

// BF16ToF32 widens the bf16 bit pattern b to f32. It is exact: bf16 is the
// upper half of an f32.
func BF16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// F32ToBF16 rounds f to the nearest bf16, ties to even. NaN stays NaN and
// is made quiet; finite values past the bf16 range round to ±Inf.
func F32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		// Keep sign and the upper payload; set the quiet bit so that a
		// payload living only in the low half cannot turn NaN into Inf.
		return uint16(u>>16) | 0x0040
	}
	// Add half an ulp of bf16, minus one when the kept lsb is even, so
	// that exact halves round to the even neighbour.
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// F16ToF32 widens the f16 (IEEE binary16) bit pattern h to f32; exact.
// A NaN keeps its sign and payload and comes out quiet.
func F16ToF32(h uint16) float32 { return math.Float32frombits(f16ToF32Bits(h)) }

// F32ToF16 rounds f to the nearest f16, ties to even. NaN stays NaN and is
// made quiet; values past the f16 range (65504) round to ±Inf.
func F32ToF16(f float32) uint16 { return f32ToF16Bits(math.Float32bits(f)) }

package dtypes

import (
	"math"

	"github.com/x448/float16"
)

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
func F16ToF32(h uint16) float32 { return float16.Frombits(h).Float32() }

// F32ToF16 rounds f to the nearest f16, ties to even. NaN stays NaN and is
// made quiet; values past the f16 range (65504) round to ±Inf.
func F32ToF16(f float32) uint16 {
	h := uint16(float16.Fromfloat32(f))
	if h&0x7c00 == 0x7c00 && h&0x03ff != 0 {
		h |= 0x0200
	}
	return h
}

// BF16ToF32Slice widens bf16 values of src into dst, as many as the shorter
// of the two holds, and returns that count.
func BF16ToF32Slice(dst []float32, src []uint16) int {
	n := min(len(dst), len(src))
	for i, b := range src[:n] {
		dst[i] = BF16ToF32(b)
	}
	return n
}

// F32ToBF16Slice rounds values of src into dst as bf16, as many as the
// shorter of the two holds, and returns that count.
func F32ToBF16Slice(dst []uint16, src []float32) int {
	n := min(len(dst), len(src))
	for i, f := range src[:n] {
		dst[i] = F32ToBF16(f)
	}
	return n
}

// F16ToF32Slice widens f16 values of src into dst, as many as the shorter
// of the two holds, and returns that count.
func F16ToF32Slice(dst []float32, src []uint16) int {
	n := min(len(dst), len(src))
	for i, h := range src[:n] {
		dst[i] = F16ToF32(h)
	}
	return n
}

// F32ToF16Slice rounds values of src into dst as f16, as many as the
// shorter of the two holds, and returns that count.
func F32ToF16Slice(dst []uint16, src []float32) int {
	n := min(len(dst), len(src))
	for i, f := range src[:n] {
		dst[i] = F32ToF16(f)
	}
	return n
}

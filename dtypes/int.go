package dtypes

import "math"

// Conversions from f32 to the integer data types, as oneDNN quantizes: round
// to nearest, ties to even, saturating at the type's range. NaN, which has
// no integer, gives 0 (as AArch64's FCVTNS does; the amd64 kernels mask it).

// IsInt8 reports whether t is one of the 8-bit integer types s8 and u8.
func (t DataType) IsInt8() bool { return t == S8 || t == U8 }

// IsInt reports whether t is one of the integer reduction types s8, u8, s32.
func (t DataType) IsInt() bool { return t == S8 || t == U8 || t == S32 }

// integer is what the exact integer paths need to know of an integer
// type: whether it is signed. Boolean is an unsigned byte holding 0 or 1.
type integer struct{ signed bool }

// integers lists the integer data types and Boolean; one entry per type
// keeps every question about them in one place.
var integers = map[DataType]integer{
	S8: {signed: true}, U8: {}, S16: {signed: true}, U16: {},
	S32: {signed: true}, U32: {}, S64: {signed: true}, U64: {}, Boolean: {},
}

// IsInteger reports whether t is one of the integer types s8, u8, s16,
// u16, s32, u32, s64 and u64 (Boolean is not).
func (t DataType) IsInteger() bool {
	_, ok := integers[t]
	return ok && t != Boolean
}

// IsSigned reports whether t is a signed integer type.
func (t DataType) IsSigned() bool { return integers[t].signed }

// IsExact reports whether data of type t is reduced in exact integer
// arithmetic, whatever the reduction: the integers wider than 8 bits and
// Boolean. (s8 and u8 data reduce in f32, as oneDNN's reduction does,
// except in the bitwise and logical reductions, which are exact for
// every integer type.)
func (t DataType) IsExact() bool {
	_, ok := integers[t]
	return ok && !t.IsInt8()
}

// roundSat rounds f to nearest even and clamps it to [lo, hi]; NaN gives 0.
func roundSat(f float32, lo, hi float64) float64 {
	if f != f {
		return 0
	}
	r := math.RoundToEven(float64(f))
	return min(max(r, lo), hi)
}

// F32ToS8 rounds f to an int8, ties to even, saturating; NaN gives 0.
func F32ToS8(f float32) int8 { return int8(roundSat(f, math.MinInt8, math.MaxInt8)) }

// F32ToU8 rounds f to a uint8, ties to even, saturating; NaN gives 0.
func F32ToU8(f float32) uint8 { return uint8(roundSat(f, 0, math.MaxUint8)) }

// F32ToS32 rounds f to an int32, ties to even, saturating; NaN gives 0.
// Every f32 of magnitude 2^31 or more saturates (the largest f32 below
// 2^31 is 2^31-128).
func F32ToS32(f float32) int32 { return int32(roundSat(f, math.MinInt32, math.MaxInt32)) }

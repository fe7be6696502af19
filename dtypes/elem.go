package dtypes

import (
	"encoding/binary"
	"math"
)

// LoadF32 and StoreF32 are the one definition of how gdnn reads and writes
// a single element of a tensor buffer (little-endian, as gdnn's buffers
// are), so that the interpreter, the oracle and the tests' references
// round every element the same way, bit for bit. Both take the data
// types of reduction data and binary operands: F32, BF16, F16, S8, U8 and
// S32; any other data type is taken as F16.

// LoadF32 returns element i of the buffer b of data type dt as f32. The
// float types and the 8-bit integers widen exactly; an s32 of magnitude
// above 2^24 rounds to the nearest f32, ties to even.
func LoadF32(dt DataType, b []byte, i int64) float32 {
	switch dt {
	case F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	case BF16:
		return BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
	case S8:
		return float32(int8(b[i]))
	case U8:
		return float32(b[i])
	case S32:
		return float32(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
}

// StoreF32 writes f as element i of the buffer b of data type dt, rounded
// as gdnn rounds every result: F32 keeps f's bits; BF16 and F16 round to
// nearest, ties to even, NaN made quiet (F32ToBF16, F32ToF16); S8, U8 and
// S32 round to nearest, ties to even, saturate, and take 0 for NaN
// (F32ToS8, F32ToU8, F32ToS32). Only the element's bytes are written.
func StoreF32(dt DataType, b []byte, i int64, f float32) {
	switch dt {
	case F32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	case BF16:
		binary.LittleEndian.PutUint16(b[2*i:], F32ToBF16(f))
	case S8:
		b[i] = byte(F32ToS8(f))
	case U8:
		b[i] = F32ToU8(f)
	case S32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(F32ToS32(f)))
	default:
		binary.LittleEndian.PutUint16(b[2*i:], F32ToF16(f))
	}
}

// Package dtypes defines the element data types gdnn knows and the
// conversions between f32 and the 16-bit float formats bf16 and f16.
//
// Conversions to 16-bit round to nearest, ties to even; NaN stays NaN and
// comes out quiet; values beyond the target's range become ±Inf.
package dtypes

import "fmt"

// DataType is the element type of a tensor. The names match oneDNN Graph's
// (f32, bf16, f16, s32, ...), and the zero value is Undef.
type DataType int

// The data types. F32, BF16 and F16 are the float data of the reductions
// and the ops fused with them; S8 and U8 data are reduced too (through
// Dequantize and Quantize, or as a gdnn extension straight into a
// reduction), and S32 takes integer results and binary operands; S32 and
// S64 carry axes. The integers S16 to U64 and Boolean are reduced exactly,
// in integer arithmetic (see IsExact); U32, U64, S16 and U16 are gdnn
// extensions (oneDNN Graph has no such types), named as oneDNN would.
const (
	Undef DataType = iota
	F32
	BF16
	F16
	S32
	S64
	S8
	U8
	Boolean
	F64
	U32
	U64
	S16
	U16
)

var names = [...]string{
	Undef:   "undef",
	F32:     "f32",
	BF16:    "bf16",
	F16:     "f16",
	S32:     "s32",
	S64:     "s64",
	S8:      "s8",
	U8:      "u8",
	Boolean: "boolean",
	F64:     "f64",
	U32:     "u32",
	U64:     "u64",
	S16:     "s16",
	U16:     "u16",
}

var sizes = [...]int{
	Undef: 0, F32: 4, BF16: 2, F16: 2, S32: 4, S64: 8, S8: 1, U8: 1, Boolean: 1, F64: 8,
	U32: 4, U64: 8, S16: 2, U16: 2,
}

// String returns the oneDNN name of t ("f32", "bf16", ...).
func (t DataType) String() string {
	if t < 0 || int(t) >= len(names) {
		return fmt.Sprintf("DataType(%d)", int(t))
	}
	return names[t]
}

// Size returns the size in bytes of one element of t, or 0 for Undef and
// unknown values.
func (t DataType) Size() int {
	if t < 0 || int(t) >= len(sizes) {
		return 0
	}
	return sizes[t]
}

// Valid reports whether t is one of the named data types other than Undef.
func (t DataType) Valid() bool { return t > Undef && int(t) < len(names) }

// IsFloat reports whether t is one of the reduction data types f32, bf16, f16.
func (t DataType) IsFloat() bool { return t == F32 || t == BF16 || t == F16 }

// Parse returns the data type named s (as String spells it).
func Parse(s string) (DataType, error) {
	for i, n := range names {
		if n == s {
			return DataType(i), nil
		}
	}
	return Undef, fmt.Errorf("dtypes: unknown data type %q", s)
}

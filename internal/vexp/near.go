package vexp

import (
	"encoding/binary"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// Tolerance for differential tests that compare machine code with the
// interpreter (or with a reference built on plan.Eltwise) bit for bit.
// The machine code's exp is within MaxULP f32 ulps of plan.Eltwise's,
// so the outputs of a problem whose post-ops end in Exp may differ by
// what rounding two f32 values that far apart to the dst type gives
// (Near). An op after an Exp could magnify the difference without
// bound (a Subtract of a close operand), so such tests put Exp last
// (EndsInExp); every other output stays bit for bit. Package vlog's log
// is held to the same MaxULP, so Near serves problems ending in Log
// (vlog.EndsInLog) too.

// EndsInExp reports whether Exp is the last of postOps.
func EndsInExp(postOps []plan.PostOp) bool {
	return len(postOps) > 0 && postOps[len(postOps)-1].Kind == ops.Exp
}

// Near reports whether a and b, one element of dt each (its
// little-endian bytes, neither a NaN), are what rounding two f32 values
// at most MaxULP ulps apart to dt can give. Rounding is monotone, so
// they are at most MaxULP values of dt apart, or, where dt is finer than
// f32 (s32 past 2^24), at most MaxULP f32 ulps apart; but an f32 +Inf or
// -Inf matches only itself (an f32 overflow is exact).
func Near(dt dtypes.DataType, a, b []byte) bool { return NearULPs(dt, a, b, MaxULP) }

// NearULPs is Near for two f32 values at most n ulps apart: what tests
// allow for the post-ops of package vfn, each held to its own bound.
func NearULPs(dt dtypes.DataType, a, b []byte, n int64) bool {
	var d int64
	switch dt {
	case dtypes.F32:
		// An f32 overflow is +Inf exactly (Check): not one step from
		// MaxFloat32 here. A 16-bit dst may round one side to Inf.
		x, y := f32(binary.LittleEndian.Uint32(a)), f32(binary.LittleEndian.Uint32(b))
		if math.IsInf(float64(x), 0) || math.IsInf(float64(y), 0) {
			return x == y
		}
		return x == x && y == y && ULPs(x, y) <= n
	case dtypes.S32:
		x, y := int32(binary.LittleEndian.Uint32(a)), int32(binary.LittleEndian.Uint32(b))
		if ULPs(float32(x), float32(y)) <= n {
			return true
		}
		d = int64(x) - int64(y)
	case dtypes.S8:
		d = int64(int8(a[0])) - int64(int8(b[0]))
	case dtypes.U8:
		d = int64(a[0]) - int64(b[0])
	case dtypes.BF16, dtypes.F16:
		x, y := binary.LittleEndian.Uint16(a), binary.LittleEndian.Uint16(b)
		if isNaN16(dt, x) || isNaN16(dt, y) {
			return false
		}
		d = ordered16(x) - ordered16(y)
	default:
		return false
	}
	return -n <= d && d <= n
}

// isNaN16 reports whether bits, a value of the 16-bit float type dt, is
// a NaN.
func isNaN16(dt dtypes.DataType, bits uint16) bool {
	if dt == dtypes.BF16 {
		return bits&0x7f80 == 0x7f80 && bits&0x7f != 0
	}
	return bits&0x7c00 == 0x7c00 && bits&0x3ff != 0
}

// ordered16 maps the bits of a 16-bit float (sign and magnitude, bf16
// or f16) onto integers in the same order, one apart per step.
func ordered16(b uint16) int64 {
	if b>>15 != 0 {
		return -int64(b &^ (1 << 15))
	}
	return int64(b)
}

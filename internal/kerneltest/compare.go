package kerneltest

import (
	"encoding/binary"
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/vexp"
)

// SameValue compares element i of a and b, of type dt: equal bits, or
// both NaN, or (with anyZero) both zero of either sign.
func SameValue(dt dtypes.DataType, a, b []byte, i int64, anyZero bool) bool {
	x, y := dtypes.LoadF32(dt, a, i), dtypes.LoadF32(dt, b, i)
	if x != x && y != y || anyZero && x == 0 && y == 0 {
		return true
	}
	switch dt.Size() {
	case 4:
		return binary.LittleEndian.Uint32(a[4*i:]) == binary.LittleEndian.Uint32(b[4*i:])
	case 1:
		return a[i] == b[i]
	}
	return binary.LittleEndian.Uint16(a[2*i:]) == binary.LittleEndian.Uint16(b[2*i:])
}

// CompareExact checks got, a dst of type dt, against want: the outputs
// (the elements written marks) bit-equal (any NaN matches any NaN; with
// anyZero, +0 matches -0), every other byte untouched. It returns a
// description of the first difference, or "".
func CompareExact(dt dtypes.DataType, got, want []byte, written map[int64]bool, anyZero bool) string {
	return CompareNear(dt, got, want, written, anyZero, 0)
}

// CompareNear is CompareExact, except that outputs may be tol f32 ulps
// apart (vexp.NearULPs): machine code against a reference, for a
// problem whose post-ops end in an op that is near rather than exact
// (vfn.Tolerance).
func CompareNear(dt dtypes.DataType, got, want []byte, written map[int64]bool, anyZero bool, tol int64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("dst has %d bytes, want %d", len(got), len(want))
	}
	sz := int64(dt.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		g, w := got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz]
		if written[i] {
			if !SameValue(dt, got, want, i, anyZero) && !(tol > 0 && vexp.NearULPs(dt, g, w, tol)) {
				return fmt.Sprintf("dst[%d] = %v, want %v", i, dtypes.LoadF32(dt, got, i), dtypes.LoadF32(dt, want, i))
			}
		} else if string(g) != string(w) {
			return fmt.Sprintf("dst[%d] (not an output) was overwritten", i)
		}
	}
	return ""
}

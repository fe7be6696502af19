package interp

import (
	"encoding/binary"
	"math"
	"sync"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
)

// littleEndian reports whether the machine stores numbers as the buffers
// do; only then may a byte buffer be read through a typed view.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f16Table maps every f16 bit pattern to its f32 value; a 256 KiB table
// lookup is much faster than decoding each element. Built on first use.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = dtypes.F16ToF32(uint16(i))
	}
	return &t
})

// bf16 widens bf16 bits to f32 (exact: bf16 is the top half of an f32).
func bf16(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// view reads elements of one data type from a little-endian byte buffer.
// When the buffer is suitably aligned on a little-endian machine it also
// exposes the bytes as a typed slice, which the hot loops use; otherwise
// every read decodes bytes (slow, but only misaligned callers pay).
type view struct {
	dt    dtypes.DataType
	raw   []byte
	f32   []float32
	u16   []uint16
	s8    []int8
	u8    []uint8
	s32   []int32
	f16   *[1 << 16]float32
	typed bool
}

// set points v at b holding elements of dt. The typed slices cover whole
// elements of b only, so indexing them can never pass the end of b.
func (v *view) set(dt dtypes.DataType, b []byte) {
	*v = view{dt: dt, raw: b}
	if dt == dtypes.F16 {
		v.f16 = f16Table()
	}
	size := dt.Size()
	if !littleEndian || len(b) < size {
		// An empty view reads nothing; the byte path is as good.
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if uintptr(p)%uintptr(size) != 0 {
		return
	}
	switch dt {
	case dtypes.F32:
		v.f32 = unsafe.Slice((*float32)(p), len(b)/4)
	case dtypes.S8:
		v.s8 = unsafe.Slice((*int8)(p), len(b))
	case dtypes.U8:
		v.u8 = b
	case dtypes.S32:
		v.s32 = unsafe.Slice((*int32)(p), len(b)/4)
	default:
		v.u16 = unsafe.Slice((*uint16)(p), len(b)/2)
	}
	v.typed = true
}

// at returns element i widened to f32.
func (v *view) at(i int) float32 {
	if v.typed {
		switch v.dt {
		case dtypes.F32:
			return v.f32[i]
		case dtypes.BF16:
			return bf16(v.u16[i])
		case dtypes.S8:
			return float32(v.s8[i])
		case dtypes.U8:
			return float32(v.u8[i])
		case dtypes.S32:
			return float32(v.s32[i])
		default:
			return v.f16[v.u16[i]]
		}
	}
	switch v.dt {
	case dtypes.F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(v.raw[4*i:]))
	case dtypes.BF16:
		return bf16(binary.LittleEndian.Uint16(v.raw[2*i:]))
	case dtypes.S8:
		return float32(int8(v.raw[i]))
	case dtypes.U8:
		return float32(v.raw[i])
	case dtypes.S32:
		return float32(int32(binary.LittleEndian.Uint32(v.raw[4*i:])))
	default:
		return v.f16[binary.LittleEndian.Uint16(v.raw[2*i:])]
	}
}

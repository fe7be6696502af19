package bench

import (
	"math"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// buffer is the memory of one tensor in its data type: f32 in f32,
// bf16/f16 as their bit patterns in u16, s8, u8, s32 and f64 as
// themselves.
type buffer struct {
	dt  dtypes.DataType
	f32 []float32
	f64 []float64
	u16 []uint16
	s8  []int8
	u8  []uint8
	s32 []int32
	// raw holds the other integer types and boolean (s16, u16, u32, s64,
	// u64: gdnn extensions reduced exactly), little-endian.
	raw []byte
}

// rawTypes are the data types a buffer keeps in raw: each one's range,
// for set's saturation.
var rawTypes = map[dtypes.DataType]struct{ lo, hi float64 }{
	dtypes.S16: {math.MinInt16, math.MaxInt16}, dtypes.U16: {0, math.MaxUint16},
	dtypes.U32: {0, math.MaxUint32}, dtypes.S64: {math.MinInt64, math.MaxInt64},
	dtypes.U64: {0, math.MaxUint64}, dtypes.Boolean: {0, 1},
}

// spanOf returns how many elements a tensor with dims and strides spans
// (1 + the largest offset; 0 for an empty tensor). Strides must be given
// for every dim: a tensor whose layout is still to be chosen has no span.
func spanOf(dims, strides []int64) (int64, error) {
	if len(strides) != len(dims) {
		return 0, status.Errorf(status.InvalidArguments, "%d strides for %d dims: the layout is not resolved", len(strides), len(dims))
	}
	span := int64(1)
	for i, d := range dims {
		if d == 0 {
			return 0, nil
		}
		if strides[i] < 0 {
			return 0, status.Errorf(status.Unimplemented, "negative stride %d in dim %d", strides[i], i)
		}
		if d > 1 && strides[i] > (maxElements-span)/(d-1) {
			return 0, status.Errorf(status.OutOfMemory, "strides %v over dims %v span more than %d elements", strides, dims, int64(maxElements))
		}
		span += (d - 1) * strides[i]
	}
	return span, nil
}

// newBuffer allocates n elements of dt, filled with a NaN pattern so that
// elements a kernel fails to write are caught.
func newBuffer(dt dtypes.DataType, n int64) (buffer, error) {
	b := buffer{dt: dt}
	switch dt {
	case dtypes.F32:
		b.f32 = largePageSlice[float32](n)
		nan := float32(math.NaN())
		for i := range b.f32 {
			b.f32[i] = nan
		}
	case dtypes.F64:
		b.f64 = largePageSlice[float64](n)
		nan := math.NaN()
		for i := range b.f64 {
			b.f64[i] = nan
		}
	case dtypes.BF16, dtypes.F16:
		b.u16 = largePageSlice[uint16](n)
		nan := uint16(0x7fc1)
		if dt == dtypes.F16 {
			nan = 0x7e01
		}
		for i := range b.u16 {
			b.u16[i] = nan
		}
	// Integers have no NaN: an unlikely value stands for "never written".
	case dtypes.S8:
		b.s8 = largePageSlice[int8](n)
		for i := range b.s8 {
			b.s8[i] = -77
		}
	case dtypes.U8:
		b.u8 = largePageSlice[uint8](n)
		for i := range b.u8 {
			b.u8[i] = 0xa5
		}
	case dtypes.S32:
		b.s32 = largePageSlice[int32](n)
		for i := range b.s32 {
			b.s32[i] = -0x21524111
		}
	default:
		if _, ok := rawTypes[dt]; !ok {
			return b, status.Errorf(status.Unimplemented, "data type %s has no buffer support in gdnnbench", dt)
		}
		b.raw = largePageSlice[byte](n * int64(dt.Size()))
		for i := range b.raw {
			b.raw[i] = 0xa5
		}
	}
	return b, nil
}

// data returns the slice the partition API takes.
func (b buffer) data() any {
	switch b.dt {
	case dtypes.F32:
		return b.f32
	case dtypes.S8:
		return b.s8
	case dtypes.U8:
		return b.u8
	case dtypes.S32:
		return b.s32
	case dtypes.F64:
		return b.f64
	}
	if b.raw != nil {
		return b.raw
	}
	return b.u16
}

// bytes returns the buffer's memory.
func (b buffer) bytes() []byte {
	switch {
	case b.f32 != nil:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f32))), 4*len(b.f32))
	case b.u16 != nil:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.u16))), 2*len(b.u16))
	case b.s8 != nil:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.s8))), len(b.s8))
	case b.s32 != nil:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.s32))), 4*len(b.s32))
	case b.f64 != nil:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.f64))), 8*len(b.f64))
	case b.raw != nil:
		return b.raw
	}
	return b.u8
}

// as returns a buffer of type dt over b's memory, which dt reads as
// elements of its own size (a sum post-op reads dst as a type of the same
// size, as oneDNN's does).
func (b buffer) as(dt dtypes.DataType) buffer {
	raw := b.bytes()
	v := buffer{dt: dt}
	if len(raw) == 0 {
		return v
	}
	p := unsafe.Pointer(unsafe.SliceData(raw))
	switch dt {
	case dtypes.F32:
		v.f32 = unsafe.Slice((*float32)(p), len(raw)/4)
	case dtypes.BF16, dtypes.F16:
		v.u16 = unsafe.Slice((*uint16)(p), len(raw)/2)
	case dtypes.S8:
		v.s8 = unsafe.Slice((*int8)(p), len(raw))
	case dtypes.U8:
		v.u8 = raw
	case dtypes.S32:
		v.s32 = unsafe.Slice((*int32)(p), len(raw)/4)
	case dtypes.F64:
		v.f64 = unsafe.Slice((*float64)(p), len(raw)/8)
	default:
		v.raw = raw
	}
	return v
}

// set stores v rounded to the buffer's type (nearest even); the integer
// types saturate (from v itself, so that every s32 is reachable).
func (b buffer) set(i int64, v float64) {
	switch b.dt {
	case dtypes.F32:
		b.f32[i] = float32(v)
	case dtypes.BF16:
		b.u16[i] = dtypes.F32ToBF16(float32(v))
	case dtypes.F16:
		b.u16[i] = dtypes.F32ToF16(float32(v))
	case dtypes.S8:
		b.s8[i] = int8(intRound(v, math.MinInt8, math.MaxInt8))
	case dtypes.U8:
		b.u8[i] = uint8(intRound(v, 0, math.MaxUint8))
	case dtypes.S32:
		b.s32[i] = int32(intRound(v, math.MinInt32, math.MaxInt32))
	case dtypes.F64:
		b.f64[i] = v
	default:
		r := rawTypes[b.dt]
		w := intRound(v, r.lo, r.hi)
		u := uint64(int64(w))
		if w >= 1<<63 {
			u = uint64(w)
		}
		sz := int64(b.dt.Size())
		for k := range sz {
			b.raw[i*sz+k] = byte(u >> (8 * k))
		}
	}
}

// intRound rounds v to nearest even and clamps it to [lo, hi]; NaN gives 0.
func intRound(v, lo, hi float64) float64 {
	if v != v {
		return 0
	}
	return min(max(math.RoundToEven(v), lo), hi)
}

// get returns element i widened exactly to float64.
func (b buffer) get(i int64) float64 {
	switch b.dt {
	case dtypes.F32:
		return float64(b.f32[i])
	case dtypes.BF16:
		return float64(math.Float32frombits(uint32(b.u16[i]) << 16))
	case dtypes.S8:
		return float64(b.s8[i])
	case dtypes.U8:
		return float64(b.u8[i])
	case dtypes.S32:
		return float64(b.s32[i])
	case dtypes.F64:
		return b.f64[i]
	case dtypes.F16:
		return float64(dtypes.F16ToF32(b.u16[i]))
	}
	// An s64 or u64 past 2^53 rounds to nearest even.
	u := b.rawBits(i)
	if b.dt.IsSigned() {
		sh := 64 - 8*uint(b.dt.Size())
		return float64(int64(u<<sh) >> sh)
	}
	return float64(u)
}

// rawBits returns the bits of element i of a raw buffer, zero-extended.
func (b buffer) rawBits(i int64) uint64 {
	sz := int64(b.dt.Size())
	var u uint64
	for k := sz - 1; k >= 0; k-- {
		u = u<<8 | uint64(b.raw[i*sz+k])
	}
	return u
}

// bits returns the raw bits of element i (for bitwise comparisons).
func (b buffer) bits(i int64) uint64 {
	switch b.dt {
	case dtypes.F32:
		return uint64(math.Float32bits(b.f32[i]))
	case dtypes.F64:
		return math.Float64bits(b.f64[i])
	case dtypes.S8:
		return uint64(uint8(b.s8[i]))
	case dtypes.U8:
		return uint64(b.u8[i])
	case dtypes.S32:
		return uint64(uint32(b.s32[i]))
	}
	if b.raw != nil {
		return b.rawBits(i)
	}
	return uint64(b.u16[i])
}

// roundTo rounds v to dt as a store of gdnn's f32 result would (f64
// keeps v, as gdnn's float64 result): through f32, then to nearest even, saturating for the integer types (NaN, which
// has no integer, is 0), as oneDNN quantizes.
func roundTo(dt dtypes.DataType, v float64) float64 {
	switch dt {
	case dtypes.F64:
		return v
	case dtypes.BF16:
		return float64(math.Float32frombits(uint32(dtypes.F32ToBF16(float32(v))) << 16))
	case dtypes.F16:
		return float64(dtypes.F16ToF32(dtypes.F32ToF16(float32(v))))
	case dtypes.S8:
		return float64(dtypes.F32ToS8(float32(v)))
	case dtypes.U8:
		return float64(dtypes.F32ToU8(float32(v)))
	case dtypes.S32:
		return float64(dtypes.F32ToS32(float32(v)))
	}
	return float64(float32(v))
}

// forEachIndex calls f for every logical index of dims in row-major order
// with the linear logical position and the offsets in each strided view.
// views holds one stride vector per tensor (0 entries broadcast).
func forEachIndex(dims []int64, views [][]int64, f func(pos int64, offs []int64)) {
	n, _ := numElements(dims)
	if n == 0 {
		return
	}
	rank := len(dims)
	idx := make([]int64, rank)
	offs := make([]int64, len(views))
	for pos := int64(0); pos < n; pos++ {
		f(pos, offs)
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			for v := range views {
				offs[v] += views[v][d]
			}
			if idx[d] < dims[d] {
				break
			}
			for v := range views {
				offs[v] -= views[v][d] * dims[d]
			}
			idx[d] = 0
		}
	}
}

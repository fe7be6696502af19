package partition

import (
	"reflect"
	"slices"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/x448/float16"
)

// Tensor is a logical tensor with its data: a view of a Go slice, never a
// copy. The slice must stay untouched by other goroutines while an Execute
// that uses it runs.
type Tensor struct {
	lt  graph.LogicalTensor
	buf []byte
}

// NewTensor wraps data for the logical tensor lt without copying it. data
// is a slice whose element type is, or has as its underlying type:
// float32 (f32), float64 (f64), uint16 (the bits of bf16 or f16, or
// u16), int8, int16, int32, int64, uint32, uint64 (s8, s16, s32, s64, u32,
// u64), bool (boolean), or byte (u8, or raw little-endian elements of any
// type). So a
// framework's own types work as they are: a []BFloat16 with
// `type BFloat16 uint16` for bf16 or f16 data, a []F with `type F float32`
// for f32. float16.Float16 is f16 only.
//
// lt must describe memory that Execute can take: a valid data type, known
// dims (a rank up to graph.MaxRank), and a strided layout whose strides
// (if given) are one per dim and non-negative, layout any or undef (read
// as dense row-major), or a blocked layout with a format tag that fits
// the dims. data must be long enough for lt: the span its strides
// address, dense row-major where it gives none (see MemSize). A
// descriptor no Execute could take is refused here, with an error naming
// what is wrong.
func NewTensor(lt graph.LogicalTensor, data any) (Tensor, error) {
	if err := checkDescriptor(lt); err != nil {
		return Tensor{}, err
	}
	if data == nil {
		return Tensor{}, status.Errorf(status.InvalidArguments, "NewTensor: tensor %d: data is nil", lt.ID)
	}
	// reflect, not a type switch: a switch would only see the named types
	// gdnn knows, and a framework's []BFloat16 is none of them.
	v := reflect.ValueOf(data)
	if v.Kind() != reflect.Slice {
		return Tensor{}, status.Errorf(status.InvalidArguments, "NewTensor: tensor %d: unsupported data type %T (want a slice)", lt.ID, data)
	}
	elem := v.Type().Elem()
	var ok bool
	switch dt := lt.DataType; {
	case elem == float16Type:
		ok = dt == dtypes.F16
	case elem.Kind() == reflect.Float32:
		ok = dt == dtypes.F32
	case elem.Kind() == reflect.Float64:
		ok = dt == dtypes.F64
	case elem.Kind() == reflect.Uint16:
		ok = dt == dtypes.BF16 || dt == dtypes.F16 || dt == dtypes.U16
	case elem.Kind() == reflect.Uint8:
		ok = true
	case int(elem.Kind()) < len(kindTypes) && kindTypes[elem.Kind()] != dtypes.Undef:
		ok = dt == kindTypes[elem.Kind()]
	default:
		return Tensor{}, status.Errorf(status.InvalidArguments,
			"NewTensor: tensor %d: unsupported data type %T (want a slice of float32, float64, uint16, byte, an integer type, bool, or a type based on one)", lt.ID, data)
	}
	if !ok {
		return Tensor{}, status.Errorf(status.InvalidDataType, "NewTensor: tensor %d is %s but data is %T", lt.ID, lt.DataType, data)
	}
	var buf []byte
	if !v.IsNil() {
		buf = unsafe.Slice((*byte)(v.UnsafePointer()), v.Len()*int(elem.Size()))
	}
	if buf == nil {
		// A nil slice is Go's empty slice: data enough for a tensor of
		// no elements (zero run-time axes), and for nothing else.
		if !lt.KnownDims() || lt.NumElements() != 0 {
			return Tensor{}, status.Errorf(status.InvalidArguments, "NewTensor: tensor %d: data is a nil slice", lt.ID)
		}
		buf = []byte{}
	}
	t := Tensor{lt: lt.Clone(), buf: buf}
	settled := lt
	if !lt.Concrete() && lt.Layout != graph.LayoutBlocked {
		// Dense row-major, as Execute reads a tensor without strides.
		settled = lt.Clone()
		if err := settleLayout(&settled); err != nil {
			return Tensor{}, status.Errorf(statusOf(err), "NewTensor: %s", msgOf(err))
		}
	}
	need, err := spanBytes(settled)
	if err != nil {
		return Tensor{}, status.Errorf(statusOf(err), "NewTensor: %s", msgOf(err))
	}
	if int64(len(buf)) < need {
		return Tensor{}, status.Errorf(status.InvalidArguments, "NewTensor: tensor %d (%s) needs %d bytes, data has %d",
			lt.ID, graph.DimsString(lt.Dims), need, len(buf))
	}
	return t, nil
}

// kindTypes are the data types of the Go element kinds that name one
// (uint16 and byte hold the bits of several).
var kindTypes = [...]dtypes.DataType{
	reflect.Int8: dtypes.S8, reflect.Int16: dtypes.S16, reflect.Int32: dtypes.S32, reflect.Int64: dtypes.S64,
	reflect.Uint32: dtypes.U32, reflect.Uint64: dtypes.U64, reflect.Bool: dtypes.Boolean,
}

// checkDescriptor refuses a logical tensor that no Execute could take
// with data: an invalid data type, unknown or negative dims, a rank above
// graph.MaxRank, an unknown layout, strides that are not one
// non-negative stride per dim, or a blocked layout without a tag.
func checkDescriptor(lt graph.LogicalTensor) error {
	if !lt.DataType.Valid() {
		return status.Errorf(status.InvalidDataType, "NewTensor: tensor %d has data type %s", lt.ID, lt.DataType)
	}
	if len(lt.Dims) > graph.MaxRank {
		return status.Errorf(status.InvalidShape, "NewTensor: tensor %d has rank %d, more than the supported %d", lt.ID, len(lt.Dims), graph.MaxRank)
	}
	for i, d := range lt.Dims {
		if d < graph.UnknownDim {
			return status.Errorf(status.InvalidShape, "NewTensor: tensor %d dim %d is %d (negative)", lt.ID, i, d)
		}
	}
	if !lt.KnownDims() {
		return status.Errorf(status.InvalidShape, "NewTensor: tensor %d has dims %s; a tensor with data needs known dims", lt.ID, graph.DimsString(lt.Dims))
	}
	switch lt.Layout {
	case graph.LayoutStrided:
		if lt.Strides != nil && len(lt.Strides) != len(lt.Dims) {
			return status.Errorf(status.InvalidShape, "NewTensor: tensor %d has %d dims but %d strides", lt.ID, len(lt.Dims), len(lt.Strides))
		}
		for i, s := range lt.Strides {
			if s < 0 {
				return status.Errorf(status.InvalidShape, "NewTensor: tensor %d stride %d is %d; strides must be known and non-negative", lt.ID, i, s)
			}
		}
	case graph.LayoutAny, graph.LayoutUndef:
	case graph.LayoutBlocked:
		if lt.Tag == "" {
			return status.Errorf(status.InvalidArguments, "NewTensor: tensor %d has layout blocked but no format tag", lt.ID)
		}
	default:
		return status.Errorf(status.InvalidArguments, "NewTensor: tensor %d has layout %s", lt.ID, lt.Layout)
	}
	return nil
}

// LogicalTensor returns the tensor's description.
func (t Tensor) LogicalTensor() graph.LogicalTensor { return t.lt.Clone() }

// Bytes returns the tensor's data as bytes (the same memory, not a copy).
func (t Tensor) Bytes() []byte { return t.buf }

var float16Type = reflect.TypeFor[float16.Float16]()

func bytesOf[T any](s []T) []byte {
	if s == nil {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// MemSize returns the bytes a buffer for lt must hold, as oneDNN's
// logical_tensor::get_mem_size does: the span its strides address (a
// padded, permuted or blocked layout may need more than NumElements
// elements: a blocked dim is padded up to whole blocks), 0 when it has no
// elements. lt must have known dims; a tensor without
// strides (or of layout any) is taken as dense row-major, as Compile and
// Execute take it. For a compiled partition's output, ask about the
// tensor QueryLogicalTensor returns.
func MemSize(lt graph.LogicalTensor) (int64, error) {
	if !lt.KnownDims() {
		return 0, status.Errorf(status.InvalidShape, "MemSize: tensor %d has dims %s, not known", lt.ID, graph.DimsString(lt.Dims))
	}
	t := lt.Clone()
	if err := settleLayout(&t); err != nil {
		return 0, err
	}
	return spanBytes(t)
}

// spanBytes returns the bytes a concrete tensor addresses: 0 when it has
// no elements, else (1 + sum((dim-1)*stride)) elements, overflow-checked;
// for a blocked tensor, its layout's padded span.
func spanBytes(lt graph.LogicalTensor) (int64, error) {
	if lt.Layout == graph.LayoutBlocked {
		d, err := blockedDesc(lt)
		if err != nil {
			return 0, err
		}
		size := int64(lt.DataType.Size())
		if size == 0 {
			return 0, status.Errorf(status.InvalidDataType, "tensor %d has data type %s", lt.ID, lt.DataType)
		}
		return d.Span() * size, nil
	}
	if slices.Contains(lt.Dims, 0) {
		return 0, nil
	}
	elems := int64(1)
	for i, d := range lt.Dims {
		s := lt.Strides[i]
		if s != 0 && d-1 > (maxSpan-elems)/s {
			return 0, status.Errorf(status.InvalidArguments, "tensor %d: dims %s with strides %s address more than %d elements",
				lt.ID, graph.DimsString(lt.Dims), graph.DimsString(lt.Strides), maxSpan)
		}
		elems += (d - 1) * s
	}
	size := int64(lt.DataType.Size())
	if size == 0 {
		return 0, status.Errorf(status.InvalidDataType, "tensor %d has data type %s", lt.ID, lt.DataType)
	}
	return elems * size, nil
}

// maxSpan bounds the elements one tensor may address (2^56 bytes of f64
// still fit in int64).
const maxSpan = int64(1) << 56

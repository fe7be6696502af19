package reduce

import (
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Src is the element types a src may have: f32 as ~float32, bf16 and
// f16 as ~uint16 (their bits), whose data type an option names, 8-bit
// integer data, s8 as ~int8 and u8 as ~uint8, f64 as ~float64 (reduced in
// float64 from end to end, into an f64 or an f32 dst), and (a gdnn
// extension) integer and boolean data reduced exactly: s16, s32, u32, s64
// and u64 as ~int16, ~int32, ~uint32, ~int64 and ~uint64, booleans as
// ~bool, and u16 as ~uint16 named U16 by an option. An integer slice's
// type is its Go type's; an option may name it too, and must then name
// that type. A src of any other element type does not compile. Which
// reductions each type takes is checked at run time (see the package
// doc): a sum of bools, an L2 norm of integers are refused.
type Src interface {
	~float32 | ~uint16 | ~int8 | ~uint8 | ~int16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~bool | ~float64
}

// Dst is the element types a dst may have: those of Src. Which dst a src
// may go to is checked at run time (see the package doc): a float src
// goes to its own type, f32, s8, u8 or s32; an f64 src to f64 or f32, and
// only an f64 src to f64; integer data to its own type (the mean also to
// f32 or f64), the logical reductions to bool or u8.
type Dst interface {
	~float32 | ~uint16 | ~int8 | ~uint8 | ~int16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~bool | ~float64
}

// Op is a reduction kind, for callers that choose it at run time (Reduce,
// ONNXNode).
type Op uint8

// The kinds: ONNX's Reduce* set.
const (
	OpMean      Op = iota // sum / N
	OpSum                 // sum
	OpMax                 // largest (NaN wins; +0 above -0)
	OpMin                 // smallest (NaN wins; -0 below +0)
	OpProd                // product
	OpL1                  // sum |x|
	OpL2                  // sqrt(sum x*x)
	OpSumSquare           // sum x*x
	OpLogSum              // log(sum x)
	OpLogSumExp           // log(sum exp x), computed stably
	opCount               // ONNX's Reduce* kinds end here
)

// The kinds of integer and boolean data only (gdnn extensions, GoMLX's
// ReduceBitwise* and ReduceLogical*).
const (
	OpBitwiseAnd Op = opCount + iota // and of the bits
	OpBitwiseOr                      // or of the bits
	OpBitwiseXor                     // xor of the bits
	OpLogicalAnd                     // all: 1 if every element is nonzero (true)
	OpLogicalOr                      // any: 1 if some element is nonzero
	OpLogicalXor                     // 1 if an odd number of elements are nonzero
	opEnd
)

var opNames = [...]string{"Mean", "Sum", "Max", "Min", "Prod", "L1", "L2", "SumSquare", "LogSum", "LogSumExp",
	"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LogicalAnd", "LogicalOr", "LogicalXor"}

// String returns the kind's name as this package spells its function
// ("Mean", "LogSumExp").
func (op Op) String() string {
	if op >= opEnd {
		return "Op(" + strconv.Itoa(int(op)) + ")"
	}
	return opNames[op]
}

// reduction returns what op computes in plan terms, and the post-op it
// adds (LogSum is a sum followed by Log).
func (op Op) reduction() (plan.Reduction, ops.Kind) {
	switch op {
	case OpSum:
		return plan.AlgSum.Reduction(0, 0), 0
	case OpMax:
		return plan.AlgMax.Reduction(0, 0), 0
	case OpMin:
		return plan.AlgMin.Reduction(0, 0), 0
	case OpProd:
		return plan.AlgMul.Reduction(0, 0), 0
	case OpL1:
		return plan.AlgNormLpSum.Reduction(1, 0), 0
	case OpL2:
		return plan.AlgNormLpSum.Reduction(2, 0), 0
	case OpSumSquare:
		return plan.Reduction{Transform: plan.TransformSquare, Finalize: plan.FinalizeNone}, 0
	case OpLogSum:
		return plan.AlgSum.Reduction(0, 0), ops.Log
	case OpLogSumExp:
		return plan.LogSumExp, 0
	case OpBitwiseAnd:
		return plan.Bitwise(plan.CombineAnd), 0
	case OpBitwiseOr:
		return plan.Bitwise(plan.CombineOr), 0
	case OpBitwiseXor:
		return plan.Bitwise(plan.CombineXor), 0
	case OpLogicalAnd:
		return plan.LogicalAnd, 0
	case OpLogicalOr:
		return plan.LogicalOr, 0
	case OpLogicalXor:
		return plan.LogicalXor, 0
	}
	return plan.Reduction{}, 0 // the mean
}

// Mean writes the mean of src over axes to dst. dims are src's dims; axes
// may be negative (counting from the end); see the package doc for the
// options and the semantics of empty axes.
func Mean[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpMean, dst, src, dims, axes, opts...)
}

// Sum writes the sum of src over axes to dst (see Mean).
func Sum[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpSum, dst, src, dims, axes, opts...)
}

// Max writes the largest element of src over axes to dst; NaN wins (see Mean).
func Max[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpMax, dst, src, dims, axes, opts...)
}

// Min writes the smallest element of src over axes to dst; NaN wins (see Mean).
func Min[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpMin, dst, src, dims, axes, opts...)
}

// Prod writes the product of src over axes to dst (see Mean).
func Prod[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpProd, dst, src, dims, axes, opts...)
}

// L1 writes the sum of |x| over axes to dst (see Mean).
func L1[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpL1, dst, src, dims, axes, opts...)
}

// L2 writes sqrt(sum x*x) over axes to dst (see Mean).
func L2[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpL2, dst, src, dims, axes, opts...)
}

// SumSquare writes the sum of x*x over axes to dst (see Mean).
func SumSquare[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpSumSquare, dst, src, dims, axes, opts...)
}

// LogSum writes log(sum x) over axes to dst (see Mean).
func LogSum[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpLogSum, dst, src, dims, axes, opts...)
}

// LogSumExp writes log(sum exp x) over axes to dst, computed as
// m + log(sum exp(x - m)) with m the largest element, so that nothing
// overflows; an empty reduction gives -Inf (see Mean).
func LogSumExp[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpLogSumExp, dst, src, dims, axes, opts...)
}

// BitwiseAnd writes the and of the bits of src's integers over axes to
// dst (see Mean).
func BitwiseAnd[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpBitwiseAnd, dst, src, dims, axes, opts...)
}

// BitwiseOr writes the or of the bits (see BitwiseAnd).
func BitwiseOr[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpBitwiseOr, dst, src, dims, axes, opts...)
}

// BitwiseXor writes the xor of the bits (see BitwiseAnd).
func BitwiseXor[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpBitwiseXor, dst, src, dims, axes, opts...)
}

// LogicalAnd writes whether every element of src over axes is nonzero
// (true), to a bool or u8 dst (see Mean); it stops reading a row at its
// first zero.
func LogicalAnd[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpLogicalAnd, dst, src, dims, axes, opts...)
}

// LogicalOr writes whether some element is nonzero (see LogicalAnd); it
// stops reading a row at its first nonzero.
func LogicalOr[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpLogicalOr, dst, src, dims, axes, opts...)
}

// LogicalXor writes whether an odd number of elements are nonzero (see
// LogicalAnd).
func LogicalXor[D Dst, S Src](dst []D, src []S, dims, axes []int, opts ...Option) error {
	return Reduce(OpLogicalXor, dst, src, dims, axes, opts...)
}

// Reduce runs the reduction op, chosen at run time; Mean(...) is
// Reduce(OpMean, ...).
func Reduce[D Dst, S Src](op Op, dst []D, src []S, dims, axes []int, opts ...Option) error {
	var s settings
	if err := s.apply(op, opts, false); err != nil {
		return err
	}
	return run(op, dst, src, dims, axes, nil, &s)
}

// DstDims returns the dims of op's dst for src dims and axes under opts
// (keep_dims: reduced dims are 1; else they are left out): what dst must
// hold, for frameworks that allocate it. It checks dims and axes as the
// kind functions do.
func DstDims(dims, axes []int, opts ...Option) ([]int, error) {
	var s settings
	if err := renamed(s.apply(OpMean, opts, false), OpMean, "DstDims"); err != nil {
		return nil, err
	}
	var k key
	if err := k.setShape("DstDims", dims, axes, nil, &s); err != nil {
		return nil, err
	}
	return dstDims(dims, k.reduce, s.keep), nil
}

// dstDims is the dst's dims: dims with the reduced ones dropped, or set
// to 1 when keep.
func dstDims(dims []int, reduce uint32, keep bool) []int {
	out := make([]int, 0, len(dims))
	for i, d := range dims {
		switch {
		case reduce&(1<<i) == 0:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

// run is every call's path: resolve data types and shape into a key,
// check the slices cover the spans it addresses (before any compile, so
// that a refused call costs nothing), find (or compile) its kernel, and
// run it on byte views of the slices.
func run[D Dst, S Src](op Op, dst []D, src []S, dims, axes []int, axes64 []int64, s *settings) error {
	var k key
	k.op = op
	// Type names the ~uint16 slices only (its doc): a float32 (or
	// float64) slice keeps its own type whether or not the other slice
	// is 16-bit, as in the normalizations. Only SrcType and DstType name
	// such a slice, and must name its own type.
	srcNamed, dstNamed := s.srcDT, s.dstDT
	if s.srcByType && !is16[S]() {
		srcNamed = dtypes.Undef
	}
	if s.dstByType && !is16[D]() {
		dstNamed = dtypes.Undef
	}
	srcDT, err := elemType[S]("src", srcNamed, s.srcByType, op)
	if err != nil {
		return err
	}
	dstDT, err := elemType[D]("dst", dstNamed, s.dstByType, op)
	if err != nil {
		return err
	}
	red, own := op.reduction()
	switch {
	case own != 0 && plan.IsExact(srcDT, red):
		// LogSum: a sum, then its own Log, which exact data do not take.
		return status.Errorf(status.Unimplemented, "reduce.%v: %v of %v data: %s", op, op, srcDT, plan.ExactKindsText)
	case plan.IsExact(srcDT, red) || red.IsBitwise() || red.Transform == plan.TransformNonzero:
		// Exact data: the plan's table says which dst each kind writes.
	case plan.IsWide(srcDT) || plan.IsWide(dstDT):
		if !plan.WideDst(srcDT, dstDT) {
			return status.Errorf(status.InvalidDataType, "reduce.%v: dst type %v for src type %v: an f64 src goes to f64 or f32, and only an f64 src to f64", op, dstDT, srcDT)
		}
	case srcDT.IsInt8():
		// 8-bit data may go to any dst: an integer one is rounded to
		// nearest even and saturated.
	case dstDT != srcDT && dstDT != dtypes.F32 && !dstDT.IsInt():
		return status.Errorf(status.InvalidDataType, "reduce.%v: dst type %v for src type %v: dst must be the src type, f32, s8, u8 or s32 (any type for s8 or u8 src)", op, dstDT, srcDT)
	}
	k.srcDT, k.dstDT = uint16(srcDT), uint16(dstDT)
	k.isa = uint8(jit.EffectiveISA())
	if err := k.setShape(op.String(), dims, axes, axes64, s); err != nil {
		return err
	}
	k.post, k.npost = s.post, s.npost
	if err := k.checkSpans(op, len(src), len(dst), dims, s.keep); err != nil {
		return err
	}
	c, err := lookup(&k)
	if err != nil {
		return inCall(op, err)
	}
	return inCall(op, c.k.Run(bytesOf(src), bytesOf(dst), nil))
}

// inCall names the call in an error of the layers below ("plan: ...",
// "jit: ..."), which speak of plans, so that every refusal a caller
// sees starts "reduce.<Op>:"; its status stays.
func inCall(op Op, err error) error {
	if err == nil {
		return nil
	}
	var e *status.Error
	if !errors.As(err, &e) || strings.HasPrefix(e.Msg, "reduce") {
		return err
	}
	msg := strings.TrimPrefix(strings.TrimPrefix(e.Msg, "plan: "), "jit: ")
	// The plan's notation of the reduction (square>sum>root...) is the
	// caller's op.
	if r, _ := op.reduction(); strings.HasPrefix(msg, r.String()+" ") {
		msg = op.String() + strings.TrimPrefix(msg, r.String())
	}
	return status.Errorf(e.Status, "reduce.%v: %s", op, msg)
}

// elemType is the data type of E's elements: f32 for ~float32 (named
// f32 or not at all), bf16, f16 or u16 for ~uint16 as named, the integer
// or boolean type of the other element types (named so or not at all;
// byType: named by Type, which integer slices ignore).
func elemType[E Dst](what string, named dtypes.DataType, byType bool, op Op) (dtypes.DataType, error) {
	if dt := intType[E](); dt != dtypes.Undef {
		if named != dtypes.Undef && named != dt && !byType {
			return 0, status.Errorf(status.InvalidDataType, "reduce.%v: %s is a %v slice but its type is named %v", op, what, dt, named)
		}
		return dt, nil
	}
	if reflect.TypeFor[E]().Kind() == reflect.Float64 {
		if named != dtypes.Undef && named != dtypes.F64 {
			return 0, status.Errorf(status.InvalidDataType, "reduce.%v: %s is a 64-bit float slice but its type is named %v", op, what, named)
		}
		return dtypes.F64, nil
	}
	if !is16[E]() {
		if named != dtypes.Undef && named != dtypes.F32 {
			return 0, status.Errorf(status.InvalidDataType, "reduce.%v: %s is a 32-bit float slice but its type is named %v", op, what, named)
		}
		return dtypes.F32, nil
	}
	if named != dtypes.BF16 && named != dtypes.F16 && named != dtypes.U16 {
		if named == dtypes.Undef {
			opt := "SrcType"
			if what == "dst" {
				opt = "DstType"
			}
			return 0, status.Errorf(status.InvalidDataType, "reduce.%v: %s is a 16-bit slice: name its type bf16, f16 or u16 (reduce.Type or reduce.%s)",
				op, what, opt)
		}
		return 0, status.Errorf(status.InvalidDataType, "reduce.%v: %s is a 16-bit slice but its type is named %v, not bf16, f16 or u16", op, what, named)
	}
	return named, nil
}

// is16 reports whether E is a ~uint16 element type (bf16, f16 or u16
// data, as an option names it).
func is16[E Dst]() bool { return reflect.TypeFor[E]().Kind() == reflect.Uint16 }

// intTypes are the data types of the Go integer and boolean kinds.
var intTypes = [...]dtypes.DataType{
	reflect.Int8: dtypes.S8, reflect.Uint8: dtypes.U8, reflect.Int16: dtypes.S16,
	reflect.Int32: dtypes.S32, reflect.Uint32: dtypes.U32, reflect.Int64: dtypes.S64, reflect.Uint64: dtypes.U64,
	reflect.Bool: dtypes.Boolean,
}

// intType is the integer or boolean data type of E, or Undef for the
// float element types and ~uint16 (whose type an option names).
func intType[E Dst]() dtypes.DataType {
	if k := reflect.TypeFor[E]().Kind(); int(k) < len(intTypes) {
		return intTypes[k]
	}
	return dtypes.Undef
}

// bytesOf views s as bytes, without copying.
func bytesOf[E Dst](s []E) []byte {
	if len(s) == 0 {
		return nil
	}
	var z E
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}

// ints and int64s format a slice for an error message. They copy, so
// that error paths do not make the caller's slices escape to the heap.
func ints(s []int) string {
	b := []byte{'['}
	for i, v := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(append(b, ']'))
}

func int64s(s []int64) string {
	b := []byte{'['}
	for i, v := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(append(b, ']'))
}

// span is the elements n dims with strides address (saturating), 0 when
// a dim is 0; dims whose bit is set in skip are left out.
func span(dims, strides *[graph.MaxRank]int64, n int, skip uint32) int64 {
	for i := range n {
		if skip&(1<<i) == 0 && dims[i] == 0 {
			return 0
		}
	}
	sp := int64(1)
	for i := range n {
		if skip&(1<<i) != 0 {
			continue
		}
		t := plan.MulSat(dims[i]-1, strides[i])
		if sp > math.MaxInt64-t {
			return math.MaxInt64
		}
		sp += t
	}
	return sp
}

// checkSpans refuses slices shorter than the spans k's strides address,
// before anything is compiled.
func (k *key) checkSpans(op Op, nsrc, ndst int, dims []int, keep bool) error {
	r := int(k.rank)
	if sp := span(&k.dims, &k.srcStrides, r, 0); int64(nsrc) < sp {
		return status.Errorf(status.InvalidArguments, "reduce.%v: src holds %d elements, dims %s with strides %s address %d",
			op, nsrc, ints(dims), int64s(k.srcStrides[:r]), sp)
	}
	if sp := span(&k.dims, &k.dstStrides, r, k.reduce); int64(ndst) < sp {
		return status.Errorf(status.InvalidArguments, "reduce.%v: dst holds %d elements, dst dims %s address %d",
			op, ndst, ints(dstDims(dims, k.reduce, keep)), sp)
	}
	return nil
}

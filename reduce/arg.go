package reduce

import (
	"errors"
	"slices"
	"strings"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Index is the element types an index reduction (ArgMax, ArgMin) writes:
// s32 as ~int32, s64 as ~int64. Any other dst does not compile.
type Index interface {
	~int32 | ~int64
}

// ArgSrc is the element types ArgMax and ArgMin compare: Src's but bool
// (ONNX's ArgMax and ArgMin take no booleans). A []uint16 src must be
// named bf16, f16 or u16 by Type or SrcType.
type ArgSrc interface {
	~float32 | ~uint16 | ~int8 | ~uint8 | ~int16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float64
}

// SelectLastIndex makes ArgMax and ArgMin return the last index of the
// winner where several elements tie (default false: the first), as
// ONNX's select_last_index.
func SelectLastIndex(last bool) Option { return Option{what: optSelectLast, b: last} }

// optSelectLast is SelectLastIndex's kind: past the kinds of options.go,
// which the reductions refuse.
const optSelectLast optKind = 64

// ArgMax writes to dst the index along axis of the largest element of
// src (dims; axis may be negative, counting from the end). NaN is larger
// than every number, so the first NaN wins; among equal elements (+0 and
// -0 are equal) the first index wins, or the last with
// SelectLastIndex(true). dst holds src's dims without axis (with it as 1
// under KeepDims(true)). Options: KeepDims, Type or SrcType (a ~uint16
// src's bf16 or f16), SrcStrides, DstStrides, SelectLastIndex. An axis of
// size 0 is an InvalidShape error (there is nothing to pick); an s32 dst
// for an axis longer than 2^31 is InvalidArguments (the index type cannot
// hold the answer: use an int64 dst).
func ArgMax[I Index, S ArgSrc](dst []I, src []S, dims []int, axis int, opts ...Option) error {
	return argRun("ArgMax", false, dst, src, dims, int64(axis), opts)
}

// ArgMin writes the index of the smallest element, NaN smaller than
// every number (see ArgMax).
func ArgMin[I Index, S ArgSrc](dst []I, src []S, dims []int, axis int, opts ...Option) error {
	return argRun("ArgMin", true, dst, src, dims, int64(axis), opts)
}

// ArgMinMax is GoMLX's backend call ArgMinMax(x, axis, outputDType,
// isMin) over gdnn's buffers: the index along axis of the smallest
// (isMin) or largest element of src, written to dst as outputDType
// (dtypes.S32 or dtypes.S64, little-endian), axis dropped. NaN wins,
// and the first of equal elements, as in XLA. opts are ArgMax's
// (KeepDims(true) keeps the axis as a dim of 1).
func ArgMinMax[S ArgSrc](dst []byte, src []S, dims []int, axis int, outputDType dtypes.DataType, isMin bool, opts ...Option) error {
	// Errors name the call the caller made, not ArgMax or ArgMin.
	const name = "ArgMinMax"
	switch outputDType {
	case dtypes.S32:
		return argRun(name, isMin, viewAs[int32](dst), src, dims, int64(axis), opts)
	case dtypes.S64:
		return argRun(name, isMin, viewAs[int64](dst), src, dims, int64(axis), opts)
	}
	return status.Errorf(status.InvalidDataType, "reduce.ArgMinMax: output type %v, want s32 or s64", outputDType)
}

// viewAs views b as whole elements of I (a partial last element is left
// out, and the span check then reports dst too small).
func viewAs[I Index](b []byte) []I {
	var z I
	n := len(b) / sizeOf(z)
	if n == 0 {
		return nil
	}
	return unsafeSlice[I](b, n)
}

// argKey identifies a compiled index reduction, as key does a reduction.
type argKey struct {
	dims       [graph.MaxRank]int64
	srcStrides [graph.MaxRank]int64
	dstStrides [graph.MaxRank]int64
	srcDT      dtypes.DataType
	idxDT      dtypes.DataType
	rank, axis uint8
	min, last  bool
	isa        uint8
}

// argRun is ArgMax's and ArgMin's path: resolve the types, shape and
// options into a problem, check the slices hold its spans, find or
// compile its kernel and run it. axis is an int64, ONNX's attribute as
// it is, so that no conversion to a 32-bit int truncates it into range.
func argRun[I Index, S ArgSrc](fn string, min bool, dst []I, src []S, dims []int, axis int64, opts []Option) error {
	for i, o := range opts {
		switch o.what {
		case optDstType, optPost, optParamType, optInfAsZero, optStats, optSoftmaxStats:
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: an index reduction takes KeepDims, Type, SrcType, SrcStrides, DstStrides and SelectLastIndex only", fn, i)
		}
	}
	s := settings{index: true}
	if err := renamed(s.apply(OpMax, opts, false), OpMax, fn); err != nil {
		return err
	}
	// Type names a ~uint16 src only, as for the reductions (run).
	srcNamed := s.srcDT
	if s.srcByType && !is16[S]() {
		srcNamed = dtypes.Undef
	}
	srcDT, err := elemType[S]("src", srcNamed, s.srcByType, OpMax)
	if err != nil {
		return renamed(err, OpMax, fn)
	}
	if _, ok := plan.ArgSrcTypes[srcDT]; !ok {
		return status.Errorf(status.InvalidDataType, "reduce.%s: src type %v: an index reduction takes %s", fn, srcDT, plan.ArgSrcTypeNames())
	}
	idxDT := dtypes.S32
	var zi I
	if sizeOf(zi) == 8 {
		idxDT = dtypes.S64
	}
	var k key
	ax, err := k.setArgShape(fn, dims, axis, &s)
	if err != nil {
		return err
	}
	r := int(k.rank)
	isa, stamp := jit.ISAStamp()
	ak := argKey{dims: k.dims, srcStrides: k.srcStrides, dstStrides: k.dstStrides, srcDT: srcDT, idxDT: idxDT,
		rank: k.rank, min: min, last: s.last, isa: uint8(isa)}
	ak.axis = uint8(ax)
	cache.mu.RLock()
	kern := cache.arg[ak]
	cache.mu.RUnlock()
	if kern == nil {
		// Copies: slices of k's arrays would move k, which every call
		// builds, to the heap.
		pl, err := plan.CanonicalizeArg(&plan.ArgProblem{Min: min, Last: s.last, SrcDT: srcDT, IdxDT: idxDT,
			Dims: slices.Clone(k.dims[:r]), SrcStrides: slices.Clone(k.srcStrides[:r]), DstStrides: slices.Clone(k.dstStrides[:r]), Axis: ax})
		if err != nil {
			return argInCall(fn, err)
		}
		if kern, err = jit.CompileArg(pl); err != nil {
			return argInCall(fn, err)
		}
		keepArgKernel(ak, kern, stamp)
	}
	pl := kern.Plan()
	if pl.Outputs == 0 {
		return nil
	}
	if need := pl.SrcSpan(); int64(len(src)) < need {
		return status.Errorf(status.InvalidArguments, "reduce.%s: src has %d elements; dims %s with its strides address %d", fn, len(src), ints(dims), need)
	}
	if need := pl.DstSpan(); int64(len(dst)) < need {
		return status.Errorf(status.InvalidArguments, "reduce.%s: dst has %d elements; dims %s want %d", fn, len(dst), ints(dstDims(dims, k.reduce, s.keep)), need)
	}
	return argInCall(fn, kern.Run(bytesOf(src), idxBytes(dst)))
}

// setArgShape checks an index reduction's dims and axis and fills k's
// shape fields (as setShape, with axis the one reduced dim), returning
// the axis counted from the front. It is the one check of argRun and
// ONNXArgNode.DstDims, so that DstDims refuses exactly the shapes a run
// refuses. axis is an int64 so that an ONNX attribute is checked whole,
// before any conversion to int.
func (k *key) setArgShape(fn string, dims []int, axis int64, s *settings) (int, error) {
	r := int64(len(dims))
	if r == 0 {
		return 0, status.Errorf(status.InvalidShape, "reduce.%s: dims are empty (rank 0): an index reduction needs an axis", fn)
	}
	if (axis < -r || axis >= r) && r <= graph.MaxRank {
		return 0, status.Errorf(status.InvalidArguments, "reduce.%s: axis %d is out of range [%d, %d] for dims %s", fn, axis, -r, r-1, ints(dims))
	}
	// setShape refuses a rank past graph.MaxRank and negative dims.
	if err := k.setShape(fn, dims, nil, []int64{axis}, s); err != nil {
		return 0, err
	}
	if axis < 0 {
		axis += r
	}
	ax := int(axis)
	// As plan.CanonicalizeArg refuses it: an empty axis with outputs to
	// write has no element to pick.
	if dims[ax] == 0 && !slices.Contains(dstDims(dims, k.reduce, false), 0) {
		return 0, status.Errorf(status.InvalidShape, "reduce.%s: index reduction over axis %d of size 0: there is no element to pick", fn, ax)
	}
	return ax, nil
}

// renamed names the call fn in an error that speaks of op's function
// (fn's settings and element types are resolved as op's).
func renamed(err error, op Op, fn string) error {
	if err == nil {
		return nil // before e, which errors.As moves to the heap
	}
	var e *status.Error
	if !errors.As(err, &e) {
		return err
	}
	return status.Errorf(e.Status, "%s", strings.Replace(e.Msg, "reduce."+op.String(), "reduce."+fn, 1))
}

// argInCall names the call in an error of the layers below.
func argInCall(fn string, err error) error {
	if err == nil {
		return nil // before e, which errors.As moves to the heap
	}
	var e *status.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(e.Msg, "plan: "), "jit: "), "interp: ")
	return status.Errorf(e.Status, "reduce.%s: %s", fn, msg)
}

func sizeOf[T any](z T) int { return int(unsafe.Sizeof(z)) }

// unsafeSlice views the first n elements of I in b.
func unsafeSlice[I Index](b []byte, n int) []I {
	return unsafe.Slice((*I)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// idxBytes views s as bytes, without copying.
func idxBytes[I Index](s []I) []byte {
	if len(s) == 0 {
		return nil
	}
	var z I
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*sizeOf(z))
}

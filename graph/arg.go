package graph

import (
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
)

// The index reductions, a gdnn extension with ONNX's meaning:
//
//	ArgMax, ArgMin  axis (default 0), keep_dims (false, as the Reduce* ops),
//	                select_last_index (false)
//
// An s64-list attribute axes of one axis may stand for axis (the spelling
// of the Reduce* ops; setting both is an error).
//
// One input (src: f32, f64, bf16, f16, s8, u8, s16, u16, s32, u32, s64
// or u64) and one output (s32 or s64, as its logical tensor says): the
// index along axis of the largest (smallest) element. NaN is larger
// (smaller) than every number, so the first NaN wins; among equal
// elements the first index wins, or the last with select_last_index.
// The output has src's dims without axis (with it as 1 under
// keep_dims). An axis of size 0 has no index and is refused when the
// partition compiles.

func init() {
	attrs := []attrSpec{
		{name: "axis", typ: AttrS64, def: def(Attr{Type: AttrS64, I: 0})},
		{name: "keep_dims", typ: AttrBool, def: def(Attr{Type: AttrBool, B: false})},
		{name: "select_last_index", typ: AttrBool, def: def(Attr{Type: AttrBool, B: false})},
		{name: "axes", typ: AttrS64s},
	}
	for _, k := range []OpKind{ArgMax, ArgMin} {
		schemas[k] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, attrs: attrs, strictAttrs: true,
			values: argValues, types: argTypes, infer: inferArg}
	}
}

// IsArg reports whether k is ArgMax or ArgMin.
func (k OpKind) IsArg() bool { return k == ArgMax || k == ArgMin }

// argValues checks axes, where it stands for axis.
func argValues(op *Op) error {
	if !op.HasAttr("axes") {
		return nil
	}
	if op.HasAttr("axis") {
		return Errorf(InvalidGraphOp, "%s: axis is given twice, as axis and as axes; set one", op)
	}
	if axes, _ := op.Ints("axes"); len(axes) != 1 {
		return Errorf(InvalidGraphOp, "%s: axes %v: an index reduction takes exactly one axis", op, axes)
	}
	return nil
}

// argTypes: src one of plan.ArgSrcTypes, the output s32 or s64.
func argTypes(op *Op) error {
	src, dst := op.Inputs[0], op.Outputs[0]
	if _, ok := plan.ArgSrcTypes[src.DataType]; !ok {
		return Errorf(InvalidDataType, "%s: src tensor %d is %s, want %s", op, src.ID, src.DataType, plan.ArgSrcTypeNames())
	}
	if !plan.IsArgIndexType(dst.DataType) {
		return Errorf(InvalidDataType, "%s: output tensor %d is %s; an index is s32 or s64", op, dst.ID, dst.DataType)
	}
	return nil
}

// ArgAxis returns the axis of ArgMax or ArgMin op over a src of the
// given rank, counted from the front; out of range is InvalidArguments.
func ArgAxis(op *Op, rank int) (int, error) {
	a, _ := op.Int("axis")
	if axes, _ := op.Ints("axes"); len(axes) == 1 {
		a = axes[0]
	}
	if a < -int64(rank) || a >= int64(max(rank, 1)) || rank == 0 {
		return 0, Errorf(InvalidArguments, "%s: axis %d is out of range [%d, %d] for src of rank %d", op, a, -rank, rank-1, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a), nil
}

// inferArg gives the output src's dims without axis (as 1 under
// keep_dims).
func inferArg(op *Op, in []LogicalTensor) ([][]int64, error) {
	src := in[0]
	if src.Dims == nil {
		return [][]int64{nil}, nil
	}
	axis, err := ArgAxis(op, len(src.Dims))
	if err != nil {
		return nil, err
	}
	keep, _ := op.Bool("keep_dims")
	reduce := make([]bool, len(src.Dims))
	reduce[axis] = true
	return [][]int64{shape.ReduceDims(src.Dims, reduce, keep)}, nil
}

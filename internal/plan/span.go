package plan

import (
	"errors"
	"slices"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// SpanElems returns how many elements a tensor with these dims and strides
// (in elements) spans from its first element: 1 + sum((d-1)*s), or 0 when
// some dim is 0 (the tensor is empty and nothing is addressed). Negative
// dims or strides, unequal lengths and a span past int64 are errors.
func SpanElems(dims, strides []int64) (int64, error) {
	if len(dims) != len(strides) {
		return 0, status.Errorf(status.InvalidArguments, "plan: %d dims but %d strides", len(dims), len(strides))
	}
	for i, d := range dims {
		if d < 0 {
			return 0, status.Errorf(status.InvalidShape, "plan: dim %d has negative size %d", i, d)
		}
		if strides[i] < 0 {
			return 0, status.Errorf(status.InvalidArguments, "plan: stride %d is negative (%d)", i, strides[i])
		}
		if d == 0 {
			return 0, nil
		}
	}
	span := int64(1)
	for i, d := range dims {
		t, ok := mulSize(d-1, strides[i])
		if ok {
			span, ok = addSize(span, t)
		}
		if !ok {
			return 0, status.Errorf(status.InvalidArguments, "plan: span of dims %v with strides %v overflows int64", dims, strides)
		}
	}
	return span, nil
}

// namedSpan is SpanElems with its errors naming the tensor, what.
func namedSpan(what string, dims, strides []int64) (int64, error) {
	n, err := SpanElems(dims, strides)
	var e *status.Error
	if err != nil && errors.As(err, &e) {
		return 0, status.Errorf(e.Status, "plan: %s: %s", what, strings.TrimPrefix(e.Msg, "plan: "))
	}
	return n, err
}

// spanBytes turns an element span into bytes of dt, overflow-checked.
func spanBytes(what string, elems int64, dt dtypes.DataType) (int64, error) {
	if !IsDstType(dt) && !IsSrcType(dt) && !dt.IsExact() && !dt.IsInteger() && dt != dtypes.F64 {
		return 0, status.Errorf(status.InvalidDataType, "plan: %s data type %v is not f32, bf16, f16, s8, u8 or s32", what, dt)
	}
	b, ok := mulSize(elems, int64(dt.Size()))
	if !ok {
		return 0, status.Errorf(status.OutOfMemory, "plan: %s spans %d %v elements, more than 2^63 bytes", what, elems, dt)
	}
	return b, nil
}

// SrcBytes returns the fewest bytes a src buffer of p must hold.
func (p *Problem) SrcBytes() (int64, error) {
	if p == nil {
		return 0, status.Errorf(status.InvalidArguments, "plan: nil problem")
	}
	n, err := namedSpan("src", p.Dims, p.SrcStrides)
	if err != nil {
		return 0, err
	}
	return spanBytes("src", n, p.SrcDT)
}

// DstBytes returns the fewest bytes a dst buffer of p must hold. The dst
// view has the src's kept dims and size 1 in every reduced dim.
func (p *Problem) DstBytes() (int64, error) {
	if p == nil {
		return 0, status.Errorf(status.InvalidArguments, "plan: nil problem")
	}
	n, err := p.keptSpan("dst", p.DstStrides)
	if err != nil {
		return 0, err
	}
	return spanBytes("dst", n, p.DstDT)
}

// BinBytes returns the fewest bytes the operand of binary post-op i must
// hold; i counts binary post-ops only (0 is the first binary one), the
// order of Run's bins and of Loop.BinStrides.
func (p *Problem) BinBytes(i int) (int64, error) {
	if p == nil {
		return 0, status.Errorf(status.InvalidArguments, "plan: nil problem")
	}
	op, err := nthBinary(p.PostOps, i)
	if err != nil {
		return 0, err
	}
	n, err := p.keptSpan("binary operand", op.BinStrides)
	if err != nil {
		return 0, err
	}
	return spanBytes("binary operand", n, op.BinDT)
}

// keptSpan is the element span of a tensor over the dst view (reduced dims
// have size 1, so their strides do not matter).
func (p *Problem) keptSpan(what string, strides []int64) (int64, error) {
	if len(p.Reduce) != len(p.Dims) || len(strides) != len(p.Dims) {
		return 0, status.Errorf(status.InvalidArguments, "plan: %s has %d strides and %d reduce flags for rank %d",
			what, len(strides), len(p.Reduce), len(p.Dims))
	}
	dims := make([]int64, len(p.Dims))
	st := make([]int64, len(p.Dims))
	for i, d := range p.Dims {
		if p.Reduce[i] {
			dims[i] = 1 // stride left 0: ignored
			continue
		}
		dims[i], st[i] = d, strides[i]
	}
	return namedSpan(what, dims, st)
}

// nthBinary returns binary post-op i of ops.
func nthBinary(ops []PostOp, i int) (*PostOp, error) {
	n := 0
	for j := range ops {
		if ops[j].Kind.IsBinary() {
			if n == i {
				return &ops[j], nil
			}
			n++
		}
	}
	return nil, status.Errorf(status.InvalidArguments, "plan: binary post-op %d requested, there are %d", i, n)
}

// countBinary returns how many of ops are binary.
func countBinary(ops []PostOp) int {
	n := 0
	for _, op := range ops {
		if op.Kind.IsBinary() {
			n++
		}
	}
	return n
}

// BinaryCount returns how many binary post-ops p has: the number of
// operand buffers it reads.
func (p *Problem) BinaryCount() int {
	if p == nil {
		return 0
	}
	return countBinary(p.PostOps)
}

// BinaryCount returns how many binary post-ops pl has: the number of
// operand buffers it reads and the length of every kept Loop.BinStrides.
func (pl *Plan) BinaryCount() int {
	if pl == nil {
		return 0
	}
	return countBinary(pl.PostOps)
}

// spanAcc accumulates 1 + sum((size-1)*stride) over loops, checked for
// overflow; a size-0 loop makes the span 0. It works on scalars so that
// Run's checks allocate nothing.
type spanAcc struct {
	span     int64
	empty    bool
	overflow bool
}

func (a *spanAcc) add(size, stride int64) {
	switch {
	case size == 0:
		a.empty = true
	case size > 1:
		t, ok := mulSize(size-1, stride)
		if ok {
			a.span, ok = addSize(a.span, t)
		}
		a.overflow = a.overflow || !ok
	}
}

// span returns the element span of pl's kept loops, and of the reduced
// ones too when withReduced, under the strides pick selects. Callers have
// run checkSigns.
func (pl *Plan) span(what string, withReduced bool, pick func(*Loop) int64) (int64, error) {
	a := spanAcc{span: 1}
	for i := range pl.Outer {
		a.add(pl.Outer[i].Size, pick(&pl.Outer[i]))
	}
	if pl.HasInner {
		a.add(pl.Inner.Size, pick(&pl.Inner))
	}
	if withReduced {
		for i := range pl.Reduced {
			a.add(pl.Reduced[i].Size, pick(&pl.Reduced[i]))
		}
	}
	// Overflow first: an empty loop reads nothing, but the runtime still
	// computes the byte offsets of the other loops' blocks.
	switch {
	case a.overflow:
		return 0, status.Errorf(status.InvalidArguments, "plan: %s span overflows int64 in plan %v", what, pl)
	case a.empty:
		return 0, nil
	}
	return a.span, nil
}

// checkSigns rejects negative loop sizes and strides, which the span
// arithmetic assumes away.
func (pl *Plan) checkSigns() error {
	for i := range pl.Outer {
		if err := checkLoopSigns("outer", i, &pl.Outer[i]); err != nil {
			return err
		}
	}
	if pl.HasInner {
		if err := checkLoopSigns("inner", 0, &pl.Inner); err != nil {
			return err
		}
	}
	for i := range pl.Reduced {
		if err := checkLoopSigns("reduced", i, &pl.Reduced[i]); err != nil {
			return err
		}
	}
	return nil
}

func checkLoopSigns(what string, i int, l *Loop) error {
	if l.Size < 0 {
		return status.Errorf(status.InvalidShape, "plan: %s loop %d has negative size %d", what, i, l.Size)
	}
	if l.SrcStride < 0 || l.DstStride < 0 {
		return status.Errorf(status.InvalidArguments, "plan: %s loop %d has a negative stride (src %d, dst %d)",
			what, i, l.SrcStride, l.DstStride)
	}
	for j, s := range l.BinStrides {
		if s < 0 {
			return status.Errorf(status.InvalidArguments, "plan: %s loop %d has negative binary stride %d (%d)", what, i, j, s)
		}
	}
	return nil
}

// SrcBytes returns the fewest bytes a src buffer must hold for pl: the
// span of every loop over the src strides.
func (pl *Plan) SrcBytes() (int64, error) {
	if pl == nil {
		return 0, status.Errorf(status.InvalidArguments, "plan: nil plan")
	}
	if err := pl.checkSigns(); err != nil {
		return 0, err
	}
	n, err := pl.span("src", true, func(l *Loop) int64 { return l.SrcStride })
	if err != nil {
		return 0, err
	}
	return spanBytes("src", n, pl.SrcDT)
}

// DstBytes returns the fewest bytes a dst buffer must hold for pl: the
// span of the kept loops over the dst strides.
func (pl *Plan) DstBytes() (int64, error) {
	if pl == nil {
		return 0, status.Errorf(status.InvalidArguments, "plan: nil plan")
	}
	if err := pl.checkSigns(); err != nil {
		return 0, err
	}
	n, err := pl.span("dst", false, func(l *Loop) int64 { return l.DstStride })
	if err != nil {
		return 0, err
	}
	return spanBytes("dst", n, pl.DstDT)
}

// BinBytes returns the fewest bytes the operand of binary post-op i
// (counting binary post-ops only) must hold for pl.
func (pl *Plan) BinBytes(i int) (int64, error) {
	if pl == nil {
		return 0, status.Errorf(status.InvalidArguments, "plan: nil plan")
	}
	op, err := nthBinary(pl.PostOps, i)
	if err != nil {
		return 0, err
	}
	if err := pl.checkSigns(); err != nil {
		return 0, err
	}
	short := func(l *Loop) bool { return len(l.BinStrides) <= i }
	bad := slices.ContainsFunc(pl.Outer, func(l Loop) bool { return short(&l) })
	if bad || (pl.HasInner && short(&pl.Inner)) {
		return 0, status.Errorf(status.InvalidArguments, "plan: a kept loop lacks the stride of binary operand %d", i)
	}
	n, err := pl.span("binary operand", false, func(l *Loop) int64 { return l.BinStrides[i] })
	if err != nil {
		return 0, err
	}
	return spanBytes("binary operand", n, op.BinDT)
}

// DstOperand reports whether binary operand i of pl addresses dst's
// elements one for one: its element size is the dst's and its stride
// equals the dst's in every kept loop (reduced loops address neither).
// Such an operand may be the dst buffer itself, read before each output
// is stored (oneDNN's sum post-op, see internal/jit/inplace.go); emitters must
// then never store an output before the last read of its operand
// element, nor store an output twice.
func (pl *Plan) DstOperand(i int) bool {
	op, err := nthBinary(pl.PostOps, i)
	if err != nil || op.BinDT.Size() != pl.DstDT.Size() {
		return false
	}
	same := func(l *Loop) bool { return l.Size <= 1 || i < len(l.BinStrides) && l.BinStrides[i] == l.DstStride }
	for j := range pl.Outer {
		if !same(&pl.Outer[j]) {
			return false
		}
	}
	return !pl.HasInner || same(&pl.Inner)
}

// HasDstOperand reports whether any binary operand of pl is a
// DstOperand.
func (pl *Plan) HasDstOperand() bool {
	for i := range pl.BinaryCount() {
		if pl.DstOperand(i) {
			return true
		}
	}
	return false
}

package plan

import (
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// ArgProblem is an index reduction, ArgMax or ArgMin, over one axis of
// src, with ONNX's meaning: each output is the index along Axis of the
// largest (smallest) element; NaN is above (below) every number, so a
// NaN wins, and among equal elements (NaN among NaN, -0 and +0 alike) the
// first index wins, or the last with Last. The dst has the src's rank
// (the axis has size 1 there; its DstStrides entry is ignored): dropping
// it for keep_dims=false is the caller's view. Strides are in elements.
// With Abs the elements are compared by magnitude (|x|: a fused Abs
// pre-op).
type ArgProblem struct {
	Min, Last    bool
	Abs          bool
	SrcDT, IdxDT dtypes.DataType
	Dims         []int64
	SrcStrides   []int64
	DstStrides   []int64
	Axis         int
}

// ArgPlan is an ArgProblem in canonical form:
//
//	for each Outer index (outermost first):
//	  for each Inner index (if HasInner):
//	    dst = the index of the winner among the R elements RStride apart
//
// Outer holds the kept dims larger than 1, ordered by src stride
// (largest first) and merged where contiguous in src and dst; Inner is
// the last of them when its src stride is below RStride (the lanes of a
// column kernel). Loop.BinStrides is unused.
type ArgPlan struct {
	Min, Last    bool
	Abs          bool
	SrcDT, IdxDT dtypes.DataType
	Outer        []Loop
	Inner        Loop
	HasInner     bool
	R, RStride   int64
	Outputs      int64 // dst elements written (0: nothing to do)
}

// ArgSrcTypes are the src data types an index reduction takes, with the
// lanes its machine code compares them in: f32 lanes hold the floats of
// up to 32 bits and the bytes exactly, s32 lanes the 16- and 32-bit
// integers (a u32 with its sign bit flipped), f64 lanes f64, and s64
// lanes the 64-bit integers (a u64 with its sign bit flipped).
// A new src type is one entry here, one in the interpreter's scanner
// table and, for machine code, the emitters' widening load.
var ArgSrcTypes = map[dtypes.DataType]dtypes.DataType{
	dtypes.F32: dtypes.F32, dtypes.BF16: dtypes.F32, dtypes.F16: dtypes.F32,
	dtypes.S8: dtypes.F32, dtypes.U8: dtypes.F32,
	dtypes.S16: dtypes.S32, dtypes.U16: dtypes.S32, dtypes.S32: dtypes.S32, dtypes.U32: dtypes.S32,
	dtypes.S64: dtypes.S64, dtypes.U64: dtypes.S64, dtypes.F64: dtypes.F64,
}

// IsArgIndexType reports whether t can hold an index reduction's result.
func IsArgIndexType(t dtypes.DataType) bool { return t == dtypes.S32 || t == dtypes.S64 }

// ArgSrcTypeNames lists ArgSrcTypes for error messages ("bf16, f16, ...").
func ArgSrcTypeNames() string {
	var names []string
	for t := range ArgSrcTypes {
		names = append(names, t.String())
	}
	slices.Sort(names)
	s := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			s += " or "
		default:
			s += ", "
		}
		s += n
	}
	return s
}

// Validate checks p: its types, rank, axis, strides and that no two
// outputs share a dst element, and that the axis is not empty (an index
// of nothing has no value, as ONNX Runtime refuses it).
func (p *ArgProblem) Validate() error {
	if p == nil {
		return status.Errorf(status.InvalidArguments, "plan: nil problem")
	}
	if _, ok := ArgSrcTypes[p.SrcDT]; !ok {
		return status.Errorf(status.InvalidDataType, "plan: index reduction of %v data: src must be %s", p.SrcDT, ArgSrcTypeNames())
	}
	if !IsArgIndexType(p.IdxDT) {
		return status.Errorf(status.InvalidDataType, "plan: index reduction to %v: the index must be s32 or s64", p.IdxDT)
	}
	rank := len(p.Dims)
	if rank > MaxRank {
		return status.Errorf(status.InvalidShape, "plan: rank %d exceeds the maximum %d", rank, MaxRank)
	}
	if len(p.SrcStrides) != rank || len(p.DstStrides) != rank {
		return status.Errorf(status.InvalidArguments, "plan: rank %d but %d src strides and %d dst strides", rank, len(p.SrcStrides), len(p.DstStrides))
	}
	if p.Axis < 0 || p.Axis >= rank {
		return status.Errorf(status.InvalidArguments, "plan: axis %d is out of range for rank %d", p.Axis, rank)
	}
	if _, err := namedSpan("src", p.Dims, p.SrcStrides); err != nil {
		return err
	}
	kept, dstStrides := p.dstView()
	if _, err := namedSpan("dst", kept, dstStrides); err != nil {
		return err
	}
	if p.Dims[p.Axis] == 0 && !slices.Contains(kept, 0) {
		return status.Errorf(status.InvalidShape, "plan: index reduction over axis %d of size 0: there is no element to pick", p.Axis)
	}
	if p.IdxDT == dtypes.S32 && p.Dims[p.Axis] > 1<<31 {
		return status.Errorf(status.InvalidArguments, "plan: axis %d has %d elements; an s32 index holds 2^31 at most", p.Axis, p.Dims[p.Axis])
	}
	if SelfOverlaps(kept, dstStrides) {
		dd := slices.Delete(slices.Clone(p.Dims), p.Axis, p.Axis+1)
		ds := slices.Delete(slices.Clone(p.DstStrides), p.Axis, p.Axis+1)
		return status.Errorf(status.InvalidArguments, "plan: dst strides %v over the kept dims %v %s", ds, dd, NestRule)
	}
	return nil
}

// dstView is the dst's dims (the axis as 1) and strides (0 at the axis).
func (p *ArgProblem) dstView() (dims, strides []int64) {
	dims, strides = slices.Clone(p.Dims), slices.Clone(p.DstStrides)
	dims[p.Axis], strides[p.Axis] = 1, 0
	return dims, strides
}

// CanonicalizeArg validates p and returns its plan.
func CanonicalizeArg(p *ArgProblem) (*ArgPlan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	pl := &ArgPlan{Min: p.Min, Last: p.Last, Abs: p.Abs, SrcDT: p.SrcDT, IdxDT: p.IdxDT,
		R: p.Dims[p.Axis], RStride: p.SrcStrides[p.Axis], Outputs: 1}
	if pl.R == 1 {
		pl.RStride = 0
	}
	var kept []Loop
	for i, d := range p.Dims {
		if i == p.Axis {
			continue
		}
		pl.Outputs *= d
		if d != 1 {
			kept = append(kept, Loop{Size: d, SrcStride: p.SrcStrides[i], DstStride: p.DstStrides[i]})
		}
	}
	if pl.Outputs == 0 {
		return pl, nil
	}
	slices.SortStableFunc(kept, func(a, b Loop) int {
		switch {
		case a.SrcStride > b.SrcStride:
			return -1
		case a.SrcStride < b.SrcStride:
			return 1
		}
		return 0
	})
	var merged []Loop
	for _, l := range kept {
		if n := len(merged); n > 0 {
			o := &merged[n-1]
			if o.SrcStride == l.Size*l.SrcStride && o.DstStride == l.Size*l.DstStride {
				o.Size *= l.Size
				o.SrcStride, o.DstStride = l.SrcStride, l.DstStride
				continue
			}
		}
		merged = append(merged, l)
	}
	if n := len(merged); n > 0 && (pl.R == 1 || merged[n-1].SrcStride < pl.RStride) {
		pl.Inner, pl.HasInner, merged = merged[n-1], true, merged[:n-1]
	}
	pl.Outer = merged
	return pl, nil
}

// RepeatsOne reports whether pl's axis is one element seen R > 1 times
// (src stride 0): every element ties, or every one is NaN, so its index
// is the first (the last under Last) without a scan, whose length no
// src length bounds.
func (pl *ArgPlan) RepeatsOne() bool { return pl.R > 1 && pl.RStride == 0 }

// SrcSpan is how many src elements pl spans from its first one.
func (pl *ArgPlan) SrcSpan() int64 {
	return pl.span(func(l *Loop) int64 { return l.SrcStride }) + (pl.R-1)*pl.RStride
}

// DstSpan is how many index elements dst spans from its first output.
func (pl *ArgPlan) DstSpan() int64 { return pl.span(func(l *Loop) int64 { return l.DstStride }) }

// span is 1 plus the reach of the kept loops, their strides as stride
// picks them.
func (pl *ArgPlan) span(stride func(l *Loop) int64) int64 {
	n := int64(1)
	for i := range pl.Outer {
		n += (pl.Outer[i].Size - 1) * stride(&pl.Outer[i])
	}
	if pl.HasInner {
		n += (pl.Inner.Size - 1) * stride(&pl.Inner)
	}
	return n
}

// Key is a string that two plans share exactly when they run the same
// code.
func (pl *ArgPlan) Key() string {
	b := []byte("arg")
	flag := func(on bool, c byte) {
		if on {
			b = append(b, c)
		}
	}
	flag(pl.Min, 'n')
	flag(pl.Last, 'l')
	flag(pl.Abs, 'a')
	// A plan of no outputs has no kept loops, as one of one output has:
	// its loops do not tell them apart.
	flag(pl.Outputs == 0, '0')
	b = append(b, ' ')
	b = append(b, pl.SrcDT.String()...)
	b = append(b, ':')
	b = append(b, pl.IdxDT.String()...)
	r := Loop{Size: pl.R, SrcStride: pl.RStride}
	b = appendLoop(append(b, " r"...), &r, false)
	for i := range pl.Outer {
		b = appendLoop(append(b, ' '), &pl.Outer[i], true)
	}
	if pl.HasInner {
		b = appendLoop(append(b, " i"...), &pl.Inner, true)
	}
	return string(b)
}

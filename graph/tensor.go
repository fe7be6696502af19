package graph

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/shape"
)

// UnknownDim marks a dimension whose size is not known yet; it becomes
// known at compile time from the concrete input shapes.
const UnknownDim int64 = -1

// internal/shape has UnknownDim and MaxRank for the layers below graph;
// these lines do not compile where the two disagree.
var (
	_ = [1]struct{}{}[UnknownDim-shape.UnknownDim]
	_ = [1]struct{}{}[MaxRank-shape.MaxRank]
)

// Layout says how a logical tensor's elements are placed in memory.
type Layout int

// Layouts, as in oneDNN Graph. LayoutAny lets compile choose: gdnn picks
// a dense row-major layout for an output, and reads an input of layout
// any (or strided without strides) as dense row-major.
//
// LayoutBlocked is gdnn's spelling of what oneDNN Graph calls an opaque
// layout: a oneDNN memory format tag with inner blocks ("aBx16b",
// "ABcd32a16b", "nChw16c"), named in the tensor's Tag (see
// NewLogicalTensorBlocked). oneDNN Graph hides such layouts behind an id
// that only its own compiled partitions understand; gdnn names the tag
// instead, so that a framework holding data from oneDNN's convolutions
// (or any other producer of these layouts) can say what it has.
const (
	LayoutUndef Layout = iota
	LayoutStrided
	LayoutAny
	LayoutBlocked
)

// String returns oneDNN's name of the layout ("strided", "any", "undef").
func (l Layout) String() string {
	switch l {
	case LayoutStrided:
		return "strided"
	case LayoutAny:
		return "any"
	case LayoutUndef:
		return "undef"
	case LayoutBlocked:
		return "blocked"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Property tells whether a tensor's contents may change between executes.
type Property int

// Properties, as in oneDNN Graph. A constant tensor's values are the same
// on every execute. gdnn keeps the property (graph JSON writes it back)
// but does not rely on it: a run-time axes tensor is read and checked on
// every Execute, constant or not, and axes known when the graph is built
// belong in the axes attribute, which compiles one kernel.
const (
	PropertyUndef Property = iota
	PropertyVariable
	PropertyConstant
)

// String returns oneDNN's name of the property ("variable", "constant", "undef").
func (p Property) String() string {
	switch p {
	case PropertyVariable:
		return "variable"
	case PropertyConstant:
		return "constant"
	case PropertyUndef:
		return "undef"
	}
	return fmt.Sprintf("Property(%d)", int(p))
}

// LogicalTensor describes a tensor without its data: id, data type, dims,
// layout and property. Dims entries may be UnknownDim; a nil Dims means the
// rank itself is unknown (an output to be inferred), while a rank-0
// (scalar) tensor has an empty, non-nil Dims. Strides are in elements and
// are meaningful only with LayoutStrided; Tag, a oneDNN format tag, only
// with LayoutBlocked.
type LogicalTensor struct {
	ID       uint64
	DataType dtypes.DataType
	Dims     []int64
	Layout   Layout
	Strides  []int64
	Property Property
	Tag      string
}

// NewLogicalTensor returns a strided tensor with dense row-major strides
// (or unknown strides where a dim is unknown).
func NewLogicalTensor(id uint64, dt dtypes.DataType, dims []int64) LogicalTensor {
	d := cloneDims(dims)
	return LogicalTensor{ID: id, DataType: dt, Dims: d, Layout: LayoutStrided, Strides: DenseStrides(d), Property: PropertyVariable}
}

// NewLogicalTensorStrided returns a strided tensor with the given strides
// (in elements), e.g. an NHWC view of NCHW dims.
func NewLogicalTensorStrided(id uint64, dt dtypes.DataType, dims, strides []int64) LogicalTensor {
	return LogicalTensor{ID: id, DataType: dt, Dims: cloneDims(dims), Layout: LayoutStrided, Strides: slices.Clone(strides), Property: PropertyVariable}
}

// NewLogicalTensorBlocked returns a tensor in the blocked layout of a
// oneDNN format tag: "aBx16b" (channels in blocks of 16, oneDNN's
// nChw16c for rank 4), "ABcd32a16b", ... (package layout has the
// grammar). Dims are the logical dims; a blocked dim that is not a whole
// number of blocks is padded in memory up to one, and the buffer must
// hold the padding too: partition.MemSize gives its size in bytes. The
// tag is checked against the dims when a partition is compiled (or
// MemSize is asked).
func NewLogicalTensorBlocked(id uint64, dt dtypes.DataType, dims []int64, tag string) LogicalTensor {
	return LogicalTensor{ID: id, DataType: dt, Dims: cloneDims(dims), Layout: LayoutBlocked, Tag: tag, Property: PropertyVariable}
}

// NewLogicalTensorAny returns a tensor whose layout compile chooses; use it
// for outputs (dims may also be unknown, or nil for an unknown rank).
func NewLogicalTensorAny(id uint64, dt dtypes.DataType, dims []int64) LogicalTensor {
	return LogicalTensor{ID: id, DataType: dt, Dims: cloneDims(dims), Layout: LayoutAny, Property: PropertyVariable}
}

// cloneDims copies dims keeping the nil (unknown rank) / empty (scalar)
// distinction.
func cloneDims(d []int64) []int64 {
	if d == nil {
		return nil
	}
	return append(make([]int64, 0, len(d)), d...)
}

// WithProperty returns a copy of t with property p.
func (t LogicalTensor) WithProperty(p Property) LogicalTensor {
	t.Property = p
	return t
}

// Clone returns a deep copy of t.
func (t LogicalTensor) Clone() LogicalTensor {
	t.Dims = cloneDims(t.Dims)
	t.Strides = slices.Clone(t.Strides)
	return t
}

// Rank returns the number of dims, or -1 when the rank is unknown.
func (t LogicalTensor) Rank() int {
	if t.Dims == nil {
		return -1
	}
	return len(t.Dims)
}

// KnownDims reports whether the rank and every dim are known.
func (t LogicalTensor) KnownDims() bool {
	if t.Dims == nil {
		return false
	}
	for _, d := range t.Dims {
		if d < 0 {
			return false
		}
	}
	return true
}

// Concrete reports whether t has known dims and explicit strides, i.e. it
// describes a buffer completely.
func (t LogicalTensor) Concrete() bool {
	if !t.KnownDims() || t.Layout != LayoutStrided || len(t.Strides) != len(t.Dims) {
		return false
	}
	for _, s := range t.Strides {
		if s < 0 {
			return false
		}
	}
	return true
}

// NumElements returns the product of the dims (1 for a scalar), or -1 if a
// dim is unknown or the product overflows int64.
func (t LogicalTensor) NumElements() int64 {
	if !t.KnownDims() {
		return -1
	}
	n := int64(1)
	for _, d := range t.Dims {
		if d != 0 && n > maxInt64/d {
			return -1
		}
		n *= d
	}
	return n
}

const maxInt64 = int64(^uint64(0) >> 1)

// DenseStrides returns row-major strides (in elements) for dims: the last
// dim has stride 1. Where a dim inner to a stride is unknown, the stride is
// UnknownDim too. A nil dims gives nil.
func DenseStrides(dims []int64) []int64 {
	if dims == nil {
		return nil
	}
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		switch {
		case acc < 0:
		case dims[i] < 0:
			acc = UnknownDim
		case dims[i] > 1 && acc > maxInt64/dims[i]:
			acc = UnknownDim
		case dims[i] > 1:
			acc *= dims[i]
		}
	}
	return s
}

// String formats t compactly, e.g. "lt(3 f32 2x16x3x4 strided:192x12x4x1)".
func (t LogicalTensor) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lt(%d %s %s %s", t.ID, t.DataType, DimsString(t.Dims), t.Layout)
	if t.Layout == LayoutStrided {
		b.WriteString(":" + DimsString(t.Strides))
	}
	if t.Layout == LayoutBlocked {
		b.WriteString(":" + t.Tag)
	}
	if t.Property == PropertyConstant {
		b.WriteString(" constant")
	}
	b.WriteString(")")
	return b.String()
}

// DimsString formats dims (or strides) as benchdnn does ("2x16x3x4"; "?"
// for UnknownDim and for oneDNN 3.x's unknown value -2^63, "scalar" for
// rank 0, "unknown-rank" for nil). Other negative values, which no valid
// tensor has, are printed as they are, so that a message shows them.
func DimsString(d []int64) string { return shape.DimsString(d) }

// sameContents reports whether a and b describe the same tensor; used to
// accept the same id appearing in several ops.
func sameContents(a, b LogicalTensor) bool {
	return a.ID == b.ID && a.DataType == b.DataType && slices.Equal(a.Dims, b.Dims) &&
		(a.Dims == nil) == (b.Dims == nil) && a.Layout == b.Layout &&
		(a.Layout != LayoutStrided || slices.Equal(a.Strides, b.Strides)) && a.Property == b.Property && a.Tag == b.Tag
}

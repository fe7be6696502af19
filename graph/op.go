package graph

import (
	"fmt"
	"sort"
)

// Op is one operation of a graph: an id unique in the graph, a kind, a
// name for messages, typed attributes, and its input and output logical
// tensors in oneDNN's port order. Build it with NewOp and the chaining
// setters; AddOp checks it against the kind's schema.
type Op struct {
	ID      uint64
	Kind    OpKind
	Name    string
	Inputs  []LogicalTensor
	Outputs []LogicalTensor

	attrs   map[string]Attr
	attrErr error // first bad SetAttr, reported by AddOp
}

// NewOp returns an op with no inputs, outputs or attributes.
func NewOp(id uint64, kind OpKind, name string) *Op {
	return &Op{ID: id, Kind: kind, Name: name, attrs: map[string]Attr{}}
}

// AddInput appends lt as the op's next input and returns the op.
func (o *Op) AddInput(lt LogicalTensor) *Op {
	o.Inputs = append(o.Inputs, lt.Clone())
	return o
}

// AddOutput appends lt as the op's next output and returns the op.
func (o *Op) AddOutput(lt LogicalTensor) *Op {
	o.Outputs = append(o.Outputs, lt.Clone())
	return o
}

// SetAttr sets attribute name to v and returns the op. v is an int64 or
// int (s64), []int64 or []int (s64[]), float32 or float64 (f32), []float32
// (f32[]), bool, string, or an Attr. A value of another Go type is kept as
// an error that AddOp reports.
func (o *Op) SetAttr(name string, v any) *Op {
	if o.attrs == nil {
		o.attrs = map[string]Attr{}
	}
	a, ok := attrOf(v)
	if !ok {
		if o.attrErr == nil {
			o.attrErr = Errorf(InvalidArguments, "%s: attribute %q: unsupported Go value type %T (SetAttr takes int64, int, []int64, []int, float32, float64, []float32, bool, string or an Attr)", o, name, v)
			if at, isAttr := v.(Attr); isAttr {
				o.attrErr = Errorf(InvalidArguments, "%s: attribute %q: an Attr of unknown type %d", o, name, int(at.Type))
			}
		}
		return o
	}
	o.attrs[name] = a
	return o
}

// Attr returns the attribute name as set on the op, without defaults.
func (o *Op) Attr(name string) (Attr, bool) {
	a, ok := o.attrs[name]
	return a, ok
}

// AttrNames returns the names of the attributes set on the op, sorted.
func (o *Op) AttrNames() []string {
	names := make([]string, 0, len(o.attrs))
	for n := range o.attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// HasAttr reports whether attribute name was set explicitly.
func (o *Op) HasAttr(name string) bool {
	_, ok := o.attrs[name]
	return ok
}

// attrOrDefault returns the attribute or its schema default.
func (o *Op) attrOrDefault(name string) (Attr, bool) {
	if a, ok := o.attrs[name]; ok {
		return a, true
	}
	if s := schemaOf(o.Kind); s != nil {
		for _, sp := range s.attrs {
			if sp.name == name && sp.def != nil {
				return *sp.def, true
			}
		}
	}
	return Attr{}, false
}

// Ints returns the s64[] attribute name (or its default).
func (o *Op) Ints(name string) ([]int64, bool) {
	a, ok := o.attrOrDefault(name)
	return a.Is, ok && a.Type == AttrS64s
}

// Int returns the s64 attribute name (or its default).
func (o *Op) Int(name string) (int64, bool) {
	a, ok := o.attrOrDefault(name)
	return a.I, ok && a.Type == AttrS64
}

// Float returns the f32 attribute name (or its default).
func (o *Op) Float(name string) (float32, bool) {
	a, ok := o.attrOrDefault(name)
	return a.F, ok && a.Type == AttrF32
}

// Bool returns the bool attribute name (or its default).
func (o *Op) Bool(name string) (bool, bool) {
	a, ok := o.attrOrDefault(name)
	return a.B, ok && a.Type == AttrBool
}

// Str returns the string attribute name (or its default).
func (o *Op) Str(name string) (string, bool) {
	a, ok := o.attrOrDefault(name)
	return a.S, ok && a.Type == AttrString
}

// IsSquare reports whether the op computes x*x of its one input tensor:
// a Square, a Pow with beta 2 (as ONNX exporters write x**2), or a
// Multiply of a tensor by itself (as they write x*x). Each rounds the
// exact square once, so the three compute the same values.
func (o *Op) IsSquare() bool {
	switch o.Kind {
	case Square:
		return true
	case Pow:
		b, ok := o.Float("beta")
		return ok && b == 2
	case Multiply:
		return len(o.Inputs) == 2 && o.Inputs[0].ID == o.Inputs[1].ID
	}
	return false
}

// String names the op for messages: `op 3 (ReduceMean "mean0")`.
func (o *Op) String() string {
	if o == nil {
		return "op <nil>"
	}
	if o.Name != "" {
		return fmt.Sprintf("op %d (%s %q)", o.ID, o.Kind, o.Name)
	}
	return fmt.Sprintf("op %d (%s)", o.ID, o.Kind)
}

// Clone returns a deep copy of the op.
func (o *Op) Clone() *Op {
	c := &Op{ID: o.ID, Kind: o.Kind, Name: o.Name, attrErr: o.attrErr, attrs: make(map[string]Attr, len(o.attrs))}
	for _, t := range o.Inputs {
		c.Inputs = append(c.Inputs, t.Clone())
	}
	for _, t := range o.Outputs {
		c.Outputs = append(c.Outputs, t.Clone())
	}
	for k, a := range o.attrs {
		a.Is = append([]int64(nil), a.Is...)
		a.Fs = append([]float32(nil), a.Fs...)
		c.attrs[k] = a
	}
	return c
}

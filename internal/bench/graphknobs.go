package bench

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
)

// ShapeOverride is one --in-shapes entry: new dims and/or strides for a
// graph input tensor.
type ShapeOverride struct {
	ID       uint64
	Dims     []int64 // nil: keep the shape (only strides change); empty non-nil: rank 0 ("-")
	KeepDims bool
	Tag      string  // strides by tag, or
	Strides  []int64 // explicit strides (nil when not given)
}

// idEntry is one ID:REST entry of a graph knob's value.
type idEntry struct {
	id         uint64
	rest, text string // text: the whole entry, for messages
}

// idEntries splits a knob's value into its '+'-separated ID:REST entries;
// form names the entry syntax in the error.
func idEntries(knob, s, form string) ([]idEntry, error) {
	var out []idEntry
	for _, e := range strings.Split(s, "+") {
		idStr, rest, ok := strings.Cut(e, ":")
		id, err := strconv.ParseUint(idStr, 10, 64)
		if !ok || err != nil {
			return nil, status.Errorf(status.InvalidArguments, "--%s %q: entry %q wants %s", knob, s, e, form)
		}
		out = append(out, idEntry{id, rest, e})
	}
	return out, nil
}

// ParseInShapes parses benchdnn's --in-shapes value
// ID:SHAPE[*STRIDES][+ID:SHAPE[*STRIDES]...], where SHAPE is AxBxC, "-"
// for rank 0, or empty (keep the shape), and STRIDES is a tag such as
// "acdb" or explicit AxBxC strides.
func ParseInShapes(s string) ([]ShapeOverride, error) {
	if s == "" {
		return nil, nil
	}
	entries, err := idEntries("in-shapes", s, "ID:SHAPE[*STRIDES]")
	if err != nil {
		return nil, err
	}
	var out []ShapeOverride
	for _, e := range entries {
		o := ShapeOverride{ID: e.id}
		shape, strides, hasStrides := strings.Cut(e.rest, "*")
		switch shape {
		case "":
			o.KeepDims = true
		case "-":
			o.Dims = []int64{}
		default:
			if isTagLike(shape) {
				return nil, status.Errorf(status.InvalidArguments,
					"--in-shapes %q: shape %q is a tag: strides follow a '*' (%d:*%s keeps the shape)", s, shape, e.id, shape)
			}
			if o.Dims, err = parseXList(shape); err != nil {
				return nil, status.Errorf(status.InvalidArguments, "--in-shapes %q: shape %q: %s", s, shape, reasonOf(err))
			}
		}
		if hasStrides {
			if strides == "" {
				return nil, status.Errorf(status.InvalidArguments, "--in-shapes %q: entry %q has '*' but no strides", s, e.text)
			}
			if strides[0] >= '0' && strides[0] <= '9' {
				if o.Strides, err = parseXList(strides); err != nil {
					return nil, status.Errorf(status.InvalidArguments, "--in-shapes %q: strides %q: %s", s, strides, reasonOf(err))
				}
			} else {
				o.Tag = strides
			}
		} else if o.KeepDims {
			return nil, status.Errorf(status.InvalidArguments, "--in-shapes %q: entry %q changes nothing", s, e.text)
		}
		out = append(out, o)
	}
	return out, nil
}

// isTagLike reports whether s is letters a to l only, as a plain tag
// such as acdb is (and no shape is).
func isTagLike(s string) bool {
	for _, c := range s {
		if c < 'a' || c > 'l' {
			return false
		}
	}
	return s != ""
}

// parseXList parses "AxBxC" non-negative integers.
func parseXList(s string) ([]int64, error) {
	f := strings.Split(s, "x")
	if len(f) > graph.MaxRank {
		return nil, status.Errorf(status.InvalidShape, "rank %d exceeds %d", len(f), graph.MaxRank)
	}
	out := make([]int64, len(f))
	for i, v := range f {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, status.Errorf(status.InvalidArguments, "element %d is %q, want a non-negative integer", i, v)
		}
		out[i] = n
	}
	return out, nil
}

// PropertyOverride is one --tensor-property entry.
type PropertyOverride struct {
	ID   uint64
	Name string // undef, variable, constant or host_scalar
}

// tensorPropertyNames are the properties driver_graph.md lists.
var tensorPropertyNames = []string{"undef", "variable", "constant", "host_scalar"}

// ParseTensorProperty parses --tensor-property: ID:PROPERTY[+ID:PROPERTY...]
// with PROPERTY one of undef, variable, constant, host_scalar; "" sets
// nothing. A later entry for the same ID wins, as with --dt.
func ParseTensorProperty(s string) ([]PropertyOverride, error) {
	if s == "" {
		return nil, nil
	}
	entries, err := idEntries("tensor-property", s, "ID:PROPERTY")
	if err != nil {
		return nil, err
	}
	var out []PropertyOverride
	for _, e := range entries {
		if !slices.Contains(tensorPropertyNames, e.rest) {
			return nil, status.Errorf(status.InvalidArguments, "--tensor-property %q: property %q, want one of %s",
				s, e.rest, strings.Join(tensorPropertyNames, ", "))
		}
		out = append(out, PropertyOverride{ID: e.id, Name: e.rest})
	}
	return out, nil
}

// AttrOverride is one attribute of an --op-attrs entry.
type AttrOverride struct {
	OpID        uint64
	Name, Value string
}

// ParseOpAttrs parses --op-attrs: ID:NAME:VALUE[*NAME:VALUE...][+ID:...].
// Values are typed later, by the attribute they replace.
func ParseOpAttrs(s string) ([]AttrOverride, error) {
	if s == "" {
		return nil, nil
	}
	const form = "ID:NAME:VALUE[*NAME:VALUE]"
	entries, err := idEntries("op-attrs", s, form)
	if err != nil {
		return nil, err
	}
	var out []AttrOverride
	for _, e := range entries {
		if e.rest == "" {
			return nil, status.Errorf(status.InvalidArguments, "--op-attrs %q: entry %q wants %s", s, e.text, form)
		}
		for _, kv := range strings.Split(e.rest, "*") {
			name, val, ok := strings.Cut(kv, ":")
			if !ok || name == "" || val == "" {
				return nil, status.Errorf(status.InvalidArguments, "--op-attrs %q: %q wants NAME:VALUE", s, kv)
			}
			out = append(out, AttrOverride{OpID: e.id, Name: name, Value: val})
		}
	}
	return out, nil
}

// KindOverride is one entry of --op-kind.
type KindOverride struct {
	OpID   uint64
	Kind   graph.OpKind
	Remove bool // KIND undef: the op is taken out of the graph (removeOps)
}

// ParseOpKinds parses --op-kind: ID:KIND[+ID:KIND...]. As in benchdnn,
// only binary and eltwise ops may change kind (checked against the op by
// loadGraph), so KIND is one of those, or undef, which removes the op.
func ParseOpKinds(s string) ([]KindOverride, error) {
	if s == "" {
		return nil, nil
	}
	entries, err := idEntries("op-kind", s, "ID:KIND")
	if err != nil {
		return nil, err
	}
	var out []KindOverride
	for _, e := range entries {
		if e.rest == "undef" {
			out = append(out, KindOverride{OpID: e.id, Remove: true})
			continue
		}
		k, err := graph.ParseOpKind(e.rest)
		if err != nil {
			return nil, status.Errorf(status.InvalidArguments, "--op-kind %q: entry %q: %s", s, e.text, reasonOf(err))
		}
		if !k.IsBinary() && !k.IsEltwise() {
			return nil, status.Errorf(status.InvalidArguments, "--op-kind %q: %s is not a binary or eltwise op kind, the only kinds --op-kind changes", s, k)
		}
		out = append(out, KindOverride{OpID: e.id, Kind: k})
	}
	return out, nil
}

// knownAttrTypes types attributes an op does not carry yet.
var knownAttrTypes = map[string]graph.AttrType{
	"axes": graph.AttrS64s, "keep_dims": graph.AttrBool, "alpha": graph.AttrF32, "beta": graph.AttrF32,
	"min": graph.AttrF32, "max": graph.AttrF32, "auto_broadcast": graph.AttrString, "mode": graph.AttrString,
}

// typedAttr converts an --op-attrs value to the attribute type t.
func typedAttr(t graph.AttrType, v string) (any, error) {
	bad := func() (any, error) {
		return nil, status.Errorf(status.InvalidArguments, "--op-attrs value %q is not a %s", v, t)
	}
	switch t {
	case graph.AttrS64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad()
		}
		return n, nil
	case graph.AttrS64s:
		var out []int64
		for _, f := range strings.Split(v, "x") {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return bad()
			}
			out = append(out, n)
		}
		return out, nil
	case graph.AttrF32:
		f, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return bad()
		}
		return float32(f), nil
	case graph.AttrF32s:
		var out []float32
		for _, s := range strings.Split(v, "x") {
			f, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return bad()
			}
			out = append(out, float32(f))
		}
		return out, nil
	case graph.AttrBool:
		switch strings.ToLower(v) {
		case "1", "true":
			return true, nil
		case "0", "false":
			return false, nil
		}
		return bad()
	}
	return v, nil
}

// DTOverride is the parsed --dt value: either one type for every float
// tensor (All), or per tensor id.
type DTOverride struct {
	All   dtypes.DataType
	PerID map[uint64]dtypes.DataType
}

// ParseDT parses --dt: "" or "undef" (no change), a type (f32, bf16, f16)
// for every float tensor, or ID:DT[+ID:DT...].
func ParseDT(s string) (DTOverride, error) {
	var o DTOverride
	if s == "" || s == "undef" {
		return o, nil
	}
	if !strings.Contains(s, ":") {
		dt, err := dtypes.Parse(s)
		if err != nil || !dt.IsFloat() {
			return o, status.Errorf(status.InvalidArguments, "--dt %q: want undef, f32, bf16 or f16", s)
		}
		o.All = dt
		return o, nil
	}
	o.PerID = map[uint64]dtypes.DataType{}
	for _, e := range strings.Split(s, "+") {
		idStr, dtStr, _ := strings.Cut(e, ":")
		id, err := strconv.ParseUint(idStr, 10, 64)
		dt, derr := dtypes.Parse(dtStr)
		if err != nil || derr != nil || !dt.Valid() {
			return o, status.Errorf(status.InvalidArguments, "--dt %q: entry %q wants ID:DT", s, e)
		}
		o.PerID[id] = dt
	}
	return o, nil
}

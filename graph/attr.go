package graph

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// AttrType is the type of an op attribute, named as in oneDNN's graph JSON.
type AttrType int

// Attribute types.
const (
	AttrS64 AttrType = iota + 1
	AttrS64s
	AttrF32
	AttrF32s
	AttrBool
	AttrString
)

var attrTypeNames = map[AttrType]string{
	AttrS64: "s64", AttrS64s: "s64[]", AttrF32: "f32", AttrF32s: "f32[]", AttrBool: "bool", AttrString: "string",
}

// String returns the JSON name of the type ("s64", "s64[]", "f32", "f32[]", "bool", "string").
func (t AttrType) String() string {
	if n, ok := attrTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("AttrType(%d)", int(t))
}

// parseAttrType returns the attribute type named s (graph JSON's spelling).
func parseAttrType(s string) (AttrType, bool) {
	for t, n := range attrTypeNames {
		if n == s {
			return t, true
		}
	}
	return 0, false
}

// Attr is one attribute value; the field matching Type holds it.
type Attr struct {
	Type AttrType
	I    int64
	Is   []int64
	F    float32
	Fs   []float32
	B    bool
	S    string
}

// attrOf converts a Go value to an Attr.
func attrOf(v any) (Attr, bool) {
	switch x := v.(type) {
	case int64:
		return Attr{Type: AttrS64, I: x}, true
	case int:
		return Attr{Type: AttrS64, I: int64(x)}, true
	case []int64:
		return Attr{Type: AttrS64s, Is: slices.Clone(nonNil(x))}, true
	case []int:
		is := make([]int64, len(x))
		for i, e := range x {
			is[i] = int64(e)
		}
		return Attr{Type: AttrS64s, Is: is}, true
	case float32:
		return Attr{Type: AttrF32, F: x}, true
	case float64:
		return Attr{Type: AttrF32, F: float32(x)}, true
	case []float32:
		return Attr{Type: AttrF32s, Fs: slices.Clone(nonNil(x))}, true
	case bool:
		return Attr{Type: AttrBool, B: x}, true
	case string:
		return Attr{Type: AttrString, S: x}, true
	case Attr:
		return x, x.Type >= AttrS64 && x.Type <= AttrString
	}
	return Attr{}, false
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// String formats the value as benchdnn's knobs write it ("2x3", "1", "0.5").
func (a Attr) String() string {
	switch a.Type {
	case AttrS64:
		return fmt.Sprint(a.I)
	case AttrS64s:
		parts := make([]string, len(a.Is))
		for i, v := range a.Is {
			parts[i] = strconv.FormatInt(v, 10)
		}
		return strings.Join(parts, "x")
	case AttrF32:
		return fmt.Sprint(a.F)
	case AttrF32s:
		return fmt.Sprint(a.Fs)
	case AttrBool:
		return fmt.Sprint(a.B)
	case AttrString:
		return a.S
	}
	return "?"
}

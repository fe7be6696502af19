package bench

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

func TestParseInShapes(t *testing.T) {
	got, err := ParseInShapes("0:1x256x56x56*acdb+1:*dcba+2:16x1024+3:-+4:2x3*3x1")
	if err != nil {
		t.Fatal(err)
	}
	want := []ShapeOverride{
		{ID: 0, Dims: []int64{1, 256, 56, 56}, Tag: "acdb"},
		{ID: 1, KeepDims: true, Tag: "dcba"},
		{ID: 2, Dims: []int64{16, 1024}},
		{ID: 3, Dims: []int64{}},
		{ID: 4, Dims: []int64{2, 3}, Strides: []int64{3, 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseInShapes = %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{"x:1x2", "0", "0:", "0:1x*abc", "0:2x3*", "0:1xax2"} {
		if _, err := ParseInShapes(bad); err == nil {
			t.Errorf("ParseInShapes(%q) succeeded", bad)
		}
	}
	// A tag where the shape goes says where strides go.
	if _, err := ParseInShapes("1:acdb"); err == nil || !strings.Contains(err.Error(), `shape "acdb" is a tag: strides follow a '*' (1:*acdb keeps the shape)`) {
		t.Errorf("ParseInShapes(1:acdb): %v", err)
	}
}

func TestParseOpAttrsAndTypes(t *testing.T) {
	got, err := ParseOpAttrs("0:axes:2x3*keep_dims:0+5:alpha:0.5")
	if err != nil {
		t.Fatal(err)
	}
	want := []AttrOverride{{0, "axes", "2x3"}, {0, "keep_dims", "0"}, {5, "alpha", "0.5"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseOpAttrs = %+v", got)
	}
	for _, bad := range []string{"0", "a:axes:1", "0:axes", "0:axes:", "0:"} {
		if _, err := ParseOpAttrs(bad); err == nil {
			t.Errorf("ParseOpAttrs(%q) succeeded", bad)
		}
	}
	for _, c := range []struct {
		t    graph.AttrType
		v    string
		want any
	}{
		{graph.AttrS64s, "2x-1", []int64{2, -1}}, {graph.AttrBool, "0", false}, {graph.AttrBool, "true", true},
		{graph.AttrF32, "0.5", float32(0.5)}, {graph.AttrS64, "3", int64(3)}, {graph.AttrString, "numpy", "numpy"},
		{graph.AttrF32s, "1x2.5", []float32{1, 2.5}},
	} {
		v, err := typedAttr(c.t, c.v)
		if err != nil || !reflect.DeepEqual(v, c.want) {
			t.Errorf("typedAttr(%v, %q) = %#v, %v", c.t, c.v, v, err)
		}
	}
	if _, err := typedAttr(graph.AttrBool, "maybe"); err == nil {
		t.Error("bool maybe accepted")
	}
}

func TestParseDT(t *testing.T) {
	if o, err := ParseDT("bf16"); err != nil || o.All != dtypes.BF16 {
		t.Errorf("ParseDT(bf16) = %+v, %v", o, err)
	}
	if o, err := ParseDT("undef"); err != nil || o.All != dtypes.Undef || o.PerID != nil {
		t.Errorf("ParseDT(undef) = %+v, %v", o, err)
	}
	if o, err := ParseDT("0:f16+3:f32"); err != nil || o.PerID[0] != dtypes.F16 || o.PerID[3] != dtypes.F32 {
		t.Errorf("ParseDT(per id) = %+v, %v", o, err)
	}
	for _, bad := range []string{"s8", "x:f32", "0:f99"} {
		if _, err := ParseDT(bad); err == nil {
			t.Errorf("ParseDT(%q) succeeded", bad)
		}
	}
}

func TestParseTensorProperty(t *testing.T) {
	got, err := ParseTensorProperty("0:constant+1:variable+2:undef+3:host_scalar")
	if err != nil {
		t.Fatal(err)
	}
	want := []PropertyOverride{{0, "constant"}, {1, "variable"}, {2, "undef"}, {3, "host_scalar"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseTensorProperty = %+v", got)
	}
	if got, err := ParseTensorProperty(""); got != nil || err != nil {
		t.Errorf(`ParseTensorProperty("") = %v, %v; want nothing`, got, err)
	}
	for _, bad := range []string{"0", "0:", "x:constant", "-1:constant", "0:const", "0:Constant", "0:constant+", "0:constant,1:variable"} {
		if _, err := ParseTensorProperty(bad); err == nil {
			t.Errorf("ParseTensorProperty(%q) succeeded", bad)
		}
	}
}

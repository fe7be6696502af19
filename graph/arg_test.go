package graph_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// argGraph builds src [8, 32000] -> kind -> an index tensor of idt.
func argGraph(kind graph.OpKind, sdt, idt dtypes.DataType, attrs map[string]any) (*graph.Graph, error) {
	src := graph.NewLogicalTensor(0, sdt, []int64{8, 32000})
	dst := graph.NewLogicalTensorAny(1, idt, nil)
	op := graph.NewOp(0, kind, "arg").AddInput(src).AddOutput(dst)
	for k, v := range attrs {
		op.SetAttr(k, v)
	}
	g := graph.New()
	if err := g.AddOp(op); err != nil {
		return nil, err
	}
	return g, g.Finalize()
}

// TestArgOps checks ArgMax's and ArgMin's schema, shape inference and
// JSON round trip.
func TestArgOps(t *testing.T) {
	for _, tc := range []struct {
		kind  graph.OpKind
		attrs map[string]any
		dims  string
	}{
		{graph.ArgMax, map[string]any{"axis": int64(1)}, "8"},
		{graph.ArgMax, map[string]any{"axis": int64(-1), "keep_dims": true}, "8x1"},
		{graph.ArgMin, map[string]any{"select_last_index": true}, "32000"},
		{graph.ArgMin, map[string]any{"axis": int64(0), "keep_dims": true}, "1x32000"},
		{graph.ArgMax, map[string]any{"axes": []int64{1}}, "8"},
	} {
		g, err := argGraph(tc.kind, dtypes.F32, dtypes.S64, tc.attrs)
		if err != nil {
			t.Fatalf("%v %v: %v", tc.kind, tc.attrs, err)
		}
		out, _ := g.Tensor(1)
		if got := graph.DimsString(out.Dims); got != tc.dims {
			t.Errorf("%v %v: dims %s, want %s", tc.kind, tc.attrs, got, tc.dims)
		}
		var b bytes.Buffer
		if err := g.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		g2, err := graph.ReadJSON(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%v: reading back %s: %v", tc.kind, b.String(), err)
		}
		var b2 bytes.Buffer
		if err := g2.WriteJSON(&b2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), b2.Bytes()) {
			t.Errorf("JSON round trip differs:\n%s\n%s", b.String(), b2.String())
		}
		op := g2.Ops()[0]
		if op.Kind != tc.kind || !op.Kind.IsArg() {
			t.Errorf("read back kind %v, want %v", op.Kind, tc.kind)
		}
	}
}

// TestArgOpRefusals checks each refusal of the schema.
func TestArgOpRefusals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sdt, idt dtypes.DataType
		attrs    map[string]any
		want     graph.Status
	}{
		{"f32 index", dtypes.F32, dtypes.F32, nil, graph.InvalidDataType},
		{"boolean src", dtypes.Boolean, dtypes.S64, nil, graph.InvalidDataType},
		{"axis out of range", dtypes.F32, dtypes.S32, map[string]any{"axis": int64(2)}, graph.InvalidArguments},
		{"axis below -rank", dtypes.F32, dtypes.S32, map[string]any{"axis": int64(-3)}, graph.InvalidArguments},
		{"unknown attribute", dtypes.F32, dtypes.S32, map[string]any{"keepdims": true}, graph.InvalidGraphOp},
		{"axis of the wrong type", dtypes.F32, dtypes.S32, map[string]any{"axis": []int64{1}}, graph.InvalidGraphOp},
		{"axis and axes", dtypes.F32, dtypes.S32, map[string]any{"axis": int64(1), "axes": []int64{1}}, graph.InvalidGraphOp},
		{"two axes", dtypes.F32, dtypes.S32, map[string]any{"axes": []int64{0, 1}}, graph.InvalidGraphOp},
		{"axes out of range", dtypes.F32, dtypes.S32, map[string]any{"axes": []int64{2}}, graph.InvalidArguments},
	} {
		_, err := argGraph(graph.ArgMax, tc.sdt, tc.idt, tc.attrs)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4})
	two := graph.NewOp(0, graph.ArgMax, "two").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.S32, nil)).AddOutput(graph.NewLogicalTensorAny(2, dtypes.S32, nil))
	g := graph.New()
	if err := g.AddOp(two); !errors.Is(err, graph.InvalidGraphOp) {
		if err == nil {
			err = g.Finalize()
		}
		if !errors.Is(err, graph.InvalidGraphOp) {
			t.Errorf("two outputs: %v, want InvalidGraphOp", err)
		}
	}
}

package graph

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// quantOp builds a Dequantize (u8 -> f32) or Quantize (f32 -> u8) op over
// tensors 0 -> 1 of the given dims.
func quantOp(kind OpKind, dims []int64) *Op {
	in, out := dtypes.U8, dtypes.F32
	if kind == Quantize {
		in, out = out, in
	}
	return NewOp(0, kind, "q").
		AddInput(NewLogicalTensor(0, in, dims)).
		AddOutput(NewLogicalTensorAny(1, out, nil))
}

func TestQuantOpsInferAndParams(t *testing.T) {
	for _, kind := range []OpKind{Dequantize, Quantize} {
		g := New()
		op := quantOp(kind, []int64{2, 3, 4}).SetAttr("qtype", "per_channel").SetAttr("axis", -2).
			SetAttr("scales", []float32{0.5, 1, 2}).SetAttr("zps", []int64{0, 1, -2})
		if err := g.AddOp(op); err != nil {
			t.Fatalf("%v: %v", kind, err)
		}
		if err := g.Finalize(); err != nil {
			t.Fatalf("%v: %v", kind, err)
		}
		dst := mustTensor(t, g, 1)
		if !slices.Equal(dst.Dims, []int64{2, 3, 4}) {
			t.Errorf("%v: dst dims %v, want 2x3x4", kind, dst.Dims)
		}
		q, err := QuantParamsOf(op, 3)
		if err != nil || !q.PerChannel || q.Axis != 1 || !slices.Equal(q.Scales, []float32{0.5, 1, 2}) ||
			!slices.Equal(q.Zps, []int64{0, 1, -2}) {
			t.Errorf("%v: params %+v, %v", kind, q, err)
		}
		// Defaults: per_tensor, zps all zero.
		q, err = QuantParamsOf(quantOp(kind, []int64{2}).SetAttr("scales", []float32{0.25}), 1)
		if err != nil || q.PerChannel || !slices.Equal(q.Scales, []float32{0.25}) || !slices.Equal(q.Zps, []int64{0}) {
			t.Errorf("%v: default params %+v, %v", kind, q, err)
		}
	}
}

// TestQuantOpsRefuse: every malformed Dequantize or Quantize is a clear
// error with the right status, at AddOp or at Finalize (channel counts
// need the dims).
func TestQuantOpsRefuse(t *testing.T) {
	dims := []int64{2, 3, 4}
	cases := []struct {
		name   string
		op     *Op
		status Status
		msg    string
	}{
		{"no scales", quantOp(Dequantize, dims), InvalidGraphOp, `required attribute "scales"`},
		{"empty scales", quantOp(Dequantize, dims).SetAttr("scales", []float32{}), InvalidGraphOp, "scales is empty"},
		{"per_tensor two scales", quantOp(Quantize, dims).SetAttr("scales", []float32{1, 2}), InvalidGraphOp, "takes one scale"},
		{"zps length", quantOp(Dequantize, dims).SetAttr("scales", []float32{1}).SetAttr("zps", []int64{1, 2}),
			InvalidGraphOp, "zps holds 2 zero points and scales 1"},
		{"zps type", quantOp(Dequantize, dims).SetAttr("scales", []float32{1}).SetAttr("zps", []float32{1}),
			InvalidGraphOp, `attribute "zps" has type f32[]`},
		{"qtype", quantOp(Dequantize, dims).SetAttr("scales", []float32{1}).SetAttr("qtype", "per_row"),
			InvalidGraphOp, `qtype "per_row"`},
		{"per_group", quantOp(Dequantize, dims).SetAttr("scales", []float32{1}).SetAttr("qtype", "per_group"),
			Unimplemented, "per_group"},
		{"unknown attr", quantOp(Dequantize, dims).SetAttr("scales", []float32{1}).SetAttr("group_shape", []int64{1}),
			InvalidGraphOp, `unknown attribute "group_shape"`},
		{"nan scale", quantOp(Dequantize, dims).SetAttr("scales", []float32{float32(math.NaN())}), InvalidGraphOp, "must be finite"},
		{"inf scale", quantOp(Quantize, dims).SetAttr("scales", []float32{float32(math.Inf(-1))}), InvalidGraphOp, "must be finite"},
		{"quantize zero scale", quantOp(Quantize, dims).SetAttr("scales", []float32{0}), InvalidGraphOp, "divides by its scales"},
		{"zp range", quantOp(Dequantize, dims).SetAttr("scales", []float32{1}).SetAttr("zps", []int64{1 << 40}),
			InvalidGraphOp, "outside the s32 range"},
		{"axis range", quantOp(Dequantize, dims).SetAttr("scales", []float32{1, 1, 1}).SetAttr("qtype", "per_channel").SetAttr("axis", 3),
			InvalidGraphOp, "axis 3 is out of range [-3, 2]"},
		{"dequantize src f32", NewOp(0, Dequantize, "q").AddInput(NewLogicalTensor(0, dtypes.F32, dims)).
			AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("scales", []float32{1}), InvalidDataType, "want s8 or u8"},
		{"dequantize dst bf16", NewOp(0, Dequantize, "q").AddInput(NewLogicalTensor(0, dtypes.S8, dims)).
			AddOutput(NewLogicalTensorAny(1, dtypes.BF16, nil)).SetAttr("scales", []float32{1}), InvalidDataType, "want f32"},
		{"quantize src u8", NewOp(0, Quantize, "q").AddInput(NewLogicalTensor(0, dtypes.U8, dims)).
			AddOutput(NewLogicalTensorAny(1, dtypes.U8, nil)).SetAttr("scales", []float32{1}), InvalidDataType, "want f32"},
		{"quantize dst s32", NewOp(0, Quantize, "q").AddInput(NewLogicalTensor(0, dtypes.F32, dims)).
			AddOutput(NewLogicalTensorAny(1, dtypes.S32, nil)).SetAttr("scales", []float32{1}), InvalidDataType, "want s8 or u8"},
		{"two inputs", quantOp(Dequantize, dims).AddInput(NewLogicalTensor(5, dtypes.F32, []int64{1})).SetAttr("scales", []float32{1}),
			InvalidGraphOp, "has 2 inputs"},
		{"channel count", quantOp(Quantize, dims).SetAttr("qtype", "per_channel").SetAttr("axis", 2).SetAttr("scales", []float32{1, 1, 1}),
			InvalidShape, "needs 4 scales, scales holds 3"},
	}
	for _, c := range cases {
		g := New()
		err := g.AddOp(c.op)
		if err == nil {
			err = g.Finalize()
		}
		if !errors.Is(err, c.status) || err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, c.status, c.msg)
		}
	}
	if _, err := QuantParamsOf(NewOp(0, ReLU, ""), 1); !errors.Is(err, InvalidArguments) {
		t.Errorf("QuantParamsOf(ReLU): %v", err)
	}
}

// TestQuantJSONRoundTrip reads oneDNN Graph JSON with an int8 chain and
// writes it back: the ops, attributes and types survive both ways.
func TestQuantJSONRoundTrip(t *testing.T) {
	g := readJSONFile(t, "testdata/json/valid_int8_gap.json")
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	check := func(g *Graph) {
		t.Helper()
		ops := g.Ops()
		if len(ops) != 3 || ops[0].Kind != Dequantize || ops[2].Kind != Quantize {
			t.Fatalf("ops %v", ops)
		}
		dq, err := QuantParamsOf(ops[0], 4)
		if err != nil || dq.PerChannel || dq.Scales[0] != 0.05 || dq.Zps[0] != 3 {
			t.Errorf("dequantize params %+v, %v", dq, err)
		}
		q, err := QuantParamsOf(ops[2], 4)
		if err != nil || !q.PerChannel || q.Axis != 3 || len(q.Scales) != 16 || q.Zps[4] != 1 {
			t.Errorf("quantize params %+v, %v", q, err)
		}
		checkTensorIs(t, "src", mustTensor(t, g, 0), 0, dtypes.U8, []int64{2, 7, 7, 16}, []int64{784, 112, 16, 1}, LayoutStrided, PropertyUndef)
		checkTensorIs(t, "dst", mustTensor(t, g, 3), 3, dtypes.U8, []int64{2, 1, 1, 16}, []int64{16, 16, 16, 1}, LayoutStrided, PropertyUndef)
	}
	check(g)
	out := writeJSON(t, g)
	g2, err := ReadJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("reading back: %v\n%s", err, out)
	}
	if err := g2.Finalize(); err != nil {
		t.Fatal(err)
	}
	check(g2)
}

package graph

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// reduceGraph builds src(0) -> ReduceMean(op 0) -> dst(1) and finalizes.
func reduceGraph(t *testing.T, src []int64, axes []int64, keep bool, dst []int64) (*Graph, error) {
	t.Helper()
	op := NewOp(0, ReduceMean, "mean").
		AddInput(NewLogicalTensor(0, dtypes.F32, src)).
		AddOutput(NewLogicalTensorAny(1, dtypes.F32, dst)).
		SetAttr("axes", axes).SetAttr("keep_dims", keep)
	g := New()
	if err := g.AddOp(op); err != nil {
		return nil, err
	}
	return g, g.Finalize()
}

func TestReduceMeanShapeInference(t *testing.T) {
	cases := []struct {
		name string
		src  []int64
		axes []int64
		keep bool
		want []int64
	}{
		// The OpenVINO ReduceMean-1 examples.
		{"openvino keep [2,3]", []int64{6, 12, 10, 24}, []int64{2, 3}, true, []int64{6, 12, 1, 1}},
		{"openvino [2,3]", []int64{6, 12, 10, 24}, []int64{2, 3}, false, []int64{6, 12}},
		{"openvino [1]", []int64{6, 12, 10, 24}, []int64{1}, false, []int64{6, 10, 24}},
		{"openvino [-2]", []int64{6, 12, 10, 24}, []int64{-2}, false, []int64{6, 12, 24}},
		// The ONNX examples (3x2x2).
		{"onnx [1] no keep", []int64{3, 2, 2}, []int64{1}, false, []int64{3, 2}},
		{"onnx [1] keep", []int64{3, 2, 2}, []int64{1}, true, []int64{3, 1, 2}},
		{"onnx all keep", []int64{3, 2, 2}, []int64{0, 1, 2}, true, []int64{1, 1, 1}},
		{"onnx [-2] keep", []int64{3, 2, 2}, []int64{-2}, true, []int64{3, 1, 2}},
		{"empty axes is identity", []int64{3, 2, 2}, []int64{}, false, []int64{3, 2, 2}},
		{"all no keep gives scalar", []int64{3, 2}, []int64{0, 1}, false, []int64{}},
		{"rank 0", []int64{}, []int64{}, false, []int64{}},
		{"zero-size reduced dim", []int64{4, 0}, []int64{1}, false, []int64{4}},
		{"zero-size kept dim", []int64{0, 5}, []int64{1}, true, []int64{0, 1}},
		{"unknown kept dim", []int64{UnknownDim, 5}, []int64{1}, false, []int64{UnknownDim}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := reduceGraph(t, c.src, c.axes, c.keep, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := g.Tensor(1)
			if !ok {
				t.Fatal("dst tensor missing")
			}
			if got.Dims == nil || !slices.Equal(got.Dims, c.want) {
				t.Fatalf("dst dims %s, want %s", DimsString(got.Dims), DimsString(c.want))
			}
			// The user may also state the shape; the right one is accepted.
			if _, err := reduceGraph(t, c.src, c.axes, c.keep, c.want); err != nil {
				t.Fatalf("stated correct dst shape rejected: %v", err)
			}
		})
	}
}

func TestReduceMeanErrors(t *testing.T) {
	cases := []struct {
		name   string
		src    []int64
		axes   []int64
		keep   bool
		dst    []int64
		status Status
		msg    string
	}{
		{"axis too big", []int64{2, 3}, []int64{2}, false, nil, InvalidArguments, "axes[0] = 2 is out of range [-2, 1]"},
		{"axis too small", []int64{2, 3}, []int64{-3}, false, nil, InvalidArguments, "axes[0] = -3"},
		{"duplicate axis", []int64{2, 3}, []int64{1, -1}, false, nil, InvalidArguments, "names dim 1 twice"},
		{"axis on scalar", []int64{}, []int64{0}, false, nil, InvalidArguments, "is a scalar (rank 0)"},
		{"wrong dst dim", []int64{6, 12, 10, 24}, []int64{2, 3}, true, []int64{6, 12, 1, 2}, InvalidShape, "dim 3: 2 vs 1"},
		{"wrong dst rank", []int64{6, 12, 10, 24}, []int64{2, 3}, false, []int64{6, 12, 1, 1}, InvalidShape, "rank 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := reduceGraph(t, c.src, c.axes, c.keep, c.dst)
			if !errors.Is(err, c.status) {
				t.Fatalf("err = %v, want status %v", err, c.status)
			}
			if !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), "op 0 (ReduceMean") {
				t.Fatalf("message %q should name the op and contain %q", err, c.msg)
			}
		})
	}
}

func TestReduceMeanAxesTensor(t *testing.T) {
	src := NewLogicalTensor(0, dtypes.F32, []int64{2, 3, 4})
	axes := NewLogicalTensor(5, dtypes.S32, []int64{2})
	t.Run("keep_dims gives rank with unknown dims", func(t *testing.T) {
		g := New()
		op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(axes).AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil)).
			SetAttr("keep_dims", true)
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		d, _ := g.Tensor(1)
		if !slices.Equal(d.Dims, []int64{UnknownDim, UnknownDim, UnknownDim}) {
			t.Fatalf("dims %v", d.Dims)
		}
	})
	t.Run("no keep_dims gives rank from the axes count", func(t *testing.T) {
		g := New()
		op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(axes).AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil))
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		d, _ := g.Tensor(1)
		if !slices.Equal(d.Dims, []int64{UnknownDim}) {
			t.Fatalf("dims %v", d.Dims)
		}
	})
	t.Run("attribute and input both set", func(t *testing.T) {
		g := New()
		op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(axes).AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil)).
			SetAttr("axes", []int64{1})
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		err := g.Finalize()
		if !errors.Is(err, InvalidGraphOp) || !strings.Contains(err.Error(), "axes are given twice") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("axes tensor s64 as well as s32", func(t *testing.T) {
		g := New()
		op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(NewLogicalTensor(5, dtypes.S64, []int64{2})).
			AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil))
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		if d, _ := g.Tensor(1); !slices.Equal(d.Dims, []int64{UnknownDim}) {
			t.Fatalf("dims %v", d.Dims)
		}
	})
	t.Run("axes tensor must be s32 or s64", func(t *testing.T) {
		for _, dt := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.F32, dtypes.F64, dtypes.Boolean} {
			op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(NewLogicalTensor(5, dt, []int64{2})).
				AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil))
			err := New().AddOp(op)
			if !errors.Is(err, InvalidDataType) || !strings.Contains(err.Error(), "axes tensor 5 is "+dt.String()+", want s32 or s64") {
				t.Errorf("%s axes: err = %v", dt, err)
			}
		}
	})
	t.Run("axes tensor rank 2", func(t *testing.T) {
		g := New()
		op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(NewLogicalTensor(5, dtypes.S32, []int64{1, 2})).
			AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil))
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); !errors.Is(err, InvalidShape) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("more axes than dims", func(t *testing.T) {
		g := New()
		op := NewOp(1, ReduceMean, "").AddInput(src).AddInput(NewLogicalTensor(5, dtypes.S32, []int64{4})).
			AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil))
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); !errors.Is(err, InvalidShape) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestDataTypeRules(t *testing.T) {
	cases := []struct {
		src, dst dtypes.DataType
		ok       bool
	}{
		{dtypes.F32, dtypes.F32, true}, {dtypes.BF16, dtypes.BF16, true}, {dtypes.BF16, dtypes.F32, true},
		{dtypes.F16, dtypes.F16, true}, {dtypes.F16, dtypes.F32, true},
		{dtypes.F32, dtypes.BF16, false}, {dtypes.BF16, dtypes.F16, false},
		{dtypes.Undef, dtypes.F32, false},
		// 8-bit integer src (a gdnn extension, as oneDNN's reduction
		// primitive): any reduction dst type.
		{dtypes.S8, dtypes.F32, true}, {dtypes.S8, dtypes.S8, true}, {dtypes.S8, dtypes.U8, true},
		{dtypes.S8, dtypes.S32, true}, {dtypes.U8, dtypes.BF16, true}, {dtypes.U8, dtypes.F16, true},
		{dtypes.U8, dtypes.U8, true}, {dtypes.U8, dtypes.S32, true},
		{dtypes.U8, dtypes.S64, false}, {dtypes.S8, dtypes.Boolean, false}, {dtypes.S8, dtypes.F64, false},
		// Wider integers and booleans (gdnn extensions), reduced exactly: the
		// mean into the src type, f32 or f64.
		{dtypes.S32, dtypes.S32, true}, {dtypes.S32, dtypes.F32, true}, {dtypes.S64, dtypes.F64, true},
		{dtypes.U16, dtypes.U16, true}, {dtypes.S64, dtypes.S32, false}, {dtypes.Boolean, dtypes.Boolean, false},
		// Float src into an integer dst (a gdnn extension, as oneDNN's
		// reduction primitive).
		{dtypes.F32, dtypes.S8, true}, {dtypes.BF16, dtypes.S32, true}, {dtypes.F16, dtypes.U8, true},
		{dtypes.F32, dtypes.S64, false},
		// f64 (a gdnn extension): computed in float64, into f64 or f32.
		{dtypes.F64, dtypes.F64, true}, {dtypes.F64, dtypes.F32, true}, {dtypes.F64, dtypes.BF16, false},
		{dtypes.F64, dtypes.S32, false}, {dtypes.F32, dtypes.F64, false}, {dtypes.BF16, dtypes.F64, false},
	}
	for _, c := range cases {
		op := NewOp(7, ReduceMean, "").AddInput(NewLogicalTensor(0, c.src, []int64{4})).
			AddOutput(NewLogicalTensor(1, c.dst, []int64{1})).SetAttr("axes", []int64{0}).SetAttr("keep_dims", true)
		err := New().AddOp(op)
		if c.ok != (err == nil) {
			t.Errorf("%s->%s: err = %v", c.src, c.dst, err)
		}
		if err != nil && !errors.Is(err, InvalidDataType) {
			t.Errorf("%s->%s: status of %v", c.src, c.dst, err)
		}
		if c.src == dtypes.F32 && c.dst == dtypes.BF16 && !strings.HasSuffix(err.Error(), "with src f32 it must be f32, s8, u8 or s32") {
			t.Errorf("f32->bf16: %v, want it to name f32 and the integers alone", err)
		}
		if c.src == dtypes.BF16 && c.dst == dtypes.F16 && !strings.HasSuffix(err.Error(), "with src bf16 it must be bf16, f32, s8, u8 or s32") {
			t.Errorf("bf16->f16: %v", err)
		}
		if c.src == dtypes.U8 && c.dst == dtypes.S64 && !strings.HasSuffix(err.Error(), "dst tensor 1 is s64; with src u8 it must be s8, u8, s32, f32, bf16 or f16") {
			t.Errorf("u8->s64: %v", err)
		}
		if c.src == dtypes.S64 && c.dst == dtypes.S32 && !strings.HasSuffix(err.Error(), "a mean of s64 data writes s64, f32 or f64, not s32") {
			t.Errorf("s64->s32: %v", err)
		}
		if c.src == dtypes.Boolean && !strings.HasSuffix(err.Error(), "a mean of boolean data has no meaning (max, min and the logical reductions take booleans)") {
			t.Errorf("boolean mean: %v", err)
		}
		if c.src == dtypes.F64 && c.dst == dtypes.S32 && !strings.HasSuffix(err.Error(), "dst tensor 1 is s32; with src f64 it must be f64 or f32") {
			t.Errorf("f64->s32: %v", err)
		}
		if c.src == dtypes.F32 && c.dst == dtypes.F64 && !strings.HasSuffix(err.Error(), "dst tensor 1 is f64, which takes an f64 src (src f32)") {
			t.Errorf("f32->f64: %v", err)
		}
	}
}

func TestAddOpValidation(t *testing.T) {
	f32 := dtypes.F32
	mean := func(id uint64, in, out uint64) *Op {
		return NewOp(id, ReduceMean, "").AddInput(NewLogicalTensor(in, f32, []int64{2, 3})).
			AddOutput(NewLogicalTensor(out, f32, []int64{2, 1})).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)
	}
	cases := []struct {
		name   string
		setup  []*Op
		op     *Op
		status Status
		msg    string
	}{
		{"nil op", nil, nil, InvalidArguments, "op is nil"},
		{"duplicate op id", []*Op{mean(1, 0, 1)}, mean(1, 2, 3), InvalidGraph, "op id 1 is already used"},
		{"tensor id with other contents", []*Op{mean(1, 0, 1)},
			NewOp(2, ReLU, "").AddInput(NewLogicalTensor(1, f32, []int64{2, 2})).AddOutput(NewLogicalTensor(3, f32, []int64{2, 2})),
			InvalidGraph, "tensor id 1"},
		{"two producers", []*Op{mean(1, 0, 1)}, mean(2, 5, 1), InvalidGraph, "already produced by op 1"},
		{"missing input", nil, NewOp(1, ReLU, "").AddOutput(NewLogicalTensor(1, f32, []int64{2})), InvalidGraphOp, "has 0 inputs"},
		{"too many inputs", nil, NewOp(1, Add, "").AddInput(NewLogicalTensor(0, f32, []int64{2})).
			AddInput(NewLogicalTensor(1, f32, []int64{2})).AddInput(NewLogicalTensor(2, f32, []int64{2})).
			AddOutput(NewLogicalTensor(3, f32, []int64{2})), InvalidGraphOp, "has 3 inputs, Add takes 2"},
		{"missing output", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, f32, []int64{2})), InvalidGraphOp, "has 0 outputs"},
		{"required attribute", nil, NewOp(1, Clamp, "").AddInput(NewLogicalTensor(0, f32, []int64{2})).
			AddOutput(NewLogicalTensor(1, f32, []int64{2})).SetAttr("min", float32(0)), InvalidGraphOp, `"max"`},
		{"attribute type", nil, mean(1, 0, 1).SetAttr("keep_dims", int64(1)), InvalidGraphOp, "has type s64, want bool"},
		{"unknown attribute", nil, mean(1, 0, 1).SetAttr("axis", int64(1)), InvalidGraphOp, `unknown attribute "axis"`},
		// oneDNN's End has no attributes, so any one is refused by name.
		{"attribute on End", nil, NewOp(1, End, "").AddInput(NewLogicalTensor(0, f32, []int64{2})).SetAttr("axes", []int64{0}),
			InvalidGraphOp, `unknown attribute "axes" for End`},
		{"unsupported Go attr value", nil, mean(1, 0, 1).SetAttr("axes", []uint8{1}), InvalidArguments, "unsupported Go value type []uint8 (SetAttr takes int64, int, []int64, []int,"},
		{"eltwise changes type", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, f32, []int64{2})).
			AddOutput(NewLogicalTensor(1, dtypes.BF16, []int64{2})), InvalidDataType, "keeps the data type"},
		{"negative dim", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, f32, []int64{-5})).
			AddOutput(NewLogicalTensor(1, f32, []int64{2})), InvalidShape, "dim 0 is -5"},
		{"strides rank", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensorStrided(0, f32, []int64{2, 2}, []int64{1})).
			AddOutput(NewLogicalTensor(1, f32, []int64{2, 2})), InvalidShape, "2 dims but 1 strides"},
		{"rank too big", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, f32, make([]int64, 13))).
			AddOutput(NewLogicalTensor(1, f32, []int64{2})), InvalidShape, "rank 13"},
		{"unknown kind", nil, NewOp(1, OpKind(999), "").AddInput(NewLogicalTensor(0, f32, []int64{2})), InvalidGraphOp, "unknown op kind"},
		{"bad property", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, f32, []int64{2}).WithProperty(Property(9))).
			AddOutput(NewLogicalTensor(1, f32, []int64{2})), InvalidArguments, "property Property(9)"},
		{"input is output", nil, NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, f32, []int64{2})).
			AddOutput(NewLogicalTensor(0, f32, []int64{2})), InvalidGraph, "both an input and an output"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			for _, op := range c.setup {
				if err := g.AddOp(op); err != nil {
					t.Fatal(err)
				}
			}
			err := g.AddOp(c.op)
			if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, c.status, c.msg)
			}
		})
	}
}

// TestEltwiseAttrValues: AddOp refuses the attribute values that leave an
// eltwise or binary op without a meaning, naming the attribute, and takes the
// unusual values oneDNN takes (infinite Clamp bounds, min == max, a
// negative SoftPlus beta, infinite alphas).
func TestEltwiseAttrValues(t *testing.T) {
	f32, nan, inf := dtypes.F32, float32(math.NaN()), float32(math.Inf(1))
	elt := func(k OpKind, attrs ...any) *Op {
		op := NewOp(1, k, "e").AddInput(NewLogicalTensor(0, f32, []int64{2})).AddOutput(NewLogicalTensor(1, f32, []int64{2}))
		for i := 0; i < len(attrs); i += 2 {
			op.SetAttr(attrs[i].(string), attrs[i+1])
		}
		return op
	}
	refused := []struct {
		name string
		op   *Op
		msg  string
	}{
		{"Clamp min NaN", elt(Clamp, "min", nan, "max", float32(1)), `attribute "min" is NaN`},
		{"Clamp max NaN", elt(Clamp, "min", float32(0), "max", nan), `attribute "max" is NaN`},
		{"Clamp min above max", elt(Clamp, "min", float32(2), "max", float32(1)), "min 2 is above max 1; Clamp needs min <= max"},
		{"Clamp +Inf min", elt(Clamp, "min", inf, "max", float32(1)), "min +Inf is above max 1"},
		{"SoftPlus beta 0", elt(SoftPlus, "beta", float32(0)), "beta is 0; SoftPlus computes log(1+exp(beta*x))/beta"},
		{"SoftPlus beta -0", elt(SoftPlus, "beta", float32(math.Copysign(0, -1))), "beta is -0"},
		{"SoftPlus beta Inf", elt(SoftPlus, "beta", inf), "beta is +Inf"},
		{"SoftPlus beta -Inf", elt(SoftPlus, "beta", -inf), "beta is -Inf"},
		{"SoftPlus beta NaN", elt(SoftPlus, "beta", nan), `attribute "beta" is NaN`},
		{"Elu alpha NaN", elt(Elu, "alpha", nan), `attribute "alpha" is NaN; Elu needs a number`},
		{"LeakyReLU alpha NaN", elt(LeakyReLU, "alpha", nan), `attribute "alpha" is NaN`},
		{"HardSigmoid alpha NaN", elt(HardSigmoid, "alpha", nan, "beta", float32(0.5)), `attribute "alpha" is NaN`},
		{"HardSigmoid beta NaN", elt(HardSigmoid, "alpha", float32(0.2), "beta", nan), `attribute "beta" is NaN`},
		{"GELU unknown mode", elt(GELU, "mode", "gelu"), `mode "gelu", want "gelu_erf" or "gelu_tanh"`},
		{"Pow beta NaN", elt(Pow, "beta", nan), `attribute "beta" is NaN; Pow needs a number`},
		{"Pow without beta", elt(Pow), `required attribute "beta" (f32) is missing`},
		{"Add unknown auto_broadcast", NewOp(1, Add, "e").AddInput(NewLogicalTensor(0, f32, []int64{2})).
			AddInput(NewLogicalTensor(2, f32, []int64{2})).AddOutput(NewLogicalTensor(1, f32, []int64{2})).
			SetAttr("auto_broadcast", "bidirectional"), `auto_broadcast "bidirectional", want "numpy" or "none"`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			err := New().AddOp(c.op)
			if !errors.Is(err, InvalidGraphOp) || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), `op 1 (`) {
				t.Fatalf("err = %v, want invalid_graph_op naming the op and containing %q", err, c.msg)
			}
		})
	}
	accepted := []*Op{
		elt(Clamp, "min", -inf, "max", inf), elt(Clamp, "min", float32(1), "max", float32(1)),
		elt(Clamp, "min", float32(math.Copysign(0, -1)), "max", float32(0)), elt(Clamp, "min", float32(0), "max", float32(math.Copysign(0, -1))),
		elt(SoftPlus), elt(SoftPlus, "beta", float32(-2)), elt(SoftPlus, "beta", float32(1e-30)),
		elt(Elu, "alpha", inf), elt(LeakyReLU, "alpha", -inf), elt(HardSigmoid, "alpha", float32(0), "beta", inf),
		elt(GELU), elt(GELU, "mode", "gelu_tanh"),
		elt(Pow, "beta", float32(-0.5)), elt(Pow, "beta", float32(1.5)), elt(Pow, "beta", -inf),
	}
	for _, op := range accepted {
		if err := New().AddOp(op); err != nil {
			t.Errorf("%s %v: %v", op, op.attrs, err)
		}
	}
}

func TestFinalize(t *testing.T) {
	f32 := dtypes.F32
	t.Run("empty", func(t *testing.T) {
		if err := New().Finalize(); !errors.Is(err, InvalidGraph) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("cycle", func(t *testing.T) {
		g := New()
		a := NewOp(1, ReLU, "a").AddInput(NewLogicalTensor(1, f32, []int64{2})).AddOutput(NewLogicalTensor(2, f32, []int64{2}))
		b := NewOp(2, Abs, "b").AddInput(NewLogicalTensor(2, f32, []int64{2})).AddOutput(NewLogicalTensor(1, f32, []int64{2}))
		for _, op := range []*Op{a, b} {
			if err := g.AddOp(op); err != nil {
				t.Fatal(err)
			}
		}
		err := g.Finalize()
		if !errors.Is(err, InvalidGraph) || !strings.Contains(err.Error(), "cycle") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("topological order and propagation", func(t *testing.T) {
		g := New()
		// Added consumer first: Finalize must still order producer first.
		relu := NewOp(2, ReLU, "").AddInput(NewLogicalTensorAny(1, f32, nil)).AddOutput(NewLogicalTensorAny(2, f32, nil))
		mean := NewOp(1, ReduceMean, "").AddInput(NewLogicalTensor(0, f32, []int64{8, 16, 4})).
			AddOutput(NewLogicalTensorAny(1, f32, nil)).SetAttr("axes", []int64{0, 2})
		for _, op := range []*Op{relu, mean} {
			if err := g.AddOp(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		ops := g.Ops()
		if ops[0].ID != 1 || ops[1].ID != 2 {
			t.Fatalf("order %d, %d", ops[0].ID, ops[1].ID)
		}
		out, _ := g.Tensor(2)
		if !slices.Equal(out.Dims, []int64{16}) {
			t.Fatalf("relu output dims %v", out.Dims)
		}
		if g.Producer(2).ID != 2 || len(g.Consumers(1)) != 1 || g.Producer(0) != nil {
			t.Fatal("producer/consumer bookkeeping")
		}
		if err := g.AddOp(NewOp(9, Abs, "")); !errors.Is(err, InvalidGraph) {
			t.Fatalf("AddOp after Finalize: %v", err)
		}
	})
	t.Run("binary broadcast mismatch", func(t *testing.T) {
		g := New()
		op := NewOp(1, Add, "").AddInput(NewLogicalTensor(0, f32, []int64{2, 3})).AddInput(NewLogicalTensor(1, f32, []int64{4})).
			AddOutput(NewLogicalTensorAny(2, f32, nil))
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); !errors.Is(err, InvalidShape) || !strings.Contains(err.Error(), "do not broadcast") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("nil graph", func(t *testing.T) {
		var g *Graph
		if err := g.Finalize(); !errors.Is(err, InvalidArguments) {
			t.Fatal(err)
		}
		if err := g.AddOp(NewOp(1, Abs, "")); !errors.Is(err, InvalidArguments) {
			t.Fatal(err)
		}
	})
}

func TestOtherShapeInference(t *testing.T) {
	f32 := dtypes.F32
	cases := []struct {
		name string
		op   *Op
		want []int64
	}{
		{"broadcast", NewOp(1, Multiply, "").AddInput(NewLogicalTensor(0, f32, []int64{8, 1, 5})).
			AddInput(NewLogicalTensor(1, f32, []int64{3, 1})).AddOutput(NewLogicalTensorAny(2, f32, nil)), []int64{8, 3, 5}},
		{"matmul", NewOp(1, MatMul, "").AddInput(NewLogicalTensor(0, f32, []int64{4, 2, 3})).
			AddInput(NewLogicalTensor(1, f32, []int64{5, 3})).AddOutput(NewLogicalTensorAny(2, f32, nil)).
			SetAttr("transpose_b", true), []int64{4, 2, 5}},
		{"conv nxc", NewOp(1, Convolution, "").AddInput(NewLogicalTensor(0, f32, []int64{1, 56, 56, 64})).
			AddInput(NewLogicalTensor(1, f32, []int64{3, 3, 64, 128})).AddOutput(NewLogicalTensorAny(2, f32, nil)).
			SetAttr("strides", []int64{2, 2}).SetAttr("pads_begin", []int64{1, 1}).SetAttr("pads_end", []int64{1, 1}).
			SetAttr("dilations", []int64{1, 1}), []int64{1, 28, 28, 128}},
		{"transpose", NewOp(1, StaticTranspose, "").AddInput(NewLogicalTensor(0, f32, []int64{2, 3, 4})).
			AddOutput(NewLogicalTensorAny(2, f32, nil)).SetAttr("order", []int64{0, 2, 1}), []int64{2, 4, 3}},
		{"reshape", NewOp(1, StaticReshape, "").AddInput(NewLogicalTensor(0, f32, []int64{2, 3, 4})).
			AddOutput(NewLogicalTensorAny(2, f32, nil)).SetAttr("shape", []int64{0, -1}).SetAttr("special_zero", true), []int64{2, 12}},
		{"softmax", NewOp(1, SoftMax, "").AddInput(NewLogicalTensor(0, f32, []int64{2, 7})).
			AddOutput(NewLogicalTensorAny(2, f32, nil)), []int64{2, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			if err := g.AddOp(c.op); err != nil {
				t.Fatal(err)
			}
			if err := g.Finalize(); err != nil {
				t.Fatal(err)
			}
			got, _ := g.Tensor(2)
			if !slices.Equal(got.Dims, c.want) {
				t.Fatalf("dims %v, want %v", got.Dims, c.want)
			}
		})
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for k := OpKind(1); k < numOpKinds; k++ {
		got, err := ParseOpKind(k.String())
		if err != nil || got != k {
			t.Errorf("%v: %v %v", k, got, err)
		}
	}
	if _, err := ParseOpKind("ReduceMeen"); !errors.Is(err, InvalidGraphOp) {
		t.Errorf("unknown kind: %v", err)
	}
	for ty := AttrS64; ty <= AttrString; ty++ {
		if got, ok := parseAttrType(ty.String()); !ok || got != ty {
			t.Errorf("attr type %v", ty)
		}
	}
	if !strings.Contains(OpKind(0).String(), "OpKind(0)") || Status(99).Error() != "status(99)" {
		t.Error("unknown values should format as such")
	}
}

func TestDenseStrides(t *testing.T) {
	cases := []struct{ dims, want []int64 }{
		{[]int64{2, 3, 4}, []int64{12, 4, 1}},
		{[]int64{}, []int64{}},
		{[]int64{5, UnknownDim, 3}, []int64{UnknownDim, 3, 1}},
		{[]int64{0, 3}, []int64{3, 1}},
		{[]int64{1 << 40, 1 << 40, 1 << 40}, []int64{UnknownDim, 1 << 40, 1}},
	}
	for _, c := range cases {
		if got := DenseStrides(c.dims); !slices.Equal(got, c.want) {
			t.Errorf("DenseStrides(%v) = %v, want %v", c.dims, got, c.want)
		}
	}
	if n := NewLogicalTensor(0, dtypes.F32, []int64{1 << 40, 1 << 40}).NumElements(); n != -1 {
		t.Errorf("overflowing NumElements = %d", n)
	}
}

// TestDimsStringAndAttrString: "?" stands for an unknown dim (UnknownDim
// or oneDNN 3.x's -2^63) only; any other value, negative axes included,
// is printed as it is.
func TestDimsStringAndAttrString(t *testing.T) {
	for _, c := range []struct {
		dims []int64
		want string
	}{
		{nil, "unknown-rank"},
		{[]int64{}, "scalar"},
		{[]int64{2, 16, 3, 4}, "2x16x3x4"},
		{[]int64{2, UnknownDim, math.MinInt64}, "2x?x?"},
		{[]int64{-3, 4}, "-3x4"},
	} {
		if got := DimsString(c.dims); got != c.want {
			t.Errorf("DimsString(%v) = %q, want %q", c.dims, got, c.want)
		}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{[]int64{-1}, "-1"},
		{[]int64{-2, 1}, "-2x1"},
		{[]int64{}, ""},
		{int64(-1), "-1"},
		{float32(0.5), "0.5"},
		{true, "true"},
		{"erf", "erf"},
	} {
		a, ok := attrOf(c.v)
		if !ok {
			t.Fatalf("attrOf(%v) failed", c.v)
		}
		if got := a.String(); got != c.want {
			t.Errorf("Attr(%v).String() = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestIntOutputOfPostOps: an eltwise or binary op may store its f32 result
// to an s8, u8 or s32 tensor (the end of a fused chain after a reduction of
// 8-bit data), and one input of a binary op may be an integer (oneDNN's
// integer sum and binary post-op operands); integer inputs of eltwise
// ops, two integer inputs, other types and other op kinds are refused,
// naming the tensor.
func TestIntOutputOfPostOps(t *testing.T) {
	f32 := NewLogicalTensor(0, dtypes.F32, []int64{4})
	b := NewLogicalTensor(2, dtypes.F32, []int64{4})
	cases := []struct {
		name string
		op   *Op
		want string // "" accepted, else a substring of the error
	}{
		{"relu f32->s8", NewOp(1, ReLU, "").AddInput(f32).AddOutput(NewLogicalTensor(1, dtypes.S8, []int64{4})), ""},
		{"relu f32->u8", NewOp(1, ReLU, "").AddInput(f32).AddOutput(NewLogicalTensor(1, dtypes.U8, []int64{4})), ""},
		{"add f32->s32", NewOp(1, Add, "").AddInput(f32).AddInput(b).AddOutput(NewLogicalTensor(1, dtypes.S32, []int64{4})), ""},
		{"relu bf16->s8", NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, dtypes.BF16, []int64{4})).
			AddOutput(NewLogicalTensor(1, dtypes.S8, []int64{4})), "output tensor 1 is s8, want f32, bf16, f16, f64, or s8, u8 or s32 from an f32 input"},
		{"relu s8->s8", NewOp(1, ReLU, "").AddInput(NewLogicalTensor(0, dtypes.S8, []int64{4})).
			AddOutput(NewLogicalTensor(1, dtypes.S8, []int64{4})), "input tensor 0 is s8, want f32, bf16, f16 or f64"},
		{"add s8 operand", NewOp(1, Add, "").AddInput(f32).AddInput(NewLogicalTensor(2, dtypes.S8, []int64{4})).
			AddOutput(NewLogicalTensor(1, dtypes.S8, []int64{4})), ""},
		{"mul s32 left operand", NewOp(1, Multiply, "").AddInput(NewLogicalTensor(2, dtypes.S32, []int64{4})).AddInput(f32).
			AddOutput(NewLogicalTensor(1, dtypes.S32, []int64{4})), ""},
		{"add u8 operand to bf16", NewOp(1, Add, "").AddInput(NewLogicalTensor(0, dtypes.BF16, []int64{4})).
			AddInput(NewLogicalTensor(2, dtypes.U8, []int64{4})).AddOutput(NewLogicalTensor(1, dtypes.BF16, []int64{4})), ""},
		{"add u8 operand to bf16 into s8", NewOp(1, Add, "").AddInput(NewLogicalTensor(0, dtypes.BF16, []int64{4})).
			AddInput(NewLogicalTensor(2, dtypes.U8, []int64{4})).AddOutput(NewLogicalTensor(1, dtypes.S8, []int64{4})),
			"output tensor 1 is s8, want f32, bf16, f16, f64, or s8, u8 or s32 from an f32 input"},
		{"add two integers", NewOp(1, Add, "").AddInput(NewLogicalTensor(0, dtypes.S32, []int64{4})).
			AddInput(NewLogicalTensor(2, dtypes.S8, []int64{4})).AddOutput(NewLogicalTensor(1, dtypes.F32, []int64{4})),
			"input tensors 0 and 2 are s32 and s8; at most one input may be an integer"},
		{"add s64 operand", NewOp(1, Add, "").AddInput(f32).AddInput(NewLogicalTensor(2, dtypes.S64, []int64{4})).
			AddOutput(NewLogicalTensor(1, dtypes.F32, []int64{4})), "input tensor 2 is s64, want f32, bf16, f16 or f64"},
		{"add s64 beside s8", NewOp(1, Add, "").AddInput(NewLogicalTensor(0, dtypes.S64, []int64{4})).
			AddInput(NewLogicalTensor(2, dtypes.S8, []int64{4})).AddOutput(NewLogicalTensor(1, dtypes.F32, []int64{4})),
			"input tensor 0 is s64, want f32, bf16, f16 or f64"},
		{"relu f32->s64", NewOp(1, ReLU, "").AddInput(f32).AddOutput(NewLogicalTensor(1, dtypes.S64, []int64{4})),
			"output tensor 1 is s64, want f32, bf16, f16, f64, or s8, u8 or s32 from an f32 input"},
		{"softmax f32->s8", NewOp(1, SoftMax, "").AddInput(f32).AddOutput(NewLogicalTensor(1, dtypes.S8, []int64{4})),
			"output tensor 1 is s8, want f32, bf16 or f16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := New().AddOp(c.op)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("err = %v, want nil", err)
			case c.want != "" && (!errors.Is(err, InvalidDataType) || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err = %v, want invalid_data_type with %q", err, c.want)
			}
		})
	}
}

// TestZeroValuesAndNilArguments: the zero Graph works as New's, and the
// exported helpers refuse nil arguments with an error instead of
// panicking (internal/shape tests the shape helpers).
func TestZeroValuesAndNilArguments(t *testing.T) {
	var g Graph
	src := NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	if err := g.AddOp(NewOp(0, ReduceSum, "s").AddInput(src).AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("axes", []int64{1})); err != nil {
		t.Fatalf("AddOp on a zero Graph: %v", err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize of a zero Graph: %v", err)
	}
	if out, ok := g.Tensor(1); !ok || DimsString(out.Dims) != "2" {
		t.Errorf("zero Graph: output %v, %v; want dims 2", out, ok)
	}
	var empty Graph
	if err, want := empty.Finalize(), New().Finalize(); err == nil || err.Error() != want.Error() {
		t.Errorf("Finalize of an empty zero Graph: %v, want %v as New's", err, want)
	}
	if _, err := InferOutputs(nil, nil); !errors.Is(err, InvalidArguments) {
		t.Errorf("InferOutputs(nil, nil): %v", err)
	}
}

// TestMessagesNameTheRealProblem: an s64 binary operand is refused with
// the types a binary op takes (an integer operand among them), and an
// Attr of an unknown type is blamed on its type, not on being an Attr.
func TestMessagesNameTheRealProblem(t *testing.T) {
	src := NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	anyT := func(id uint64) LogicalTensor { return NewLogicalTensorAny(id, dtypes.F32, nil) }
	g := New()
	if err := g.AddOp(NewOp(0, ReduceSum, "s").AddInput(src).AddOutput(anyT(1)).SetAttr("axes", []int64{1})); err != nil {
		t.Fatal(err)
	}
	err := g.AddOp(NewOp(1, Add, "a").AddInput(anyT(1)).AddInput(NewLogicalTensor(9, dtypes.S64, []int64{2})).AddOutput(anyT(2)))
	if !errors.Is(err, InvalidDataType) || !strings.Contains(err.Error(), "tensor 9 is s64") || !strings.Contains(err.Error(), "s8, u8 or s32") {
		t.Errorf("s64 operand: %v", err)
	}
	err = New().AddOp(NewOp(0, ReduceSum, "s").AddInput(src).AddOutput(anyT(1)).SetAttr("axes", Attr{Type: AttrType(42)}))
	if !errors.Is(err, InvalidArguments) || !strings.Contains(err.Error(), "Attr of unknown type 42") {
		t.Errorf("Attr{Type: 42}: %v", err)
	}
}

// IsSquare names the three ways a graph writes x*x, and nothing else.
func TestIsSquare(t *testing.T) {
	x := NewLogicalTensorAny(1, dtypes.F32, nil)
	y := NewLogicalTensorAny(2, dtypes.F32, nil)
	op := func(k OpKind, ins ...LogicalTensor) *Op {
		o := NewOp(3, k, "")
		for _, in := range ins {
			o.AddInput(in)
		}
		return o
	}
	for _, c := range []struct {
		op   *Op
		want bool
	}{
		{op(Square, x), true},
		{op(Pow, x).SetAttr("beta", float32(2)), true},
		{op(Multiply, x, x), true},
		{op(Pow, x).SetAttr("beta", float32(3)), false},
		{op(Pow, x), false}, // no beta
		{op(Multiply, x, y), false},
		{op(Add, x, x), false},
		{op(Abs, x), false},
	} {
		if got := c.op.IsSquare(); got != c.want {
			t.Errorf("%s with inputs %d: IsSquare %v, want %v", c.op.Kind, len(c.op.Inputs), got, c.want)
		}
	}
}

// SoftMax's second output is its stats, f32 (a bf16 one is refused,
// naming it); a third output is malformed.
func TestSoftMaxStatsOutput(t *testing.T) {
	x := NewLogicalTensor(0, dtypes.F32, []int64{2, 4})
	op := NewOp(0, SoftMax, "sm").AddInput(x).
		AddOutput(NewLogicalTensorAny(1, dtypes.F32, nil)).
		AddOutput(NewLogicalTensorAny(2, dtypes.BF16, nil))
	err := New().AddOp(op)
	if !errors.Is(err, InvalidDataType) || !strings.Contains(err.Error(), "stats tensor 2 is bf16, want f32") {
		t.Fatalf("SoftMax with a bf16 stats output: %v, want invalid_data_type naming the stats", err)
	}
	op.Outputs[1].DataType = dtypes.F32
	if err := New().AddOp(op); err != nil {
		t.Fatalf("SoftMax with an f32 stats output: %v", err)
	}
	op.AddOutput(NewLogicalTensorAny(3, dtypes.F32, nil))
	if err := New().AddOp(op); !errors.Is(err, InvalidGraphOp) {
		t.Fatalf("SoftMax with 3 outputs: %v, want invalid_graph_op", err)
	}
}

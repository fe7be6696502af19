package graph

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// normGraph is one op of each normalization kind, with every attribute
// set, as a framework would build them.
func normGraph(t *testing.T) *Graph {
	t.Helper()
	f32, bf16 := dtypes.F32, dtypes.BF16
	g := New()
	ops := []*Op{
		NewOp(1, SoftMax, "attn").AddInput(NewLogicalTensor(0, f32, []int64{2, 4, 8, 8})).
			AddOutput(NewLogicalTensorAny(1, bf16, nil)).SetAttr("axis", -1).SetAttr("mode", "inf_as_zero"),
		NewOp(2, LogSoftmax, "logits").AddInput(NewLogicalTensor(10, bf16, []int64{3, 5})).
			AddOutput(NewLogicalTensorAny(11, bf16, nil)).SetAttr("axis", 1),
		NewOp(3, LayerNorm, "ln").AddInput(NewLogicalTensor(20, f32, []int64{2, 3, 4, 5})).
			AddInput(NewLogicalTensor(21, f32, []int64{4, 5})).AddInput(NewLogicalTensor(22, bf16, []int64{4, 5})).
			AddOutput(NewLogicalTensorAny(23, f32, nil)).AddOutput(NewLogicalTensorAny(24, f32, nil)).AddOutput(NewLogicalTensorAny(25, f32, nil)).
			SetAttr("begin_norm_axis", -2).SetAttr("epsilon", float32(1e-6)),
		NewOp(4, RMSNorm, "rms").AddInput(NewLogicalTensor(30, bf16, []int64{4, 16})).
			AddInput(NewLogicalTensor(31, bf16, []int64{16})).AddOutput(NewLogicalTensorAny(32, bf16, nil)).
			SetAttr("epsilon", float32(1e-6)),
		NewOp(5, GroupNorm, "gn").AddInput(NewLogicalTensor(40, f32, []int64{2, 8, 3, 3})).
			AddInput(NewLogicalTensor(41, f32, []int64{8})).AddInput(NewLogicalTensor(42, f32, []int64{8})).
			AddOutput(NewLogicalTensorAny(43, f32, nil)).AddOutput(NewLogicalTensorAny(44, f32, nil)).AddOutput(NewLogicalTensorAny(45, f32, nil)).
			SetAttr("groups", 4).SetAttr("data_format", "NCX"),
		NewOp(6, SoftMax, "with stats").AddInput(NewLogicalTensor(50, bf16, []int64{2, 3, 5})).
			AddOutput(NewLogicalTensorAny(51, f32, nil)).AddOutput(NewLogicalTensorAny(52, f32, nil)).SetAttr("axis", 1),
	}
	for _, op := range ops {
		if err := g.AddOp(op); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestNormInferShapes(t *testing.T) {
	g := normGraph(t)
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[uint64][]int64{
		1: {2, 4, 8, 8}, 11: {3, 5}, 23: {2, 3, 4, 5}, 24: {2, 3}, 25: {2, 3}, 32: {4, 16}, 43: {2, 8, 3, 3}, 44: {2, 4}, 45: {2, 4},
		51: {2, 3, 5}, 52: {2, 1, 5},
	} {
		if lt, _ := g.Tensor(id); !slices.Equal(lt.Dims, want) {
			t.Errorf("tensor %d dims %s, want %s", id, DimsString(lt.Dims), DimsString(want))
		}
	}
}

func TestNormJSONRoundTrip(t *testing.T) {
	g := normGraph(t)
	roundTrip(t, g)
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, g)
}

func TestNormDefaults(t *testing.T) {
	for _, c := range []struct {
		k    OpKind
		name string
		want any
	}{
		{SoftMax, "axis", int64(1)}, {SoftMax, "mode", "none"}, {LogSoftmax, "axis", int64(-1)},
		{LayerNorm, "begin_norm_axis", int64(-1)}, {LayerNorm, "keep_stats", true}, {LayerNorm, "use_affine", true},
		{LayerNorm, "epsilon", float32(1e-5)}, {RMSNorm, "use_affine", true}, {RMSNorm, "begin_norm_axis", int64(-1)},
		{GroupNorm, "data_format", "NXC"}, {GroupNorm, "keep_stats", true}, {GroupNorm, "epsilon", float32(1e-5)},
	} {
		op := NewOp(0, c.k, "")
		var got any
		switch c.want.(type) {
		case int64:
			got, _ = op.Int(c.name)
		case string:
			got, _ = op.Str(c.name)
		case bool:
			got, _ = op.Bool(c.name)
		case float32:
			got, _ = op.Float(c.name)
		}
		if got != c.want {
			t.Errorf("%v %s defaults to %v, want %v", c.k, c.name, got, c.want)
		}
	}
}

// TestNormHostile: every op that has no meaning is refused with a clear
// error, at AddOp (attributes, ports, data types) or at Finalize (what
// needs the shapes), never a panic.
func TestNormHostile(t *testing.T) {
	f32 := dtypes.F32
	x := NewLogicalTensor(0, f32, []int64{2, 6, 4})
	out := func(id uint64) LogicalTensor { return NewLogicalTensorAny(id, f32, nil) }
	ln := func() *Op {
		return NewOp(1, LayerNorm, "ln").AddInput(x).AddInput(NewLogicalTensor(1, f32, []int64{4})).
			AddInput(NewLogicalTensor(2, f32, []int64{4})).AddOutput(out(3)).SetAttr("keep_stats", false)
	}
	gn := func(groups int) *Op {
		return NewOp(1, GroupNorm, "gn").AddInput(x).AddInput(NewLogicalTensor(1, f32, []int64{6})).
			AddInput(NewLogicalTensor(2, f32, []int64{6})).AddOutput(out(3)).SetAttr("keep_stats", false).
			SetAttr("groups", groups).SetAttr("data_format", "NCX")
	}
	cases := []struct {
		name string
		op   *Op
		st   Status
		msg  string
	}{
		{"gamma of the wrong size", NewOp(1, LayerNorm, "ln").AddInput(x).AddInput(NewLogicalTensor(1, f32, []int64{5})).
			AddInput(NewLogicalTensor(2, f32, []int64{4})).AddOutput(out(3)).SetAttr("keep_stats", false),
			InvalidShape, "gamma tensor 1 has dims 5; src 2x6x4 wants 4"},
		{"beta of the wrong rank", NewOp(1, LayerNorm, "ln").AddInput(x).AddInput(NewLogicalTensor(1, f32, []int64{6, 4})).
			AddInput(NewLogicalTensor(2, f32, []int64{4})).AddOutput(out(3)).SetAttr("keep_stats", false).SetAttr("begin_norm_axis", 1),
			InvalidShape, "beta tensor 2 has dims 4; src 2x6x4 wants 6x4"},
		{"groupnorm gamma per spatial", NewOp(1, GroupNorm, "gn").AddInput(x).AddInput(NewLogicalTensor(1, f32, []int64{4})).
			AddInput(NewLogicalTensor(2, f32, []int64{6})).AddOutput(out(3)).SetAttr("keep_stats", false).
			SetAttr("groups", 2).SetAttr("data_format", "NCX"), InvalidShape, "(per channel)"},
		{"groups not dividing C", gn(4), InvalidShape, "groups 4 does not divide the 6 channels"},
		{"groups 0", gn(0), InvalidGraphOp, "groups is 0"},
		{"groups missing", NewOp(1, GroupNorm, "gn").AddInput(x).AddOutput(out(3)).SetAttr("keep_stats", false).SetAttr("use_affine", false),
			InvalidGraphOp, `required attribute "groups"`},
		{"negative epsilon", ln().SetAttr("epsilon", float32(-1e-5)), InvalidGraphOp, "epsilon is -1e-05 (negative)"},
		{"NaN epsilon", ln().SetAttr("epsilon", float32(math.NaN())), InvalidGraphOp, "epsilon is NaN"},
		{"infinite epsilon", NewOp(1, RMSNorm, "").AddInput(x).AddOutput(out(3)).SetAttr("use_affine", false).
			SetAttr("epsilon", float32(math.Inf(1))), InvalidGraphOp, "epsilon is +Inf"},
		{"softmax axis past the end", NewOp(1, SoftMax, "").AddInput(x).AddOutput(out(3)).SetAttr("axis", 3),
			InvalidArguments, "axis 3 is out of range [-3, 2]"},
		{"logsoftmax axis before the start", NewOp(1, LogSoftmax, "").AddInput(x).AddOutput(out(3)).SetAttr("axis", -4),
			InvalidArguments, "axis -4 is out of range"},
		{"begin_norm_axis out of range", ln().SetAttr("begin_norm_axis", 5), InvalidArguments, "begin_norm_axis 5 is out of range"},
		{"softmax of a scalar", NewOp(1, SoftMax, "").AddInput(NewLogicalTensor(0, f32, []int64{})).AddOutput(out(3)),
			InvalidArguments, "out of range [0, -1] for src of rank 0"},
		{"groupnorm of rank 1", NewOp(1, GroupNorm, "").AddInput(NewLogicalTensor(0, f32, []int64{6})).AddOutput(out(3)).
			SetAttr("groups", 1).SetAttr("use_affine", false).SetAttr("keep_stats", false), InvalidShape, "rank 1"},
		{"softmax mode", NewOp(1, SoftMax, "").AddInput(x).AddOutput(out(3)).SetAttr("mode", "inf"), InvalidGraphOp, `mode "inf"`},
		{"data_format", gn(2).SetAttr("data_format", "NHWC"), InvalidGraphOp, `data_format "NHWC"`},
		{"unknown attribute", ln().SetAttr("eps", float32(1e-5)), InvalidGraphOp, `unknown attribute "eps"`},
		{"epsilon as s64", ln().SetAttr("epsilon", 1), InvalidGraphOp, `attribute "epsilon" has type s64, want f32`},
		{"missing gamma and beta", NewOp(1, LayerNorm, "").AddInput(x).AddOutput(out(3)).SetAttr("keep_stats", false),
			InvalidGraphOp, "has 1 inputs; with use_affine true it takes 3 (src, gamma and beta)"},
		{"missing beta", NewOp(1, GroupNorm, "").AddInput(x).AddInput(NewLogicalTensor(1, f32, []int64{6})).AddOutput(out(3)).
			SetAttr("keep_stats", false).SetAttr("groups", 2), InvalidGraphOp, "takes 3 (src, gamma and beta)"},
		{"missing rmsnorm gamma", NewOp(1, RMSNorm, "").AddInput(x).AddOutput(out(3)), InvalidGraphOp, "takes 2 (src and gamma)"},
		{"gamma without use_affine", ln().SetAttr("use_affine", false), InvalidGraphOp, "with use_affine false it takes 1 (src only)"},
		{"missing stats", NewOp(1, LayerNorm, "").AddInput(x).AddOutput(out(3)).SetAttr("use_affine", false),
			InvalidGraphOp, "with keep_stats true (true is the default) it gives 3 (dst, mean and variance)"},
		{"missing src", NewOp(1, SoftMax, "").AddOutput(out(3)), InvalidGraphOp, "has 0 inputs"},
		{"missing dst", NewOp(1, LogSoftmax, "").AddInput(x), InvalidGraphOp, "has 0 outputs"},
		{"src s8", NewOp(1, SoftMax, "").AddInput(NewLogicalTensor(0, dtypes.S8, []int64{4})).AddOutput(out(3)),
			InvalidDataType, "src tensor 0 is s8, want f32, bf16 or f16"},
		{"gamma s32", NewOp(1, RMSNorm, "").AddInput(x).AddInput(NewLogicalTensor(1, dtypes.S32, []int64{4})).AddOutput(out(3)),
			InvalidDataType, "gamma tensor 1 is s32"},
		{"dst u8", NewOp(1, LogSoftmax, "").AddInput(x).AddOutput(NewLogicalTensorAny(3, dtypes.U8, nil)),
			InvalidDataType, "output tensor 3 is u8, want f32, bf16 or f16"},
		{"variance bf16", NewOp(1, LayerNorm, "").AddInput(x).AddOutput(out(3)).AddOutput(out(4)).
			AddOutput(NewLogicalTensorAny(5, dtypes.BF16, nil)).SetAttr("use_affine", false), InvalidDataType, "variance tensor 5 is bf16, want f32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := New()
			err := g.AddOp(c.op)
			if err == nil {
				err = g.Finalize()
			}
			if !errors.Is(err, c.st) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want %v naming %q", err, c.st, c.msg)
			}
		})
	}
}

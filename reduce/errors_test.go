package reduce

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// TestRefusals checks every refusal of the one-call API: its status and
// that the message names the bad value.
func TestRefusals(t *testing.T) {
	f32 := make([]float32, 64)
	u16 := make([]bf16, 64)
	dst := make([]float32, 64)
	tiny := make([]float32, 1)
	cases := []struct {
		name   string
		call   func() error
		status graph.Status
		msg    string
	}{
		{"rank past MaxRank", func() error { return Mean(dst, f32, make([]int, 13), nil) }, graph.InvalidShape, "rank 13"},
		{"negative dim", func() error { return Mean(dst, f32, []int{2, -3}, nil) }, graph.InvalidShape, "dim 1 is -3"},
		{"axis too big", func() error { return Sum(dst, f32, []int{2, 3}, []int{2}) }, graph.InvalidArguments, "axes[0] = 2 is out of range [-2, 1]"},
		{"axis too small", func() error { return Sum(dst, f32, []int{2, 3}, []int{-3}) }, graph.InvalidArguments, "axes[0] = -3"},
		{"repeated axis", func() error { return Max(dst, f32, []int{2, 3}, []int{1, -1}) }, graph.InvalidArguments, "axes[1] names dim 1 twice"},
		{"src too short", func() error { return Mean(dst, f32[:5], []int{2, 3}, []int{1}) }, graph.InvalidArguments, "src holds 5 elements, dims [2 3] with strides [3 1] address 6"},
		{"dst too short", func() error { return Mean(tiny, f32, []int{2, 3}, []int{1}) }, graph.InvalidArguments, "dst holds 1 elements, dst dims [2] address 2"},
		{"strided src too short", func() error { return Mean(dst, f32[:20], []int{2, 3}, []int{1}, SrcStrides([]int{20, 1})) }, graph.InvalidArguments, "address 23"},
		{"src strides count", func() error { return Mean(dst, f32, []int{2, 3}, []int{1}, SrcStrides([]int{1})) }, graph.InvalidShape, "1 src strides for 2 dims"},
		{"negative src stride", func() error { return Mean(dst, f32, []int{2, 3}, []int{1}, SrcStrides([]int{3, -1})) }, graph.InvalidArguments, "src stride 1 is negative"},
		{"dst strides count", func() error { return Mean(dst, f32, []int{2, 3}, []int{1}, DstStrides([]int{1, 1})) }, graph.InvalidShape, "2 dst strides for 1 dst dims [2]"},
		{"dst strides count keep", func() error {
			return Mean(dst, f32, []int{2, 3}, []int{1}, KeepDims(true), DstStrides([]int{1}))
		}, graph.InvalidShape, "1 dst strides for 2 dst dims [2 1]"},
		{"negative dst stride", func() error { return Mean(dst, f32, []int{2, 3}, []int{1}, DstStrides([]int{-1})) }, graph.InvalidArguments, "dst stride 0 is negative"},
		{"dst in src", func() error { x := make([]float32, 8); return Sum(x[:2], x, []int{2, 4}, []int{1}) }, graph.InvalidArguments,
			"reduce.Sum: src and dst share memory"},
		{"overlapping dst", func() error { return Mean(dst, f32, []int{2, 3}, []int{0}, DstStrides([]int{0})) }, graph.InvalidArguments,
			"reduce.Mean: dst strides [0] over dst dims [3] do not nest"},
		{"uint16 src without a type", func() error { return Mean(dst, u16, []int{2, 3}, nil) }, graph.InvalidDataType, "src is a 16-bit slice: name its type bf16, f16 or u16 (reduce.Type or reduce.SrcType)"},
		{"uint16 dst without a type", func() error { return Mean(u16, f32, []int{2, 3}, nil) }, graph.InvalidDataType, "reduce.DstType"},
		{"uint16 named f32", func() error { return Mean(dst, u16, []int{2, 3}, nil, SrcType(dtypes.F32)) }, graph.InvalidDataType, "named f32, not bf16, f16 or u16"},
		{"float32 named bf16", func() error { return Mean(dst, f32, []int{2, 3}, nil, SrcType(dtypes.BF16)) }, graph.InvalidDataType, "src is a 32-bit float slice but its type is named bf16"},
		{"float32 dst named bf16", func() error { return Mean(dst, f32, []int{2, 3}, nil, DstType(dtypes.BF16)) }, graph.InvalidDataType, "dst is a 32-bit float slice but its type is named bf16"},
		{"bf16 to f16", func() error {
			return Mean(u16, u16, []int{2, 3}, nil, SrcType(dtypes.BF16), DstType(dtypes.F16))
		}, graph.InvalidDataType, "dst type f16 for src type bf16"},
		{"f32 to bf16", func() error { return Mean(u16, f32, []int{2, 3}, nil, DstType(dtypes.BF16)) }, graph.InvalidDataType, "dst type bf16 for src type f32"},
		{"zero option", func() error { return Mean(dst, f32, []int{2, 3}, nil, Option{}) }, graph.InvalidArguments, "option 0 is the zero Option"},
		{"L2 of s32", func() error { return L2(make([]int32, 2), make([]int32, 6), []int{2, 3}, []int{1}) }, graph.Unimplemented,
			"reduce.L2: L2 of s32 data: gdnn reduces integer"},
		{"LogSum of s32", func() error { return LogSum(make([]int32, 2), make([]int32, 6), []int{2, 3}, []int{1}) }, graph.Unimplemented,
			"reduce.LogSum: LogSum of s32 data: gdnn reduces integer"},
		{"LogicalAnd of f32", func() error { return LogicalAnd(dst, f32, []int{2, 3}, []int{1}) }, graph.InvalidDataType,
			"reduce.LogicalAnd: LogicalAnd reduces integer or boolean data, not f32"},
		{"no type", func() error { return Sum(dst, f32, []int{2, 3}, nil, KeepDims(true), Type(dtypes.Undef)) }, graph.InvalidArguments,
			"reduce.Sum: option 1 names no data type"},
		{"DstDims' name", func() error { _, err := DstDims([]int{2, 3}, nil, SelectLastIndex(true)); return err }, graph.InvalidArguments,
			"reduce.DstDims: option 0 is an index reduction's"},
		{"ArgMax's option numbers", func() error {
			return ArgMax(make([]int32, 2), f32, []int{2, 3}, 1, SelectLastIndex(true), Type(dtypes.Undef))
		}, graph.InvalidArguments, "reduce.ArgMax: option 1 names no data type"},
		{"ArgMax of rank 0", func() error { return ArgMax(make([]int32, 1), f32, nil, 0) }, graph.InvalidShape,
			"reduce.ArgMax: dims are empty (rank 0)"},
		{"ArgMax's axis", func() error { return ArgMax(make([]int32, 2), f32, []int{2, 3}, 2) }, graph.InvalidArguments,
			"reduce.ArgMax: axis 2 is out of range [-2, 1] for dims [2 3]"},
		{"unknown post-op", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(99, 0, 0)) }, graph.InvalidArguments, "unknown post-op kind 99"},
		{"zero post-op kind", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(0, 0, 0)) }, graph.InvalidArguments, "unknown post-op kind 0"},
		{"Clamp min above max", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostClamp, 2, 1)) }, graph.InvalidArguments,
			"option 0: Clamp post-op: min (alpha) 2 is above max (beta) 1"},
		{"Clamp NaN max", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostClamp, 0, float32(math.NaN()))) }, graph.InvalidArguments,
			"Clamp post-op: beta is NaN"},
		{"Elu NaN alpha", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostElu, float32(math.NaN()), 0)) }, graph.InvalidArguments,
			"Elu post-op: alpha is NaN"},
		{"SoftPlus beta 0", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostReLU, 0, 0), Post(PostSoftPlus, 1, 0)) }, graph.InvalidArguments,
			"option 1: SoftPlus post-op: beta is 0"},
		{"SoftPlus beta Inf", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostSoftPlus, 0, float32(math.Inf(-1)))) }, graph.InvalidArguments,
			"beta is -Inf"},
		{"Pow beta NaN", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostPow, 0, float32(math.NaN()))) }, graph.InvalidArguments,
			"Pow post-op: beta is NaN"},
		{"Pow beta 1.5", func() error { return Mean(dst, f32, []int{2, 3}, nil, Post(PostPow, 0, 1.5)) }, graph.Unimplemented,
			"option 0: Pow post-op with beta 1.5; gdnn computes x^beta for beta 0, 1, 2, 3, -1, -2, 0.5 and -0.5"},
		{"Pow beta 0.25 after LogSum's own Log", func() error { return LogSum(dst, f32, []int{2, 3}, nil, Post(PostPow, 0, 0.25)) }, graph.Unimplemented,
			"reduce.LogSum: option 0: Pow post-op with beta 0.25"},
		{"too many post-ops", func() error {
			r := Post(PostReLU, 0, 0)
			return Mean(dst, f32, []int{2, 3}, nil, r, r, r, r, r)
		}, graph.Unimplemented, "option 4: more than 4 post-ops"},
		{"unknown op", func() error { return Reduce(opEnd, dst, f32, []int{2, 3}, nil) }, graph.InvalidArguments, "unknown op Op(16)"},
		{"DstDims bad axis", func() error { _, err := DstDims([]int{2, 3}, []int{5}); return err }, graph.InvalidArguments, "reduce.DstDims: axes[0] = 5"},
	}
	for _, c := range cases {
		err := c.call()
		if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, c.status, c.msg)
		}
	}
}

// TestDstDims checks the dst shape query, with and without keep_dims and
// under ONNX's reduce-all.
func TestDstDims(t *testing.T) {
	for _, c := range []struct {
		dims, axes []int
		opts       []Option
		want       string
	}{
		{[]int{2, 3, 4}, []int{-1}, nil, "[2 3]"},
		{[]int{2, 3, 4}, []int{0, 2}, []Option{KeepDims(true)}, "[1 3 1]"},
		{[]int{2, 3, 4}, nil, nil, "[2 3 4]"},
		{[]int{}, nil, nil, "[]"},
	} {
		got, err := DstDims(c.dims, c.axes, c.opts...)
		if err != nil || ints(got) != c.want {
			t.Errorf("DstDims(%v, %v) = %v, %v; want %s", c.dims, c.axes, got, err, c.want)
		}
	}
}

package bench

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
)

func TestParsePostOpsRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{"relu", "relu"},
		{"eltwise_relu:0.5", "relu:0.5"},
		{"clip:-1:2.5", "clip:-1:2.5"},
		{"add:f32", "add:f32"},
		{"binary_mul:f32:2", "mul:f32:2"},
		{"add:f32:per_oc", "add:f32:per_oc"},
		{"ADD:bf16:PER_TENSOR:abcd", "add:bf16:per_tensor:abcd"},
		{"sum+linear:2:1+add:f32", "sum+linear:2:1+add:f32"},
		{"srelu:2", "soft_relu:2"},
		{"hardsigmoid:0.2:0.5+tanh", "hardsigmoid:0.2:0.5+tanh"},
		// Numbers print with no '+', which separates post-ops, so that
		// a repro line reads back.
		{"linear:1e20:1", "linear:1e20:1"},
		{"linear:1E20:-2.5e-7+relu", "linear:1e20:-2.5e-07+relu"},
		{"linear:3.4028235e38:1e-45", "linear:3.4028235e38:1e-45"},
		{"linear:inf:nan", "linear:inf:nan"},
		{"clip:-INF:Infinity", "clip:-inf:inf"},
		{"sum:1e10", "sum:1e10"},
	} {
		ops, err := ParsePostOps(c.in)
		if err != nil {
			t.Errorf("ParsePostOps(%q): %v", c.in, err)
			continue
		}
		if got := FormatPostOps(ops); got != c.out {
			t.Errorf("FormatPostOps(ParsePostOps(%q)) = %q, want %q", c.in, got, c.out)
		}
		again, err := ParsePostOps(FormatPostOps(ops))
		if err != nil || FormatPostOps(again) != c.out {
			t.Errorf("re-parse of %q: %v, %q", c.out, err, FormatPostOps(again))
		}
	}
	if ops, err := ParsePostOps(""); err != nil || ops != nil {
		t.Errorf("empty post-ops = %v, %v", ops, err)
	}
}

func TestParsePostOpsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"foo", "unknown post-op kind"},
		{"relu:x", "not a number"},
		{"relu:1:2:3", "at most"},
		{"add", "wants DT"},
		{"add:f99", "unknown data type"},
		{"add:f32:per_nothing", "unknown policy"},
		{"add:f32:common:zz", "add:f32:common:zz"},
		{"relu+", "unknown post-op kind"},
		{"relu:", "empty argument"},
		{"sum:a", "not a number"},
		{"prelu:bad", "unknown policy"},
		{"linear:1e400:1", "out of the f32 range"},
		{"sum:-1e39", "out of the f32 range"},
	} {
		_, err := ParsePostOps(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePostOps(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

func TestPostOpsToGraph(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind graph.OpKind
	}{
		{"relu", graph.ReLU}, {"relu:0.1", graph.LeakyReLU}, {"logistic", graph.Sigmoid},
		{"gelu_tanh", graph.GELU}, {"clip_v2:0:6", graph.Clamp}, {"soft_relu", graph.SoftPlus},
		{"hardswish", graph.HardSwish}, {"mul:bf16:per_oc", graph.Multiply}, {"sub:f16", graph.Subtract},
		{"add:s8", graph.Add}, {"max:u8:per_oc", graph.Maximum}, {"div:s32:per_tensor", graph.Divide},
		{"pow:1", graph.Pow}, {"pow:1:-0.5", graph.Pow}, {"pow:1:3", graph.Pow},
	} {
		ops, err := ParsePostOps(c.in)
		if err != nil {
			t.Fatal(err)
		}
		g, err := ops[0].toGraph()
		if err != nil || g.kind != c.kind {
			t.Errorf("%s -> %v, %v; want %v", c.in, g.kind, err, c.kind)
		}
	}
	for _, in := range []string{"linear:2:1", "pow", "pow:2:2", "pow:1:1.5", "swish", "prelu", "dw:k3s1p1", "relu_dst",
		"ge:f32", "hardswish:0.5:0.5"} {
		ops, err := ParsePostOps(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if _, err := ops[0].toGraph(); !errors.Is(err, status.Unimplemented) {
			t.Errorf("%s -> %v, want unimplemented", in, err)
		}
	}
	ops, _ := ParsePostOps("clip:2:1")
	if _, err := ops[0].toGraph(); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("clip with min > max -> %v, want invalid_arguments", err)
	}
}

func TestOperandDims(t *testing.T) {
	dst := []int64{2, 16, 1, 5}
	for _, c := range []struct {
		in   string
		dims []int64
	}{
		{"add:f32", []int64{1, 1, 1, 1}},
		{"add:f32:common", []int64{1, 1, 1, 1}},
		{"add:f32:per_oc", []int64{1, 16, 1, 1}},
		{"add:f32:per_dim_01", []int64{2, 16, 1, 1}},
		{"add:f32:per_tensor", []int64{2, 16, 1, 5}},
		{"add:f32:9", []int64{2, 1, 1, 5}},
		{"add:f32:per_dim_023", []int64{2, 1, 1, 5}},
		{"add:f32:per_dim_23", []int64{1, 1, 1, 5}},
		{"add:f32:per_dim_03", []int64{2, 1, 1, 5}},
		{"add:f32:per_ocic", []int64{2, 16, 1, 1}},
	} {
		ops, _ := ParsePostOps(c.in)
		if got := ops[0].operandDims(dst); !reflect.DeepEqual(got, c.dims) {
			t.Errorf("%s operand dims = %v, want %v", c.in, got, c.dims)
		}
		if ops[0].BinDT != dtypes.F32 {
			t.Errorf("%s dt = %v", c.in, ops[0].BinDT)
		}
	}
}

package reduce

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestONNXOpsets runs every Reduce* op at every opset from 1 to
// MaxONNXOpset, with axes given the way that opset gives them, with and
// without keepdims and with no axes, and checks each against the same
// reduction spelled in gdnn's own terms (KeepDims, every axis listed).
func TestONNXOpsets(t *testing.T) {
	dims := []int{2, 3, 4}
	src := make([]float32, 24)
	for i := range src {
		src[i] = 0.25 + float32(i)/16
	}
	for op := range opCount {
		for opset := 1; opset <= MaxONNXOpset; opset++ {
			for _, c := range []struct {
				axes []int64
				keep bool
				all  []int // the same axes, for gdnn
			}{
				{[]int64{-1}, true, []int{2}},
				{[]int64{0, 2}, false, []int{0, 2}},
				{nil, true, []int{0, 1, 2}},
				{nil, false, []int{0, 1, 2}},
			} {
				n, err := NewONNXNode(onnxOps[op], opset)
				if err != nil {
					t.Fatal(err)
				}
				if !n.KeepDims {
					t.Fatalf("%s-%d: keepdims defaults to false", onnxOps[op], opset)
				}
				n.KeepDims = c.keep
				var input []int64
				if n.AxesInput() {
					input = c.axes
				} else {
					n.Axes = c.axes
				}
				got, want := make([]float32, 24), make([]float32, 24)
				if err := RunONNX(n, got, src, dims, input); err != nil {
					t.Fatalf("%s-%d %v: %v", onnxOps[op], opset, c.axes, err)
				}
				if err := Reduce(op, want, src, dims, c.all, KeepDims(c.keep)); err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s-%d axes %v keep %v: dst[%d] = %v, want %v", onnxOps[op], opset, c.axes, c.keep, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// TestONNXNoop checks noop_with_empty_axes: nothing is reduced and each
// element goes through the op's own transform, as the ONNX spec says
// (the log for ReduceLogSum, the square for ReduceSumSquare).
func TestONNXNoop(t *testing.T) {
	src := []float32{-2, 0.5, 3}
	want := map[Op][]float64{
		OpMean: {-2, 0.5, 3}, OpSum: {-2, 0.5, 3}, OpMax: {-2, 0.5, 3}, OpMin: {-2, 0.5, 3}, OpProd: {-2, 0.5, 3},
		OpL1: {2, 0.5, 3}, OpL2: {2, 0.5, 3}, OpSumSquare: {4, 0.25, 9},
		OpLogSum: {math.NaN(), math.Log(0.5), math.Log(3)}, OpLogSumExp: {-2, 0.5, 3},
	}
	for op := range opCount {
		for _, axes := range [][]int64{nil, {}} {
			n, err := NewONNXNode(onnxOps[op], 18)
			if err != nil {
				t.Fatal(err)
			}
			n.NoopWithEmptyAxes = true
			dst := make([]float32, 3)
			if err := RunONNX(n, dst, src, []int{3}, axes); err != nil {
				t.Fatalf("%v: %v", op, err)
			}
			for i, w := range want[op] {
				if g := float64(dst[i]); !(math.Abs(g-w) <= 1e-6*math.Abs(w) || math.IsNaN(g) && math.IsNaN(w)) {
					t.Errorf("%s noop: dst[%d] = %v, want %v", onnxOps[op], i, g, w)
				}
			}
		}
	}
	// ReduceSum has its axes input and noop from opset 13.
	n, _ := NewONNXNode("ReduceSum", 13)
	n.NoopWithEmptyAxes = true
	dst := make([]float32, 3)
	if err := RunONNX(n, dst, src, []int{3}, nil); err != nil || dst[2] != 3 {
		t.Errorf("ReduceSum-13 noop: %v, %v", dst, err)
	}
}

// TestONNXRefusals checks every refusal of the ONNX adapter.
func TestONNXRefusals(t *testing.T) {
	src, dst := make([]float32, 6), make([]float32, 6)
	dims := []int{2, 3}
	node := func(op string, opset int) ONNXNode {
		n, err := NewONNXNode(op, opset)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	attr18 := node("ReduceMean", 18)
	attr18.Axes = []int64{1}
	noop11 := node("ReduceMean", 11)
	noop11.NoopWithEmptyAxes = true
	badAttr := node("ReduceMax", 11)
	badAttr.Axes = []int64{2}
	dupAttr := node("ReduceMax", 11)
	dupAttr.Axes = []int64{1, -1}
	cases := []struct {
		name   string
		call   func() error
		status graph.Status
		msg    string
	}{
		{"not a Reduce op", func() error { _, err := NewONNXNode("ReduceMedian", 18); return err }, graph.InvalidArguments, `"ReduceMedian" is not an ONNX Reduce* op`},
		{"opset 0", func() error { _, err := NewONNXNode("ReduceMean", 0); return err }, graph.InvalidArguments, "ReduceMean at opset 0: ONNX's opsets start at 1"},
		{"opset past the newest", func() error { _, err := NewONNXNode("ReduceMean", MaxONNXOpset+1); return err }, graph.Unimplemented, "opsets 1 to 27"},
		{"hand-made node with a bad opset", func() error { return RunONNX(ONNXNode{Op: OpSum}, dst, src, dims, nil) }, graph.InvalidArguments, "ReduceSum at opset 0"},
		{"hand-made node with a bad op", func() error { return RunONNX(ONNXNode{Op: 42, Opset: 18}, dst, src, dims, nil) }, graph.InvalidArguments, "unknown op Op(42)"},
		{"axes attribute at opset 18", func() error { return RunONNX(attr18, dst, src, dims, nil) }, graph.InvalidArguments, "ReduceMean at opset 18 takes axes as an input"},
		{"axes input at opset 11", func() error { return RunONNX(node("ReduceMean", 11), dst, src, dims, []int64{1}) }, graph.InvalidArguments, "takes axes as an attribute"},
		{"axes input to ReduceSum-11", func() error { return RunONNX(node("ReduceSum", 11), dst, src, dims, []int64{1}) }, graph.InvalidArguments, "ReduceSum at opset 11 takes axes as an attribute"},
		{"noop at opset 11", func() error { return RunONNX(noop11, dst, src, dims, nil) }, graph.InvalidArguments, "no noop_with_empty_axes"},
		{"KeepDims option", func() error { return RunONNX(node("ReduceMean", 18), dst, src, dims, nil, KeepDims(false)) }, graph.InvalidArguments, "keepdims is the node's attribute"},
		{"axes input out of range", func() error { return RunONNX(node("ReduceL2", 18), dst, src, dims, []int64{-3}) }, graph.InvalidArguments, "axes[0] = -3 is out of range [-2, 1]"},
		{"axes input repeated", func() error { return RunONNX(node("ReduceL2", 18), dst, src, dims, []int64{0, -2}) }, graph.InvalidArguments, "names dim 0 twice"},
		{"axes attribute out of range", func() error { return RunONNX(badAttr, dst, src, dims, nil) }, graph.InvalidArguments, "axes[0] = 2"},
		{"axes attribute repeated", func() error { return RunONNX(dupAttr, dst, src, dims, nil) }, graph.InvalidArguments, "names dim 1 twice"},
		{"dst too short", func() error { return RunONNX(node("ReduceMean", 18), dst[:2], src, dims, []int64{0}) }, graph.InvalidArguments, "dst holds 2 elements, dst dims [1 3] address 3"},
	}
	for _, c := range cases {
		err := c.call()
		if !errors.Is(err, c.status) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, err, c.status, c.msg)
		}
	}
}

// TestONNXAllocs checks that running a node whose problem was seen
// before allocates nothing (one thread, inline), int64 axes included.
func TestONNXAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	n, err := NewONNXNode("ReduceMean", 18)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := make([]float32, 64*1024), make([]float32, 64)
	axes := []int64{-1}
	prev := jit.SetThreads(1)
	defer jit.SetThreads(prev)
	allocs := testing.AllocsPerRun(100, func() {
		if err := RunONNX(n, dst, src, []int{64, 1024}, axes); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per RunONNX, want 0", allocs)
	}
}

// onnxVersions is each Reduce* op's schema versions in ONNX, through
// opset 27 (ONNX 1.22: docs/Operators.md and onnx/defs/operator_sets.h).
// No opset from 21 to 27 has a Reduce* schema of its own.
var onnxVersions = map[Op][]int{
	OpMean: {1, 11, 13, 18}, OpSum: {1, 11, 13}, OpMax: {1, 11, 12, 13, 18, 20}, OpMin: {1, 11, 12, 13, 18, 20},
	OpProd: {1, 11, 13, 18}, OpL1: {1, 11, 13, 18}, OpL2: {1, 11, 13, 18}, OpSumSquare: {1, 11, 13, 18},
	OpLogSum: {1, 11, 13, 18}, OpLogSumExp: {1, 11, 13, 18},
}

// TestONNXVersions checks that MaxONNXOpset is no newer than the opsets
// onnxVersions was checked through, and that at every opset a node takes
// its axes as ONNX's schema in force at that opset does: an input from
// ReduceSum-13 and the others' version 18 on.
func TestONNXVersions(t *testing.T) {
	const checkedThrough = 27
	if MaxONNXOpset > checkedThrough {
		t.Fatalf("MaxONNXOpset is %d, but onnxVersions was checked through opset %d only: check ONNX's changelog for Reduce* changes first",
			MaxONNXOpset, checkedThrough)
	}
	for op := range opCount {
		versions := onnxVersions[op]
		if len(versions) == 0 {
			t.Fatalf("%s: no ONNX versions", onnxOps[op])
		}
		for opset := 1; opset <= MaxONNXOpset; opset++ {
			since := 0
			for _, v := range versions {
				if v <= opset {
					since = v
				}
			}
			n, err := NewONNXNode(onnxOps[op], opset)
			if err != nil {
				t.Fatalf("%s-%d: %v", onnxOps[op], opset, err)
			}
			want := since >= 18 || op == OpSum && since >= 13
			if n.AxesInput() != want {
				t.Errorf("%s at opset %d (schema %d): AxesInput %v, want %v", onnxOps[op], opset, since, n.AxesInput(), want)
			}
		}
	}
}

// TestONNXDstDims checks ONNXNode.DstDims against ONNX's rules and
// against RunONNX: a dst of exactly that many elements runs, one element
// fewer is refused; and it refuses what RunONNX refuses.
func TestONNXDstDims(t *testing.T) {
	dims := []int{2, 3, 4}
	src := make([]float32, 24)
	node := func(op string, opset int, keep, noop bool, attr []int64) ONNXNode {
		n, err := NewONNXNode(op, opset)
		if err != nil {
			t.Fatal(err)
		}
		n.KeepDims, n.NoopWithEmptyAxes, n.Axes = keep, noop, attr
		return n
	}
	for _, c := range []struct {
		name  string
		n     ONNXNode
		input []int64
		want  []int
	}{
		{"no axes, keepdims", node("ReduceSum", 13, true, false, nil), nil, []int{1, 1, 1}},
		{"no axes", node("ReduceMax", 18, false, false, nil), nil, []int{}},
		{"empty axes input", node("ReduceMean", 18, false, false, nil), []int64{}, []int{}},
		{"noop_with_empty_axes", node("ReduceL2", 18, false, true, nil), nil, []int{2, 3, 4}},
		{"axes input", node("ReduceProd", 18, true, false, nil), []int64{-1, 0}, []int{1, 3, 1}},
		{"axes attribute", node("ReduceMin", 11, false, false, []int64{1}), nil, []int{2, 4}},
		{"axes attribute, keepdims", node("ReduceLogSumExp", 1, true, false, []int64{2}), nil, []int{2, 3, 1}},
	} {
		got, err := c.n.DstDims(dims, c.input)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: DstDims = %v, want %v", c.name, got, c.want)
		}
		size := 1
		for _, d := range got {
			size *= d
		}
		if err := RunONNX(c.n, make([]float32, size), src, dims, c.input); err != nil {
			t.Errorf("%s: RunONNX into %d elements: %v", c.name, size, err)
		}
		if err := RunONNX(c.n, make([]float32, size-1), src, dims, c.input); err == nil {
			t.Errorf("%s: RunONNX into %d elements succeeded", c.name, size-1)
		}
	}
	for _, c := range []struct {
		name  string
		n     ONNXNode
		input []int64
		want  string
	}{
		{"axis out of range", node("ReduceSum", 13, true, false, nil), []int64{3}, "axes[0] = 3 is out of range"},
		{"axes attribute at opset 18", node("ReduceMean", 18, true, false, []int64{0}), nil, "takes axes as an input"},
		{"axes input at opset 11", node("ReduceMean", 11, true, false, nil), []int64{0}, "takes axes as an attribute"},
		{"bad opset", ONNXNode{Op: OpSum}, nil, "ReduceSum at opset 0"},
	} {
		_, err := c.n.DstDims(dims, c.input)
		if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: DstDims error %v, want InvalidArguments with %q", c.name, err, c.want)
		}
	}
}

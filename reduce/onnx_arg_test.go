package reduce

import (
	"errors"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

// TestONNXArgNodeCases runs the examples of ONNX's ArgMax and ArgMin
// node tests (onnx/backend/test/case/node/argmax.py, argmin.py: the
// default axis, keepdims, no keepdims, negative axis and
// select_last_index examples) through the ONNX entry, at every opset
// that has their attributes.
func TestONNXArgNodeCases(t *testing.T) {
	data := []float32{2, 1, 3, 10}
	ties := []float32{2, 2, 3, 10}
	for _, tc := range []struct {
		op       string
		src      []float32
		axis     int64
		keep     bool
		last     bool
		minOpset int
		dims     []int
		want     []int64
	}{
		{"ArgMax", data, 0, true, false, 1, []int{1, 2}, []int64{1, 1}},
		{"ArgMax", data, 1, true, false, 1, []int{2, 1}, []int64{0, 1}},
		{"ArgMax", data, 1, false, false, 1, []int{2}, []int64{0, 1}},
		{"ArgMax", data, -1, true, false, 11, []int{2, 1}, []int64{0, 1}},
		{"ArgMax", ties, 0, true, true, 12, []int{1, 2}, []int64{1, 1}},
		{"ArgMax", ties, 1, true, true, 12, []int{2, 1}, []int64{1, 1}},
		{"ArgMax", ties, 1, false, false, 1, []int{2}, []int64{0, 1}},
		{"ArgMin", data, 0, true, false, 1, []int{1, 2}, []int64{0, 0}},
		{"ArgMin", data, 1, true, false, 1, []int{2, 1}, []int64{1, 0}},
		{"ArgMin", data, 1, false, false, 1, []int{2}, []int64{1, 0}},
		{"ArgMin", data, -1, true, false, 11, []int{2, 1}, []int64{1, 0}},
		{"ArgMin", ties, 1, true, true, 12, []int{2, 1}, []int64{1, 0}},
		{"ArgMin", ties, 0, false, true, 12, []int{2}, []int64{0, 0}},
	} {
		for opset := tc.minOpset; opset <= MaxONNXOpset; opset++ {
			n, err := NewONNXArgNode(tc.op, opset)
			if err != nil {
				t.Fatal(err)
			}
			n.Axis, n.KeepDims, n.SelectLastIndex = tc.axis, tc.keep, tc.last
			dims, err := n.DstDims([]int{2, 2})
			if err != nil || !slices.Equal(dims, tc.dims) {
				t.Errorf("%s-%d %+v: dims %v (%v), want %v", tc.op, opset, n, dims, err, tc.dims)
			}
			got := make([]int64, 2)
			if err := RunONNXArg(n, got, tc.src, []int{2, 2}); err != nil {
				t.Fatalf("%s-%d %+v: %v", tc.op, opset, n, err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s-%d %+v: %v, want %v", tc.op, opset, n, got, tc.want)
			}
		}
	}
}

// TestONNXArgRefusals checks the node's refusals.
func TestONNXArgRefusals(t *testing.T) {
	if _, err := NewONNXArgNode("ReduceMax", 13); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("ReduceMax as an arg node: %v", err)
	}
	if _, err := NewONNXArgNode("ArgMax", 0); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("opset 0: %v", err)
	}
	if _, err := NewONNXArgNode("ArgMax", MaxONNXOpset+1); !errors.Is(err, status.Unimplemented) {
		t.Errorf("opset past the last: %v", err)
	}
	n, _ := NewONNXArgNode("ArgMax", 11)
	n.SelectLastIndex = true
	if err := RunONNXArg(n, make([]int64, 2), []float32{1, 2, 3, 4}, []int{2, 2}); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("select_last_index at opset 11: %v", err)
	}
	n, _ = NewONNXArgNode("ArgMin", 10)
	n.Axis = -1
	if err := RunONNXArg(n, make([]int64, 2), []float32{1, 2, 3, 4}, []int{2, 2}); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("negative axis at opset 10: %v", err)
	}
	n, _ = NewONNXArgNode("ArgMin", 13)
	if err := RunONNXArg(n, make([]int64, 2), []float32{1, 2, 3, 4}, []int{2, 2}, KeepDims(false)); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("KeepDims option: %v", err)
	}
	if _, err := n.DstDims([]int{2, 2}); err != nil {
		t.Error(err)
	}
	n.Axis = 2
	if _, err := n.DstDims([]int{2, 2}); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("axis 2 of rank 2: %v", err)
	}
}

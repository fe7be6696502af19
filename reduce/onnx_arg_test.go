package reduce

import (
	"errors"
	"math/rand/v2"
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

// TestONNXArgDstDimsRefusals checks that DstDims refuses the dims and
// axes RunONNXArg refuses, with the same statuses: a rank past
// graph.MaxRank (an axis past 31 once made an empty uint32 mask, and all
// dims came back), negative dims, rank 0, an empty axis, an axis out of
// range.
func TestONNXArgDstDimsRefusals(t *testing.T) {
	ones := func(n int) []int {
		d := make([]int, n)
		for i := range d {
			d[i] = 1
		}
		return d
	}
	for _, c := range []struct {
		name string
		dims []int
		axis int64
		want error
	}{
		{"rank 40, axis 35", ones(40), 35, status.InvalidShape},
		{"rank 13", ones(13), 0, status.InvalidShape},
		{"negative dim", []int{-5, 3}, 1, status.InvalidShape},
		{"rank 0", nil, 0, status.InvalidShape},
		{"empty axis", []int{0, 3}, 0, status.InvalidShape},
		{"axis out of range", []int{2, 3}, 2, status.InvalidArguments},
		{"axis 2^32+1", []int{2, 3}, 1<<32 + 1, status.InvalidArguments},
	} {
		n, _ := NewONNXArgNode("ArgMax", 13)
		n.KeepDims, n.Axis = false, c.axis
		runErr := RunONNXArg(n, make([]int64, 64), make([]float32, 64), c.dims)
		if !errors.Is(runErr, c.want) {
			t.Errorf("%s: RunONNXArg: %v, want %v", c.name, runErr, c.want)
		}
		got, err := n.DstDims(c.dims)
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: DstDims = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// An empty axis beside another empty dim has no outputs: both take it.
	n, _ := NewONNXArgNode("ArgMin", 13)
	if got, err := n.DstDims([]int{0, 0}); err != nil || !slices.Equal(got, []int{1, 0}) {
		t.Errorf("dims [0 0]: DstDims = %v, %v; want [1 0]", got, err)
	}
	if err := RunONNXArg(n, []int64(nil), []float32(nil), []int{0, 0}); err != nil {
		t.Errorf("dims [0 0]: RunONNXArg: %v", err)
	}
}

// TestONNXArgNodeRandomCases runs the configurations of ONNX's "_random"
// ArgMax and ArgMin node tests (data of [2, 3, 4], uniform in [-10, 10];
// the default axis 0 kept, axis 1 kept and not, axis -1 kept; each with
// and without select_last_index) through the ONNX entry at every opset
// that has their attributes, on data drawn the same way and on data of
// few distinct values, so that ties decide, against argRef.
func TestONNXArgNodeRandomCases(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 4))
	dims := []int{2, 3, 4}
	for _, op := range []string{"ArgMax", "ArgMin"} {
		for _, cfg := range []struct {
			axis int64
			keep bool
		}{{0, true}, {1, true}, {1, false}, {-1, true}} {
			for _, last := range []bool{false, true} {
				for _, ties := range []bool{false, true} {
					src := make([]float32, 24)
					for i := range src {
						src[i] = float32(r.Float64()*20 - 10)
						if ties {
							src[i] = float32(r.IntN(3))
						}
					}
					minOpset := 1
					if cfg.axis < 0 {
						minOpset = 11
					}
					if last {
						minOpset = 12
					}
					ax := int((cfg.axis + 3) % 3)
					var want []int64
					var wantDims []int
					for d := range dims {
						switch {
						case d != ax:
							wantDims = append(wantDims, dims[d])
						case cfg.keep:
							wantDims = append(wantDims, 1)
						}
					}
					// Outputs in row-major order over the kept dims.
					strides := []int{12, 4, 1}
					for i := range dims[0] {
						for j := range dims[1] {
							for k := range dims[2] {
								at := []int{i, j, k}
								if at[ax] != 0 {
									continue
								}
								row := make([]float64, dims[ax])
								for x := range row {
									at[ax] = x
									row[x] = float64(src[at[0]*strides[0]+at[1]*strides[1]+at[2]*strides[2]])
								}
								want = append(want, argRef(row, op == "ArgMin", last))
							}
						}
					}
					for opset := minOpset; opset <= MaxONNXOpset; opset++ {
						n, err := NewONNXArgNode(op, opset)
						if err != nil {
							t.Fatal(err)
						}
						n.Axis, n.KeepDims, n.SelectLastIndex = cfg.axis, cfg.keep, last
						if got, err := n.DstDims(dims); err != nil || !slices.Equal(got, wantDims) {
							t.Errorf("%s-%d %+v: dims %v (%v), want %v", op, opset, n, got, err, wantDims)
						}
						got := make([]int64, len(want))
						if err := RunONNXArg(n, got, src, dims); err != nil {
							t.Fatalf("%s-%d %+v: %v", op, opset, n, err)
						}
						if !slices.Equal(got, want) {
							t.Errorf("%s-%d %+v ties=%v: %v, want %v (src %v)", op, opset, n, ties, got, want, src)
						}
					}
				}
			}
		}
	}
}

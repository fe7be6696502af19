package reduce_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// TestONNXNormOverflowDimsError: dims whose product passes 2^63 (with no
// dim 0) are refused as InvalidShape, in the words of the element count,
// by every op whose dense layout RunONNXNorm derives itself. The dense
// strides of such dims wrap around (2^62 * 4 is 0 in int64), and an
// error must not blame "dst strides" the caller never passed.
func TestONNXNormOverflowDimsError(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("dims of 2^62 need a 64-bit int")
	}
	huge := math.MaxInt/2 + 1 // 2^62
	dims := []int{3, huge, 4}
	x := make([]float32, 12)
	y := make([]float32, 12)
	for _, c := range []struct {
		op    string
		opset int
		scale []float32
	}{
		{"Softmax", 13, nil},
		{"LogSoftmax", 13, nil},
		{"LayerNormalization", 17, make([]float32, 4)},
		{"RMSNormalization", 23, make([]float32, 4)},
	} {
		n, err := reduce.NewONNXNorm(c.op, c.opset)
		if err != nil {
			t.Fatal(err)
		}
		err = reduce.RunONNXNorm(n, y, x, c.scale, nil, dims)
		if !errors.Is(err, graph.InvalidShape) || !strings.Contains(err.Error(), "2^63 elements") || strings.Contains(err.Error(), "strides") {
			t.Errorf("%s dims %v: %v; want InvalidShape, more than 2^63 elements", c.op, dims, err)
		}
	}
}

// TestONNXNormAxisErrorNamesAxis: LayerNormalization's and
// RMSNormalization's attribute is "axis" (as Softmax's and
// LpNormalization's are); an axis out of range must be refused in those
// words, not as gdnn's own LayerNorm parameter begin_norm_axis, which no
// ONNX node has.
func TestONNXNormAxisErrorNamesAxis(t *testing.T) {
	x := make([]float32, 12)
	y := make([]float32, 12)
	dims := []int{3, 4}
	for _, op := range []string{"LayerNormalization", "RMSNormalization"} {
		for _, axis := range []int64{2, -3, 5, 1 << 40} {
			n, err := reduce.NewONNXNorm(op, 23)
			if err != nil {
				t.Fatal(err)
			}
			n.Axis = axis
			err = reduce.RunONNXNorm(n, y, x, make([]float32, 4), nil, dims)
			if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "axis "+strconv.FormatInt(axis, 10)+" is out of range") ||
				strings.Contains(err.Error(), "begin_norm_axis") {
				t.Errorf("%s axis %d: %v; want InvalidArguments naming axis %d out of range", op, axis, err, axis)
			}
		}
	}
}

// TestONNXMVNRankZero: MeanVarianceNormalization of a rank-0 input with
// empty axes (every dim: none) is the element's distance to its own mean
// over its own deviation, (x - x) / (0 + 1e-9): 0, or NaN for an
// infinity or NaN, as ONNX's function body (ReduceMean over all axes)
// and its reference (numpy's mean over axis ()) both give. It must not
// be refused, least of all in the words of begin_norm_axis, an attribute
// MeanVarianceNormalization does not have.
func TestONNXMVNRankZero(t *testing.T) {
	n, err := reduce.NewONNXNorm("MeanVarianceNormalization", 13)
	if err != nil {
		t.Fatal(err)
	}
	for _, axes := range [][]int64{nil, {}} {
		n.Axes = axes
		for _, v := range []float32{3.5, -2, 0, float32(math.Inf(1)), float32(math.NaN())} {
			y := []float32{42, 42}
			if err := reduce.RunONNXNorm(n, y, []float32{v}, []float32(nil), nil, []int{}); err != nil {
				t.Errorf("axes %v x %v: %v", axes, v, err)
				continue
			}
			finite := !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v))
			if finite && y[0] != 0 || !finite && !math.IsNaN(float64(y[0])) || y[1] != 42 {
				t.Errorf("axes %v x %v: y = %v, want [%v 42]", axes, v, y, map[bool]float32{true: 0, false: float32(math.NaN())}[finite])
			}
		}
	}
	// An axis of a rank-0 input is out of range.
	n.Axes = []int64{0}
	if err := reduce.RunONNXNorm(n, make([]float32, 1), make([]float32, 1), []float32(nil), nil, []int{}); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("axes [0] of rank 0: %v, want InvalidArguments", err)
	}
}

// TestONNXLayerNormStatsOverflowDims: with the Mean and InvStdDev
// outputs asked for, dims past 2^63 elements are refused as such
// (InvalidShape), not as Stats slices too short for a row count that
// wrapped around (5 * 2^62 rows is 2^62 in int64).
func TestONNXLayerNormStatsOverflowDims(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("dims of 2^62 need a 64-bit int")
	}
	huge := math.MaxInt/2 + 1 // 2^62
	n, err := reduce.NewONNXNorm("LayerNormalization", 17)
	if err != nil {
		t.Fatal(err)
	}
	mean, inv := make([]float32, 4), make([]float32, 4)
	err = reduce.RunONNXNorm(n, make([]float32, 8), make([]float32, 8), make([]float32, 4), nil, []int{5, huge, 4}, reduce.Stats(mean, inv))
	if !errors.Is(err, graph.InvalidShape) || !strings.Contains(err.Error(), "2^63 elements") {
		t.Errorf("dims [5 2^62 4] with Stats: %v; want InvalidShape, more than 2^63 elements", err)
	}
}

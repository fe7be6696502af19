package reduce_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// TestStatsOneSlice checks that Stats takes a nil slice for an output
// nobody reads: LayerNorm and GroupNorm write the other one, and dst, as
// a call with both slices does, and Stats(nil, nil) is a call without
// Stats. A non-nil slice that is too short is still refused.
func TestStatsOneSlice(t *testing.T) {
	dims := []int{2, 4, 6}
	x := make([]float32, 48)
	for i := range x {
		x[i] = float32(math.Sin(float64(i)*0.7)*3 + float64(i%5))
	}
	runs := []struct {
		name string
		rows int
		run  func(y []float32, opts ...reduce.Option) error
	}{
		{"LayerNorm", 8, func(y []float32, opts ...reduce.Option) error {
			return reduce.LayerNorm(y, x, []float32(nil), nil, dims, -1, 1e-5, opts...)
		}},
		{"GroupNorm", 4, func(y []float32, opts ...reduce.Option) error {
			return reduce.GroupNorm(y, x, []float32(nil), nil, dims, 2, 1, 1e-5, opts...)
		}},
	}
	for _, r := range runs {
		y := make([]float32, len(x))
		mean, variance := make([]float32, r.rows), make([]float32, r.rows)
		if err := r.run(y, reduce.Stats(mean, variance)); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		for _, c := range []struct {
			name           string
			mean, variance []float32
		}{
			{"mean only", make([]float32, r.rows), nil},
			{"variance only", nil, make([]float32, r.rows)},
			{"neither", nil, nil},
		} {
			got := make([]float32, len(x))
			if err := r.run(got, reduce.Stats(c.mean, c.variance)); err != nil {
				t.Errorf("%s %s: %v", r.name, c.name, err)
				continue
			}
			if !slices.Equal(got, y) {
				t.Errorf("%s %s: dst differs from the call with both slices", r.name, c.name)
			}
			if c.mean != nil && !slices.Equal(c.mean, mean) {
				t.Errorf("%s %s: mean %v, want %v", r.name, c.name, c.mean, mean)
			}
			if c.variance != nil && !slices.Equal(c.variance, variance) {
				t.Errorf("%s %s: variance %v, want %v", r.name, c.name, c.variance, variance)
			}
		}
		err := r.run(y, reduce.Stats(nil, make([]float32, r.rows-1)))
		if want := "Stats: mean holds 0 values and variance"; !errors.Is(err, graph.InvalidArguments) || !strings.Contains(errString(err), want) {
			t.Errorf("%s: a short variance beside a nil mean gave %v, want InvalidArguments %q", r.name, err, want)
		}
	}
}

// TestONNXLayerNormOneOutput checks that LayerNormalization's Mean and
// InvStdDev can each be asked for alone, as ONNX's optional outputs are.
func TestONNXLayerNormOneOutput(t *testing.T) {
	dims := []int{3, 5}
	x := make([]float32, 15)
	for i := range x {
		x[i] = float32(i*i%7) - 2.5
	}
	scale := []float32{1, 2, 0.5, -1, 3}
	nd, err := reduce.NewONNXNorm("LayerNormalization", 17)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float32, len(x))
	mean, inv := make([]float32, 3), make([]float32, 3)
	if err := reduce.RunONNXNorm(nd, y, x, scale, nil, dims, reduce.Stats(mean, inv)); err != nil {
		t.Fatal(err)
	}
	onlyMean, onlyInv := make([]float32, 3), make([]float32, 3)
	y1, y2 := make([]float32, len(x)), make([]float32, len(x))
	if err := reduce.RunONNXNorm(nd, y1, x, scale, nil, dims, reduce.Stats(onlyMean, nil)); err != nil {
		t.Fatal(err)
	}
	if err := reduce.RunONNXNorm(nd, y2, x, scale, nil, dims, reduce.Stats(nil, onlyInv)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y1, y) || !slices.Equal(y2, y) {
		t.Errorf("Y differs from the call with both outputs")
	}
	if !slices.Equal(onlyMean, mean) || !slices.Equal(onlyInv, inv) {
		t.Errorf("Mean %v and InvStdDev %v alone, want %v and %v", onlyMean, onlyInv, mean, inv)
	}
	err = reduce.RunONNXNorm(nd, y, x, scale, nil, dims, reduce.Stats(make([]float32, 2), nil))
	if want := "Stats: Mean holds 2 values and InvStdDev 0; there are 3 rows"; !errors.Is(err, graph.InvalidArguments) || !strings.Contains(errString(err), want) {
		t.Errorf("a short Mean beside a nil InvStdDev gave %v, want InvalidArguments %q", err, want)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

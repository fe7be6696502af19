package reduce_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// TestNormSpansNotSlices: a dst outside src's span but inside the src
// slice (a slice may run on past its span) is accepted by every
// normalization, as by the reductions, and gives what the same call with
// src cut to its span gives.
func TestNormSpansNotSlices(t *testing.T) {
	dims := []int{2, 4}
	mvn, err := reduce.NewONNXNorm("MeanVarianceNormalization", 13)
	if err != nil {
		t.Fatal(err)
	}
	mvn.Axes = []int64{1}
	for _, c := range []struct {
		name string
		call func(dst, src []float32) error
		nDst int
	}{
		{"Softmax", func(dst, src []float32) error { return reduce.Softmax(dst, src, dims, 1) }, 8},
		{"LayerNorm", func(dst, src []float32) error { return reduce.LayerNorm(dst, src, []float32(nil), nil, dims, 1, 1e-5) }, 8},
		{"LpNormalize", func(dst, src []float32) error { return reduce.LpNormalize(dst, src, dims, 1, 2, 0) }, 8},
		{"MaskedMean", func(dst, src []float32) error { return reduce.MaskedMean(dst, src, []float32{1, 1}, dims, 0) }, 4},
		{"MeanVarianceNormalization", func(dst, src []float32) error { return reduce.RunONNXNorm(mvn, dst, src, []float32(nil), nil, dims) }, 8},
	} {
		arena := make([]float32, 20)
		for i := range arena[:8] {
			arena[i] = float32(i) * 0.5
		}
		want := make([]float32, c.nDst)
		if err := c.call(want, append([]float32(nil), arena[:8]...)); err != nil {
			t.Fatalf("%s, src its span: %v", c.name, err)
		}
		if err := c.call(arena[8:8+c.nDst], arena); err != nil {
			t.Fatalf("%s, dst past src's span in the src slice: %v", c.name, err)
		}
		for i, w := range want {
			if g := arena[8+i]; math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: dst[%d] %v, want %v", c.name, i, g, w)
			}
		}
	}
	// The statistics in the arena's tail too, past dst.
	arena := make([]float32, 20)
	if err := reduce.LayerNorm(arena[8:16], arena, []float32(nil), nil, dims, 1, 1e-5, reduce.Stats(arena[16:18], arena[18:20])); err != nil {
		t.Fatalf("LayerNorm, dst and Stats past src's span in the src slice: %v", err)
	}
	// Within the span, still refused.
	x := make([]float32, 8)
	if err := reduce.Softmax(x[4:], x[:8], []int{1, 4}, 1, reduce.SrcStrides([]int{4, 1})); err != nil {
		t.Fatalf("dst past a [1 4] src: %v", err)
	}
	if err := reduce.Softmax(x[2:6], x[:8], []int{2, 4}, 1); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "overlaps") {
		t.Fatalf("dst inside src's span: %v", err)
	}
}

// TestShortSlicesBeforeScratch: MaskedMean and MeanVarianceNormalization
// refuse slices shorter than their dims' spans before they make scratch
// sized by the dims or write anything: kept dims of MaxInt/2 over an empty
// axis (no element read, as many counts), and a dst or src one element
// short, which leaves dst as it was.
func TestShortSlicesBeforeScratch(t *testing.T) {
	dst := make([]float32, 4)
	if err := reduce.MaskedMean(dst, []float32{}, []float32{}, []int{math.MaxInt / 2, 0}, 1); !errors.Is(err, graph.InvalidArguments) ||
		!strings.Contains(err.Error(), "dst holds 4 values") {
		t.Fatalf("MaskedMean of [MaxInt/2 0]: %v", err)
	}
	mvn, err := reduce.NewONNXNorm("MeanVarianceNormalization", 13)
	if err != nil {
		t.Fatal(err)
	}
	mvn.Axes = []int64{1}
	if err := reduce.RunONNXNorm(mvn, dst, dst, []float32(nil), nil, []int{math.MaxInt / 2, 1}); !errors.Is(err, graph.InvalidArguments) ||
		!strings.Contains(err.Error(), "x holds 4 values") {
		t.Fatalf("MeanVarianceNormalization of [MaxInt/2 1]: %v", err)
	}
	const n = 200000
	src, mask := make([]float32, 2*n), []float32{1, 1}
	for i := range src {
		src[i] = 1
	}
	for _, c := range []struct {
		name     string
		src, dst []float32
		text     string
	}{
		{"short dst", src, make([]float32, n-1), "dst holds"},
		{"short src", src[:2*n-1], make([]float32, n), "src holds"},
	} {
		for i := range c.dst {
			c.dst[i] = -7
		}
		err := reduce.MaskedMean(c.dst, c.src, mask, []int{2, n}, 0)
		if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), c.text) {
			t.Fatalf("MaskedMean, %s: %v", c.name, err)
		}
		for i, v := range c.dst {
			if v != -7 {
				t.Fatalf("MaskedMean, %s: dst[%d] written (%v) before the refusal", c.name, i, v)
			}
		}
	}
}

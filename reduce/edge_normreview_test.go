package reduce

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

// TestLpNormalizeRefusesOverlappingDst: dst strides whose elements meet
// ([16 4] with strides [1 1]) are refused as Softmax's are, on every ISA;
// the fused kernel wrote them, the last write winning.
func TestLpNormalizeRefusesOverlappingDst(t *testing.T) {
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(i%7) + 1
	}
	for _, isa := range isas() {
		for _, p := range []int{1, 2} {
			withISA(t, isa)
			y := make([]float32, 20)
			err := LpNormalize(y, x, []int{16, 4}, 1, p, 0, DstStrides([]int{1, 1}))
			if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "nest") {
				t.Errorf("%v, p %d: %v; want InvalidArguments naming the strides' nesting", isa, p, err)
			}
			if err := Softmax(y, x, []int{16, 4}, 1, DstStrides([]int{1, 1})); !errors.Is(err, status.InvalidArguments) {
				t.Errorf("%v: Softmax: %v; want InvalidArguments", isa, err)
			}
		}
	}
}

// TestGroupNormInfiniteMean: a group holding an infinity has that
// infinity for its mean and NaN for its variance (as in float64) where
// the channels are innermost, as where they are not and as LayerNorm's
// row of the same elements; a NaN gives NaN for both. The channels-last
// path took deviations from the infinite mean, Inf - Inf, which made
// the mean NaN.
func TestGroupNormInfiniteMean(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, isa := range isas() {
		withISA(t, isa)
		for _, c := range []struct {
			x    []float32
			mean float64 // NaN: NaN
		}{
			{[]float32{1, 2, 3, -inf}, math.Inf(-1)},
			{[]float32{inf, 2, 3, 4}, math.Inf(1)},
			{[]float32{1, float32(math.NaN()), 3, 4}, math.NaN()},
		} {
			for _, dims := range [][]int{{1, 4, 1}, {1, 1, 4}} {
				y := make([]float32, 4)
				m, v := make([]float32, 1), make([]float32, 1)
				if err := GroupNorm(y, c.x, []float32(nil), nil, dims, 1, 1, 1e-5, Stats(m, v)); err != nil {
					t.Fatal(err)
				}
				got := float64(m[0])
				if got != c.mean && !(math.IsNaN(got) && math.IsNaN(c.mean)) || !math.IsNaN(float64(v[0])) {
					t.Errorf("%v: GroupNorm %v over dims %v: mean %v, variance %v; want %v and NaN", isa, c.x, dims, m[0], v[0], c.mean)
				}
			}
		}
	}
}

// TestNormEmptyBesideHugeDims: a dim of 0 beside dims whose product
// passes 2^63 holds no element, and the call has nothing to do.
func TestNormEmptyBesideHugeDims(t *testing.T) {
	var y, x []float32
	const huge = math.MaxInt/2 + 1 // 2^62 where int has 64 bits
	if err := LayerNorm(y, x, []float32(nil), nil, []int{0, huge, huge}, 1, 0); err != nil {
		t.Errorf("LayerNorm over [0 %d %d]: %v", huge, huge, err)
	}
	if err := GroupNorm(y, x, []float32(nil), nil, []int{0, 4, huge}, 2, 1, 0); err != nil {
		t.Errorf("GroupNorm over [0 4 %d]: %v", huge, err)
	}
}

// TestONNXLpNormalizationErrorsNamed: RunONNXNorm's LpNormalization
// names itself in its errors, as its other ops do, not LpNormalize.
func TestONNXLpNormalizationErrorsNamed(t *testing.T) {
	n, err := NewONNXNorm("LpNormalization", 1)
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float32, 8), make([]float32, 8)
	err = RunONNXNorm(n, y, x, []float32(nil), nil, []int{2, 4}, DstStrides([]int{1, 1}))
	if err == nil || !strings.Contains(err.Error(), ": reduce.RunONNXNorm(LpNormalization): ") {
		t.Errorf("error %v; want one that starts with reduce.RunONNXNorm(LpNormalization)", err)
	}
}

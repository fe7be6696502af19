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

// TestConstantChannelNormalizes: a channel of one value, whose f32 mean
// is a unit or two off it, normalizes to 0s through
// MeanVarianceNormalization (1e-9 outside the root) and to NaNs (0/0)
// through LayerNorm with eps 0, on every ISA, as in float64; the
// machine code gave about ±1.
func TestConstantChannelNormalizes(t *testing.T) {
	dims := []int{2, 3, 16, 16}
	mvn, err := NewONNXNorm("MeanVarianceNormalization", 13)
	if err != nil {
		t.Fatal(err)
	}
	for _, isa := range isas() {
		withISA(t, isa)
		for _, c := range []float32{0.1, -3.7, 1.0 / 3, 12345.678} {
			x := make([]float32, 2*3*16*16)
			for i := range x {
				x[i] = float32(i%7) - 3
				if i/256%3 == 1 {
					x[i] = c // channel 1 of both images
				}
			}
			y := make([]float32, len(x))
			if err := RunONNXNorm(mvn, y, x, []float32(nil), nil, dims); err != nil {
				t.Fatal(err)
			}
			for i, v := range y {
				if i/256%3 == 1 && v != 0 {
					t.Fatalf("%v: MeanVarianceNormalization of a channel of %v: y[%d] = %v, want 0", isa, c, i, v)
				}
			}
		}
		rows := make([]float32, 4*768)
		for i := range rows {
			rows[i] = 1.0 / 3
		}
		if err := LayerNorm(rows, rows, []float32(nil), nil, []int{4, 768}, 1, 0); err != nil {
			t.Fatal(err)
		}
		for i, v := range rows {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("%v: LayerNorm of a constant row with eps 0: y[%d] = %v, want NaN", isa, i, v)
			}
		}
	}
}

// TestConstantColumnsBesideNaNs: LayerNorm over columns (the channels of
// a channels-first layout) whose constant columns share their vectors'
// tiles with columns whose variance is NaN (a NaN) or whose test for
// near-constant is NaN (squares past f32's range): the constant columns
// are still corrected and give NaN (0/0) with eps 0 on every ISA. One
// NaN lane hid the others' lanes where the test took the tile's least.
func TestConstantColumnsBesideNaNs(t *testing.T) {
	const C, n, half = 32, 768, 16
	for _, poison := range []func(i int) float32{
		func(i int) float32 {
			if i/C == 3 {
				return float32(math.NaN())
			}
			return 1
		},
		func(i int) float32 { return float32(1e37 * float64(1+2*(i/C%2))) },
	} {
		x := make([]float32, C*n)
		for i := range x {
			x[i] = poison(i)
			if i%C >= half || i%C == 5 {
				x[i] = 0.1 // constant columns: 5 and 16 to 31
			}
		}
		for _, isa := range isas() {
			withISA(t, isa)
			y := make([]float32, C*n)
			str := []int{1, C}
			if err := LayerNorm(y, x, []float32(nil), nil, []int{C, n}, 1, 0, SrcStrides(str), DstStrides(str)); err != nil {
				t.Fatal(err)
			}
			for i, v := range y {
				if (i%C >= half || i%C == 5) && !math.IsNaN(float64(v)) {
					t.Fatalf("%v: column %d (all 0.1, eps 0): y[%d] = %v, want NaN", isa, i%C, i, v)
				}
			}
		}
	}
}

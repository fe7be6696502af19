package kerneltest

import (
	"math"
	"testing"
)

// TestStepULPs holds stepULPs to n steps of math.Nextafter, across zero,
// the subnormals, the normals and into ±Inf, up and down.
func TestStepULPs(t *testing.T) {
	for _, v := range []float64{0, math.Copysign(0, -1), 0x1p-1074, -0x1p-1074, 0x1p-1022, -3e-320, 1, -1, 1.5e300, math.MaxFloat64, -math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		for _, n := range []int64{0, 1, 2, 7, 300} {
			for _, dir := range []float64{-1, 1} {
				want := v
				for range n {
					if !math.IsInf(want, 0) {
						want = math.Nextafter(want, math.Inf(int(dir)))
					}
				}
				got := stepULPs(v, int64(dir)*n)
				if got != want && !(got != got && want != want) {
					t.Errorf("stepULPs(%v, %v) = %v, want %v", v, int64(dir)*n, got, want)
				}
			}
		}
	}
}

package plan_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestLogF64Subnormal holds LogF64, EltwiseF64's log and the
// log-sum-exp's FinalizeF64 of subnormals to bigLog within an ulp.
func TestLogF64Subnormal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	lse := plan.LogSumExp
	for _, x := range append(kerneltest.SubnormalXs(r), 0x1p-1022, 0.75, 1e300) {
		want := kerneltest.BigLog(x)
		for name, got := range map[string]float64{
			"LogF64":      plan.LogF64(x),
			"EltwiseF64":  plan.EltwiseF64(ops.Log, 0, 0, x),
			"FinalizeF64": lse.FinalizeF64(x, 1),
		} {
			if d := math.Abs(got - want); d > math.Abs(want)*0x1p-52 {
				t.Errorf("%s: log(%v) = %v, want %v", name, x, got, want)
			}
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), -0x1p-1074, math.Inf(1), math.NaN()} {
		if got, want := plan.LogF64(x), math.Log(x); math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
			t.Errorf("plan.LogF64(%v) = %v, want %v", x, got, want)
		}
	}
}

// TestPowF64Subnormal holds PowF64, the Lp norms' |x|^p (TransformF64)
// and p-th root (FinalizeF64) of subnormals to x^(a/b) checked exactly
// in math/big, within powTol.
func TestPowF64Subnormal(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	xs := kerneltest.SubnormalXs(r)
	for _, q := range [][2]int{{1, 4}, {1, 2}, {3, 4}, {3, 8}, {5, 4}, {3, 2}, {5, 2}, {2, 1}, {3, 1}} {
		y := float64(q[0]) / float64(q[1])
		pw := plan.Reduction{Transform: plan.TransformPow, P: float32(y)}
		for _, x := range xs {
			for name, got := range map[string]float64{
				"PowF64":         plan.PowF64(x, y),
				"TransformF64":   pw.TransformF64(x),
				"TransformF64 -": pw.TransformF64(-x),
			} {
				if !kerneltest.PowWithin(got, x, q[0], q[1], kerneltest.PowTol(x, y)) {
					t.Errorf("%s: %v^%v = %v, not within %d steps of the exact value", name, x, y, got, kerneltest.PowTol(x, y))
				}
			}
		}
	}
	// The roots of p 4 and 8: exponents 1/4 and 1/8, exact in float64.
	for _, p := range []int{4, 8} {
		for _, fin := range []plan.Finalize{plan.FinalizeRootMaxEps, plan.FinalizeRootAddEps} {
			red := plan.Reduction{Transform: plan.TransformPow, Combine: plan.CombineAdd, Finalize: fin, P: float32(p)}
			for _, x := range xs {
				if got := red.FinalizeF64(x, 1); !kerneltest.PowWithin(got, x, 1, p, kerneltest.PowTol(x, 1/float64(p))) {
					t.Errorf("%v: root of %v = %v, not within %d steps of the exact value", red, x, got, kerneltest.PowTol(x, 1/float64(p)))
				}
			}
		}
	}
}

// BenchmarkPowLogF64 sets PowF64 and LogF64 beside math.Pow and math.Log
// over normal inputs, where the subnormal branch must cost next to
// nothing.
func BenchmarkPowLogF64(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	xs := make([]float64, 1024)
	for i := range xs {
		xs[i] = math.Abs(r.NormFloat64()) + 0x1p-1022
	}
	var sink float64
	b.Run("math.Pow", func(b *testing.B) {
		for range b.N {
			for _, x := range xs {
				sink += math.Pow(x, 1.5)
			}
		}
	})
	b.Run("PowF64", func(b *testing.B) {
		for range b.N {
			for _, x := range xs {
				sink += plan.PowF64(x, 1.5)
			}
		}
	})
	b.Run("math.Log", func(b *testing.B) {
		for range b.N {
			for _, x := range xs {
				sink += math.Log(x)
			}
		}
	})
	b.Run("LogF64", func(b *testing.B) {
		for range b.N {
			for _, x := range xs {
				sink += plan.LogF64(x)
			}
		}
	})
	if sink == 0 {
		b.Log(sink)
	}
}

package vf64

import (
	"math"
	"math/rand"
	"testing"
)

// TestULPsOf pins ULPs on neighbours, signed zeros, an overflow and a
// NaN.
func TestULPsOf(t *testing.T) {
	if d := ULPs(1, math.Nextafter(1, 2)); d != 1 {
		t.Fatalf("ULPs(1, next) = %d", d)
	}
	if d := ULPs(math.Copysign(0, -1), 0); d != 0 {
		t.Fatalf("ULPs(-0, 0) = %d", d)
	}
	if d := ULPs(math.Inf(1), math.MaxFloat64); d != math.MaxInt64 {
		t.Fatalf("ULPs(+Inf, Max) = %d", d)
	}
	if d := ULPs(math.NaN(), 1); d != math.MaxInt64 {
		t.Fatalf("ULPs(NaN, 1) = %d", d)
	}
}

// TestModels holds Exp and Log to math.Exp and math.Log within MaxULP
// on the specials and on a random sweep of bit patterns over each one's
// whole domain.
func TestModels(t *testing.T) {
	xs := Inputs(rand.New(rand.NewSource(1)), 2_000_000)
	for _, fn := range []struct {
		name  string
		model func(float64) float64
		near  func(x, got float64) (int64, bool)
	}{{"exp", Exp, ExpNear}, {"log", Log, LogNear}} {
		worst := int64(0)
		for _, x := range xs {
			got := fn.model(x)
			d, ok := fn.near(x, got)
			if !ok {
				t.Fatalf("%s(%v (%#x)) = %v: %d ulps off", fn.name, x, math.Float64bits(x), got, d)
			}
			worst = max(worst, d)
		}
		t.Logf("%s: %d inputs, largest error %d ulp", fn.name, len(xs), worst)
	}
}

package vexp

import (
	"math"
	"testing"
)

// TestModel holds the scalar model, the steps the emitters follow, to the
// contract the emitters are tested against: so a failure of an emitter's
// sweep is the emitter's, not the algorithm's.
func TestModel(t *testing.T) {
	var worst int64
	for _, x := range Sweep(4099) {
		u, ok := Check(x, Model(x))
		if !ok {
			t.Fatalf("Model(%v) = %v (bits %#x), want float32(math.Exp) = %v", x, Model(x), math.Float32bits(Model(x)),
				float32(math.Exp(float64(x))))
		}
		worst = max(worst, u)
	}
	t.Logf("largest error %d ulp", worst)
}

// TestCheck pins the contract's edges.
func TestCheck(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		x, got float32
		ok     bool
	}{
		{0, 1, true},
		{0, math.Nextafter32(1, 2), true},
		{0, math.Nextafter32(math.Nextafter32(1, 2), 2), false},
		{89, inf, true},
		{89, math.MaxFloat32, false},
		{88, inf, false},
		{-200, 0, true},
		{-200, math.SmallestNonzeroFloat32, false},
		{float32(math.Inf(-1)), 0, true},
		{f32(0x7f800001), f32(0x7f800001), true},
		{f32(0x7f800001), f32(0x7fc00001), false},
		{-90, math.Float32frombits(math.Float32bits(float32(math.Exp(-90))) + 1), true},
	} {
		if _, ok := Check(c.x, c.got); ok != c.ok {
			t.Errorf("Check(%v, %v) ok %v, want %v", c.x, c.got, ok, c.ok)
		}
	}
	if ULPs(0, float32(math.Copysign(0, -1))) != 0 || ULPs(math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32) != 2 {
		t.Error("ULPs does not count across zero")
	}
}

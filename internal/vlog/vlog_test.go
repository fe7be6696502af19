package vlog

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
			t.Fatalf("Model(%v) (bits %#x) = %v (bits %#x), want float32(math.Log) = %v", x, math.Float32bits(x),
				Model(x), math.Float32bits(Model(x)), float32(math.Log(float64(x))))
		}
		worst = max(worst, u)
	}
	t.Logf("largest error %d ulp", worst)
}

// TestCheck pins the contract's edges.
func TestCheck(t *testing.T) {
	inf, negZero := float32(math.Inf(1)), float32(math.Copysign(0, -1))
	log3 := float32(math.Log(3))
	for _, c := range []struct {
		x, got float32
		ok     bool
	}{
		{1, 0, true},
		{1, negZero, false},
		{1, math.SmallestNonzeroFloat32, false},
		{3, log3, true},
		{3, math.Nextafter32(log3, 2), true},
		{3, math.Nextafter32(math.Nextafter32(log3, 2), 2), false},
		{0, -inf, true},
		{negZero, -inf, true},
		{0, -math.MaxFloat32, false},
		{inf, inf, true},
		{inf, math.MaxFloat32, false},
		{-1, f32(NaNBits), true},
		{-1, -inf, false},
		{-inf, f32(0x7fc00000), true},
		{math.MaxFloat32, inf, false},
		{f32(0x7fc00001), f32(0x7fc00001), true},
		{f32(0x7fc00001), f32(0x7fc00000), false},
	} {
		if _, ok := Check(c.x, c.got); ok != c.ok {
			t.Errorf("Check(%v, %v) ok %v, want %v", c.x, c.got, ok, c.ok)
		}
	}
}

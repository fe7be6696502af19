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

// TestFMA pins the model's f32 FMA on cases where rounding the float64
// result to nearest twice gives the wrong f32.
func TestFMA(t *testing.T) {
	// a*b + c = 1 + 2^-23 + 2^-24 - 2^-70, just below the tie between
	// 1 + 2^-23 and 1 + 2^-22: the float64 sum drops 2^-70 and makes it
	// the tie, which would round to the even 1 + 2^-22.
	a, b, c := float32(0x1p-12*(1+0x1p-23)), float32(0x1p-12*(1-0x1p-23)), float32(1+0x1p-23)
	if got, want := fma(a, b, c), c; got != want {
		t.Errorf("fma = %v, want %v", got, want)
	}
	if got := fma(2, 3, 1); got != 7 {
		t.Errorf("fma(2, 3, 1) = %v", got)
	}
}

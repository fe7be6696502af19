package vexp

import (
	"math"
	"testing"
)

// TestFMA32 pins the models' f32 FMA on cases where rounding the float64
// result to nearest twice gives the wrong f32.
func TestFMA32(t *testing.T) {
	// a*b + c = 1 + 2^-23 + 2^-24 - 2^-70, just below the tie between
	// 1 + 2^-23 and 1 + 2^-22: the float64 sum drops 2^-70 and makes it
	// the tie, which would round to the even 1 + 2^-22.
	a, b, c := float32(0x1p-12*(1+0x1p-23)), float32(0x1p-12*(1-0x1p-23)), float32(1+0x1p-23)
	if got, want := FMA32(a, b, c), c; got != want {
		t.Errorf("fma = %v, want %v", got, want)
	}
	// 3x with x = 1 + 3*2^-23 is 3 + 4.5 f32 ulps, a tie that rounds
	// down to even; a subnormal c breaks it upward, which a float64 sum
	// rounded to nearest loses.
	if x, want := float32(1+3*0x1p-23), float32(3+5*0x1p-22); FMA32(x, 3, 0x1p-126) != want {
		t.Errorf("FMA32(%v, 3, 2^-126) = %v, want %v", x, FMA32(x, 3, 0x1p-126), want)
	}
	inf := float32(math.Inf(1))
	if got := FMA32(inf, -1, 5); got != -inf {
		t.Errorf("FMA32(+Inf, -1, 5) = %v, want -Inf", got)
	}
	if got := FMA32(inf, 0, 5); got == got {
		t.Errorf("FMA32(+Inf, 0, 5) = %v, want NaN", got)
	}
	if got := FMA32(2, 3, 1); got != 7 {
		t.Errorf("FMA32(2, 3, 1) = %v", got)
	}
}

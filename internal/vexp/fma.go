package vexp

import "math"

// FMA32 returns a*b + c rounded once to f32, as the hardware's FMA does
// (VFMADD, FMLA), for the models of package vexp, vlog and vfn. a*b is
// exact in float64; the float64 sum is made round-to-odd (its last bit
// set when inexact), which then rounds to f32 correctly, where rounding
// the float64 sum to nearest and then to f32 could not (a float64 sum
// on a tie of f32 values).
func FMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b)
	s := p + float64(c)
	if math.IsInf(s, 0) || s != s {
		return float32(s) // an infinite or NaN operand: nothing to round
	}
	t := s - p
	e := (p - (s - t)) + (float64(c) - t) // s's rounding error, exact
	if bits := math.Float64bits(s); e != 0 && bits&1 == 0 {
		if (e > 0) == (s > 0) {
			bits++ // away from zero, toward the exact sum
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

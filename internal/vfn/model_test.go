package vfn

import "testing"

// TestModelFMA holds Model's FMA to a single rounding where a*b is a tie
// of f32 values and c, tiny, decides it: c must not be lost on the way
// (a*b + c spans some 400 bits here).
func TestModelFMA(t *testing.T) {
	p := &Program{Steps: []Step{{Op: Const, Bits: bits(3)}, {Op: Const, Bits: bits(0x1p-126)}, {Op: FMA, A: 1, B: X, C: 2}}}
	for _, c := range []struct{ x, want uint32 }{{0x68c9a43e, 0x69973b2f}, {0x717ffffe, 0x723fffff}, {0xe8c9a43e, 0xe9973b2e}} {
		if got := Model(p, f32(c.x)); bits(got) != c.want {
			t.Errorf("3*%v + 2^-126 = %v (bits %#x), want bits %#x", f32(c.x), got, bits(got), c.want)
		}
	}
}

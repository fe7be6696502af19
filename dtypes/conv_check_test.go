package dtypes_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// conversion pairs a 16-bit format with the widening and narrowing functions
// under test, so that bf16 and f16 go through the same checks.
type conversion struct {
	f      *format
	widen  func(uint16) float32
	narrow func(float32) uint16
}

// checkWiden compares widen(h) for all 65,536 patterns with the float64
// decoding: equal bits (so the sign of zero counts) for non-NaN, and NaN with
// the same sign for NaN.
func checkWiden(t *testing.T, c conversion) {
	l := &limiter{t: t}
	for p := range 1 << 16 {
		h := uint16(p)
		got := c.widen(h)
		want := c.f.decode(h)
		neg := h&c.f.signBit() != 0
		if c.f.isNaN(h) {
			if !math.IsNaN(float64(got)) || math.Signbit(float64(got)) != neg {
				l.errorf("%s %#04x: widened to %v (bits %#08x), want NaN with sign %v",
					c.f.name, h, got, math.Float32bits(got), neg)
			}
			continue
		}
		if math.Float64bits(float64(got)) != math.Float64bits(want) {
			l.errorf("%s %#04x: widened to %v, want %v", c.f.name, h, got, want)
		}
	}
}

// checkRoundTrip narrows every widened pattern back: non-NaN patterns come
// back unchanged; NaN patterns come back NaN, quiet and with their sign.
func checkRoundTrip(t *testing.T, c conversion) {
	l := &limiter{t: t}
	for p := range 1 << 16 {
		h := uint16(p)
		got := c.narrow(c.widen(h))
		if !c.f.isNaN(h) {
			if got != h {
				l.errorf("%s %#04x: round trip gave %#04x", c.f.name, h, got)
			}
			continue
		}
		checkQuietNaN(l, c.f, got, h&c.f.signBit() != 0, "round trip of %#04x", h)
	}
}

// checkQuietNaN reports unless got is a NaN pattern of f with the quiet bit
// set and the sign neg.
func checkQuietNaN(l *limiter, f *format, got uint16, neg bool, what string, args ...any) {
	l.t.Helper()
	if !f.isNaN(got) || got&f.quietBit() == 0 || (got&f.signBit() != 0) != neg {
		l.errorf("%s %s: got %#04x, want a quiet NaN (bit %#04x set) with sign %v",
			f.name, fmt.Sprintf(what, args...), got, f.quietBit(), neg)
	}
}

// checkMidpoints derives the rounding boundaries from every finite pattern h
// whose successor h+1 is finite too (same sign, one ulp further from zero).
// Their float64 midpoint, which must be an f32, rounds to the neighbour with
// the even mantissa; one f32 ulp toward zero rounds to h, one ulp away
// rounds to h+1. Subnormal and zero neighbours are included.
func checkMidpoints(t *testing.T, c conversion) {
	l := &limiter{t: t}
	checked := 0
	for p := range 1 << 16 {
		h := uint16(p)
		if h&^c.f.signBit() >= c.f.maxFinite() {
			continue // h+1 is Inf or h is not finite: see the overflow tests
		}
		lo, hi := c.f.decode(h), c.f.decode(h+1)
		m := (lo + hi) / 2
		mf := float32(m)
		if float64(mf) != m {
			l.errorf("%s %#04x: midpoint %v is not an f32", c.f.name, h, m)
			continue
		}
		even := h
		if h&1 != 0 {
			even = h + 1
		}
		away := float32(math.Inf(1))
		if math.Signbit(m) {
			away = float32(math.Inf(-1))
		}
		cases := []struct {
			x    float32
			want uint16
			what string
		}{
			{mf, even, "midpoint"},
			{math.Nextafter32(mf, 0), h, "midpoint - 1ulp"},
			{math.Nextafter32(mf, away), h + 1, "midpoint + 1ulp"},
		}
		for _, k := range cases {
			if got := c.narrow(k.x); got != k.want {
				l.errorf("%s %#04x/%#04x %s %v (f32 %#08x): got %#04x, want %#04x",
					c.f.name, h, h+1, k.what, k.x, math.Float32bits(k.x), got, k.want)
			}
		}
		checked++
	}
	// Every pattern except the NaNs, the Infs and the largest finite value
	// of each sign has a finite successor.
	nans := int(1<<c.f.manBits-1) * 2
	if want := 1<<16 - nans - 4; checked != want {
		t.Errorf("%s: checked %d midpoints, want %d", c.f.name, checked, want)
	}
}

// checkOverflow checks the boundary between the largest finite value and
// Inf: the midpoint between it and 2^(emax+1), and anything above, rounds to
// Inf; one f32 ulp below rounds to the largest finite value. Both signs.
func checkOverflow(t *testing.T, c conversion, wantBoundary float64) {
	l := &limiter{t: t}
	maxF := c.f.decode(c.f.maxFinite())
	boundary := (maxF + math.Ldexp(1, c.f.bias()+1)) / 2
	if boundary != wantBoundary {
		t.Fatalf("%s: overflow boundary %v, want %v", c.f.name, boundary, wantBoundary)
	}
	bf := float32(boundary)
	if float64(bf) != boundary {
		t.Fatalf("%s: overflow boundary %v is not an f32", c.f.name, boundary)
	}
	for _, s := range []float32{1, -1} {
		sign := uint16(0)
		if s < 0 {
			sign = c.f.signBit()
		}
		inf, top := sign|c.f.infBits(), sign|c.f.maxFinite()
		cases := []struct {
			x    float32
			want uint16
		}{
			{s * bf, inf},
			{s * math.Nextafter32(bf, float32(math.Inf(1))), inf},
			{s * math.MaxFloat32, inf},
			{float32(math.Inf(int(s))), inf},
			{s * math.Nextafter32(bf, 0), top},
			{s * float32(maxF), top},
		}
		for _, k := range cases {
			if got := c.narrow(k.x); got != k.want {
				l.errorf("%s: %v (f32 %#08x) gave %#04x, want %#04x",
					c.f.name, k.x, math.Float32bits(k.x), got, k.want)
			}
		}
	}
}

// checkNaNInputs narrows f32 NaNs, signalling ones included and ones whose
// payload lies only in bits the narrowing drops: every result is a quiet NaN
// with the input's sign, never Inf.
func checkNaNInputs(t *testing.T, c conversion) {
	l := &limiter{t: t}
	inputs := []uint32{
		0x7f800001, 0xff800001, // lowest payload bit only
		0x7f80ffff, 0xff80ffff, // low half only
		0x7f801fff, 0xff801fff, // below the f16 mantissa only
		0x7f810000, 0x7fa00000, 0xffa00000, // signalling, payload in kept bits
		0x7fc00000, 0xffc00000, // the quiet NaNs
		0x7fffffff, 0xffffffff, // all payload bits
	}
	for _, u := range inputs {
		got := c.narrow(math.Float32frombits(u))
		checkQuietNaN(l, c.f, got, u>>31 != 0, "from f32 %#08x", u)
	}
}

// checkRandom compares narrow with the float64 reference rounding on n f32
// patterns from sampleF32; NaN inputs must give quiet NaNs with their sign.
func checkRandom(t *testing.T, c conversion, n int, seed uint64) {
	l := &limiter{t: t}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := range n {
		u := sampleF32(r, i)
		x := math.Float32frombits(u)
		got := c.narrow(x)
		if math.IsNaN(float64(x)) {
			checkQuietNaN(l, c.f, got, u>>31 != 0, "from f32 %#08x", u)
			continue
		}
		if want := c.f.round(x); got != want {
			l.errorf("%s: %v (f32 %#08x) gave %#04x, want %#04x", c.f.name, x, u, got, want)
		}
	}
}

package dtypes_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// format describes a binary floating-point format with a sign bit, expBits
// of biased exponent and manBits of stored mantissa, in the IEEE layout. The
// tests decode and round with it in float64, independently of the code under
// test, so that a shared mistake cannot hide itself.
type format struct {
	name    string
	expBits int
	manBits int
	// mags[p] is the magnitude of the non-negative pattern p for every finite
	// p, and mags[infBits()] is 2^(emax+1): the value an exponent-unbounded
	// rounding would produce in place of Inf, so rounding up to it means Inf.
	mags []float64
}

var (
	bf16Format = newFormat("bf16", 8, 7)
	f16Format  = newFormat("f16", 5, 10)
)

func newFormat(name string, expBits, manBits int) *format {
	f := &format{name: name, expBits: expBits, manBits: manBits}
	inf := f.infBits()
	f.mags = make([]float64, inf+1)
	for p := range inf {
		f.mags[p] = f.decode(uint16(p))
	}
	f.mags[inf] = math.Ldexp(1, f.bias()+1)
	return f
}

func (f *format) bias() int           { return 1<<(f.expBits-1) - 1 }
func (f *format) signBit() uint16     { return 1 << (f.expBits + f.manBits) }
func (f *format) infBits() uint16     { return uint16((1<<f.expBits - 1) << f.manBits) }
func (f *format) quietBit() uint16    { return 1 << (f.manBits - 1) }
func (f *format) maxFinite() uint16   { return f.infBits() - 1 }
func (f *format) isNaN(h uint16) bool { return h&^f.signBit() > f.infBits() }

// decode returns the value of pattern h from its fields: sign, biased
// exponent e and mantissa m. e == 0 is zero or subnormal (m * 2^(1-bias-man)),
// the all-ones exponent is Inf or NaN, and anything else is normal
// ((2^man + m) * 2^(e-bias-man)).
func (f *format) decode(h uint16) float64 {
	sign := 1.0
	if h&f.signBit() != 0 {
		sign = -1
	}
	e := int(h>>f.manBits) & (1<<f.expBits - 1)
	m := float64(int(h) & (1<<f.manBits - 1))
	switch {
	case e == 1<<f.expBits-1 && m == 0:
		return math.Inf(int(sign))
	case e == 1<<f.expBits-1:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(m, 1-f.bias()-f.manBits)
	default:
		return sign * math.Ldexp(math.Ldexp(1, f.manBits)+m, e-f.bias()-f.manBits)
	}
}

// round returns the pattern nearest to the non-NaN x, ties to the even
// pattern, with overflow to Inf as IEEE 754 defines it: round as if the
// exponent were unbounded and give Inf when that lands on or past 2^(emax+1).
// Nearest is decided against the float64 midpoint of the two neighbours,
// which is exact where a difference of magnitudes might not be.
func (f *format) round(x float32) uint16 {
	var sign uint16
	if math.Signbit(float64(x)) {
		sign = f.signBit()
	}
	a := math.Abs(float64(x))
	inf := int(f.infBits())
	if a >= f.mags[inf] {
		return sign | uint16(inf)
	}
	lo := sort.Search(len(f.mags), func(i int) bool { return f.mags[i] > a }) - 1
	if f.mags[lo] == a {
		return sign | uint16(lo)
	}
	mid := (f.mags[lo] + f.mags[lo+1]) / 2
	switch {
	case a < mid:
		return sign | uint16(lo)
	case a > mid:
		return sign | uint16(lo+1)
	case lo%2 == 0:
		return sign | uint16(lo)
	default:
		return sign | uint16(lo+1)
	}
}

// failLimit caps the errors one test reports, so that a systematic bug
// over 65,536 patterns prints a readable handful instead of all of them.
const failLimit = 20

// limiter counts failures of a test and stops it once failLimit is reached.
type limiter struct {
	t *testing.T
	n int
}

func (l *limiter) errorf(format string, args ...any) {
	l.t.Helper()
	l.n++
	l.t.Errorf(format, args...)
	if l.n >= failLimit {
		l.t.Fatalf("stopping after %d failures", l.n)
	}
}

// sampleF32 returns the i-th random f32 bit pattern of a mix chosen to reach
// every rounding case often: uniform bits; uniform bits with the low half set
// at or next to a bf16 tie; exponents in the f16 range (normal, subnormal,
// underflow, overflow); and that range with the low 13 bits at or next to an
// f16 tie for normal results.
func sampleF32(r *rand.Rand, i int) uint32 {
	u := r.Uint32()
	switch i % 4 {
	case 1:
		u = u&^0xffff | uint32(0x7fff+r.IntN(3))
	case 2, 3:
		exp := uint32(127 - 28 + r.IntN(48)) // 2^-28 .. 2^19
		u = u&0x807fffff | exp<<23
		if i%4 == 3 {
			u = u&^0x1fff | uint32(0x0fff+r.IntN(3))
		}
	}
	return u
}

package vfn

import (
	"math"
	"math/big"

	"github.com/gdnn/gdnn/jit/vexp"
)

// Model runs program p on x in scalar Go, every step rounded to f32 as
// the emitters round it: the programs' executable specification.
func Model(p *Program, x float32) float32 {
	if x != x {
		return x
	}
	var buf [64]float32
	v := buf[:0]
	if len(p.Steps) >= len(buf) {
		v = make([]float32, 0, len(p.Steps)+1)
	}
	v = append(v, x)
	for _, s := range p.Steps {
		v = append(v, eval(s, v))
	}
	return v[len(v)-1]
}

// eval computes step s from the values v so far.
func eval(s Step, v []float32) float32 {
	a, b := v[s.A], v[s.B]
	switch s.Op {
	case Const:
		return f32(s.Bits)
	case Add:
		return a + b
	case Sub:
		return a - b
	case Mul:
		return a * b
	case Div:
		return a / b
	case FMA:
		return fma(a, b, v[s.C])
	case Abs:
		return f32(bits(a) &^ (1 << 31))
	case Neg:
		return f32(bits(a) ^ 1<<31)
	case Min:
		return min(a, b)
	case Max:
		return max(a, b)
	case OrSign:
		return f32(bits(a) | bits(b)&(1<<31))
	case Poly:
		p := f32(s.Coef[len(s.Coef)-1])
		for i := len(s.Coef) - 2; i >= 0; i-- {
			p = fma(p, a, f32(s.Coef[i]))
		}
		return p
	case SelLT:
		if a < b {
			return v[s.C]
		}
		return v[s.D]
	case SelLE:
		if a <= b {
			return v[s.C]
		}
		return v[s.D]
	case Exp:
		return vexp.Model(a)
	}
	panic("vfn: unknown op")
}

// fma returns a*b + c rounded once to f32. The product is exact in
// float64 and the float64 sum rounds once; rounding that to f32 rounds
// twice, which differs from one rounding only where the float64 sum
// lands on a tie of f32 values, so those (rare) cases are redone exactly.
func fma(a, b, c float32) float32 {
	s := math.FMA(float64(a), float64(b), float64(c))
	r := float32(s)
	if math.IsInf(float64(r), 0) || s == float64(r) || s != s {
		return r
	}
	lo, hi := math.Nextafter32(r, float32(math.Inf(-1))), math.Nextafter32(r, float32(math.Inf(1)))
	if !isTie(s, r, lo, hi) {
		return r
	}
	// Exactly: a*b + c spans up to about 2^256 (the product) down to
	// 2^-149 (a subnormal c), some 410 bits; 200 bits rounded a tiny c
	// away (3x + 2^-126 with 3x a tie of f32 values came out as 3x, then
	// rounded to even).
	var x, y, z big.Float
	x.SetPrec(fmaPrec).SetFloat64(float64(a))
	y.SetPrec(fmaPrec).SetFloat64(float64(b))
	z.SetPrec(fmaPrec).SetFloat64(float64(c))
	x.Mul(&x, &y).Add(&x, &z)
	f, _ := x.Float32()
	if f == 0 {
		return float32(s) // the sign of an exact zero: IEEE's, as float64's
	}
	return f
}

// fmaPrec is enough bits for any a*b + c of f32 values to be exact.
const fmaPrec = 512

// isTie reports whether s lies exactly halfway between r and one of its
// neighbours lo, hi (the only place a second rounding can go wrong).
func isTie(s float64, r, lo, hi float32) bool {
	return s == (float64(r)+float64(lo))/2 || s == (float64(r)+float64(hi))/2
}

// Values runs program p on x as Model does and returns every value of
// the program, x first and the result last: for tests that look at the
// steps' operands (a Min or Max outside the package doc's contract, an
// exp reached). Unlike Model it computes a NaN x's steps too.
func Values(p *Program, x float32) []float32 {
	v := make([]float32, 1, len(p.Steps)+1)
	v[0] = x
	for _, s := range p.Steps {
		v = append(v, eval(s, v))
	}
	return v
}

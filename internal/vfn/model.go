package vfn

import (
	"github.com/gdnn/gdnn/internal/vexp"
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
		return vexp.FMA32(a, b, v[s.C])
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
			p = vexp.FMA32(p, a, f32(s.Coef[i]))
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

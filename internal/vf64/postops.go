package vf64

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// The f64 post-ops built on the exp and the log (Sigmoid, Tanh, Elu,
// SoftPlus, Mish, GELUTanh, GELUErf), written once over Lanes, the f64
// lane arithmetic of an instruction set: the native kernels' f64
// epilogue on AVX-512, AVX2 and NEON emits them through it, and Model
// runs them in scalar Go. Each takes plan.EltwiseF64's steps where those
// are a few correctly rounded operations (so that it rounds as the
// interpreter does), with Exp and Log in place of package math's and an
// expm1, a log1p and an erfc (erfc.go) of its own; PostOpNear states how
// far from plan.EltwiseF64 each may be.

// Lanes is the f64 lane arithmetic the post-ops are written over. Values
// are vector registers the post-op takes with Tmp and gives back with
// Release (in stack order); a destination d may be any of the operands
// unless said otherwise. Each arithmetic operation rounds once.
type Lanes interface {
	Tmp() int
	Mark() int
	Release(mark int)
	// Const sets every lane of d to v.
	Const(d int, v float64)
	Mov(d, a int)
	Add(d, a, b int) // a + b
	Sub(d, a, b int) // a - b
	Mul(d, a, b int) // a * b
	Div(d, a, b int) // a / b
	FMA(d, a, b, c int)
	// Min and Max are the smaller and the larger of a and b; the
	// post-ops never hand them a NaN (but in a NaN x's lanes, whose
	// results KeepNaN replaces) or two zeros, where instruction sets
	// disagree.
	Min(d, a, b int)
	Max(d, a, b int)
	// OrSign sets d to a with b's sign bit ORed in.
	OrSign(d, a, b int)
	// SelLT sets d to c where a < b and to e elsewhere (a NaN compares
	// false).
	SelLT(d, a, b, c, e int)
	// Poly sets d (not x) to the polynomial with coefficients c (c[0]
	// first) at x, by Horner's rule with FMAs.
	Poly(d, x int, c []float64)
	// Exp replaces r by Exp(r), this package's; LogUnit by Log(r) for
	// r in [1, 2] (another r gives a value the post-op must not use),
	// without Log's specials: on AVX2 that takes four temporaries, not
	// five.
	Exp(r int)
	LogUnit(r int)
	// KeepNaN sets d to x in the lanes where x is a NaN, its bits
	// unchanged.
	KeepNaN(d, x int)
}

// Has reports whether kind k is one of the post-ops written here.
func Has(k ops.Kind) bool {
	switch k {
	case ops.Sigmoid, ops.Tanh, ops.Elu, ops.SoftPlus, ops.Mish, ops.GELUTanh, ops.GELUErf:
		return true
	}
	return false
}

// Emit applies the unary post-op op to the f64 lanes of r through l, as
// plan.EltwiseF64 within Near, and reports whether op is one of those
// written here (Has). A NaN lane keeps its bits.
func Emit(l Lanes, op plan.PostOp, r int) bool {
	if !Has(op.Kind) {
		return false
	}
	mk := l.Mark()
	defer l.Release(mk)
	x := l.Tmp()
	l.Mov(x, r)
	switch op.Kind {
	case ops.Sigmoid:
		sigmoid(l, x, r)
	case ops.Tanh:
		tanh(l, x, r)
	case ops.Elu:
		elu(l, x, r, float64(op.Alpha))
	case ops.SoftPlus:
		softPlus(l, x, r, float64(op.Beta))
	case ops.Mish:
		mish(l, x, r)
	case ops.GELUTanh:
		geluTanh(l, x, r)
	case ops.GELUErf:
		geluErf(l, x, r)
	}
	l.KeepNaN(r, x)
	return true
}

// MaxTemps is the most temporaries a post-op takes at a time, x, the
// exp's three and the log's four included: an AVX2 kernel may hold
// three of its eight (the value r, a lane broadcast, a transform's
// constant) when its epilogue runs.
const MaxTemps = 5

// Each post-op below reads x (which it leaves as it is) and writes its
// result to r, which it may use before, within MaxTemps.

// sigmoid: with t = e^-|x| (no overflow), 1/(1+t) for x >= 0 and
// t/(1+t) for x < 0, plan.EltwiseF64's two forms.
func sigmoid(l Lanes, x, r int) {
	negAbs(l, r, x)
	l.Exp(r)
	c, d, z := l.Tmp(), l.Tmp(), l.Tmp()
	l.Const(c, 1)
	l.Add(d, c, r)
	l.Const(z, 0)
	l.SelLT(c, x, z, r, c)
	l.Div(r, c, d)
}

// Expm1Poly is Q with expm1(y) = y + y^2*Q(y): the Taylor coefficients
// 1/(i+2)!, to the degree where the next term is below a hundredth of
// an ulp of expm1(y) for y in [-ln2, 0].
var Expm1Poly = func() [Expm1Degree + 1]float64 {
	var c [Expm1Degree + 1]float64
	f := 1.0
	for i := range Expm1Degree + 2 {
		f *= float64(i + 1)
		if i >= 1 {
			c[i-1] = 1 / f
		}
	}
	return c
}()

// Expm1Degree is Q's degree.
const Expm1Degree = 14

// Ln2 is ln 2 rounded to float64: expm1 is the polynomial from -Ln2 up
// and e^y - 1 below it, where e^y <= 1/2, so that the subtraction
// loses nothing.
const Ln2 = math.Ln2

// expm1 sets d (not y) to e^y - 1 for y <= 0 (another y gives a value
// the caller must not select, but no NaN from a finite y): y + y^2*Q(y)
// above -Ln2, e^y - 1 below. ORing y's sign in makes expm1(-0) -0 (the
// polynomial gives +0); every other result is negative already. It
// takes three temporaries beside d.
func expm1(l Lanes, y, d int) {
	mk := l.Mark()
	defer l.Release(mk)
	l.Mov(d, y)
	l.Exp(d)
	c, p := l.Tmp(), l.Tmp()
	l.Const(c, 1)
	l.Sub(d, d, c)
	l.Poly(p, y, Expm1Poly[:])
	l.Mul(c, y, y)
	l.FMA(p, c, p, y)
	l.Const(c, -Ln2)
	l.SelLT(d, y, c, d, p)
	l.OrSign(d, d, y)
}

// negAbs sets d to -|a|.
func negAbs(l Lanes, d, a int) {
	mk := l.Mark()
	defer l.Release(mk)
	c := l.Tmp()
	l.Const(c, -1)
	l.OrSign(d, a, c)
}

// tanh: sign(x) * m/(-2 - m), m = expm1(-2|x|) in (-1, 0]: tanh(a) =
// (1 - e^-2a)/(1 + e^-2a), which neither cancels nor overflows. -2|x|
// is exact, or -Inf past MaxFloat64/2, where m is -1.
func tanh(l Lanes, x, r int) {
	l.Add(r, x, x)
	negAbs(l, r, r)
	m := l.Tmp()
	expm1(l, r, m)
	l.Const(r, -2)
	l.Sub(r, r, m)
	l.Div(r, m, r)
	l.OrSign(r, r, x)
}

// elu: x for x > 0, else alpha*expm1(x), plan.EltwiseF64's product.
func elu(l Lanes, x, r int, alpha float64) {
	expm1(l, x, r)
	c := l.Tmp()
	l.Const(c, alpha)
	l.Mul(r, c, r)
	l.Const(c, 0)
	l.SelLT(r, c, x, x, r)
}

// softPlus: plan.EltwiseF64's (max(y, 0) + log1p(e^-|y|))/beta, y =
// beta*x, each operation in its order; log1p(t) is log(u) + (t -
// (u-1))/u with u = 1 + t rounded (u - 1 is exact, t - (u-1) is u's
// rounding error), so that a t below an ulp of 1 is not lost. Nothing
// but x is live across the log: t and u are computed again after it
// (the same bits).
func softPlus(l Lanes, x, r int, beta float64) {
	negExp := func(d int) { // d = e^-|beta*x|
		l.Const(d, beta)
		l.Mul(d, d, x)
		negAbs(l, d, d)
		l.Exp(d)
	}
	negExp(r)
	mk := l.Mark()
	c := l.Tmp()
	l.Const(c, 1)
	l.Add(r, c, r) // u
	l.Release(mk)
	l.LogUnit(r)
	c = l.Tmp()
	negExp(c) // t
	d := l.Tmp()
	l.Const(d, 1)
	l.Add(d, d, c) // u
	e := l.Tmp()
	l.Const(e, 1)
	l.Sub(e, d, e)
	l.Sub(c, c, e)
	l.Div(c, c, d)
	l.Add(r, r, c) // log1p(t)
	l.Const(c, beta)
	l.Mul(c, c, x)
	l.Const(d, 0)
	l.SelLT(c, d, c, c, d) // max(y, 0), +0 for -0 as math.Max
	l.Add(r, c, r)
	l.Const(c, beta)
	l.Div(r, r, c)
}

// MishBig: from it on x*tanh(softplus(x)) is x in float64 (n below is
// past 2^55, so n/(n+2) rounds to 1), so the exp's argument is clamped
// to it.
const MishBig = 20

// mish: x*tanh(softplus(x)) = x*n/(n+2) with e = e^x and n = e*(e+2),
// which neither cancels nor overflows with x clamped to MishBig. -Inf is
// clamped to -MaxFloat64, so that its product with e^-Inf = 0 is -0, as
// plan.EltwiseF64's.
func mish(l Lanes, x, r int) {
	l.Const(r, MishBig)
	l.Min(r, x, r)
	l.Exp(r)
	c, d := l.Tmp(), l.Tmp()
	l.Const(c, 2)
	l.Add(d, r, c)
	l.Mul(r, r, d)
	l.Add(d, r, c)
	l.Div(r, r, d)
	l.Const(c, -math.MaxFloat64)
	l.Max(d, x, c)
	l.Mul(r, d, r)
}

// The constants of plan.EltwiseF64's GELUTanh.
var (
	GELUK     = math.Sqrt(2 / math.Pi)
	GELUCubic = 0.044715
)

// geluTanh: x/(1 + e^(-2u)), u = K*(x + ((c*x)*x)*x), each operation in
// plan.EltwiseF64's order, so that only the exp differs. The x divided
// is clamped to -MaxFloat64, so that -Inf over e^+Inf is -0 (GELU's
// limit), not a NaN.
func geluTanh(l Lanes, x, r int) {
	mk := l.Mark()
	c := l.Tmp()
	l.Const(c, GELUCubic)
	l.Mul(r, c, x)
	l.Mul(r, r, x)
	l.Mul(r, r, x)
	l.Add(r, x, r)
	l.Const(c, GELUK)
	l.Mul(r, c, r)
	l.Const(c, -2)
	l.Mul(r, c, r)
	l.Release(mk)
	l.Exp(r)
	c = l.Tmp()
	l.Const(c, 1)
	l.Add(r, c, r)
	l.Const(c, -math.MaxFloat64)
	l.Max(c, x, c)
	l.Div(r, c, r)
}

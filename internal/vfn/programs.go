package vfn

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// For returns the program of the unary post-op op, and false for a kind
// with no program here.
func For(op plan.PostOp) (*Program, bool) {
	b := &builder{p: Program{Kind: op.Kind}}
	switch op.Kind {
	case ops.Sigmoid:
		b.sigmoid()
	case ops.Tanh:
		b.tanh()
	case ops.Elu:
		b.elu(op.Alpha)
	case ops.SoftPlus:
		b.softPlus(op.Beta)
	case ops.Mish:
		b.mish()
	case ops.GELUTanh:
		b.geluTanh()
	case ops.GELUErf:
		b.geluErf()
	default:
		return nil, false
	}
	return &b.p, true
}

// Has reports whether kind k has a program.
func Has(k ops.Kind) bool {
	_, ok := For(plan.PostOp{Kind: k, Beta: 1})
	return ok
}

// Polynomials, f32 bits, c0 first: minimax fits (weighted by the error
// they cause in the function, not in themselves). fit_test.go states
// each one's fit and refits it: go test ./internal/vfn -run Fit -v prints
// the coefficients anew.
var (
	// TanhPoly is P with tanh(a) = a + a^3*P(a^2) for a in [0, TanhSmall].
	TanhPoly = []uint32{0xbeaaaaa6, 0x3e0886a2, 0xbd5c96ac, 0x3cacb277, 0xbbce08d2}
	// Expm1Poly is Q with expm1(x) = x + x^2*Q(x) for x in [-ln2, 0].
	Expm1Poly = []uint32{0x3effffff, 0x3e2aaa8a, 0x3d2aa5dd, 0x3c08346e, 0x3ab02ada, 0x391aea2f}
	// AtanhPoly is R with 2*atanh(s) = 2s + 2s*w*R(w), w = s^2, for s in
	// [0, 1/3] (log1p(t) for t in [0, 1], s = t/(2+t)).
	AtanhPoly = []uint32{0x3eaaaaac, 0x3e4ccb54, 0x3e1284b9, 0x3ddb6b52, 0x3df8d770}
)

const (
	// TanhSmallBits is atanh(1/2) rounded to f32: below it tanh is the
	// polynomial; at and above it 1 - 2/(e^2a + 1), which is then at
	// least 1/2, so that the subtraction loses nothing.
	TanhSmallBits = 0x3f0c9f54
	// NegLn2Bits is -ln2 rounded to f32: expm1 is the polynomial above it
	// and e^x - 1 below it, which is then exact (e^x <= 1/2).
	NegLn2Bits = 0xbf317218
	// MishBig: above it x*tanh(softplus(x)) is x in f32 (the ratio below
	// rounds to 1), so the exp's argument is clamped to it.
	MishBig = 10
	// MishTail: below it mish(x) = x*e^x to f32 precision, computed as
	// (x*h)*h with h = e^(x/2), so that a subnormal e^x does not lose the
	// bits of a result x times larger.
	MishTail = -20
	// SoftPlusTail: past it (|beta*x| > 64) log1p(e^-|y|) is e^-|y| in
	// f32, computed from e^(-|y|/2) (see softPlus).
	SoftPlusTail = 64
)

// builder appends steps to a program.
type builder struct{ p Program }

func (b *builder) step(s Step) Val {
	b.p.Steps = append(b.p.Steps, s)
	return b.p.Result()
}

func (b *builder) c(f float32) Val               { return b.step(Step{Op: Const, Bits: bits(f)}) }
func (b *builder) cb(u uint32) Val               { return b.step(Step{Op: Const, Bits: u}) }
func (b *builder) op2(op Op, x, y Val) Val       { return b.step(Step{Op: op, A: x, B: y}) }
func (b *builder) op1(op Op, x Val) Val          { return b.step(Step{Op: op, A: x}) }
func (b *builder) fma(x, y, z Val) Val           { return b.step(Step{Op: FMA, A: x, B: y, C: z}) }
func (b *builder) poly(x Val, coef []uint32) Val { return b.step(Step{Op: Poly, A: x, Coef: coef}) }
func (b *builder) sel(op Op, x, y, t, f Val) Val {
	return b.step(Step{Op: op, A: x, B: y, C: t, D: f})
}

// sigmoid: with t = e^-|x| (no overflow), 1/(1+t) for x >= 0 and
// t/(1+t) for x < 0; neither cancels.
func (b *builder) sigmoid() {
	t := b.op1(Exp, b.op1(Neg, b.op1(Abs, X)))
	one := b.c(1)
	d := b.op2(Add, t, one)
	num := b.sel(SelLT, X, b.c(0), t, one)
	b.op2(Div, num, d)
}

// tanh: sign(x) * tanh(|x|); tanh(a) is a + a^3*P(a^2) below
// TanhSmall and 1 - 2/(e^2a + 1) from it on (1 at +Inf: e^2a is +Inf).
func (b *builder) tanh() {
	a := b.op1(Abs, X)
	e := b.op1(Exp, b.op2(Add, a, a))
	one := b.c(1)
	q := b.op2(Div, b.c(2), b.op2(Add, e, one))
	big := b.op2(Sub, one, q)
	s := b.op2(Mul, a, a)
	p := b.poly(s, TanhPoly)
	small := b.fma(b.op2(Mul, a, s), p, a)
	r := b.sel(SelLT, a, b.cb(TanhSmallBits), small, big)
	b.op2(OrSign, r, X)
}

// elu: x for x > 0, else alpha*expm1(x); expm1 is x + x^2*Q(x) above
// -ln2 and e^x - 1 below. ORing x's sign makes expm1(-0) -0 (the
// polynomial gives +0), as alpha*expm1(-0) must be alpha*-0; every other
// expm1 of an x <= 0 is negative already.
func (b *builder) elu(alpha float32) {
	em := b.op2(Sub, b.op1(Exp, X), b.c(1))
	sm := b.fma(b.op2(Mul, X, X), b.poly(X, Expm1Poly), X)
	m := b.op2(OrSign, b.sel(SelLT, X, b.cb(NegLn2Bits), em, sm), X)
	am := b.op2(Mul, b.c(alpha), m)
	b.sel(SelLE, X, b.c(0), am, X)
}

// softPlus: log(1 + e^(beta*x))/beta as plan.Eltwise's
// max(y, 0)/beta + log1p(e^-|y|)/beta, y = beta*x, where max(y, 0)/beta
// is x where y > 0 and 0 elsewhere. y is y_h + y_l exactly (an FMA gives
// the product's error), and e^-|y| is e^-|y_h| * (1 - |y|'s low part):
// far out, where e^-|y| is the result, y_h's rounding alone would cost
// |y| times 2^-24 of it. log1p(t) is 2*atanh(t/(2+t)), whose series
// neither cancels nor needs the log. Past SoftPlusTail, log1p(t) is t,
// and t/beta is (h/beta)*h with h = e^(-|y_h|/2): a subnormal t would
// lose the bits of a result that a small beta makes normal; -|y_h| is
// computed again for the last select rather than kept live across the
// exp (the same bits, so both selects agree). x is clamped to a finite
// range first (softPlusClamp) so that the FMA never meets an infinity
// minus itself; the low part is clamped to [-1, 1] so that 0 * infinity
// cannot occur where beta*x overflows. The order of the steps keeps few
// values live across the exp: AVX2 has six temporaries.
func (b *builder) softPlus(beta float32) {
	bv := b.c(beta)
	lim, infShort := softPlusClamp(beta)
	clampX := func() Val { return b.op2(Max, b.op2(Min, X, b.c(lim)), b.c(-lim)) }
	negAbsY := func() Val { return b.op1(Neg, b.op1(Abs, b.op2(Mul, bv, clampX()))) }
	xc := clampX()
	yh := b.op2(Mul, bv, xc)
	yl := b.fma(bv, xc, b.op1(Neg, yh))
	yl = b.op2(Max, b.op2(Min, yl, b.c(1)), b.c(-1))
	al := b.sel(SelLT, yh, b.c(0), b.op1(Neg, yl), yl)
	na := b.op1(Neg, b.op1(Abs, yh))
	tail := b.c(-SoftPlusTail)
	e := b.op1(Exp, b.sel(SelLT, na, tail, b.op2(Mul, na, b.c(0.5)), na))
	t := b.fma(b.op1(Neg, e), al, e)
	q := b.op2(Mul, b.op2(Div, e, bv), e)
	tl := b.fma(b.op1(Neg, q), al, q)
	s2 := b.op2(Div, b.op2(Add, t, t), b.op2(Add, t, b.c(2))) // 2s, s = t/(2+t)
	w := b.op2(Mul, b.op2(Mul, s2, s2), b.c(0.25))            // s^2
	r := b.poly(w, AtanhPoly)                                 // before w's last use: Horner needs a register besides w
	l := b.op2(Div, b.fma(b.op2(Mul, s2, w), r, s2), bv)
	part := b.sel(SelLT, negAbsY(), tail, tl, l)
	zero := b.c(0)
	if infShort { // log(1 + e^(beta*x))/beta is 0 or x itself at either infinity
		part = b.sel(SelLT, b.op1(Abs, X), b.c(float32(math.Inf(1))), part, zero)
	}
	if beta > 0 {
		b.op2(Add, b.sel(SelLT, zero, X, X, zero), part)
		return
	}
	// With beta < 0 every result is below zero, the ones that underflow
	// too: -0, which +0 + -0 would lose.
	b.op2(OrSign, b.op2(Add, b.sel(SelLT, X, zero, X, zero), part), bv)
}

// softPlusClamp returns the bound softPlus clamps x to: 2^100, or, for
// a beta so small that |beta|*2^100 < 256, 256/|beta| (at most
// MaxFloat32). Past the bound |beta*x| >= 256, where the result is x or 0
// in f32 (log1p(e^-256)/beta is below 2^-150 for every f32 beta), as it
// is at the bound: clamping changes no result. infShort reports a beta
// so small that MaxFloat32 is the bound and |beta|*MaxFloat32 < 256: the
// infinities then stop short of saturating, and softPlus sets their
// log1p part to 0 itself.
func softPlusClamp(beta float32) (lim float32, infShort bool) {
	a := math.Abs(float64(beta))
	if a*0x1p100 >= 256 {
		return 0x1p100, false
	}
	if c := 256 / a; c < math.MaxFloat32 {
		return float32(c), false
	}
	return math.MaxFloat32, true
}

// mish: x*tanh(softplus(x)) = x*n/(n+2) with t = e^x and n = t*(t+2),
// which neither cancels nor overflows with x clamped to MishBig. Below
// MishTail it is (x*h)*h with h = e^(x/2) (see MishTail); one exp serves
// both, its argument chosen per lane. -Inf is clamped to -MaxFloat32, so
// that the product with e^-Inf = 0 is -0, not a NaN.
func (b *builder) mish() {
	xm := b.op2(Max, X, b.c(-math.MaxFloat32))
	tail := b.c(MishTail)
	xc := b.op2(Min, xm, b.c(MishBig))
	arg := b.sel(SelLT, X, tail, b.op2(Mul, xm, b.c(0.5)), xc)
	e := b.op1(Exp, arg)
	two := b.c(2)
	n := b.op2(Mul, e, b.op2(Add, e, two))
	main := b.op2(Mul, xm, b.op2(Div, n, b.op2(Add, n, two)))
	tl := b.op2(Mul, b.op2(Mul, xm, e), e)
	b.sel(SelLT, X, tail, tl, main)
}

// GELUTanh's constants: 2u = x*(A + B*x^2) for plan.Eltwise's
// u = sqrt(2/pi)*(x + 0.044715*x^3), each of A and B as the sum of two
// f32 values (hi + lo), so that 2u is known to about 2^-40 of itself.
var (
	geluA = 2 * math.Sqrt(2/math.Pi)
	geluB = geluA * 0.044715
	// GELUAHi, GELUALo, GELUBHi, GELUBLo are those halves.
	GELUAHi, GELUALo = split(geluA)
	GELUBHi, GELUBLo = split(geluB)
)

// split returns f as hi + lo, two f32 values.
func split(f float64) (hi, lo float32) {
	hi = float32(f)
	return hi, float32(f - float64(hi))
}

const (
	// GELUClamp bounds x where 2u is computed: past it the result is x
	// (e^-2u is 0) or -0 (e^-u overflows), as it is at the bound.
	GELUClamp = 14
	// GELUTail: below it x/(1+e^v), v = -2u, is (x/h)/h with h = e^(v/2)
	// (v is then at least 76, where 1+e^v is e^v in f32), so that e^v
	// does not overflow where the result is still normal.
	GELUTail = -9.5
	// GELUMaxArg bounds the exp's argument below its overflow, so that
	// e^v_h * (1 + v_l) is never Inf - Inf: past it (v > 176) the
	// result is -0 either way.
	GELUMaxArg = 88
)

// geluTanh: x/(1 + e^v), v = -2u, as plan.Eltwise computes it. e^v
// multiplies v's error by |v| (up to about 180 here), so 2u is carried
// as a sum of two f32 values: x^2, B*x^2, A + B*x^2 (a Fast2Sum: both
// terms are positive, the larger first) and x*(A + B*x^2) each keep
// their rounding error, and e^v is e^v_h * (1 + v_l). Below GELUTail it
// takes the square root of e^v (see GELUTail) and divides the clamped x,
// so that -Inf is not divided by the bounded e^v. The clamped x is
// computed twice rather than kept live, and the steps are ordered, so
// that the program fits AVX2's temporaries.
func (b *builder) geluTanh() {
	clampX := func() Val { return b.op2(Max, b.op2(Min, X, b.c(GELUClamp)), b.c(-GELUClamp)) }
	// w = A + B*x^2 as wh + wl.
	xc := clampX()
	sh := b.op2(Mul, xc, xc)
	sl := b.fma(xc, xc, b.op1(Neg, sh))
	bh := b.c(GELUBHi)
	low := b.fma(sl, bh, b.c(GELUALo))
	low = b.fma(sh, b.c(GELUBLo), low)
	ph := b.op2(Mul, sh, bh)
	low = b.op2(Sub, low, b.fma(sh, b.c(-GELUBHi), ph)) // + B_h*x_h^2's rounding error
	ah := b.c(GELUAHi)
	big, small := b.op2(Max, ph, ah), b.op2(Min, ph, ah)
	wh := b.op2(Add, big, small)
	wl := b.op2(Add, low, b.op2(Sub, small, b.op2(Sub, wh, big)))
	// v = -x*w as vh + vl.
	xc = clampX()
	t := b.op2(Mul, xc, wl)
	vh := b.op1(Neg, b.op2(Mul, xc, wh))
	vl := b.op1(Neg, b.op2(Add, b.fma(xc, wh, vh), t))
	tail, half := b.c(GELUTail), b.c(0.5)
	lo := b.sel(SelLT, X, tail, b.op2(Mul, vl, half), vl)
	e := b.op1(Exp, b.op2(Min, b.sel(SelLT, X, tail, b.op2(Mul, vh, half), vh), b.c(GELUMaxArg)))
	ev := b.fma(e, lo, e)
	main := b.op2(Div, X, b.op2(Add, ev, b.c(1)))
	tl := b.op2(Div, b.op2(Div, clampX(), ev), ev)
	b.sel(SelLT, X, tail, tl, main)
}

// GELUErf's constants: erfc(a/sqrt2) = u * e^-(a^2/2 + Q(u - GELUErfU0))
// with u = K/(2 + a) (K = GELUErfK), and A(u) = 1 - u*Q'(u), the
// relative change of u*e^-Q per relative change of u.
var (
	// GELUErfPoly is Q, a minimax fit of -z^2 - log(erfc(z)/u), z =
	// a/sqrt2 (absolute error 1.1e-8, its coefficients rounded in turn and
	// the rest refit) for a in [0, GELUErfClamp]; its values lie in
	// [0.05, 0.85].
	GELUErfPoly = []uint32{0x3ec6d798, 0xbf660f14, 0x3ea66a5f, 0x3e351bfb, 0xbe893de4, 0x3d77fc3a,
		0x3e36084d, 0xbe64ffee, 0x3c622601, 0x3e66125b, 0xbdf98f14, 0xbda3680c}
	// GELUErfDPoly is A, to within 0.5%: it only scales u's rounding
	// error.
	GELUErfDPoly = []uint32{0x3fc33d99, 0x3f0703ad, 0xbf49e08b, 0xbdc38b59}
)

const (
	// GELUErfKBits is K, 2*e^0.05 rounded to f32: the scale of u that
	// keeps Q above 0.05 (so that the Fast2Sum of a^2/2 and Q may order
	// them by value) and below 1 (so that Q's rounding is 2^-25 of it).
	GELUErfKBits = 0x4006900d
	// GELUErfU0Bits is the centre of u's range, where Q is expanded (its
	// Horner sum then barely cancels).
	GELUErfU0Bits = 0x3f16df92
	// GELUErfClamp bounds x: below -GELUErfClamp the result is -0 (the
	// exp's argument is below -104), above it x.
	GELUErfClamp = 14.5
)

// geluErf: x/2 * erfc(-x/sqrt2) as plan.Eltwise computes it, from
// E = erfc(a/sqrt2), a = |x|: x/2*E for x <= 0 (the left tail, which
// must be accurate relative to itself down to the subnormals), x -
// x/2*E above (at least x/2: no cancellation). E is u*e^-(a^2/2 + Q)
// with u = K/(2 + a) (see GELUErfPoly). The exponent reaches 105, so it
// is carried as two f32 values H + L: a^2/2 is exact as x_h^2/2 +
// x_l^2/2 (an FMA gives x^2's rounding error), its sum with Q is a
// Fast2Sum (both are positive: the larger first), and e^-H is scaled
// by 1 - L. u's own rounding (of 2 + a, kept by a Fast2Sum, and of the
// division, whose remainder an FMA gives) would cost up to twice its
// size, as u both scales E and feeds Q: it goes into L as A(u) times
// u's relative error. x is clamped (recomputed rather than kept live),
// so that no infinity meets a zero; u is computed again after the exp
// (the same bits), as u/2 from K/2. The order of the steps keeps few
// values live across the exp, and -H is computed as 0 - H (its constant
// loaded into a free register), so that the exp's temporaries sit on
// top of H's and L's: AVX2 has six temporaries.
func (b *builder) geluErf() {
	clampX := func() Val { return b.op2(Max, b.op2(Min, X, b.c(GELUErfClamp)), b.c(-GELUErfClamp)) }
	// u = K/d, d = 2 + a = dh + dl; nrho = -(u's relative error).
	two := b.c(2)
	a := b.op1(Abs, clampX())
	big, small := b.op2(Max, a, two), b.op2(Min, a, two)
	dh := b.op2(Add, big, small)
	dl := b.op2(Sub, small, b.op2(Sub, dh, big))
	k := f32(GELUErfKBits)
	u := b.op2(Div, b.c(k), dh)
	w := b.fma(dh, u, b.c(-k))                    // u*dh - K, exact
	nrho := b.op2(Mul, b.fma(dl, u, w), b.c(1/k)) // 1 - K/(u*(dh+dl))
	// L starts as x_l^2/2 - A*rho.
	xc := clampX()
	sl := b.fma(xc, xc, b.op1(Neg, b.op2(Mul, xc, xc)))
	lo := b.op2(Mul, sl, b.c(0.5))
	s := b.op2(Sub, u, b.cb(GELUErfU0Bits))
	lo = b.fma(b.poly(s, GELUErfDPoly), nrho, lo)
	q := b.poly(s, GELUErfPoly)
	// H + L = x^2/2 + Q + L.
	xc = clampX()
	zh := b.op2(Mul, b.op2(Mul, xc, xc), b.c(0.5))
	big, small = b.op2(Max, zh, q), b.op2(Min, zh, q)
	hi := b.op2(Add, big, small)
	lo = b.op2(Add, lo, b.op2(Sub, small, b.op2(Sub, hi, big)))
	e := b.op1(Exp, b.op2(Sub, b.c(0), hi))
	ev := b.fma(e, b.op1(Neg, lo), e)
	// r = x/2 * E.
	xc = clampX()
	half := b.op2(Div, b.c(k/2), b.op2(Add, b.op1(Abs, xc), two))
	r := b.op2(Mul, b.op2(Mul, xc, half), ev)
	b.sel(SelLE, X, b.c(0), r, b.op2(Sub, X, r))
}

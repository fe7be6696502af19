package vf64

import "math"

// The f64 erfc, for the GELU post-op in erf mode (plan.EltwiseF64's
// x/2 * erfc(-x/sqrt 2)), written once over Lanes without a branch: it
// takes fdlibm's steps (package math's Erfc) for every range of a = |y|
// in every lane and selects by a. a is clamped to ErfcBig.
//
//  1. a < 0.84375: y' = PP(a^2)/QQ(a^2), erfc(a) = (1 - c) - (a*y' +
//     (a - c)) in one FMA, c = 0 below 1/4 and 1/2 from it on (so a - c
//     is exact): fdlibm's 1 - (a + a*y') and 1/2 - (a*y' + (a - 1/2)).
//  2. a < 1.25: erfc(a) = (1 - erx) - PA(a-1)/QA(a-1).
//  3. Else, with q = RA(s)/SA(s) below 1/0.35 and RB(s)/SB(s) from it
//     on (s = 1/a^2): erfc(a) = e^-h * (e^(q - 0.5625 - l) / a), where
//     h + l = a^2 exactly (l by an FMA), so that no argument of the
//     exps is rounded where fdlibm's split of a takes bits off.
//  4. erfc(y) = 2 - erfc(a) for y < 0.
//
// Erfc is within ErfcULP of math.Erfc where math.Erfc is normal, and
// within two subnormal steps of it where it is not (erfc(y) for y past
// about 26.5). math.Erfc is itself up to about 4 ulps from erfc's exact
// value, Erfc up to about 3. No post-op computes erf(y): GELU takes the
// erfc form, which keeps its precision where erf(y) is near -1.

// ErfcBig clamps |y|: erfc(ErfcBig) is 0 in float64 (e^-784 underflows)
// and 2 - erfc(ErfcBig) is 2, as math.Erfc's for |y| >= 28, and the
// clamp keeps a^2 finite.
const ErfcBig = 28

// ErfcULP bounds the distance of Erfc from math.Erfc in float64 ulps
// where math.Erfc is normal: sweeps find 4 on amd64 and 5 on arm64, whose
// math.Erfc has its own exp and its polynomials compiled to FMAs.
const ErfcULP = 5

// fdlibm's erfc's constants (s_erf.c, as package math's erf.go).
const (
	erx = 8.45062911510467529297e-01
	// ErfcSplit1, ErfcSplit2 and ErfcSplit3 are where the ranges change.
	ErfcSplit1 = 0.84375
	ErfcSplit2 = 1.25
	ErfcSplit3 = 1 / 0.35
	// erfcQuarter is the largest float64 below 1/4: (a - it) * 2^60 is at
	// least 32 from a = 1/4 on and not positive below, so that clamped to
	// [0, 1/2] it is step 1's c.
	erfcQuarter = 0.25 - 0x1p-55
)

// The rational approximations' coefficients, constant term first.
var (
	erfcPP = []float64{1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
		-5.77027029648944159157e-03, -2.37630166566501626084e-05}
	erfcQQ = []float64{1, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
		1.32494738004321644526e-04, -3.96022827877536812320e-06}
	erfcPA = []float64{-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
		3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02, -2.16637559486879084300e-03}
	erfcQA = []float64{1, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
		1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02}
	erfcRA = []float64{-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
		-6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
		-8.12874355063065934246e+01, -9.81432934416914548592e+00}
	erfcSA = []float64{1, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
		6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
		6.57024977031928170135e+00, -6.04244152148580987438e-02}
	erfcRB = []float64{-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
		-1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
		-4.83519191608651397019e+02}
	erfcSB = []float64{1, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
		3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
		-2.24409524465858183362e+01}
)

// erfcArg sets d to a = min(|x|/|k|, ErfcBig), k 1 or -Sqrt2: |x/k|
// rounded as x/k is (a division by -sqrt 2 rounds as one by sqrt 2).
func erfcArg(l Lanes, d, x int, k float64) {
	negAbs(l, d, x)
	mk := l.Mark()
	defer l.Release(mk)
	c := l.Tmp()
	l.Const(c, -math.Abs(k))
	l.Div(d, d, c)
	l.Const(c, ErfcBig)
	l.Min(d, d, c)
}

// erfc sets r to erfc(x/k) for k 1 or -Sqrt2 (x/k as plan.EltwiseF64
// rounds it), reading x (which it leaves), within four temporaries
// beside x at once on AVX2, the exps' included. A NaN x gives a value
// the caller replaces (KeepNaN).
func erfc(l Lanes, x, r int, k float64) {
	mk := l.Mark()
	defer l.Release(mk)
	// Step 3 into r. Only a and r are live across the first exp, r
	// across the second.
	a := l.Tmp()
	erfcArg(l, a, x, k)
	mkS := l.Mark()
	s, qa := l.Tmp(), l.Tmp()
	mkT := l.Mark()
	t := l.Tmp()
	l.Mul(s, a, a)
	l.Const(qa, 1)
	l.Div(s, qa, s)
	l.Poly(qa, s, erfcRA)
	l.Poly(t, s, erfcSA)
	l.Div(qa, qa, t)
	l.Poly(t, s, erfcSB)
	l.Poly(r, s, erfcRB)
	l.Div(r, r, t)
	l.Release(mkT)
	c := s
	l.Const(c, ErfcSplit3)
	l.SelLT(r, a, c, qa, r) // q
	h, m := s, qa
	l.Mul(h, a, a)
	l.Const(m, -1)
	l.Mul(m, m, h)    // -h
	l.FMA(h, a, a, m) // l = a^2 - h
	l.Sub(r, r, h)
	l.Const(h, 0.5625)
	l.Sub(r, r, h)
	l.Release(mkS)
	l.Exp(r)
	l.Div(r, r, a)
	l.Mul(a, a, a)
	mkM := l.Mark()
	m = l.Tmp()
	l.Const(m, -1)
	l.Mul(a, m, a) // -h
	l.Release(mkM)
	l.Exp(a)
	l.Mul(r, a, r)
	// Step 2, selected below 1.25.
	erfcArg(l, a, x, k)
	s, p := l.Tmp(), l.Tmp()
	mkQ := l.Mark()
	q := l.Tmp()
	l.Const(s, 1)
	l.Sub(s, a, s)
	l.Poly(p, s, erfcPA)
	l.Poly(q, s, erfcQA)
	l.Div(p, p, q)
	l.Release(mkQ)
	l.Const(s, 1-erx)
	l.Sub(s, s, p)
	l.Const(p, ErfcSplit2)
	l.SelLT(r, a, p, s, r)
	// Step 1, selected below 0.84375.
	z, y := s, p
	mkV := l.Mark()
	v := l.Tmp()
	l.Mul(z, a, a)
	l.Poly(y, z, erfcPP)
	l.Poly(v, z, erfcQQ)
	l.Div(y, y, v)
	cc := z
	l.Const(cc, erfcQuarter)
	l.Sub(cc, a, cc)
	l.Const(v, 0x1p60)
	l.Mul(cc, cc, v)
	l.Const(v, 0)
	l.Max(cc, cc, v)
	l.Const(v, 0.5)
	l.Min(cc, cc, v) // c
	l.Sub(v, a, cc)
	l.FMA(v, a, y, v)
	l.Const(y, 1)
	l.Sub(cc, y, cc)
	l.Sub(cc, cc, v)
	l.Release(mkV)
	l.Const(y, ErfcSplit1)
	l.SelLT(r, a, y, cc, r)
	// Step 4: x/k < 0 where x < 0 (k = 1) or x > 0 (k < 0).
	l.Const(a, 2)
	l.Sub(a, a, r)
	l.Const(y, 0)
	if k > 0 {
		l.SelLT(r, x, y, a, r)
	} else {
		l.SelLT(r, y, x, a, r)
	}
}

// geluErf: (x/2) * erfc(-x/sqrt 2), plan.EltwiseF64's product, with x
// clamped to -MaxFloat64 so that -Inf gives -0 (erfc(+Inf) is 0).
func geluErf(l Lanes, x, r int) {
	erfc(l, x, r, -math.Sqrt2)
	mk := l.Mark()
	defer l.Release(mk)
	c, d := l.Tmp(), l.Tmp()
	l.Const(c, -math.MaxFloat64)
	l.Max(c, x, c)
	l.Const(d, 0.5)
	l.Mul(c, d, c)
	l.Mul(r, c, r)
}

// Erfc is the model of the machine code's erfc (erfc's steps, k = 1) in
// scalar Go, which the tests hold to math.Erfc.
func Erfc(x float64) float64 {
	m := &scalar{v: []float64{x}}
	mk := m.Mark()
	xr := m.Tmp()
	m.Mov(xr, 0)
	erfc(m, xr, 0, 1)
	m.KeepNaN(0, xr)
	m.Release(mk)
	return m.v[0]
}

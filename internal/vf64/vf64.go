// Package vf64 defines the exp and log that the native kernels compute
// in f64 lanes (the Exp and Log post-ops of f64 plans): their constants,
// shared by every instruction set, and Go models of their steps, which
// tests hold to math.Exp and math.Log. The post-ops built on them
// (postops.go, GELUErf's erfc in erfc.go) are written once over Lanes.
//
// Exp(x):
//
//  1. Clamp x to [ExpLo, ExpHi]: e^ExpLo is below half the smallest
//     subnormal and e^ExpHi above MaxFloat64, so the clamp changes no
//     result, and it keeps n below finite (±Inf would give Inf - Inf).
//  2. n = x*log2(e) rounded to nearest even, r = x - n*ln2 in two FMAs
//     (Cody-Waite: n*Ln2Hi is exact, Ln2Hi having 32 significant bits),
//     so |r| <= ln2/2 plus a rounding.
//  3. p = the Taylor polynomial of e^r of degree ExpDegree (its
//     truncation error at ln2/2 is under 0.05 ulp), by Horner's rule
//     with FMAs; the last step is 1 + r*q, so e^0 is exactly 1.
//  4. The result is p*2^n rounded once: AVX-512 by VSCALEFPD; AVX2 and
//     NEON as (p*2^n1)*2^n2 with n1 = floor(n/2), n2 = n - n1, both
//     powers normal (|n1|, |n2| <= 538), so the first product is exact
//     and only the second rounds, to a subnormal, 0 or +Inf too.
//  5. A NaN x gives x back, its bits unchanged.
//
// Log(x):
//
//  1. x = 2^k * m with m in [1, 2) (subnormals scaled by 2^52 first);
//     where m >= sqrt 2, m/2 and k+1, so that f = m - 1 (exact) is in
//     [sqrt(1/2) - 1, sqrt 2 - 1).
//  2. fdlibm's log: s = f/(2+f), R = z*(L1 + z*(L2 + ... z*L7)) with
//     z = s*s, hfsq = f*f/2, and log x = k*Ln2Hi - ((hfsq - (s*(hfsq+R)
//     + k*Ln2Lo)) - f), in FMAs where they fit.
//  3. The specials as math.Log: log(±0) = -Inf, log(x < 0) = NaN (-Inf
//     too), log(+Inf) = +Inf, a NaN gives itself.
//
// Both are within MaxULP float64 ulps of math.Exp and math.Log (vf64's
// tests sweep the models, the native kernels' tests the machine code).
package vf64

import "math"

// MaxULP bounds the distance of Exp and Log from math.Exp and math.Log
// in float64 ulps (the larger of the two ulps where they differ).
const MaxULP = 2

// The exp's constants.
const (
	ExpLo     = -746.0
	ExpHi     = 710.0
	Log2e     = 1.4426950408889634 // log2(e)
	Ln2Hi     = 6.93147180369123816490e-01
	Ln2Lo     = 1.90821492927058770002e-10
	ExpDegree = 13
	// ScaleBias is 2^52 + 1023: n + ScaleBias holds n + 1023 in its low
	// bits (exactly, for |n| < 2^51), which a shift left by 52 moves
	// into the exponent field: 2^n's bits, for n in [-1022, 1023].
	ScaleBias = 0x1p52 + 1023
	MantBits  = 52
)

// ExpPoly are the Taylor coefficients 1/i! of e^r, i = 0..ExpDegree.
var ExpPoly = func() [ExpDegree + 1]float64 {
	var c [ExpDegree + 1]float64
	f := 1.0
	for i := range c {
		if i > 0 {
			f *= float64(i)
		}
		c[i] = 1 / f
	}
	return c
}()

// The log's constants (fdlibm's e_log.c).
const (
	Sqrt2     = math.Sqrt2
	LogDegree = 6 // R's polynomial in z has the coefficients L1..L7: degree 6 in z, times z
)

// LogPoly are L1..L7 of fdlibm's log.
var LogPoly = [LogDegree + 1]float64{
	6.666666666666735130e-01,
	3.999999999940941908e-01,
	2.857142874366239149e-01,
	2.222219843214978396e-01,
	1.818357216161805012e-01,
	1.531383769920937332e-01,
	1.479819860511658591e-01,
}

// LogFixup is VFIXUPIMMPD's table for log: one 4-bit response per class
// of x (bits 4j+3:4j for class j). Classes: 0 QNaN, 1 SNaN, 2 ±0, 3 +1,
// 4 -Inf, 5 +Inf, 6 negative, 7 positive. Responses: 0 keeps the
// computed result, 1 is x itself (a NaN with its bits), 3 the default
// NaN, 4 -Inf, 5 +Inf. log(1) = +0 is computed.
const LogFixup = 1<<0 | 1<<4 | 4<<8 | 0<<12 | 3<<16 | 5<<20 | 3<<24 | 0<<28

// Exp is the model of the machine code's exp (the package doc's steps).
func Exp(x float64) float64 {
	if x != x {
		return x
	}
	x = math.Min(math.Max(x, ExpLo), ExpHi)
	n := math.RoundToEven(x * Log2e)
	r := math.FMA(n, -Ln2Hi, x)
	r = math.FMA(n, -Ln2Lo, r)
	p := horner(ExpPoly[:], r)
	n1 := math.Floor(n * 0.5)
	return p * pow2(n1) * pow2(n-n1)
}

// pow2 is 2^n for an integer n in [-1022, 1023], from its bits as the
// machine code builds them.
func pow2(n float64) float64 {
	return math.Float64frombits(math.Float64bits(n+ScaleBias) << MantBits)
}

// horner is the polynomial with coefficients c (c[0] first) at x by
// Horner's rule with FMAs.
func horner(c []float64, x float64) float64 {
	p := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		p = math.FMA(p, x, c[i])
	}
	return p
}

// Log is the model of the machine code's log (the package doc's steps).
func Log(x float64) float64 {
	switch {
	case x != x:
		return x
	case x == 0:
		return math.Inf(-1)
	case x < 0:
		return math.NaN()
	case math.IsInf(x, 1):
		return x
	}
	m, e := math.Frexp(x) // m in [0.5, 1)
	m, k := 2*m, float64(e-1)
	if m >= Sqrt2 {
		m, k = m*0.5, k+1
	}
	f := m - 1
	s := f / (2 + f)
	z := s * s
	R := horner(LogPoly[:], z) * z
	hfsq := f * f * 0.5
	u := math.FMA(k, Ln2Lo, s*(hfsq+R))
	v := (hfsq - u) - f
	return math.FMA(k, Ln2Hi, -v)
}

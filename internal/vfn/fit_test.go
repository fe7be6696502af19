package vfn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/vfn/internal/minimax"
)

// A polyFit is one of the polynomials of programs.go as the minimax
// problem it solves: the function it stands for, where the program uses
// it, and the weight that turns its error into the error of the
// post-op's result.
type polyFit struct {
	name string
	coef []uint32
	p    minimax.Problem
	// inTurn: the f32 coefficients were rounded in turn, each refit
	// after the ones before it were rounded (minimax.SolveRounded);
	// otherwise the float64 fit was rounded as it is.
	inTurn bool
}

// polyFits returns the fits of programs.go's polynomials, each on the
// interval its program evaluates it on. Those of TanhPoly, Expm1Poly and
// AtanhPoly reach 0, where their weights vanish: whether the interval
// stops short of it (at 1e-4, say) moves no f32 coefficient by more
// than an ulp.
func polyFits() []polyFit {
	tanhSmall := float64(f32(TanhSmallBits))
	k, u0 := float64(f32(GELUErfKBits)), float64(f32(GELUErfU0Bits))
	// GELUErf's polynomials take s = u - U0 for u = K/(2+a), a in
	// [0, GELUErfClamp].
	sLo, sHi := k/(2+GELUErfClamp)-u0, k/2-u0
	return []polyFit{{
		// tanh(a) = a + a^3*P(a^2) for a below TanhSmall: P(s) is
		// (tanh(a)/a - 1)/s, s = a^2. Its error times s is the
		// relative error it causes in tanh (tanh(a) ~ a).
		name: "TanhPoly",
		coef: TanhPoly,
		p: minimax.Problem{F: tanhP, W: identity, Lo: 0, Hi: tanhSmall * tanhSmall,
			Degree: len(TanhPoly) - 1},
	}, {
		// expm1(x) = x + x^2*Q(x) for x in [NegLn2, 0]: Q(x) is
		// (expm1(x) - x)/x^2, and |x| times its error is the relative
		// error it causes in expm1 (expm1(x) ~ x).
		name: "Expm1Poly",
		coef: Expm1Poly,
		p: minimax.Problem{F: expm1Q, W: math.Abs, Lo: float64(f32(NegLn2Bits)), Hi: 0,
			Degree: len(Expm1Poly) - 1},
	}, {
		// 2*atanh(s) = 2s + 2s*w*R(w), w = s^2, s in [0, 1/3]: R(w) is
		// (atanh(s)/s - 1)/w, and w times its error is the relative
		// error it causes in atanh (atanh(s) ~ s).
		name: "AtanhPoly",
		coef: AtanhPoly,
		p:    minimax.Problem{F: atanhR, W: identity, Lo: 0, Hi: 1.0 / 9, Degree: len(AtanhPoly) - 1},
	}, {
		// erfc(a/sqrt2) = u*e^-(a^2/2 + Q): Q's absolute error is the
		// relative error it causes in erfc.
		name:   "GELUErfPoly",
		coef:   GELUErfPoly,
		p:      minimax.Problem{F: geluErfQ(k, u0), Lo: sLo, Hi: sHi, Degree: len(GELUErfPoly) - 1},
		inTurn: true,
	}, {
		// A = 1 - u*Q'(u) scales u's relative rounding error, itself
		// below 2^-23: its absolute error is what matters.
		name: "GELUErfDPoly",
		coef: GELUErfDPoly,
		p:    minimax.Problem{F: geluErfA(k, u0), Lo: sLo, Hi: sHi, Degree: len(GELUErfDPoly) - 1},
	}}
}

func identity(x float64) float64 { return x }

// seriesBelow: under it the targets below use their Taylor series, where
// the closed forms are 0/0 at 0 and lose bits near it (not that the
// loss matters: the weights, which vanish at 0, scale it down to
// float64's rounding). The series' first neglected term is below 1e-11
// of the value there.
const seriesBelow = 1e-3

// tanhP is (tanh(a)/a - 1)/s, s = a^2.
func tanhP(s float64) float64 {
	if s < seriesBelow {
		return -1.0/3 + s*(2.0/15+s*(-17.0/315+s*62.0/2835))
	}
	a := math.Sqrt(s)
	return (math.Tanh(a)/a - 1) / s
}

// expm1Q is (expm1(x) - x)/x^2.
func expm1Q(x float64) float64 {
	if math.Abs(x) < seriesBelow {
		return 1.0/2 + x*(1.0/6+x*(1.0/24+x*(1.0/120+x/720)))
	}
	return (math.Expm1(x) - x) / (x * x)
}

// atanhR is (atanh(s)/s - 1)/w, w = s^2.
func atanhR(w float64) float64 {
	if w < seriesBelow {
		return 1.0/3 + w*(1.0/5+w*(1.0/7+w/9))
	}
	s := math.Sqrt(w)
	return (math.Atanh(s)/s - 1) / w
}

// geluErfQ is Q(s) = -a^2/2 - log(erfc(a/sqrt2)/u), u = s + u0,
// a = k/u - 2. erfc is at least 1e-47 for a up to GELUErfClamp, so its
// log is accurate to float64's rounding: -a^2/2 and the log cancel to
// an absolute error near 1e-14, far below Q's 1e-8.
func geluErfQ(k, u0 float64) func(float64) float64 {
	return func(s float64) float64 {
		u := s + u0
		a := k/u - 2
		return -a*a/2 - math.Log(math.Erfc(a/math.Sqrt2)/u)
	}
}

// geluErfA is A = 1 - u*Q'(u) in closed form: with a = k/u - 2 and
// m(a) = sqrt(2/pi)*e^(-a^2/2)/erfc(a/sqrt2) (d/da of -log erfc(a/sqrt2)),
// Q'(u) = 1/u - (k/u^2)*(m(a) - a), so A = (2 + a)*(m(a) - a).
func geluErfA(k, u0 float64) func(float64) float64 {
	return func(s float64) float64 {
		a := k/(s+u0) - 2
		m := math.Sqrt(2/math.Pi) * math.Exp(-a*a/2) / math.Erfc(a/math.Sqrt2)
		return (2 + a) * (m - a)
	}
}

// fitULPs: a refit f32 coefficient this close to the committed one is
// the same fit. The last coefficients of a fit are the least determined
// (a change of one of them is mostly made up by the others), and the
// fit stops within minimax.Tolerance of optimal, so they may differ by
// an ulp or two.
const fitULPs = 4

// TestFitPolynomials refits every polynomial of programs.go from the
// function it stands for and holds the committed coefficients to the
// refit:
//
//   - No polynomial beats the minimax error: the committed error is at
//     least the fit's lower bound (else the target or the weight here is
//     not the one the coefficients were fit to).
//   - Their error is at most the float64 fit's (plus 0.1%) plus what
//     rounding each coefficient to f32 can add (half an ulp times the
//     largest weighted power of x it multiplies). No fixed factor of
//     the float64 fit's error serves: rounding to f32 costs 38 times
//     that error for Expm1Poly, 4.7 for TanhPoly, 6.5 for AtanhPoly,
//     and 4% more for GELUErfPoly.
//   - The refit, rounded to f32 as the committed ones were, matches each
//     coefficient to fitULPs, or is no better than the committed ones
//     (within 1%: two fits of equal error differ in their least
//     determined coefficients).
//
// With -v it logs the refit coefficients as programs.go spells them, so
// that go test ./internal/vfn -run Fit -v regenerates them (-short skips the
// slow refit of GELUErfPoly).
func TestFitPolynomials(t *testing.T) {
	for _, f := range polyFits() {
		t.Run(f.name, func(t *testing.T) {
			committed := widen(f.coef)
			got, err := minimax.MaxError(f.p, committed)
			if err != nil {
				t.Fatal(err)
			}
			fit, err := minimax.Solve(f.p)
			if err != nil {
				t.Fatal(err)
			}
			fitErr, err := minimax.MaxError(f.p, fit.Coef)
			if err != nil {
				t.Fatal(err)
			}
			if got < fit.LowerBound {
				t.Errorf("committed error %.4g is below the minimax error's lower bound %.4g: the target is not the one fit", got, fit.LowerBound)
			}
			// 0.1% covers fits that stop short of the optimum (by
			// minimax.Tolerance here).
			if bound := fitErr*1.001 + roundingCost(f.p, fit.Coef); got > bound {
				t.Errorf("committed error %.4g is above the float64 fit's %.4g plus f32 rounding, %.4g", got, fitErr, bound)
			}

			refit := fit
			if f.inTurn {
				if testing.Short() {
					t.Skip("refitting in turn takes some seconds")
				}
				refit, err = minimax.SolveRounded(f.p, roundF32)
				if err != nil {
					t.Fatal(err)
				}
			}
			refit32 := make([]float64, len(refit.Coef))
			for j, c := range refit.Coef {
				refit32[j] = roundF32(c)
			}
			refitErr, err := minimax.MaxError(f.p, refit32)
			if err != nil {
				t.Fatal(err)
			}
			var far []string
			for j, c := range refit32 {
				if d := ulpsApart(float32(c), f32(f.coef[j])); d > fitULPs {
					far = append(far, fmt.Sprintf("c%d %d ulps", j, d))
				}
			}
			if len(far) > 0 && refitErr < got*0.99 {
				t.Errorf("the refit is better than the committed coefficients (error %.4g, not %.4g) and differs from them (%s)", refitErr, got, strings.Join(far, ", "))
			}
			t.Logf("committed error %.6g, refit %.6g (float64 fit %.6g, with f32 rounding at most %.6g); refit coefficients apart: %v", got, refitErr, fitErr, fitErr*1.001+roundingCost(f.p, fit.Coef), far)
			t.Logf("%s = []uint32{%s}", f.name, hexF32(refit32))
			if !f.inTurn && testing.Verbose() {
				alt, err := minimax.SolveRounded(f.p, roundF32)
				if err != nil {
					t.Fatal(err)
				}
				altErr, err := minimax.MaxError(f.p, alt.Coef)
				if err != nil {
					t.Fatal(err)
				}
				// Not how the committed ones were made, but what
				// that way would give.
				t.Logf("rounded in turn instead: error %.6g, coefficients %s", altErr, hexF32(alt.Coef))
			}
		})
	}
}

func roundF32(c float64) float64 { return float64(float32(c)) }

// widen returns f32 bit patterns as float64 values (exactly).
func widen(bits []uint32) []float64 {
	c := make([]float64, len(bits))
	for j, b := range bits {
		c[j] = float64(f32(b))
	}
	return c
}

// roundingCost bounds what rounding coef to f32 adds to p's error: half
// an ulp of c_j times max |W(x)*x^j|, summed.
func roundingCost(p minimax.Problem, coef []float64) float64 {
	const n = 4096
	var cost float64
	for j, c := range coef {
		r := float32(c)
		up := math.Nextafter32(r, float32(math.Inf(1))) - r
		down := r - math.Nextafter32(r, float32(math.Inf(-1)))
		halfULP := float64(max(up, down)) / 2
		var worst float64
		for i := range n + 1 {
			x := p.Lo + (p.Hi-p.Lo)*float64(i)/n
			w := 1.0
			if p.W != nil {
				w = p.W(x)
			}
			worst = max(worst, math.Abs(w*math.Pow(x, float64(j))))
		}
		cost += halfULP * worst
	}
	return cost
}

// ulpsApart returns how many f32 values lie from a to b (of one sign).
func ulpsApart(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if math.Signbit(float64(a)) != math.Signbit(float64(b)) {
		return math.MaxInt64
	}
	return max(d, -d)
}

// hexF32 spells coefficients as programs.go does.
func hexF32(coef []float64) string {
	s := make([]string, len(coef))
	for j, c := range coef {
		s[j] = fmt.Sprintf("0x%08x", math.Float32bits(float32(c)))
	}
	return strings.Join(s, ", ")
}

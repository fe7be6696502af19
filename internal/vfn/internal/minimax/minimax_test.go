package minimax

import (
	"math"
	"strings"
	"testing"
)

// expMinimax is the least max error of a polynomial of degree n to e^x
// on [-1, 1] (the equioscillation error E_n, by the Remez exchange in
// 40-digit arithmetic).
var expMinimax = map[int]float64{
	1: 0.2788015857955023,
	2: 0.04501738840281901,
	3: 0.005528370108687589,
	4: 0.0005466676005137979,
	5: 4.520551192611583e-05,
	6: 3.210877103361147e-06,
}

// TestSolveExp fits e^x on [-1, 1] and holds the fit's error, on a dense
// grid, to the known minimax error: the fit runs on discrete points, so
// it can only be slightly worse, never better.
func TestSolveExp(t *testing.T) {
	for deg := 1; deg <= 6; deg++ {
		p := Problem{F: math.Exp, Lo: -1, Hi: 1, Degree: deg}
		fit, err := Solve(p)
		if err != nil {
			t.Fatalf("degree %d: %v", deg, err)
		}
		got, err := MaxError(p, fit.Coef)
		if err != nil {
			t.Fatal(err)
		}
		want := expMinimax[deg]
		if got < want*(1-1e-9) || got > want*1.01 {
			t.Errorf("degree %d: max error %.10g, want %.10g (within 1%%, not below)", deg, got, want)
		}
		if fit.LowerBound > want*(1+1e-9) || fit.MaxError > fit.LowerBound*(1+Tolerance) {
			t.Errorf("degree %d: fit stopped at %.10g with lower bound %.10g; the minimax error is %.10g", deg, fit.MaxError, fit.LowerBound, want)
		}
	}
}

// TestSolveWeighted fits a relative error (weight 1/e^x) and an error
// weighted to vanish at an end, on a one-sided interval: the fit must
// equioscillate with Degree+2 alternating extrema, the minimax
// polynomial's defining property.
func TestSolveWeighted(t *testing.T) {
	for _, p := range []Problem{
		{F: math.Exp, W: func(x float64) float64 { return math.Exp(-x) }, Lo: -1, Hi: 1, Degree: 4},
		{F: math.Cos, W: func(x float64) float64 { return x }, Lo: 0, Hi: 2, Degree: 5},
		{F: math.Log1p, Lo: 0, Hi: 1, Degree: 9},
		{F: func(x float64) float64 { return math.Atan(x) }, Lo: 1e-3, Hi: 1, Degree: 12},
	} {
		fit, err := Solve(p)
		if err != nil {
			t.Fatalf("degree %d on [%v, %v]: %v", p.Degree, p.Lo, p.Hi, err)
		}
		n := alternations(p, fit.Coef, 0.99)
		if n < p.Degree+2 {
			t.Errorf("degree %d on [%v, %v]: error %.3g alternates at %d points, want %d", p.Degree, p.Lo, p.Hi, fit.MaxError, n, p.Degree+2)
		}
	}
}

// alternations counts the points of alternating sign where the weighted
// error reaches frac of its maximum, on a dense grid: a run of one sign
// counts once.
func alternations(p Problem, coef []float64, frac float64) int {
	const n = 1 << 16
	errs := make([]float64, n+1)
	var peak float64
	for i := range errs {
		x := p.Lo + (p.Hi-p.Lo)*float64(i)/n
		w := 1.0
		if p.W != nil {
			w = p.W(x)
		}
		errs[i] = w * (Eval(coef, x) - p.F(x))
		peak = max(peak, math.Abs(errs[i]))
	}
	count, last := 0, 0.0
	for _, e := range errs {
		if math.Abs(e) >= frac*peak && (count == 0 || math.Signbit(e) != math.Signbit(last)) {
			count, last = count+1, e
		}
	}
	return count
}

// TestSolveRounded rounds a fit of e^x weighted by |x| (which, as the
// weights of package vfn's polynomials, vanishes at 0) to multiples of
// 2^-10 in turn. The coefficients must be such multiples; their error
// at least the float64 fit's lower bound, at most the last refit's plus
// what rounding the last coefficient adds, and here well below that of
// the float64 fit rounded at once: the refits make up for the roundings
// before them.
func TestSolveRounded(t *testing.T) {
	const step = 0x1p-10
	round := func(c float64) float64 { return math.Round(c/step) * step }
	p := Problem{F: math.Exp, W: math.Abs, Lo: -1, Hi: 1, Degree: 4}
	fit, err := SolveRounded(p, round)
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range fit.Coef {
		if c != round(c) {
			t.Errorf("c%d = %v is not a multiple of 2^-10", j, c)
		}
	}
	plain, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	once := make([]float64, len(plain.Coef))
	for j, c := range plain.Coef {
		once[j] = round(c)
	}
	got, _ := MaxError(p, fit.Coef)
	onceErr, _ := MaxError(p, once)
	// max |x * x^4| is 1 on [-1, 1]; the grid's peaks may exceed the
	// fit's points' by a little.
	bound := fit.MaxError*1.001 + step/2
	if got < plain.LowerBound || got > bound || got > onceErr/2 {
		t.Errorf("rounded in turn: error %.6g, want at least %.6g (minimax), at most %.6g (last refit and rounding) and half of %.6g (rounded at once)",
			got, plain.LowerBound, bound, onceErr)
	}
}

// TestSolveExact: a polynomial of the fit's degree is its own fit.
func TestSolveExact(t *testing.T) {
	want := []float64{1, -2, 0.5, 3}
	p := Problem{F: func(x float64) float64 { return Eval(want, x) }, Lo: 2, Hi: 5, Degree: 3}
	fit, err := Solve(p)
	if err != nil {
		t.Fatal(err)
	}
	for j, c := range fit.Coef {
		if math.Abs(c-want[j]) > 1e-9 {
			t.Errorf("c%d = %v, want %v", j, c, want[j])
		}
	}
}

// TestMaxError measures a known error: x^2 against 0 with weight 1/2 is
// at most 2 on [-1, 2], at x = 2.
func TestMaxError(t *testing.T) {
	p := Problem{F: func(x float64) float64 { return x * x }, W: func(float64) float64 { return 0.5 }, Lo: -1, Hi: 2}
	got, err := MaxError(p, []float64{0})
	if err != nil || got != 2 {
		t.Errorf("MaxError = %v, %v; want 2", got, err)
	}
}

// TestBadInput: every malformed problem is refused with an error that
// says what is wrong, and nothing panics.
func TestBadInput(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{F: math.Exp, Lo: 0, Hi: 1, Degree: -1}, "degree -1"},
		{Problem{F: math.Exp, Lo: 0, Hi: 1, Degree: MaxDegree + 1}, "degree 13"},
		{Problem{F: math.Exp, Lo: 1, Hi: 1, Degree: 2}, "empty"},
		{Problem{F: math.Exp, Lo: 1, Hi: 0, Degree: 2}, "empty"},
		{Problem{F: math.Exp, Lo: nan, Hi: 1, Degree: 2}, "not finite"},
		{Problem{F: math.Exp, Lo: 0, Hi: inf, Degree: 2}, "not finite"},
		{Problem{Lo: 0, Hi: 1, Degree: 2}, "no target"},
		{Problem{F: math.Log, Lo: 0, Hi: 1, Degree: 2}, "target is -Inf"},
		{Problem{F: func(x float64) float64 { return math.Sqrt(x - 0.5) }, Lo: 0, Hi: 1, Degree: 2}, "target is NaN"},
		{Problem{F: math.Exp, W: func(x float64) float64 { return x }, Lo: -1, Hi: 1, Degree: 2}, "weight is -"},
		{Problem{F: math.Exp, W: func(x float64) float64 { return 1 / x }, Lo: -1, Hi: 1, Degree: 2}, "weight is -"},
		{Problem{F: math.Exp, W: func(float64) float64 { return 0 }, Lo: -1, Hi: 1, Degree: 2}, "0 everywhere"},
		{Problem{F: math.Exp, W: func(x float64) float64 { return max(0, x-0.9999999) }, Lo: -1, Hi: 1, Degree: 2}, "do not determine"},
	} {
		fit, err := Solve(c.p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Solve(degree %d on [%v, %v]) = %v, %v; want an error containing %q", c.p.Degree, c.p.Lo, c.p.Hi, fit.Coef, err, c.want)
		}
		if c.p.Degree >= 0 && c.p.Degree <= MaxDegree && c.want != "do not determine" {
			coef := make([]float64, c.p.Degree+1)
			if _, err := MaxError(c.p, coef); err == nil {
				t.Errorf("MaxError(degree %d on [%v, %v]) gives no error, want one containing %q", c.p.Degree, c.p.Lo, c.p.Hi, c.want)
			}
		}
	}
	if _, err := MaxError(Problem{F: math.Exp, Lo: 0, Hi: 1}, nil); err == nil {
		t.Error("MaxError with no coefficients gives no error")
	}
}

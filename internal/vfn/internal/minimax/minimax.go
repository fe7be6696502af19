// Package minimax fits polynomials that minimize a weighted maximum
// error, and measures that error for given coefficients: the tool behind
// package vfn's polynomials (its fit test refits each of them).
//
// The fit is Lawson's algorithm: a sequence of weighted least-squares
// fits on Chebyshev-distributed points, each point's weight multiplied by
// its error after every fit, so that the weight gathers on the points
// where the error peaks and the fit tends to the minimax polynomial on
// those points. The least-squares solutions and the sign changes of
// their errors also bound the minimax error from below, so a fit knows
// how far from optimal it stops.
package minimax

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MaxDegree bounds the degree: the fits are small dense systems in the
// monomial basis, which past it would be too ill-conditioned for float64.
const MaxDegree = 12

// A Problem is a weighted polynomial approximation: P of degree Degree
// minimizing max |W(x)*(P(x) - F(x))| for x in [Lo, Hi].
type Problem struct {
	F      func(x float64) float64 // the target; finite on [Lo, Hi]
	W      func(x float64) float64 // the weight, >= 0; nil means 1
	Lo, Hi float64
	Degree int
}

// A Fit is a polynomial's coefficients (c0 first) and its weighted max
// error on the fit's points. No polynomial's error there is below
// LowerBound; MaxError is within Tolerance of it unless the fit stalled
// first (see maxIterations).
type Fit struct {
	Coef       []float64
	MaxError   float64
	LowerBound float64
}

const (
	// fitPoints is the number of Chebyshev points the fit runs on: far
	// more than a degree-12 error curve has extrema, so that the peaks
	// between the points exceed the fit's error by little (MaxError on a
	// denser grid tells by how much).
	fitPoints = 4000
	// Tolerance is how far above LowerBound, relative to it, a fit's
	// MaxError may stop: far below what rounding coefficients to f32
	// costs, and tight enough that a refit lands within an ulp or two of
	// the same fit's f32 coefficients.
	Tolerance = 1e-5
	// maxIterations bounds Lawson's loop, which converges linearly: to
	// Tolerance in about 200 iterations for smooth targets. It stops
	// early where stallCheck iterations shrink the gap between MaxError
	// and LowerBound by less than a tenth: the rounding in the target's
	// values or the spacing of the points then bounds it more than the
	// iterations do.
	maxIterations = 2000
	stallCheck    = 100
	// gridPoints is the number of evenly spaced points MaxError checks.
	gridPoints = 1<<16 + 1
)

// Solve fits p by Lawson's algorithm.
func Solve(p Problem) (Fit, error) {
	return solve(p, nil)
}

// SolveRounded fits p with coefficients of the form round gives (f32
// values: func(c float64) float64 { return float64(float32(c)) }),
// rounded in turn: c0 is fit and rounded, then the rest refit with c0
// fixed and c1 rounded, and so on, so that the coefficients after each
// rounding make up for part of its error. Fit.MaxError and LowerBound
// are those of the last refit, before c_Degree's rounding; the rounded
// polynomial's own error is MaxError(p, Fit.Coef).
func SolveRounded(p Problem, round func(float64) float64) (Fit, error) {
	var fit Fit
	var fixed []float64
	for range p.Degree + 1 {
		var err error
		fit, err = solve(p, fixed)
		if err != nil {
			return Fit{}, err
		}
		fixed = append(fixed, round(fit.Coef[len(fixed)]))
	}
	fit.Coef = fixed
	return fit, nil
}

// solve fits p with the first len(fixed) coefficients given.
func solve(p Problem, fixed []float64) (Fit, error) {
	if err := p.check(); err != nil {
		return Fit{}, err
	}
	// The Chebyshev points miss the ends, where a target may still
	// fail: check them too.
	if _, _, err := p.sample([]float64{p.Lo, p.Hi}); err != nil {
		return Fit{}, err
	}
	n, m, k := fitPoints, p.Degree+1, len(fixed)
	xs := chebyshevPoints(p.Lo, p.Hi, n)
	fx, wx, err := p.sample(xs)
	if err != nil {
		return Fit{}, err
	}
	if slices.Max(wx) == 0 {
		return Fit{}, errors.New("minimax: weight is 0 everywhere")
	}
	for i, x := range xs {
		fx[i] -= Eval(fixed, x)
	}
	// The basis is (x/scale)^j, j = k..m-1, with every column at most 1
	// in size; the coefficients are scaled back at the end (exactly, but
	// for rounding: scale^j divides c_j).
	scale := max(math.Abs(p.Lo), math.Abs(p.Hi))
	basis := make([][]float64, m-k) // column j: (x_i/scale)^(k+j)
	for j := range basis {
		basis[j] = make([]float64, n)
		for i, x := range xs {
			basis[j][i] = math.Pow(x/scale, float64(k+j))
		}
	}
	// The weighted error at x is w*(x^k*q(x) - r(x)) with q of degree
	// m-1-k, which is sign(x)^k times that of q fitting r/x^k with the
	// weight w*|x|^k: a plain polynomial fit, whose alternation bound
	// holds (see alternationBound). x = 0 has weight 0 there.
	flip := make([]float64, n)
	for i, x := range xs {
		flip[i] = math.Pow(math.Copysign(1, x), float64(k))
		if k > 0 && x == 0 {
			flip[i] = 0
		}
	}
	lw := make([]float64, n) // Lawson's weights, summing to 1
	for i := range lw {
		lw[i] = 1 / float64(n)
	}
	a := make([][]float64, m-k)
	for j := range a {
		a[j] = make([]float64, n)
	}
	y := make([]float64, n)
	e := make([]float64, n)
	best := Fit{MaxError: math.Inf(1)}
	var lastGap float64
	for it := range maxIterations {
		// The least-squares rows are the points of weight above
		// negligible: a row of weight below 2^-60 of the largest
		// changes the solution below float64's resolution, and it
		// costs most of the time once Lawson's weights have gathered
		// on the error's peaks.
		floor := slices.Max(lw) * 0x1p-60
		rows := 0
		for i := range n {
			if lw[i] <= floor {
				continue
			}
			r := math.Sqrt(lw[i]) * wx[i]
			for j := range a {
				a[j][rows] = basis[j][i] * r
			}
			y[rows] = fx[i] * r
			rows++
		}
		for j := range a {
			a[j] = a[j][:rows]
		}
		c, err := leastSquares(a, y[:rows])
		for j := range a {
			a[j] = a[j][:n]
		}
		if err != nil {
			return Fit{}, err
		}
		var maxErr, sum2 float64
		for i := range n {
			var v float64
			for j := range c {
				v += c[j] * basis[j][i]
			}
			e[i] = wx[i] * (v - fx[i])
			maxErr = max(maxErr, math.Abs(e[i]))
			sum2 += lw[i] * e[i] * e[i]
			e[i] *= flip[i]
		}
		// No polynomial has a smaller lw-weighted mean square error
		// than c, and the mean of the squared errors is at most the
		// largest one's square: so sqrt(sum2) <= the minimax error. It
		// closes in slowly; the alternation bound is tight as soon as
		// the error equioscillates.
		lower := max(math.Sqrt(sum2), alternationBound(e, m-k+1))
		if maxErr < best.MaxError {
			best.Coef, best.MaxError = c, maxErr
		}
		best.LowerBound = max(best.LowerBound, lower)
		gap := best.MaxError - best.LowerBound
		if gap <= best.LowerBound*Tolerance || maxErr == 0 {
			break
		}
		if it%stallCheck == 0 {
			if it > 0 && gap > 0.9*lastGap {
				break
			}
			lastGap = gap
		}
		var total float64
		for i := range n {
			lw[i] *= math.Abs(e[i])
			total += lw[i]
		}
		for i := range n {
			lw[i] /= total
		}
	}
	coef := slices.Clone(fixed)
	for j, c := range best.Coef {
		coef = append(coef, c/math.Pow(scale, float64(k+j)))
	}
	best.Coef = coef
	return best, nil
}

// MaxError returns max |W(x)*(P(x) - F(x))| for P with coefficients coef
// (c0 first, evaluated by Horner's rule in float64; f32 coefficients are
// passed as their exact float64 values) on an evenly spaced grid of
// [Lo, Hi] that includes both ends, far denser than the fit's points.
// The degree is len(coef)-1; p.Degree is not used.
func MaxError(p Problem, coef []float64) (float64, error) {
	p.Degree = len(coef) - 1
	if err := p.check(); err != nil {
		return 0, err
	}
	xs := make([]float64, gridPoints)
	for i := range xs {
		xs[i] = p.Lo + (p.Hi-p.Lo)*float64(i)/float64(gridPoints-1)
	}
	xs[len(xs)-1] = p.Hi
	fx, wx, err := p.sample(xs)
	if err != nil {
		return 0, err
	}
	if slices.Max(wx) == 0 {
		return 0, errors.New("minimax: weight is 0 everywhere")
	}
	var worst float64
	for i, x := range xs {
		worst = max(worst, math.Abs(wx[i]*(Eval(coef, x)-fx[i])))
	}
	return worst, nil
}

// Eval returns the polynomial with coefficients coef (c0 first) at x, by
// Horner's rule.
func Eval(coef []float64, x float64) float64 {
	var v float64
	for j := len(coef) - 1; j >= 0; j-- {
		v = v*x + coef[j]
	}
	return v
}

func (p Problem) check() error {
	switch {
	case p.F == nil:
		return errors.New("minimax: no target function")
	case p.Degree < 0 || p.Degree > MaxDegree:
		return fmt.Errorf("minimax: degree %d is outside [0, %d]", p.Degree, MaxDegree)
	case math.IsNaN(p.Lo) || math.IsNaN(p.Hi) || math.IsInf(p.Lo, 0) || math.IsInf(p.Hi, 0):
		return fmt.Errorf("minimax: interval [%v, %v] is not finite", p.Lo, p.Hi)
	case !(p.Lo < p.Hi):
		return fmt.Errorf("minimax: interval [%v, %v] is empty", p.Lo, p.Hi)
	}
	return nil
}

// sample returns F and W at xs, or an error naming the first point where
// either is not finite or W is negative.
func (p Problem) sample(xs []float64) (fx, wx []float64, err error) {
	fx = make([]float64, len(xs))
	wx = make([]float64, len(xs))
	for i, x := range xs {
		fx[i], wx[i] = p.F(x), 1
		if p.W != nil {
			wx[i] = p.W(x)
		}
		if math.IsNaN(fx[i]) || math.IsInf(fx[i], 0) {
			return nil, nil, fmt.Errorf("minimax: target is %v at x = %v", fx[i], x)
		}
		if !(wx[i] >= 0) || math.IsInf(wx[i], 0) {
			return nil, nil, fmt.Errorf("minimax: weight is %v at x = %v, want finite and >= 0", wx[i], x)
		}
	}
	return fx, wx, nil
}

// alternationBound returns a lower bound on the minimax error from the
// errors e of one polynomial at ordered points: if they alternate in
// sign at need points, each at least b in size, no polynomial of degree
// need-2 has a smaller max error (de la Vallée Poussin), since its
// difference from this one would have to change sign need-1 times. The
// points are the peaks of e's runs of one sign, the smallest dropped
// (at an end alone, else merged with its neighbours of the other sign)
// until need are left; 0 if there are fewer.
func alternationBound(e []float64, need int) float64 {
	var peaks []float64
	for _, v := range e {
		switch n := len(peaks); {
		case v == 0:
		case n > 0 && math.Signbit(v) == math.Signbit(peaks[n-1]):
			if math.Abs(v) > math.Abs(peaks[n-1]) {
				peaks[n-1] = v
			}
		default:
			peaks = append(peaks, v)
		}
	}
	if len(peaks) < need {
		return 0
	}
	for len(peaks) > need {
		k := 0
		for i, v := range peaks {
			if math.Abs(v) < math.Abs(peaks[k]) {
				k = i
			}
		}
		switch {
		case k == 0 || k == len(peaks)-1:
			peaks = append(peaks[:k], peaks[k+1:]...)
		case len(peaks)-need == 1:
			// Dropping an inner peak merges two: drop an end instead,
			// the smaller one, so that the count lands on need.
			if math.Abs(peaks[0]) < math.Abs(peaks[len(peaks)-1]) {
				peaks = peaks[1:]
			} else {
				peaks = peaks[:len(peaks)-1]
			}
		default:
			// Its neighbours share a sign: keep the larger of them.
			if math.Abs(peaks[k-1]) < math.Abs(peaks[k+1]) {
				peaks[k-1] = peaks[k+1]
			}
			peaks = append(peaks[:k], peaks[k+2:]...)
		}
	}
	b := math.Inf(1)
	for _, v := range peaks {
		b = min(b, math.Abs(v))
	}
	return b
}

// chebyshevPoints returns the n Chebyshev points of the first kind
// mapped to [lo, hi], in descending order; they cluster at the ends,
// where a polynomial's error curve changes fastest.
func chebyshevPoints(lo, hi float64, n int) []float64 {
	xs := make([]float64, n)
	for k := range xs {
		xs[k] = (lo+hi)/2 + (hi-lo)/2*math.Cos(math.Pi*(float64(k)+0.5)/float64(n))
	}
	return xs
}

// leastSquares returns c minimizing |A c - y| (A's columns a[j], at
// least as many rows as columns) by Householder QR. a and y are
// overwritten. A column that is (numerically) a combination of the
// others is an error: the fit's points would not determine the
// polynomial.
func leastSquares(a [][]float64, y []float64) ([]float64, error) {
	m, n := len(a), len(y)
	for k := range m {
		col := a[k]
		var norm float64
		for i := k; i < n; i++ {
			norm = math.Hypot(norm, col[i])
		}
		var orig float64
		for i := range n {
			orig = math.Hypot(orig, col[i])
		}
		if norm <= 1e-13*orig || norm == 0 {
			return nil, errors.New("minimax: the fit's points do not determine the polynomial (too few of them have a nonzero weight)")
		}
		// v = col[k:] + sign(col[k])*norm*e1; H = I - 2vv'/v'v maps col[k:]
		// to -sign(col[k])*norm*e1.
		alpha := -math.Copysign(norm, col[k])
		col[k] -= alpha
		var vv float64
		for i := k; i < n; i++ {
			vv += col[i] * col[i]
		}
		reflect := func(x []float64) {
			var d float64
			for i := k; i < n; i++ {
				d += col[i] * x[i]
			}
			f := 2 * d / vv
			for i := k; i < n; i++ {
				x[i] -= f * col[i]
			}
		}
		for j := k + 1; j < m; j++ {
			reflect(a[j])
		}
		reflect(y)
		col[k] = alpha // R's diagonal; the rest of col is no longer needed
	}
	// Back substitution: R c = (Q'y)[:m], R's column j above the
	// diagonal in a[j][:j].
	c := make([]float64, m)
	for k := m - 1; k >= 0; k-- {
		s := y[k]
		for j := k + 1; j < m; j++ {
			s -= a[j][k] * c[j]
		}
		c[k] = s / a[k][k]
	}
	return c, nil
}

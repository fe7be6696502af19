package interp

import "math"

// Max and min as plan.CombineMax and CombineMin order values: a NaN wins
// (the first one met, so its payload is the sequential loop's), +0 is
// above -0, and the result does not depend on the order of the
// elements otherwise.
//
// Most elements are not above the running maximum, so the loops only
// compare, four elements to a branch, and hand the rare rest (a new
// maximum, a NaN) to maxStep. One case passes the compares unseen: a +0
// when the maximum so far is -0 (they compare equal). A maximum of -0 is
// rare, and is then checked for a +0 among the elements (maxOf here,
// fixZeros for the rows, over their whole block). The rows are not taken
// in order either (see exec.rows), so where a row of maxima holds a NaN,
// firstNaNs finds the first one in order.

// maxStep is plan.CombineMax for one element: a NaN a stays, a NaN v
// wins, and +0 is above -0.
func maxStep[F float](a, v F) F {
	switch {
	case a != a, v < a:
		return a
	case v > a, v != v:
		return v
	case v == 0 && !math.Signbit(float64(v)):
		return v
	}
	return a
}

// minStep is plan.CombineMin for one element: a NaN a stays, a NaN v
// wins, and -0 is below +0.
func minStep[F float](a, v F) F {
	switch {
	case a != a, v > a:
		return a
	case v < a, v != v:
		return v
	case v == 0 && math.Signbit(float64(v)):
		return v
	}
	return a
}

// max4 and min4 take four elements, in order, into a.
//
//go:noinline
func max4[F float](a, v0, v1, v2, v3 F) F {
	return maxStep(maxStep(maxStep(maxStep(a, v0), v1), v2), v3)
}

//go:noinline
func min4[F float](a, v0, v1, v2, v3 F) F {
	return minStep(minStep(minStep(minStep(a, v0), v1), v2), v3)
}

// maxOf returns the maximum of m and the elements of x.
func maxOf[F float](m F, x []F) F {
	if m != m {
		return m
	}
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y := x[i : i+4 : i+4]
		if !(y[0] <= m && y[1] <= m && y[2] <= m && y[3] <= m) {
			if m = max4(m, y[0], y[1], y[2], y[3]); m != m {
				return m
			}
		}
	}
	for _, v := range x[i:] {
		m = maxStep(m, v)
	}
	if isZero(m, true) {
		for _, v := range x {
			if isZero(v, false) {
				return v
			}
		}
	}
	return m
}

// minOf returns the minimum of m and the elements of x.
func minOf[F float](m F, x []F) F {
	if m != m {
		return m
	}
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y := x[i : i+4 : i+4]
		if !(y[0] >= m && y[1] >= m && y[2] >= m && y[3] >= m) {
			if m = min4(m, y[0], y[1], y[2], y[3]); m != m {
				return m
			}
		}
	}
	for _, v := range x[i:] {
		m = minStep(m, v)
	}
	if isZero(m, false) {
		for _, v := range x {
			if isZero(v, true) {
				return v
			}
		}
	}
	return m
}

// maxRows takes eight rows of elements into a row of maxima.
func maxRows(acc []float32, x *rows8) {
	n := len(acc)
	x0, x1, x2, x3 := x[0][:n], x[1][:n], x[2][:n], x[3][:n]
	x4, x5, x6, x7 := x[4][:n], x[5][:n], x[6][:n], x[7][:n]
	for j, a := range acc {
		if !(x0[j] <= a && x1[j] <= a && x2[j] <= a && x3[j] <= a &&
			x4[j] <= a && x5[j] <= a && x6[j] <= a && x7[j] <= a) {
			acc[j] = max4(max4(a, x0[j], x1[j], x2[j], x3[j]), x4[j], x5[j], x6[j], x7[j])
		}
	}
}

// maxRow takes one row of elements into a row of maxima.
func maxRow[F float](acc []F, x []F) {
	x = x[:len(acc)]
	for j, a := range acc {
		if v := x[j]; !(v <= a) {
			acc[j] = maxStep(a, v)
		}
	}
}

// minRows takes eight rows of elements into a row of minima.
func minRows(acc []float32, x *rows8) {
	n := len(acc)
	x0, x1, x2, x3 := x[0][:n], x[1][:n], x[2][:n], x[3][:n]
	x4, x5, x6, x7 := x[4][:n], x[5][:n], x[6][:n], x[7][:n]
	for j, a := range acc {
		if !(x0[j] >= a && x1[j] >= a && x2[j] >= a && x3[j] >= a &&
			x4[j] >= a && x5[j] >= a && x6[j] >= a && x7[j] >= a) {
			acc[j] = min4(min4(a, x0[j], x1[j], x2[j], x3[j]), x4[j], x5[j], x6[j], x7[j])
		}
	}
}

// minRow takes one row of elements into a row of minima.
func minRow[F float](acc []F, x []F) {
	x = x[:len(acc)]
	for j, a := range acc {
		if v := x[j]; !(v >= a) {
			acc[j] = minStep(a, v)
		}
	}
}

// isZero reports whether v is a zero of the given sign (true: -0).
func isZero[F float](v F, neg bool) bool {
	return v == 0 && math.Signbit(float64(v)) == neg
}

// fixZeros is the check maxRows and minRows leave to their callers: where
// a maximum is -0 (a minimum +0), an element of the other zero in x
// replaces it. The caller passes every row its maxima took.
func fixZeros(acc []float32, x []float32, isMax bool) {
	x = x[:len(acc)]
	for j, a := range acc {
		if isZero(a, isMax) && isZero(x[j], !isMax) {
			acc[j] = x[j]
		}
	}
}

// hasZeros reports whether some maximum of acc is -0 (minimum +0), so
// that fixZeros must run.
func hasZeros(acc []float32, isMax bool) bool {
	for _, a := range acc {
		if isZero(a, isMax) {
			return true
		}
	}
	return false
}

// hasNaN reports whether some value of acc is a NaN.
func hasNaN(acc []float32) bool {
	for _, a := range acc {
		if a != a {
			return true
		}
	}
	return false
}

// firstNaNs is the check after maxRows and minRows took rows out of
// order: where acc[j] is a NaN, the first NaN of x in the rows' order
// replaces it. The caller passes every row, in order, and seen (false
// to start with) records the outputs already set.
func firstNaNs(acc []float32, x []float32, seen []bool) {
	x, seen = x[:len(acc)], seen[:len(acc)]
	for j, a := range acc {
		if v := x[j]; a != a && v != v && !seen[j] {
			acc[j], seen[j] = v, true
		}
	}
}

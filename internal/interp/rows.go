package interp

import "math"

// The loops that take rows of elements into a row of accumulators, one
// per output: the [O,R,I] walk, where each reduced index brings a whole
// row of Inner elements. Eight rows go in per pass where the combine
// allows (rows8), so each accumulator is loaded and stored once per eight
// elements; every accumulator is its own dependency chain already. Sums
// are taken in pairs in float64 (a pair of f32 values adds almost always
// exactly); products are taken in fours, and a product of four f32
// values cannot overflow or underflow float64.

// rows8 is eight rows of elements, each at least as long as the row of
// accumulators.
type rows8 [8][]float32

// addRows adds eight rows into acc.
func addRows(acc []float64, x *rows8) {
	n := len(acc)
	x0, x1, x2, x3 := x[0][:n], x[1][:n], x[2][:n], x[3][:n]
	x4, x5, x6, x7 := x[4][:n], x[5][:n], x[6][:n], x[7][:n]
	for j := range acc {
		acc[j] += ((float64(x0[j]) + float64(x1[j])) + (float64(x2[j]) + float64(x3[j]))) +
			((float64(x4[j]) + float64(x5[j])) + (float64(x6[j]) + float64(x7[j])))
	}
}

// addRow adds one row into acc.
func addRow[F float](acc []float64, x []F) {
	x = x[:len(acc)]
	for j, v := range x {
		acc[j] += float64(v)
	}
}

// addAbsRows adds |x| of eight rows into acc (on the bits, as sumAbs).
func addAbsRows(acc []float64, x *rows8) {
	n := len(acc)
	u0, u1, u2, u3 := bitsOf(x[0])[:n], bitsOf(x[1])[:n], bitsOf(x[2])[:n], bitsOf(x[3])[:n]
	u4, u5, u6, u7 := bitsOf(x[4])[:n], bitsOf(x[5])[:n], bitsOf(x[6])[:n], bitsOf(x[7])[:n]
	for j := range acc {
		acc[j] += ((abs32(u0[j]) + abs32(u1[j])) + (abs32(u2[j]) + abs32(u3[j]))) +
			((abs32(u4[j]) + abs32(u5[j])) + (abs32(u6[j]) + abs32(u7[j])))
	}
}

// addAbsRow adds |x| of one row into acc.
func addAbsRow(acc []float64, x []float32) {
	u := bitsOf(x)[:len(acc)]
	for j, b := range u {
		acc[j] += abs32(b)
	}
}

// addSquareRows adds x*x of eight rows into acc (exact squares, as in
// sumSquares).
func addSquareRows(acc []float64, x *rows8) {
	n := len(acc)
	x0, x1, x2, x3 := x[0][:n], x[1][:n], x[2][:n], x[3][:n]
	x4, x5, x6, x7 := x[4][:n], x[5][:n], x[6][:n], x[7][:n]
	for j := range acc {
		d0, d1, d2, d3 := float64(x0[j]), float64(x1[j]), float64(x2[j]), float64(x3[j])
		d4, d5, d6, d7 := float64(x4[j]), float64(x5[j]), float64(x6[j]), float64(x7[j])
		acc[j] += ((d0*d0 + d1*d1) + (d2*d2 + d3*d3)) + ((d4*d4 + d5*d5) + (d6*d6 + d7*d7))
	}
}

// addSquareRow adds x*x of one row into acc.
func addSquareRow(acc []float64, x []float32) {
	x = x[:len(acc)]
	for j, v := range x {
		d := float64(v)
		acc[j] += d * d
	}
}

// mulRows multiplies eight rows into acc.
func mulRows(acc []float64, x *rows8) {
	n := len(acc)
	x0, x1, x2, x3 := x[0][:n], x[1][:n], x[2][:n], x[3][:n]
	x4, x5, x6, x7 := x[4][:n], x[5][:n], x[6][:n], x[7][:n]
	for j := range acc {
		p := (float64(x0[j]) * float64(x1[j])) * (float64(x2[j]) * float64(x3[j]))
		q := (float64(x4[j]) * float64(x5[j])) * (float64(x6[j]) * float64(x7[j]))
		acc[j] = acc[j] * p * q
	}
}

// mulRow multiplies one row into acc.
func mulRow[F float](acc []float64, x []F) {
	x = x[:len(acc)]
	for j, v := range x {
		acc[j] *= float64(v)
	}
}

// copyRow sets acc to one row: plan.CombineFirst.
func copyRow(acc []float64, x []float32) {
	x = x[:len(acc)]
	for j, v := range x {
		acc[j] = float64(v)
	}
}

// addExpShiftedRow adds exp(x - shift) of one row into acc, each element
// with its output's shift: the second pass of a shifted log-sum-exp.
func addExpShiftedRow(acc []float64, x []float32, shift []float64) {
	x, shift = x[:len(acc)], shift[:len(acc)]
	for j, v := range x {
		acc[j] += math.Exp(float64(v) - shift[j])
	}
}

package interp

import (
	"math"
	"unsafe"
)

// The loops that reduce one run of elements to a value: sums and
// products in float64, each in four independent chains so that an add
// or multiply does not wait on the one before it (one chain would be
// bound by the add's latency, as a plain Go loop is). Each chain starts
// at +0 (or 1), as the JIT's registers do, so a sum of only -0 values is
// +0.

// float is the element types the loops take: widened src (float32) and
// transformed elements (float64).
type float interface{ ~float32 | ~float64 }

// sumOf returns the sum of x in float64.
func sumOf[F float](x []F) float64 {
	var a0, a1, a2, a3 float64
	for len(x) >= 8 {
		a0 += float64(x[0]) + float64(x[1])
		a1 += float64(x[2]) + float64(x[3])
		a2 += float64(x[4]) + float64(x[5])
		a3 += float64(x[6]) + float64(x[7])
		x = x[8:]
	}
	for _, v := range x {
		a0 += float64(v)
	}
	return (a0 + a1) + (a2 + a3)
}

// sumAbs returns the sum of |x| in float64. |x| clears the sign bit of
// the f32 bits, one integer operation: math.Abs of the float64 takes two
// moves between float and integer registers on amd64.
func sumAbs(x []float32) float64 {
	var a0, a1, a2, a3 float64
	u := bitsOf(x)
	for len(u) >= 8 {
		a0 += abs32(u[0]) + abs32(u[1])
		a1 += abs32(u[2]) + abs32(u[3])
		a2 += abs32(u[4]) + abs32(u[5])
		a3 += abs32(u[6]) + abs32(u[7])
		u = u[8:]
	}
	for _, b := range u {
		a0 += abs32(b)
	}
	return (a0 + a1) + (a2 + a3)
}

// abs32 returns |x| in float64 for the f32 bits b of x.
func abs32(b uint32) float64 { return float64(math.Float32frombits(b &^ (1 << 31))) }

// bitsOf views f32 values as their bits: the same memory.
func bitsOf(x []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// sumSquares returns the sum of x*x in float64. The square of an f32 is
// exact in float64, so a fused multiply-add (which the compiler may use
// on some GOARCHes) rounds exactly as a multiply and an add do.
func sumSquares(x []float32) float64 {
	var a0, a1, a2, a3 float64
	for len(x) >= 8 {
		d0, d1, d2, d3 := float64(x[0]), float64(x[1]), float64(x[2]), float64(x[3])
		d4, d5, d6, d7 := float64(x[4]), float64(x[5]), float64(x[6]), float64(x[7])
		a0 += d0*d0 + d1*d1
		a1 += d2*d2 + d3*d3
		a2 += d4*d4 + d5*d5
		a3 += d6*d6 + d7*d7
		x = x[8:]
	}
	for _, v := range x {
		d := float64(v)
		a0 += d * d
	}
	return (a0 + a1) + (a2 + a3)
}

// prodOf returns the product of x in float64.
func prodOf[F float](x []F) float64 {
	p0, p1, p2, p3 := 1.0, 1.0, 1.0, 1.0
	for len(x) >= 4 {
		p0 *= float64(x[0])
		p1 *= float64(x[1])
		p2 *= float64(x[2])
		p3 *= float64(x[3])
		x = x[4:]
	}
	for _, v := range x {
		p0 *= float64(v)
	}
	return (p0 * p1) * (p2 * p3)
}

// sumExpShifted returns the sum of exp(x - shift) in float64: the second
// pass of a shifted log-sum-exp.
func sumExpShifted(x []float32, shift float64) float64 {
	var a0, a1 float64
	for len(x) >= 2 {
		a0 += math.Exp(float64(x[0]) - shift)
		a1 += math.Exp(float64(x[1]) - shift)
		x = x[2:]
	}
	for _, v := range x {
		a0 += math.Exp(float64(v) - shift)
	}
	return a0 + a1
}

// Package vexp describes the vector exp that the emitters (amd64, arm64)
// generate for the Exp post-op, once: its constants, and Model, the same
// steps in scalar Go, which is the algorithm's executable specification.
//
// The algorithm (in the manner of oneDNN's jit eltwise exp, with its
// range made exact down to the subnormals):
//
//  1. Clamp x to [Lo, Hi]. Below Lo the result rounds to +0 and above Hi
//     it overflows to +Inf, so the clamp changes no result; it bounds n
//     below and takes the infinities into the ordinary path.
//  2. n = round(x * log2(e)), to nearest even.
//  3. r = x - n*ln2 in two FMAs (Cody and Waite): Ln2Hi is ln2 rounded
//     to f32 and x - n*Ln2Hi is exact (|n| <= 150, |r| < 1/2), so all of
//     the error is the second, tiny product's rounding.
//  4. p = Poly(r), a degree-6 minimax polynomial for e^r on
//     [-ln2/2, ln2/2] (relative to e^r), by Horner's rule with FMAs.
//  5. The result is p * 2^n1 * 2^n2 with n1 = n>>1 and n2 = n - n1, each
//     power built in the exponent bits of an f32. One power 2^n would
//     not do: n runs from -150 to 128, past the normal exponents at both
//     ends. Split, both halves are normal, the first product is exact,
//     and the second rounds once: to +Inf above the f32 range, and to
//     the right subnormal (not a flush to zero) below the normal one.
//  6. A NaN x is returned as it is (the same bits), as plan.Eltwise does.
//
// The emitters' results are within one f32 ulp of float32(math.Exp(x))
// (plan.Eltwise) for every f32 x; their tests sweep the f32 bit patterns.
package vexp

import "math"

// The constants as f32 bit patterns, the form the emitters broadcast.
const (
	LoBits     = 0xc2d00000 // -104: e^-104 < 2^-150, rounds to +0
	HiBits     = 0x42b19999 // 88.8: e^88.8 > MaxFloat32, +Inf
	Log2eBits  = 0x3fb8aa3b // log2(e)
	NegLn2Hi   = 0xbf317218 // -ln2 rounded to f32
	NegLn2Lo   = 0x3102e308 // -(ln2 - Ln2Hi), rounded to f32
	OneBits    = 0x3f800000 // 1.0: Poly's c0, and the exponent bias 127<<23
	MantBits   = 23         // the exponent field's shift
	PolyDegree = 6
)

// Poly holds the polynomial's coefficients c0..c6 as f32 bits: c0 = 1, so
// that exp(0) is exactly 1.
var Poly = [PolyDegree + 1]uint32{
	OneBits, 0x3f800001, 0x3f000000, 0x3e2aa9bd, 0x3d2aaa34, 0x3c0954e9, 0x3ab6d7a9,
}

// Model computes e^x by the emitters' steps, rounding every step to f32
// (an FMA once, FMA32).
func Model(x float32) float32 {
	if x != x {
		return x
	}
	x = min(max(x, f32(LoBits)), f32(HiBits))
	n := float32(math.RoundToEven(float64(x * f32(Log2eBits))))
	r := FMA32(n, f32(NegLn2Hi), x)
	r = FMA32(n, f32(NegLn2Lo), r)
	p := f32(Poly[PolyDegree])
	for k := PolyDegree - 1; k >= 0; k-- {
		p = FMA32(p, r, f32(Poly[k]))
	}
	n1 := int32(n) >> 1
	n2 := int32(n) - n1
	return p * pow2(n1) * pow2(n2)
}

// pow2 returns 2^n for a normal exponent n (-126 <= n <= 127), built in
// the exponent bits as the emitters build it.
func pow2(n int32) float32 { return f32(uint32(n)<<MantBits + OneBits) }

func f32(b uint32) float32 { return math.Float32frombits(b) }

package arm64

import (
	"math"

	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The f64 exp and log of the native kernel's epilogue (package vf64's
// algorithms: its doc says why each step is there), the steps of
// amd64's AVX2 code in two f64 lanes: 2^n and the split of x from the
// integer lanes.

// Encodings of the 2D ops the exp and log use that golang-asm does not
// spell for 2D lanes.
const (
	opFMLA2D = 0x4E60CC00 // Vd.2D += Vn.2D * Vm.2D, rounded once
	opSUB2D  = 0x6EE08400 // Vd.2D = Vn.2D - Vm.2D (integer)
	opADD2D  = 0x4EE08400 // Vd.2D = Vn.2D + Vm.2D (integer)
)

// shl2D encodes SHL Vd.2D, Vn.2D, #sh (0 <= sh <= 63).
func shl2D(d, n, sh int) uint32 { return 0x4F405400 | uint32(sh)<<16 | uint32(n&31)<<5 | uint32(d&31) }

// sshr2D and ushr2D encode SSHR and USHR Vd.2D, Vn.2D, #sh (1 <= sh
// <= 64): immh:immb holds 128 - sh.
func sshr2D(d, n, sh int) uint32 {
	return 0x4F000400 | uint32(128-sh)<<16 | uint32(n&31)<<5 | uint32(d&31)
}
func ushr2D(d, n, sh int) uint32 {
	return 0x6F000400 | uint32(128-sh)<<16 | uint32(n&31)<<5 | uint32(d&31)
}

// const64In returns a register holding the 64-bit pattern p in both
// lanes: a pooled constant if there is (or can be) one, else scratch,
// set to it, which the caller has free.
func (n *nativeGen) const64In(p uint64, scratch int) int {
	for _, s := range n.consts {
		if s.bits == p {
			return s.reg
		}
	}
	if constLo+len(n.consts) < constHi {
		return n.vconst64(p)
	}
	n.bcast64(scratch, p)
	return scratch
}

// f64In is const64In of the float64 v.
func (n *nativeGen) f64In(v float64, scratch int) int {
	return n.const64In(math.Float64bits(v), scratch)
}

// hornerF64 is horner in f64 lanes: the polynomial with coefficients
// coeffs at x in the temporaries p and q, returned with the result in
// the first.
func (n *nativeGen) hornerF64(coeffs []float64, x, p, q int) (int, int) {
	d := len(coeffs) - 1
	n.vmov(p, n.f64In(coeffs[d], p))
	for i := d - 1; i >= 0; i-- {
		n.vmov(q, n.f64In(coeffs[i], q))
		n.fop(opFMLA2D, q, p, x) // q = c_i + p*x
		p, q = q, p
	}
	return p, q
}

// expF64 sets both f64 lanes of r to e^r (vf64.Exp's steps), in four
// temporaries and the constants; a NaN lane keeps its bits.
func (n *nativeGen) expF64(r int) {
	mk := n.Mark()
	defer n.Release(mk)
	orig, k, p, q := n.Tmp(), n.Tmp(), n.Tmp(), n.Tmp()

	n.vmov(orig, r)
	n.fop(opFMAX2D, r, r, n.f64In(vf64.ExpLo, k))
	n.fop(opFMIN2D, r, r, n.f64In(vf64.ExpHi, k))
	n.fop(opFMUL2D, k, r, n.f64In(vf64.Log2e, k))
	n.word(rr(opFRINTN2D, k, k))
	n.fop(opFMLA2D, r, k, n.f64In(-vf64.Ln2Hi, p)) // r += k * -ln2hi
	n.fop(opFMLA2D, r, k, n.f64In(-vf64.Ln2Lo, p))

	p, q = n.hornerF64(vf64.ExpPoly[:], r, p, q)

	// 2^k1 in q and 2^k2 in k, k1 = floor(k/2) (an arithmetic shift of
	// the integer), k2 = k - k1.
	n.word(rr(opFCVTZS2D, k, k)) // exact: k is an integer
	n.word(sshr2D(q, k, 1))
	n.fop(opSUB2D, k, k, q)
	n.word(shl2D(q, q, vf64.MantBits))
	n.word(shl2D(k, k, vf64.MantBits))
	one := n.f64In(1, r) // r is free until the product; 1's bits add the bias
	n.fop(opADD2D, q, q, one)
	n.fop(opADD2D, k, k, one)
	n.fop(opFMUL2D, r, p, q)
	n.fop(opFMUL2D, r, r, k)

	// NaN lanes (orig != orig) take orig back, bits and all.
	n.fop(opFCMEQ2D, q, orig, orig)
	n.vop(arm64.AVBIF, arr16B, r, orig, q)
}

// logF64 sets both f64 lanes of r to log(r) (vf64.Log's steps), in six
// temporaries and the constants.
func (n *nativeGen) logF64(r int) { n.logF64Of(r, true) }

// logF64Of is logF64, but for specials false leaves the specials (zeros,
// negative x, +Inf, NaN) to garbage and takes a temporary fewer, the
// copy of x they need: the log of an x in [1, 2] (vf64.Lanes.LogUnit).
func (n *nativeGen) logF64Of(r int, specials bool) {
	mk := n.Mark()
	defer n.Release(mk)
	orig := -1
	if specials {
		orig = n.Tmp()
		n.vmov(orig, r)
	}
	k, p, s, q, c := n.Tmp(), n.Tmp(), n.Tmp(), n.Tmp(), n.Tmp()

	// A subnormal x scaled by 2^52, k's start (-52 or 0) in p.
	n.fop(opFCMGT2D, p, n.f64In(0x1p-1022, c), r) // 2^-1022 > x
	n.fop(opFMUL2D, k, r, n.f64In(0x1p52, c))
	n.vop(arm64.AVBIT, arr16B, r, k, p)
	n.fop(opAND, p, p, n.f64In(-52, c))
	// The exponent field less the bias, as f64.
	n.word(ushr2D(k, r, vf64.MantBits))
	n.fop(opSUB2D, k, k, n.const64In(1023, c))
	n.word(rr(opSCVTF2D, k, k))
	n.fop(opFADD2D, k, k, p)
	// The significand in [1, 2), halved where it is sqrt 2 or more.
	n.fop(opAND, r, r, n.const64In(1<<52-1, c))
	n.fop(opORR, r, r, n.f64In(1, c))
	n.fop(opFCMGE2D, p, r, n.f64In(vf64.Sqrt2, c))
	n.fop(opFMUL2D, s, r, n.f64In(0.5, c))
	n.vop(arm64.AVBIT, arr16B, r, s, p)
	n.fop(opAND, p, p, n.f64In(1, c))
	n.fop(opFADD2D, k, k, p)

	n.fop(opFSUB2D, r, r, n.f64In(1, c)) // f = m - 1
	n.fop(opFADD2D, s, r, n.f64In(2, c))
	n.fop(opFDIV2D, s, r, s) // s = f / (2+f)
	n.fop(opFMUL2D, c, s, s) // z = s*s
	q, p = n.hornerF64(vf64.LogPoly[:], c, q, p)
	n.fop(opFMUL2D, q, q, c) // R
	n.fop(opFMUL2D, p, r, r)
	n.fop(opFMUL2D, p, p, n.f64In(0.5, c)) // hfsq
	n.fop(opFADD2D, q, q, p)
	n.fop(opFMUL2D, q, q, s)
	n.fop(opFMLA2D, q, k, n.f64In(vf64.Ln2Lo, c)) // q += k * ln2lo
	n.fop(opFSUB2D, p, p, q)
	n.fop(opFSUB2D, r, r, p)                      // -v = f - (hfsq - q)
	n.fop(opFMLA2D, r, k, n.f64In(vf64.Ln2Hi, c)) // k*ln2hi - v

	// The specials: -Inf at ±0, NaN below, x itself at +Inf or a NaN.
	if !specials {
		return
	}
	n.word(rr(opFCMLE02D, p, orig))
	n.vop(arm64.AVBIT, arr16B, r, n.f64In(math.Inf(-1), c), p)
	n.word(rr(opFCMLT02D, p, orig))
	n.vop(arm64.AVBIT, arr16B, r, n.f64In(math.NaN(), c), p)
	n.fop(opFCMGT2D, p, orig, n.f64In(math.MaxFloat64, c))
	n.vop(arm64.AVBIT, arr16B, r, orig, p)
	n.fop(opFCMEQ2D, p, orig, orig)
	n.vop(arm64.AVBIF, arr16B, r, orig, p)
}

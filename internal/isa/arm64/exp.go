package arm64

import (
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// exp sets every lane of r to e^r by package vexp's algorithm (its doc
// says why each step is there), the same steps as amd64's exp, in four
// temporaries and the constants.
func (g *gen) exp(r int) {
	mk := g.Mark()
	defer g.Release(mk)
	g.expWith(r, g.Tmp(), g.Tmp(), g.Tmp(), g.Tmp())
}

// expWith is exp in the scratch registers orig, n, p, q the caller
// gives; with orig -1 a NaN lane's result is some NaN (the clamp's FMIN
// and FMAX carry it) rather than x's bits. Constants that are not
// hoisted are built in whichever of these registers is free at that
// step (constIn), so the exp never needs another temporary.
func (g *gen) expWith(r, orig, n, p, q int) {
	nan := orig >= 0
	if nan {
		g.vmov(orig, r)
	}
	g.fop(opFMIN, r, r, g.constIn(vexp.HiBits, n))
	g.fop(opFMAX, r, r, g.constIn(vexp.LoBits, n))
	g.fop(opFMUL, n, r, g.constIn(vexp.Log2eBits, n))
	g.word(rr(opFRINTN, n, n))
	g.vop(arm64.AVFMLA, arr4S, r, n, g.constIn(vexp.NegLn2Hi, p)) // r += n * -ln2hi
	g.vop(arm64.AVFMLA, arr4S, r, n, g.constIn(vexp.NegLn2Lo, p))

	p, q = g.horner(vexp.Poly[:], r, p, q)

	// 2^n1 in q and 2^n2 in n.
	g.word(rr(opFCVTNS, n, n))
	g.word(sshr(q, n, 1))
	g.vop(arm64.AVSUB, arr4S, n, n, q)
	g.vshift(arm64.AVSHL, q, q, vexp.MantBits)
	g.vshift(arm64.AVSHL, n, n, vexp.MantBits)
	one := g.constIn(vexp.OneBits, r) // r is free until the product
	g.vop(arm64.AVADD, arr4S, q, q, one)
	g.vop(arm64.AVADD, arr4S, n, n, one)
	g.fop(opFMUL, r, p, q)
	g.fop(opFMUL, r, r, n)

	// NaN lanes (orig != orig) take orig back, bits and all.
	if nan {
		g.fop(opFCMEQ, q, orig, orig)
		g.vop(arm64.AVBIF, arr16B, r, orig, q)
	}
}

// constIn returns a register holding bits in every lane: the hoisted
// constant if there is (or can be) one, else scratch, set to it, which
// the caller has free.
func (g *gen) constIn(bits uint32, scratch int) int {
	if g.isHoisted(bits) || constLo+len(g.consts) < constHi {
		return g.vconst(bits)
	}
	g.setConst(scratch, bits)
	return scratch
}

// expForSum sets every lane of r to e^r by package vexp's exp for sums
// (its doc says why it may be cheaper than exp), in three temporaries
// and the constants. FMIN and FMAX return a NaN operand, so the clamp
// keeps a NaN x and arithmetic carries it to the result.
func (g *gen) expForSum(r int) { g.expForSumInto(r, -1) }

// expForSumInto is expForSum, and with acc >= 0 it adds e^r into
// accumulator acc instead, clobbering r: the last product, p * 2^n, is
// exact (package vexp's step 4), so one FMLA gives the bits of the
// product and then the add.
func (g *gen) expForSumInto(r, acc int) {
	mk := g.Mark()
	defer g.Release(mk)
	n, p, q := g.Tmp(), g.Tmp(), g.Tmp()

	g.withConst(vexp.HiBits, func(c int) { g.fop(opFMIN, r, r, c) })
	g.withConst(vexp.SumLoBits, func(c int) { g.fop(opFMAX, r, r, c) })
	g.withConst(vexp.Log2eBits, func(c int) { g.fop(opFMUL, r, r, c) }) // t
	g.word(rr(opFRINTM, n, r))                                          // floor(t)
	g.fop(opFSUB, r, r, n)                                              // f = t - n

	p, _ = g.horner(vexp.SumPoly[:], r, p, q)

	// 2^n, n in [-126, 128], in n's exponent bits (n = 128: +Inf's).
	g.withConst(vexp.SumScaleBits, func(c int) { g.fop(opFADD, n, n, c) }) // n + 127 in the low bits
	g.vshift(arm64.AVSHL, n, n, vexp.MantBits)
	if acc >= 0 {
		g.vop(arm64.AVFMLA, arr4S, acc, p, n) // acc += p * 2^n
		return
	}
	g.fop(opFMUL, r, p, n)
}

// expShifted sets every lane of r, a softmax's x - m (at most 0, -Inf
// or a NaN), to e^r by the exp for sums, and -Inf to +0 exactly (see
// kernelshape.NormEmitter's ExpShifted), as amd64's AVX2 code does: no
// clamp (r is at most 0), and the lanes below -87 set to +0 at the end by
// a mask, whatever the arithmetic made of them. FCMGT is false for a NaN,
// which the arithmetic carries, so it stays a NaN. Four temporaries and
// the constants.
func (g *gen) expShifted(r int) {
	mk := g.Mark()
	defer g.Release(mk)
	n, p, q, below := g.Tmp(), g.Tmp(), g.Tmp(), g.Tmp()

	g.withConst(vexp.SumLoBits, func(c int) { g.fop(opFCMGT, below, c, r) }) // -87 > x
	g.withConst(vexp.Log2eBits, func(c int) { g.fop(opFMUL, r, r, c) })      // t
	g.word(rr(opFRINTM, n, r))                                               // floor(t)
	g.fop(opFSUB, r, r, n)                                                   // f = t - n

	p, _ = g.horner(vexp.SumPoly[:], r, p, q)

	g.withConst(vexp.SumScaleBits, func(c int) { g.fop(opFADD, n, n, c) }) // n + 127 in the low bits
	g.vshift(arm64.AVSHL, n, n, vexp.MantBits)
	g.fop(opFMUL, r, p, n)
	g.fop(opBIC, r, r, below) // +0 below the clamp
}

// horner computes the polynomial with coefficients coeffs (c0 first) at
// x, by Horner's rule, in the temporaries p and q, and returns them with
// the result in the first: FMLA accumulates into its destination, so
// each step starts from the next coefficient in the other register and
// the two swap.
func (g *gen) horner(coeffs []uint32, x, p, q int) (int, int) {
	d := len(coeffs) - 1
	g.constInto(p, coeffs[d])
	for i := d - 1; i >= 0; i-- {
		g.constInto(q, coeffs[i])
		g.vop(arm64.AVFMLA, arr4S, q, p, x) // q = c_i + p*x
		p, q = q, p
	}
	return p, q
}

// withConst calls f with a register holding bits in every lane: a
// hoisted constant while the slots last, else a temporary freed after f,
// so that a long run of constants never exhausts the temporaries.
func (g *gen) withConst(bits uint32, f func(c int)) {
	mk := g.Mark()
	f(g.vconst(bits))
	g.Release(mk)
}

// constInto sets d to bits in every lane: a copy of the hoisted constant
// if there is (or can be) one, else built in d itself.
func (g *gen) constInto(d int, bits uint32) {
	if g.isHoisted(bits) || constLo+len(g.consts) < constHi {
		g.vmov(d, g.vconst(bits))
		return
	}
	g.setConst(d, bits)
}

// isHoisted reports whether bits is a hoisted constant already.
func (g *gen) isHoisted(bits uint32) bool {
	for _, s := range g.consts {
		if s.bits == twice(bits) {
			return true
		}
	}
	return false
}

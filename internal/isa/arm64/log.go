package arm64

import (
	"github.com/gdnn/gdnn/internal/vlog"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// log sets every lane of r to log(r) by package vlog's algorithm (its doc
// says why each step is there), the same steps as amd64's AVX2 log, in
// four temporaries and the constants.
func (g *gen) log(r int) { g.logOf(r, false) }

// logSum is log for lanes that are each at least 1 or a NaN (a
// softmax's sum of exps): it leaves out the steps that only a
// subnormal, zero or negative x needs, whose selects would change
// nothing there, so the bits are log's.
func (g *gen) logSum(r int) { g.logOf(r, true) }

func (g *gen) logOf(r int, atLeastOne bool) {
	mk := g.Mark()
	defer g.Release(mk)
	orig, k, p, q := g.Tmp(), g.Tmp(), g.Tmp(), g.Tmp()

	g.vmov(orig, r)
	if !atLeastOne {
		// Subnormal x scaled by 2^23 in r, k's start (-23 or 0) in q.
		g.withConst(vlog.MinNormBits, func(c int) { g.fop(opFCMGT, q, c, r) }) // 2^-126 > x
		g.withConst(vlog.Scale23Bits, func(c int) { g.fop(opFMUL, p, r, c) })
		g.vop(arm64.AVBIT, arr16B, r, p, q)
		g.withConst(vlog.NegScaleBits, func(c int) { g.vop(arm64.AVAND, arr16B, q, q, c) })
	}

	g.withConst(vlog.OffBits, func(c int) { g.vop(arm64.AVSUB, arr4S, r, r, c) })
	g.word(sshr(k, r, vlog.MantBits))
	g.word(rr(opSCVTF, k, k))
	if !atLeastOne {
		g.fop(opFADD, k, k, q)
	}
	g.withConst(vlog.MantMask, func(c int) { g.vop(arm64.AVAND, arr16B, r, r, c) })
	g.withConst(vlog.OffBits, func(c int) { g.vop(arm64.AVADD, arr4S, r, r, c) })
	g.withConst(vlog.OneBits, func(c int) { g.fop(opFSUB, r, r, c) }) // r = m - 1

	p, q = g.horner(vlog.Poly[:], r, p, q)
	g.fop(opFMUL, p, p, r)
	g.fop(opFMUL, p, p, r)
	g.withConst(vlog.Ln2LoBits, func(c int) { g.vop(arm64.AVFMLA, arr4S, p, k, c) }) // p += k * ln2lo
	g.fop(opFADD, r, r, p)
	g.withConst(vlog.Ln2HiBits, func(c int) { g.vop(arm64.AVFMLA, arr4S, r, k, c) }) // r += k * ln2hi

	// The specials, from orig: x <= 0 gives -Inf, x < 0 a NaN, and +Inf
	// or a NaN (not below +Inf) itself, bits and all.
	if !atLeastOne {
		g.word(rr(opFCMLE0, q, orig))
		g.withConst(vlog.NegInfBits, func(c int) { g.vop(arm64.AVBIT, arr16B, r, c, q) })
		g.word(rr(opFCMLT0, q, orig))
		g.withConst(vlog.NaNBits, func(c int) { g.vop(arm64.AVBIT, arr16B, r, c, q) })
	}
	g.withConst(vlog.InfBits, func(c int) { g.fop(opFCMGT, q, c, orig) }) // +Inf > x
	g.vop(arm64.AVBIF, arr16B, r, orig, q)
}

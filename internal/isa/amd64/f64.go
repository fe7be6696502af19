package amd64

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Post-ops that plan.Eltwise evaluates in float64 (HardSigmoid,
// HardSwish, Pow) are evaluated in float64 here too, with the same
// operations in the same order, so that the f32 results are bit-identical
// rather than within an ulp: the lanes are widened to two registers of
// f64, worked on, and narrowed back with one rounding, as float32(...)
// does.

// constF64 broadcasts the float64 v into every f64 lane of r.
func (g *gen) constF64(r int, v float64) {
	g.op(x86.AMOVQ, imm(int64(math.Float64bits(v))), reg(rScratch))
	g.op(x86.AVMOVQ, reg(rScratch), g.xr(r))
	g.op(x86.AVBROADCASTSD, g.xr(r), g.vr(r))
}

// inF64 widens the f32 lanes of r to f64 in two registers, calls f on
// each (f leaves its f64 result in the register d it is given and may
// use s, which is r, free until the results are narrowed back into it:
// one temporary fewer, which an AVX2 kernel keeping its running totals'
// address in one needs), and narrows the results back into r, rounding
// to nearest even.
func (g *gen) inF64(r int, f func(d, s int)) {
	mk := g.Mark()
	defer g.Release(mk)
	lo, hi := g.Tmp(), g.Tmp()
	if g.avx512 {
		g.op(x86.AVCVTPS2PD, g.hr(r), g.vr(lo))
		g.op(x86.AVEXTRACTF32X8, imm(1), g.vr(r), g.hr(hi))
		g.op(x86.AVCVTPS2PD, g.hr(hi), g.vr(hi))
	} else {
		g.op(x86.AVCVTPS2PD, g.xr(r), g.vr(lo))
		g.op(x86.AVEXTRACTF128, imm(1), g.vr(r), g.xr(hi))
		g.op(x86.AVCVTPS2PD, g.xr(hi), g.vr(hi))
	}
	f(lo, r)
	f(hi, r)
	if g.avx512 {
		g.op(x86.AVCVTPD2PS, g.vr(lo), g.hr(r))
		g.op(x86.AVCVTPD2PS, g.vr(hi), g.hr(hi))
		g.op(x86.AVINSERTF32X8, imm(1), g.hr(hi), g.vr(r), g.vr(r))
	} else {
		g.op(x86.AVCVTPD2PSY, g.vr(lo), g.xr(r))
		g.op(x86.AVCVTPD2PSY, g.vr(hi), g.xr(hi))
		g.op(x86.AVINSERTF128, imm(1), g.xr(hi), g.vr(r), g.vr(r))
	}
}

// hardSigmoid: v = alpha*x + beta (the product is exact in f64, the sum
// rounds once), clamped to [0, 1] keeping NaN and -0 as clamp01 does.
func (g *gen) hardSigmoid(op plan.PostOp, r int) {
	g.inF64(r, func(d, c int) { g.hardSigmoidF64(op, d, c) })
}

// hardSigmoidF64 is hardSigmoid's steps on the f64 lanes of d (c is
// scratch): plan.EltwiseF64's HardSigmoid, bit for bit.
func (g *gen) hardSigmoidF64(op plan.PostOp, d, c int) {
	g.constF64(c, float64(op.Alpha))
	g.op(x86.AVMULPD, g.vr(c), g.vr(d), g.vr(d))
	g.constF64(c, float64(op.Beta))
	g.op(x86.AVADDPD, g.vr(c), g.vr(d), g.vr(d))
	// VMAXPD/VMINPD return the second source (v) for NaN and for
	// equal zeros: max(0, v) then min(1, v) is "v < 0: 0; v > 1: 1".
	g.zero(c)
	g.op(x86.AVMAXPD, g.vr(d), g.vr(c), g.vr(d))
	g.constF64(c, 1)
	g.op(x86.AVMINPD, g.vr(d), g.vr(c), g.vr(d))
}

// hardSwish: v = x/6 + 0.5; v <= 0 (x <= -3): -0; v >= 1: x; else x*v.
// NaN stays NaN (every compare is false and x*v is NaN).
func (g *gen) hardSwish(r int) {
	g.inF64(r, func(d, c int) { g.hardSwishF64(d, c) })
}

// hardSwishF64 is hardSwish's steps on the f64 lanes of d (c is
// scratch): plan.EltwiseF64's HardSwish, bit for bit.
func (g *gen) hardSwishF64(d, c int) {
	mk := g.Mark()
	defer g.Release(mk)
	v := g.Tmp()
	g.constF64(c, 6)
	g.op(x86.AVDIVPD, g.vr(c), g.vr(d), g.vr(v))
	g.constF64(c, 0.5)
	g.op(x86.AVADDPD, g.vr(c), g.vr(v), g.vr(v))
	g.constF64(c, 1)
	if g.avx512 {
		k := kreg(6)
		// d = v >= 1 ? d : d*v
		g.op(x86.AVCMPPD, imm(29), g.vr(c), g.vr(v), k) // GE_OQ
		g.op(x86.AKNOTB, k, k)
		g.op(x86.AVMULPD, g.vr(v), g.vr(d), k, g.vr(d))
		// d = v <= 0 ? -0 : d; an ordered compare keeps NaN
		g.zero(c)
		g.op(x86.AVCMPPD, imm(18), g.vr(c), g.vr(v), k) // LE_OQ
		g.constF64(c, math.Copysign(0, -1))
		g.op(x86.AVMOVAPD, g.vr(c), k, g.vr(d))
		return
	}
	m := g.Tmp()
	g.op(x86.AVCMPPD, imm(29), g.vr(c), g.vr(v), g.vr(m)) // v >= 1
	g.op(x86.AVMULPD, g.vr(v), g.vr(d), g.vr(c))          // c = d*v
	g.op(x86.AVBLENDVPD, g.vr(m), g.vr(d), g.vr(c), g.vr(d))
	g.zero(c)
	g.op(x86.AVCMPPD, imm(22), g.vr(c), g.vr(v), g.vr(m)) // !(v <= 0), NaN included
	g.constF64(c, math.Copysign(0, -1))
	g.op(x86.AVBLENDVPD, g.vr(m), g.vr(d), g.vr(c), g.vr(d))
}

// pow: x^beta for ops.PowBetas by plan.Eltwise's steps. 0 gives 1 (a
// NaN stays itself), 1 leaves x, 2 is one product in f32 (exact in f64,
// so the same rounding); the others run in f64 lanes.
func (g *gen) pow(beta float32, r int) {
	x := g.vr(r)
	switch beta {
	case 1:
		return
	case 2:
		g.op(x86.AVMULPS, x, x, x)
		return
	case 0:
		mk := g.Mark()
		defer g.Release(mk)
		t, s := g.Tmp(), g.Tmp()
		g.constF32(t, 1)
		g.keepNaN(g.vr(t), x, g.vr(s))
		g.op(x86.AVMOVAPS, g.vr(t), x)
		return
	}
	g.inF64(r, func(d, c int) { g.powF64(beta, d, c) })
}

// powF64 sets the f64 lanes of d to d^beta for beta 3, -2, -1, 0.5 and
// -0.5 (c is scratch), by plan.EltwiseF64's steps, bit for bit.
func (g *gen) powF64(beta float32, d, c int) {
	switch beta {
	case 3:
		g.op(x86.AVMULPD, g.vr(d), g.vr(d), g.vr(c)) // c = d*d
		g.op(x86.AVMULPD, g.vr(d), g.vr(c), g.vr(d)) // d = (d*d)*d
	case -2:
		g.op(x86.AVMULPD, g.vr(d), g.vr(d), g.vr(d))
		fallthrough
	case -1:
		g.constF64(c, 1)
		g.op(x86.AVDIVPD, g.vr(d), g.vr(c), g.vr(d)) // d = 1/d
	case 0.5, -0.5:
		g.sqrtPow(d, c)
		if beta < 0 {
			g.constF64(c, 1)
			g.op(x86.AVDIVPD, g.vr(d), g.vr(c), g.vr(d))
		}
	}
}

// sqrtPow sets the f64 lanes of d to x^0.5 as IEEE pow has it: the
// square root, but +0 for -0 (adding +0 does that) and +Inf for -Inf
// (where the root is a NaN); c is scratch. 1/d after it is x^-0.5,
// +Inf at either zero and +0 at -Inf.
func (g *gen) sqrtPow(d, c int) {
	mk := g.Mark()
	defer g.Release(mk)
	g.constF64(c, math.Inf(-1))
	if g.avx512 {
		k := kreg(6)
		g.op(x86.AVCMPPD, imm(0), g.vr(c), g.vr(d), k) // EQ_OQ: d == -Inf
		g.op(x86.AVSQRTPD, g.vr(d), g.vr(d))
		g.zero(c)
		g.op(x86.AVADDPD, g.vr(c), g.vr(d), g.vr(d))
		g.constF64(c, math.Inf(1))
		g.op(x86.AVMOVAPD, g.vr(c), k, g.vr(d))
		return
	}
	m := g.Tmp()
	g.op(x86.AVCMPPD, imm(0), g.vr(c), g.vr(d), g.vr(m))
	g.op(x86.AVSQRTPD, g.vr(d), g.vr(d))
	g.zero(c)
	g.op(x86.AVADDPD, g.vr(c), g.vr(d), g.vr(d))
	g.constF64(c, math.Inf(1))
	g.op(x86.AVBLENDVPD, g.vr(m), g.vr(c), g.vr(d), g.vr(d)) // +Inf where d was -Inf
}

package arm64

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Post-ops that plan.Eltwise evaluates in float64 (HardSigmoid,
// HardSwish, Pow) are evaluated in float64 here too, with the same
// operations in the same order, so that the f32 results are bit-identical
// rather than within an ulp: the four lanes are widened to two registers of two f64 lanes,
// worked on, and narrowed back with one rounding, as float32(...) does.
// FMAX/FMIN are not used to clamp: they order -0 below +0, where the
// reference keeps a -0 (it only replaces values below 0 or above 1), so
// the clamps compare and select, as Clamp does in f32.

// constF64 broadcasts the float64 v into both f64 lanes of r.
func (g *gen) constF64(r int, v float64) { g.bcast64(r, math.Float64bits(v)) }

// inF64 widens the f32 lanes of r to f64 in two temporaries, calls f on
// each (f leaves its f64 result in the register d it is given and may
// clobber s, which is r, free until the results are narrowed back into
// it), and narrows with FPCR's rounding, nearest even.
func (g *gen) inF64(r int, f func(d, s int)) {
	mk := g.Mark()
	defer g.Release(mk)
	lo, hi := g.Tmp(), g.Tmp()
	g.word(rr(opFCVTL2D, lo, r))
	g.word(rr(opFCVTL22D, hi, r))
	f(lo, r)
	f(hi, r)
	g.word(rr(opFCVTN2D, r, lo))
	g.word(rr(opFCVTN22D, r, hi))
}

// hardSigmoid: v = alpha*x + beta (the product is exact in f64, the sum
// rounds once), then clamp01: v < 0 becomes +0, v > 1 becomes 1, and
// anything else (NaN, -0, 0 and 1 themselves) stays.
func (g *gen) hardSigmoid(op plan.PostOp, r int) {
	g.inF64(r, func(d, c int) { g.hardSigmoidF64(op, d, c) })
}

// hardSigmoidF64 is hardSigmoid's steps on the f64 lanes of d (c is
// scratch): plan.EltwiseF64's HardSigmoid, bit for bit.
func (g *gen) hardSigmoidF64(op plan.PostOp, d, c int) {
	mk := g.Mark()
	defer g.Release(mk)
	m := g.Tmp()
	g.constF64(c, float64(op.Alpha))
	g.fop(opFMUL2D, d, d, c)
	g.constF64(c, float64(op.Beta))
	g.fop(opFADD2D, d, d, c)
	g.word(rr(opFCMLT02D, m, d)) // v < 0 (ordered, so not -0)
	g.fop(opBIC, d, d, m)
	g.constF64(c, 1)
	g.fop(opFCMGT2D, m, d, c) // v > 1
	g.vop(arm64.AVBIT, arr16B, d, c, m)
}

// hardSwish: v = x/6 + 0.5; v >= 1: x itself; v <= 0 (x <= -3): -0;
// else x*v. NaN stays NaN (both compares are false and x*v is NaN).
func (g *gen) hardSwish(r int) {
	g.inF64(r, func(d, c int) { g.hardSwishF64(d, c) })
}

// hardSwishF64 is hardSwish's steps on the f64 lanes of d (c is
// scratch): plan.EltwiseF64's HardSwish, bit for bit.
func (g *gen) hardSwishF64(d, c int) {
	mk := g.Mark()
	defer g.Release(mk)
	v, m := g.Tmp(), g.Tmp()
	g.constF64(c, 6)
	g.fop(opFDIV2D, v, d, c)
	g.constF64(c, 0.5)
	g.fop(opFADD2D, v, v, c)
	g.constF64(c, 1)
	g.fop(opFCMGE2D, m, v, c) // v >= 1
	g.fop(opFMUL2D, c, d, v)
	g.vop(arm64.AVBIF, arr16B, d, c, m) // d where v >= 1, else x*v
	g.word(rr(opFCMLE02D, m, v))        // v <= 0, -0 included
	g.constF64(c, math.Copysign(0, -1))
	g.vop(arm64.AVBIT, arr16B, d, c, m) // -0 where v <= 0
}

// pow: x^beta for ops.PowBetas by plan.Eltwise's steps. 0 gives 1 (a
// NaN stays itself), 1 leaves x, 2 is one product in f32 (exact in f64,
// so the same rounding); the others run in f64 lanes.
func (g *gen) pow(beta float32, r int) {
	switch beta {
	case 1:
		return
	case 2:
		g.fop(opFMUL, r, r, r)
		return
	case 0:
		mk := g.Mark()
		defer g.Release(mk)
		m := g.Tmp()
		g.fop(opFCMEQ, m, r, r) // not a NaN
		g.vop(arm64.AVBIT, arr16B, r, g.vconst(math.Float32bits(1)), m)
		return
	}
	g.inF64(r, func(d, c int) { g.powF64(beta, d, c) })
}

// powF64 sets the f64 lanes of d to d^beta for beta 3, -2, -1, 0.5 and
// -0.5 (c is scratch), by plan.EltwiseF64's steps, bit for bit.
func (g *gen) powF64(beta float32, d, c int) {
	switch beta {
	case 3:
		g.fop(opFMUL2D, c, d, d) // c = d*d
		g.fop(opFMUL2D, d, c, d) // d = (d*d)*d
	case -2:
		g.fop(opFMUL2D, d, d, d)
		fallthrough
	case -1:
		g.constF64(c, 1)
		g.fop(opFDIV2D, d, c, d) // d = 1/d
	case 0.5, -0.5:
		g.sqrtPow(d, c)
		if beta < 0 {
			g.constF64(c, 1)
			g.fop(opFDIV2D, d, c, d)
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
	m := g.Tmp()
	g.constF64(c, math.Inf(-1))
	g.fop(opFCMEQ2D, m, d, c) // d == -Inf
	g.word(rr(opFSQRT2D, d, d))
	g.constF64(c, 0)
	g.fop(opFADD2D, d, d, c)
	g.constF64(c, math.Inf(1))
	g.vop(arm64.AVBIT, arr16B, d, c, m) // +Inf where d was -Inf
}

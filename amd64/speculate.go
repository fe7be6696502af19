package amd64

import (
	"github.com/gdnn/gdnn/jit/kernelshape"
	"github.com/gdnn/gdnn/jit/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// NaN-free max and min (AVX-512).
//
// An exact max or min has to carry a NaN through every combine, and
// AVX-512 has no one instruction that does: VRANGEPS orders the zeros
// (+0 above -0) but takes a quiet NaN for a missing value, so rangeExact
// adds an unordered compare and a fix-up of the NaN lanes, and the
// fix-up sits on the accumulator's dependency chain beside VRANGEPS.
// Data with a NaN in it is rare, so a max or min kernel is emitted twice:
//
//   - first NaN-free code, where every combine is VRANGEPS alone, exact
//     whenever neither side is NaN, and an unordered compare, off the
//     chain, ORs the lanes where a NaN is into K0 (rangeFast; whole f32
//     src vectors from memory are compared two at a time, rangePaired);
//   - then the exact code, the same kernel as without speculation.
//
// The NaN-free code ends by testing K0: zero means no NaN met any
// combine, so every result is the exact one, and the kernel returns;
// otherwise it jumps to the exact code, which runs the whole call again
// from the argument block (its address kept in K5 for that) and
// overwrites every output the NaN-free code wrote. A call with a NaN in
// its data costs about two calls.
//
// Running the call again is safe because a kernel reads nothing it
// wrote before it writes it again: src and the binary operands never
// overlap dst (jit.Run refuses it), except an operand that is dst itself
// (the sum post-op), which the first run would have overwritten; plans
// with such an operand are not speculated (speculates). A row-by-row
// plan (rowbyrow.go) does read its dst partials, but only after writing
// them in the same run: the exact code starts again from row 0, which
// it stores combined with the identity before any row reads it.

// Registers of NaN-free code: K0 gathers the NaN lanes, K4 takes each
// unordered compare before it is ORed in (never the scratch opmasks K6
// and K7: a check inserted at a branch must not clobber a mask that is
// live across it), K5 keeps the argument block's address for the exact
// code (so masks are hoisted into K1-K3 only), and Z31 holds a src
// vector whose NaN check is pending (rangePaired), so temporaries end
// at Z30.
const (
	kNaN     = 0
	kCheck   = 4
	kArgs    = 5
	rPending = 31
)

// speculates reports whether pl is emitted as NaN-free code followed by
// exact code under options o.
func speculates(pl *plan.Plan, o Options) bool {
	c := pl.Reduction.Combine
	return o.AVX512 && (c == plan.CombineMax || c == plan.CombineMin) && !pl.HasDstOperand()
}

// emitSpeculating generates pl as NaN-free code followed by the exact code
// for the same plan. The exact code is left out when the NaN-free code
// returns without a test (a plan with nothing to compute). It returns
// nil when the NaN-free code cannot be generated (it has fewer
// registers): then the exact code alone is the kernel.
func emitSpeculating(pl *plan.Plan, o Options) *gen {
	g := newGen(pl, o)
	g.nanFree, g.kLast, g.tmpHi = true, kCheck-1, rPending
	kernelshape.Generate(pl, g)
	if g.err != nil {
		return nil
	}
	if g.exact == nil {
		return g
	}
	g.Place(g.exact)
	g.op(x86.AKMOVQ, kreg(kArgs), reg(rDI))
	e := newGenOn(g.asm, pl, o)
	kernelshape.Generate(pl, e)
	if e.err != nil {
		g.fail(e.err)
	}
	g.usesTotals = g.usesTotals || e.usesTotals
	return g
}

// nanFreePrologue starts NaN-free code: no NaN seen yet, and the
// argument block's address kept for the exact code.
func (g *gen) nanFreePrologue() {
	g.op(x86.AKMOVQ, reg(rDI), kreg(kArgs))
	g.op(x86.AKXORW, kreg(kNaN), kreg(kNaN), kreg(kNaN))
}

// nanFreeReturn ends NaN-free code: to the exact code when a NaN met a
// combine.
func (g *gen) nanFreeReturn() {
	g.checkPending()
	g.exact = g.NewLabel()
	g.op(x86.AKORTESTW, kreg(kNaN), kreg(kNaN))
	g.Jump(x86.AJNE, g.exact)
}

// rangeFast sets x = x max/min y (y a register or memory, read under the
// opmask mask when not nil) by VRANGEPS alone, and ORs the lanes where
// either side is NaN into K0: exact when no lane is (see rangeExact for
// the immediate). x stays a register and y is not written.
func (g *gen) rangeFast(k plan.Kind, y, x obj.Addr, mask *obj.Addr) {
	ctl := rangeCtl(k)
	if mask == nil {
		g.op(x86.AVCMPPS, imm(3), y, x, kreg(kCheck))
		g.op(x86.AVRANGEPS, imm(ctl), y, x, x)
	} else {
		g.op(x86.AVCMPPS, imm(3), y, x, *mask, kreg(kCheck))
		g.op(x86.AVRANGEPS, imm(ctl), y, x, *mask, x)
	}
	g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
}

// rangePaired is rangeFast for a whole vector of f32 src in memory, with
// one unordered compare for every two vectors: the first of a pair is
// loaded into Z31 and combined, and the second is compared with it (a
// compare is unordered when either side is NaN). A vector still waiting
// for its pair is checked alone at the next branch or label (see Jump
// and Place), so every control-flow edge leaves nothing pending and Z31
// is never reloaded before its check.
func (g *gen) rangePaired(acc int, addr obj.Addr) {
	ctl := rangeCtl(g.rangeKind())
	p, x := g.vr(rPending), g.vr(acc)
	if !g.pending {
		g.op(x86.AVMOVUPS, addr, p)
		g.op(x86.AVRANGEPS, imm(ctl), p, x, x)
		g.pending = true
		return
	}
	g.op(x86.AVCMPPS, imm(3), addr, p, kreg(kCheck))
	g.op(x86.AVRANGEPS, imm(ctl), addr, x, x)
	g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
	g.pending = false
}

// checkPending checks a src vector left waiting by rangePaired on its own.
func (g *gen) checkPending() {
	if !g.pending {
		return
	}
	p := g.vr(rPending)
	g.op(x86.AVCMPPS, imm(3), p, p, kreg(kCheck))
	g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
	g.pending = false
}

// Jump and Place are the assembler's, after checking a pending vector:
// every branch and label of the generated code passes through them.
func (g *gen) Jump(as obj.As, label *obj.Prog) *obj.Prog {
	g.checkPending()
	return g.asm.Jump(as, label)
}

func (g *gen) Place(label *obj.Prog) {
	g.checkPending()
	g.asm.Place(label)
}

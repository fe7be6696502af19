package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// NaN-free max and min.
//
// An exact max or min has to carry a NaN through every combine, and
// neither ISA has one instruction that does. AVX-512's VRANGEPS orders
// the zeros (+0 above -0) but takes a quiet NaN for a missing value, so
// rangeExact adds an unordered compare and a fix-up of the NaN lanes,
// and the fix-up sits on the accumulator's dependency chain beside
// VRANGEPS; AVX2's exact max takes five instructions (minMax). Data with
// a NaN in it is rare, so a max (or on AVX-512 a min) kernel is emitted
// twice:
//
//   - first NaN-free code, where every combine is one instruction, exact
//     whenever neither side is NaN, and an unordered compare, off the
//     chain, ORs the lanes where a NaN is into a flag: on AVX-512 each
//     combine is VRANGEPS and the flag is K0 (rangeFast; whole f32 src
//     vectors from memory are compared two at a time, rangePaired); on
//     AVX2 each combine is VMAXPS and the flag is Y13 (maxFast; whole src
//     vectors of any type are compared two at a time, maxPaired);
//   - then the exact code, the same kernel as without speculation.
//
// In AVX-512 kernels of f32 plans read from memory on Zen cores
// (Conf.Watch) each src vector is added into a watch accumulator, Z30,
// instead (rangeWatched): the sum of the src is NaN when a NaN is in
// it, and a sum that found both infinities is too, which costs that call
// its exact run and nothing else (the native kernel's f64 max and min
// watch the same way, nativespec.go). Their row sweeps (Conf.Paced: one
// accumulator, one vector per iteration) have no second vector to pair
// a compare with, and a compare and a KORW per vector cost them their
// pace (docs/PERFORMANCE-log.md, "Max and min rows paced to memory").
//
// VMAXPS also returns its second source when both are zeros, so AVX2's
// NaN-free max can give -0 where +0 is right; it never gives +0 where -0
// is, nor a wrong non-zero. Every output is compared with -0 before its
// finalize, and every row-by-row partial once all rows are in, and a
// match sets the flag too (negZeroCheck): an output of -0, rare as it
// is, is taken from the exact code. AVX2's min keeps its exact
// three instructions: its NaN-free form would give +0 where -0 is right,
// and +0 outputs, which a test would have to send to the exact code, are
// common (the minimum of non-negative data). Nor does AVX2 speculate on
// a max of 16-bit src (or of its magnitudes), but row by row: its rows
// and column blocks are exact as words (words.go), which need more
// registers than NaN-free code has.
//
// The NaN-free code ends by testing the flag: zero means no NaN met any
// combine (and no -0 was written), so every result is the exact one, and
// the kernel returns; otherwise it jumps to the exact code, which runs
// the whole call again from the argument block (its address kept in K5
// or X12 for that) and overwrites every output the NaN-free code wrote.
// A call with a NaN in its data costs about two calls.
//
// Running the call again is safe because a kernel reads nothing it
// wrote before it writes it again: src and the binary operands never
// overlap dst (jit.Run refuses it), except an operand that is dst itself
// (the sum post-op), which the first run would have overwritten; plans
// with such an operand are not speculated (speculates). A row-by-row
// plan (rowbyrow.go) does read its dst partials, but only after writing
// them in the same run: the exact code starts again from row 0, which
// it stores combined with the identity before any row reads it.

// Registers of AVX-512 NaN-free code: K0 gathers the NaN lanes, K4 takes
// each unordered compare before it is ORed in (never the scratch opmasks
// K6 and K7: a check inserted at a branch must not clobber a mask that is
// live across it), K5 keeps the argument block's address for the exact
// code (so masks are hoisted into K1-K3 only), and Z31 holds a src
// vector whose NaN check is pending (rangePaired), so temporaries end
// at Z30; in code with a watch accumulator (rangeWatched, and the native
// kernel's f64 loadNaNFree), Z30 is it and temporaries end at Z29.
const (
	kNaN     = 0
	kCheck   = 4
	kArgs    = 5
	rPending = 31
	rWatch   = 30
)

// Registers of AVX2 NaN-free code: Y13 gathers the NaN lanes and the -0
// outputs, X12 keeps the argument block's address and Y11 holds a src
// vector whose NaN check is pending (maxPaired), so temporaries end at
// Y10 (Y14 and Y15 hold tail masks, as in every AVX2 kernel).
const (
	yNaN     = 13
	yArgs    = 12
	yPending = 11
)

// emitSpeculating generates pl as NaN-free code followed by the exact code
// for the same plan. The exact code is left out when the NaN-free code
// returns without a test (a plan with nothing to compute). It returns
// nil when the NaN-free code cannot be generated (it has fewer
// registers): then the exact code alone is the kernel.
func emitSpeculating(pl *plan.Plan, c Conf) *gen {
	g := newGenConf(newAsm(), pl, c)
	g.nanFree = true
	if g.avx512 {
		g.kLast, g.tmpHi = kCheck-1, rPending
		if g.conf.Watch {
			g.watch, g.tmpHi = true, rWatch
		}
	} else {
		g.tmpHi = yPending
	}
	kernelshape.Generate(pl, g)
	if g.Err() != nil {
		return nil
	}
	if g.exact == nil {
		return g
	}
	g.Place(g.exact)
	if g.avx512 {
		g.op(x86.AKMOVQ, kreg(kArgs), reg(rDI))
	} else {
		g.op(x86.AVMOVQ, g.xr(yArgs), reg(rDI))
	}
	e := newGenConf(g.asm, pl, c)
	kernelshape.Generate(pl, e)
	if e.Err() != nil {
		g.Fail(e.Err())
	}
	g.usesTotals = g.usesTotals || e.usesTotals
	return g
}

// nanFreePrologue starts NaN-free code: no NaN seen yet, and the
// argument block's address kept for the exact code.
func (g *gen) nanFreePrologue() {
	if !g.avx512 {
		g.op(x86.AVMOVQ, reg(rDI), g.xr(yArgs))
		g.zero(yNaN)
		return
	}
	g.op(x86.AKMOVQ, reg(rDI), kreg(kArgs))
	g.op(x86.AKXORW, kreg(kNaN), kreg(kNaN), kreg(kNaN))
	if g.watch {
		g.zero(rWatch)
	}
}

// nanFreeReturn ends NaN-free code: to the exact code when a NaN met a
// combine.
func (g *gen) nanFreeReturn() {
	g.checkPending()
	g.exact = g.NewLabel()
	if g.watch {
		g.op(g.unordCompare(), imm(3), g.vr(rWatch), g.vr(rWatch), kreg(kCheck))
		g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
	}
	if g.avx512 {
		g.op(x86.AKORTESTW, kreg(kNaN), kreg(kNaN))
	} else {
		g.op(x86.AVPTEST, g.vr(yNaN), g.vr(yNaN))
	}
	g.Jump(x86.AJNE, g.exact)
}

// maxFast sets r = max(r, s) by VMAXPS alone (AVX2), and ORs the lanes
// where s is NaN into Y13, comparing s with itself into s, which combine
// may clobber: no temporary, so a combine in NaN-free code needs no more
// registers than in the exact code. r holds a NaN only after an s that
// was NaN, so s alone is checked. Exact when no lane is NaN, but for the
// sign of a zero (see negZeroCheck).
func (g *gen) maxFast(r, s int) {
	x, y := g.vr(r), g.vr(s)
	g.op(x86.AVMAXPS, y, x, x)
	g.op(x86.AVCMPPS, imm(3), y, y, y)
	g.op(x86.AVPOR, y, g.vr(yNaN), g.vr(yNaN))
}

// maxPaired is maxFast for a whole vector of src (AVX2), with one
// unordered compare for every two vectors, as rangePaired: the first of
// a pair is loaded (and transformed) into Y11 and combined, and the
// second is compared with it. f32 src without a transform is combined
// and compared straight from memory.
func (g *gen) maxPaired(dt dtypes.DataType, acc int, addr obj.Addr) {
	p, x := g.vr(yPending), g.vr(acc)
	if !g.pending {
		g.load(dt, yPending, addr, g.V)
		g.transform(yPending)
		g.op(x86.AVMAXPS, p, x, x)
		g.pending = true
		return
	}
	mk := g.Mark()
	u := g.vr(g.Tmp())
	y := addr
	if dt != dtypes.F32 || g.red.Transform != plan.TransformNone {
		t := g.Tmp()
		g.load(dt, t, addr, g.V)
		g.transform(t)
		y = g.vr(t)
	}
	g.op(x86.AVCMPPS, imm(3), y, p, u)
	g.op(x86.AVMAXPS, y, x, x)
	g.op(x86.AVPOR, u, g.vr(yNaN), g.vr(yNaN))
	g.Release(mk)
	g.pending = false
}

// pairFast combines e into even and o into odd by VMAXPS (AVX2) or
// VRANGEPS (AVX-512) alone, with one unordered compare of e and o for
// both, as maxPaired and rangePaired compare two vectors; o is
// clobbered.
func (g *gen) pairFast(even, odd, e, o int) {
	if g.avx512 {
		ctl := imm(rangeCtl(g.rangeKind()))
		g.op(x86.AVCMPPS, imm(3), g.vr(o), g.vr(e), kreg(kCheck))
		g.op(x86.AVRANGEPS, ctl, g.vr(e), g.vr(even), g.vr(even))
		g.op(x86.AVRANGEPS, ctl, g.vr(o), g.vr(odd), g.vr(odd))
		g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
		return
	}
	g.op(x86.AVMAXPS, g.vr(e), g.vr(even), g.vr(even))
	g.op(x86.AVMAXPS, g.vr(o), g.vr(odd), g.vr(odd))
	g.op(x86.AVCMPPS, imm(3), g.vr(o), g.vr(e), g.vr(o))
	g.op(x86.AVPOR, g.vr(o), g.vr(yNaN), g.vr(yNaN))
}

// negZeroCheck ORs the lanes of r that hold -0 into Y13 (AVX2 NaN-free
// code), so that a -0 maxFast may have given for +0 is never written.
func (g *gen) negZeroCheck(r int) {
	mk := g.Mark()
	t := g.Tmp()
	g.constant(t, 0x80000000)
	g.op(x86.AVPCMPEQD, g.vr(r), g.vr(t), g.vr(t))
	g.op(x86.AVPOR, g.vr(t), g.vr(yNaN), g.vr(yNaN))
	g.Release(mk)
}

// rangeFast sets x = x max/min y (y a register or memory, read under the
// opmask mask when not nil) by VRANGEPS alone, and ORs the lanes where
// either side is NaN into K0: exact when no lane is (see rangeExact for
// the immediate). x stays a register and y is not written.
func (g *gen) rangeFast(k ops.Kind, y, x obj.Addr, mask *obj.Addr) {
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
	if g.watch {
		g.rangeWatched(acc, addr)
		return
	}
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

// rangeWatched is rangeFast for a whole vector of f32 src in memory,
// checked by adding it into the watch accumulator Z30, which
// nanFreeReturn tests once: the vector is loaded into Z31, combined, and
// added.
func (g *gen) rangeWatched(acc int, addr obj.Addr) {
	p, x := g.vr(rPending), g.vr(acc)
	g.op(x86.AVMOVUPS, addr, p)
	g.op(x86.AVRANGEPS, imm(rangeCtl(g.rangeKind())), p, x, x)
	g.op(x86.AVADDPS, p, g.vr(rWatch), g.vr(rWatch))
}

// checkPending checks a src vector left waiting by rangePaired or
// maxPaired on its own.
func (g *gen) checkPending() {
	if !g.pending {
		return
	}
	g.pending = false
	cmp := g.unordCompare()
	if !g.avx512 {
		mk := g.Mark()
		p, u := g.vr(yPending), g.vr(g.Tmp())
		g.op(cmp, imm(3), p, p, u)
		g.op(x86.AVPOR, u, g.vr(yNaN), g.vr(yNaN))
		g.Release(mk)
		return
	}
	p := g.vr(rPending)
	g.op(cmp, imm(3), p, p, kreg(kCheck))
	g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
}

// unordCompare is the compare of the NaN checks in the code's lanes: an
// f64 NaN's upper half is an f32 NaN, but so is an infinity's, so f64
// lanes are compared as f64.
func (g *gen) unordCompare() obj.As {
	if g.f64 {
		return x86.AVCMPPD
	}
	return x86.AVCMPPS
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

package amd64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Long sums are cut into runs (kernelshape.Runs): after each run, every
// group of accumulators is summed into its first register, added into a
// running total (one vector per group) and cleared. The totals live in
// temporaries when enough are free beside what the sweep needs, so that
// a fold is a few register adds; else in the LongArgs block (at
// register tot), so that no kernel gives up accumulators for them, and
// a fold costs a load-add and a store per group.

// totalSpare is how many temporaries a sweep keeps free beside totals
// held in registers: bf16 pair loads take four (their two constants and
// a pair), packed rows and 16-bit widening fewer.
const totalSpare = 4

// reserveTotals prepares the running totals' address when the plan sums
// (no other combine loses precision with the length) and its sums may be
// cut (kernelshape.MayCut): a general register holds it when the
// registers can spare one beside every loop counter the kernel may need
// (kept and reduced loops, and four more: the Inner or group loop, the
// sweep, the cut and a kept chunk loop). Else the argument block's
// address is kept in the top temporary vector register, taken for good,
// and each access to totals in memory loads their address into the
// scratch register first (loadTotalsAddr): binary operands' pointers
// and deep loop nests must not cost a long sum its cut. Called by
// Prologue while DI still points at the argument block.
func (g *gen) reserveTotals() {
	if !g.add || !kernelshape.MayCut(g.pl.N) {
		return
	}
	need := len(g.pl.Outer) + len(g.pl.Reduced) + 4
	if len(g.gprFree) >= need+1 {
		g.tot = g.Counter()
		g.op(x86.ALEAQ, mem(rDI, plan.ArgTotals), reg(g.tot))
		return
	}
	g.tmpHi--
	g.totArgs = g.tmpHi
	g.op(x86.AVMOVQ, reg(rDI), g.xr(g.totArgs))
}

// RunsOf chooses the cut of a sum over the reduced loops outer around a
// sweep loop of iters iterations, perIter adds into each accumulator
// per iteration (no cut without the totals' address, see reserveTotals).
func (g *gen) RunsOf(outer []plan.Loop, iters, perIter int64) kernelshape.Runs {
	if g.tot == 0 && g.totArgs == 0 {
		return kernelshape.Runs{Level: -1}
	}
	r := kernelshape.RunsOf(g.pl.N, outer, iters, perIter)
	g.cut = g.cut || !r.None()
	return r
}

// PlaceTotals puts the running totals of the groups in temporaries when
// enough are free, else in memory, and clears them (from register zero,
// which holds +0). The caller releases the temporaries after AddTotals.
func (g *gen) PlaceTotals(groups [][]int, zero int) {
	g.totRegs = nil
	if g.tmpHi-g.tmpNext >= len(groups)+totalSpare {
		for range groups {
			g.totRegs = append(g.totRegs, g.Tmp())
		}
	} else {
		g.usesTotals = true
		g.loadTotalsAddr()
	}
	for i := range groups {
		g.op(x86.AVMOVUPS, g.vr(zero), g.total(i))
	}
}

// loadTotalsAddr sets the scratch register to the argument block's
// address when the totals are in memory and their address has no general
// register (reserveTotals); total's memory operands then use it, until
// the scratch register is next set.
func (g *gen) loadTotalsAddr() {
	if g.totRegs == nil && g.tot == 0 {
		g.op(x86.AVMOVQ, g.xr(g.totArgs), reg(rScratch))
	}
}

// total is the operand of running total i: its register, or its place
// in the LongArgs block.
func (g *gen) total(i int) obj.Addr {
	off := int64(i) * int64(g.V) * 4
	switch {
	case g.totRegs != nil:
		return g.vr(g.totRegs[i])
	case g.tot != 0:
		return mem(g.tot, off)
	}
	return mem(rScratch, plan.ArgTotals+off)
}

// FoldRun ends a run: each group's registers summed into its first,
// added into its total, and all cleared.
func (g *gen) FoldRun(groups [][]int) {
	g.loadTotalsAddr()
	for i, regs := range groups {
		kernelshape.CombineTree(g, regs)
		g.op(x86.AVADDPS, g.total(i), g.vr(regs[0]), g.vr(regs[0]))
		g.op(x86.AVMOVUPS, g.vr(regs[0]), g.total(i))
		for _, r := range regs {
			g.zero(r)
		}
	}
}

// AddTotals adds each group's total into its first register, once the
// group has been summed there. The totals are then done with.
func (g *gen) AddTotals(groups [][]int) {
	g.loadTotalsAddr()
	for i, regs := range groups {
		g.op(x86.AVADDPS, g.total(i), g.vr(regs[0]), g.vr(regs[0]))
	}
	g.totRegs = nil
}

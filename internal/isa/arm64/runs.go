package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// Long sums are cut into runs (kernelshape.Runs), as on amd64 (sums
// only: products, max and min gain nothing from it): after
// each run, every group of accumulators is summed into its first
// register, added into a running total in the LongArgs block (16 bytes
// per group, at rArgs, which the prologue moves to the totals when the
// sums may be long) and cleared.

// reserveTotals points rArgs at LongArgs.Totals when the plan's sums
// may be cut (kernelshape.MayCut). Called by Prologue after the last
// load from the argument block.
func (g *gen) reserveTotals() {
	if !g.isAdd() || !kernelshape.MayCut(g.pl.N) {
		return
	}
	g.addTo(rArgs, rArgs, plan.ArgTotals)
	g.totals = true
}

// RunsOf chooses the cut of a sum over the reduced loops outer around a
// sweep loop of iters iterations, perIter adds into each accumulator
// per iteration (no cut when rArgs does not point at totals).
func (g *gen) RunsOf(outer []plan.Loop, iters, perIter int64) kernelshape.Runs {
	if !g.totals {
		return kernelshape.Runs{Level: -1}
	}
	r := kernelshape.RunsOf(g.pl.N, outer, iters, perIter)
	if !r.None() {
		g.usesTotals = true
	}
	return r
}

// total is the location of running total i.
func total(i int) ref { return at(rArgs, int64(i)*16) }

// PlaceTotals sets the totals of the groups to +0 from register zero,
// which holds +0.
func (g *gen) PlaceTotals(groups [][]int, zero int) {
	for i := range groups {
		g.fpMem(false, 16, zero, total(i))
	}
}

// FoldRun ends a run: each group's registers summed into its first,
// added into its total, and all cleared.
func (g *gen) FoldRun(groups [][]int) {
	mk := g.Mark()
	defer g.Release(mk)
	t := g.Tmp()
	for i, regs := range groups {
		kernelshape.CombineTree(g, regs)
		g.fpMem(true, 16, t, total(i))
		g.vadd(regs[0], t)
		g.fpMem(false, 16, regs[0], total(i))
		for _, r := range regs {
			g.InitAcc(r)
		}
	}
}

// AddTotals adds each group's total into its first register, once the
// group has been summed there.
func (g *gen) AddTotals(groups [][]int) {
	mk := g.Mark()
	defer g.Release(mk)
	t := g.Tmp()
	for i, regs := range groups {
		g.fpMem(true, 16, t, total(i))
		g.vadd(regs[0], t)
	}
}

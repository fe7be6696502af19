package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// The column shape: [kept..., reduced..., Inner] with Inner contiguous in
// src. Blocks of up to nacc vectors of Inner are accumulated over the
// reduced rows with vertical adds, rows unrolled U ways into separate
// accumulators when the block is narrow (latency hiding), and finished a
// vector at a time; the last vector of Inner is partial.
//
// A narrow Inner (at most V/2 lanes) whose rows are back to back in src
// is read as one flat stream instead, V lanes per load, so that lane l
// always holds Inner index l mod W, and the lanes are folded at the end.

// Column emits the kept loops k around the column shape.
func (g *gen) Column(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	k.Emit(g, func() { g.column(red, zeroSum) })
}

// column emits the column shape for one iteration of the kept loops.
func (g *gen) column(red []plan.Loop, zeroSum bool) {
	in := g.pl.Inner
	W := in.Size
	si := g.StepsOf(&in)
	if g.conf.Shape == kernelconf.FlatColumn {
		g.flatColumn(red, W, si)
		return
	}
	// Inner in blocks of nacc vectors; the last block holds what is left:
	// m/V full vectors and a partial one of m%V lanes.
	kernelshape.Chunks(g, g.ptrs, W, nacc*lanes, si, func(m int) { g.colBlock(red, zeroSum, m/lanes, m%lanes, si) })
}

// colBlock sums nv full vectors of Inner plus, when tail > 0, one vector
// of tail lanes, over all reduced rows, and finishes them.
func (g *gen) colBlock(red []plan.Loop, zeroSum bool, nv, tail int, si kernelshape.Steps) {
	K := nv
	if tail > 0 {
		K++
	}
	width := func(k int) int {
		if k == nv {
			return tail
		}
		return lanes
	}
	U := g.conf.colBlockU(nv, tail)
	acc := func(k, u int) int { return u*K + k }
	for i := 0; i < K*U; i++ {
		g.initAcc(i)
	}
	vb := lanes * g.SrcSize
	// sweepRow adds row u at byte offset off: the full vectors as runs,
	// then the partial one.
	sweepRow := func(u int, off int64) {
		accs := make([]int, nv)
		for k := range accs {
			accs[k] = acc(k, u)
		}
		g.accumRun(g.SrcDT, accs, at(rSrc, off), false)
		if tail > 0 {
			// Lanes past the tail are never outputs, and a column
			// never mixes lanes: no identity fill needed.
			g.accum(g.SrcDT, acc(nv, u), at(rSrc, off+int64(nv)*vb), tail, false)
		}
	}
	// One running total per vector of the block, when the sums are cut
	// into runs.
	groups := kernelshape.Groups(K, U, acc)
	runs := kernelshape.Runs{Level: -1}
	if !zeroSum {
		if n := len(red); n == 0 {
			// Nothing reduced: the result is the element itself
			// combined with the identity (a sum adds it to +0, as
			// the interpreter does).
			sweepRow(0, 0)
		} else {
			last := red[n-1]
			rb := last.SrcStride * g.SrcSize
			iters, rem := last.Size/int64(U), int(last.Size%int64(U))
			runs = kernelshape.SumRuns(g, red[:n-1], iters, 1, g.SrcSize, groups, acc(0, 0), func(chunk int, fold func()) {
				kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * rb}, chunk, func() {
					for u := 0; u < U; u++ {
						sweepRow(u, int64(u)*rb)
					}
				}, fold)
				for u := 0; u < rem; u++ {
					sweepRow(u, (iters*int64(U)+int64(u))*rb)
				}
			})
		}
	}
	for k := 0; k < K; k++ {
		kernelshape.CombineTree(g, groups[k])
	}
	if !runs.None() {
		g.AddTotals(groups)
	}
	for k := 0; k < K; k++ {
		kernelshape.Epilogue(g, acc(k, 0), kernelshape.Block(k, lanes, width(k), si))
	}
}

// flatColumn sums a narrow Inner of W lanes whose rows are contiguous, as
// one stream of V-lane loads per innermost reduced loop (V is a multiple
// of W), then folds lane l + j*W into lane l. With W 1 every lane is
// folded into the one output, so lanes may mix on the way.
func (g *gen) flatColumn(red []plan.Loop, W int64, si kernelshape.Steps) {
	n := len(red)
	last := red[n-1]
	elems := last.Size * W
	nfull := elems / lanes
	U := g.conf.FlatU
	groups := kernelshape.Groups(1, U, func(_, u int) int { return u })
	regs := groups[0]
	for _, r := range regs {
		g.initAcc(r)
	}
	runs := kernelshape.SumRuns(g, red[:n-1], nfull/int64(U), 1, g.SrcSize, groups, 0, func(chunk int, fold func()) {
		g.rowSweep(elems, U, 1, func(_, u int) int { return u }, func(int) int64 { return 0 }, chunk, fold, W == 1)
	})
	kernelshape.CombineTree(g, regs)
	if !runs.None() {
		g.AddTotals(groups)
	}
	g.fold(0, int(W), lanes/int(W))
	kernelshape.Epilogue(g, 0, kernelshape.Outputs(int(W), si))
}

// fold combines lanes l + j*w (j < q) into lane l, for l < w, halving
// q with a rotation and a combine each time; q = V/w is 4 or 2.
func (g *gen) fold(r, w, q int) {
	mk := g.Mark()
	defer g.Release(mk)
	t := g.Tmp()
	for ; q > 1; q /= 2 {
		g.rotate(t, r, (q/2)*w)
		g.combine(r, t)
	}
}

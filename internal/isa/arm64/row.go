package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The row shape: [kept..., reduced...], each output the sum of rows of
// src. With a contiguous innermost reduced loop (vector mode) a row is
// summed a vector at a time, with U independent accumulators (loaded
// four vectors per LD1) and a partial tail; otherwise (element mode) an
// element at a time into lane 0, with U accumulators.
//
// Short rows would make the per-output horizontal sum and epilogue the
// cost. So when rows are short (Conf.Group), V outputs (consecutive
// iterations of the innermost kept loop L) are summed at once, one or
// two accumulators each (four for pairwise 8-bit sums), and three FADDPs turn the four accumulators
// into one vector holding the four sums, which is finished as a vector.

// rowPlan is the row shape's choice for one kernel.
type rowPlan struct {
	kernelshape.Rows
	group   int   // outputs summed at once (1 or V)
	rowStep int64 // bytes between consecutive outputs' rows (L's src step)
}

// Row emits the row and element shapes.
func (g *gen) Row(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	rp := rowPlan{Rows: kernelshape.RowsOf(red, zeroSum), group: 1}
	if len(k.Loops) == 0 {
		g.rowGroup(&rp, 1, kernelshape.LaneMap{N: bcast})
		return
	}
	outer, L, lcount := k.SplitInnermost()
	rp.rowStep = L.SrcStride * g.SrcSize
	rp.group = g.conf.Group
	sL := g.StepsOf(&L)
	outer.Emit(g, func() { g.rowL(&rp, L, sL, lcount, k.Cnt) })
}

// rowL emits the innermost kept loop L in groups of rp.group outputs.
func (g *gen) rowL(rp *rowPlan, L plan.Loop, sL kernelshape.Steps, count bool, cnt int16) {
	group := func(n int) { g.rowGroup(rp, n, kernelshape.Outputs(n, sL)) }
	one := func() { group(1) }
	switch {
	case !count:
		kernelshape.Chunks(g, g.ptrs, L.Size, rp.group, sL, group)
	case rp.group == 1:
		kernelshape.CountLoop(g, cnt, sL, one)
	default:
		g.countGroups(rp, rp.group, sL, cnt, kernelshape.Outputs(rp.group, sL), one)
	}
}

// rowGroup sums n outputs (1, or up to V when grouping) whose rows start
// rp.rowStep bytes apart, and finishes them with lane map lm.
func (g *gen) rowGroup(rp *rowPlan, n int, lm kernelshape.LaneMap) {
	single := rp.group == 1 || n == 1
	U := 1 // accumulators per output
	if single {
		U = g.conf.RowU
	} else {
		U = g.conf.GroupU
	}
	rows := 1
	if !single {
		rows = lanes // unused outputs' accumulators stay at the identity
	}
	for i := 0; i < rows*U; i++ {
		g.initAcc(i)
	}
	acc := func(row, u int) int { return row*U + u }
	rowOff := func(row int) int64 { return int64(row) * rp.rowStep }
	// Each output's U accumulators sum into one running total when the
	// sums are cut into runs.
	groups := kernelshape.Groups(rows, U, acc)
	var iters int64 // the sweep loop's iterations of one add into each accumulator
	switch {
	case rp.Vec:
		iters = rp.Len / int64(lanes*U)
	case rp.Elem != nil:
		iters = rp.Elem.Size / int64(U)
	}
	runs := kernelshape.Runs{Level: -1}
	if !rp.ZeroSum {
		runs = kernelshape.SumRuns(g, rp.Outer, iters, 1, g.SrcSize, groups, 0, func(chunk int, fold func()) {
			switch {
			case rp.Vec:
				g.rowSweep(rp.Len, U, n, acc, rowOff, chunk, fold, true)
			case rp.Elem != nil:
				g.elemSweep(rp.Elem, U, chunk, fold)
			default:
				// Nothing reduced: the result is the element itself
				// combined with the identity (a sum adds it to +0, as
				// the interpreter does: -0 becomes +0). Lane 0 only.
				g.accum(g.SrcDT, 0, at(rSrc, 0), 1, false)
			}
		})
	}

	var heads [lanes]int
	for row := 0; row < rows; row++ {
		g.combineTree(groups[row])
		heads[row] = acc(row, 0)
	}
	if !runs.None() {
		g.addTotals(groups)
	}
	if single {
		if rp.Vec {
			g.hcombine(0)
		}
		kernelshape.Epilogue(g, 0, lm)
		return
	}
	kernelshape.Epilogue(g, g.transpose4(heads), lm)
}

// rowSweep adds one contiguous row of rk elements for each of n outputs:
// U vectors per output per iteration, then the leftover vectors, then a
// partial tail. mix says whether all lanes of an output's accumulators
// are combined into it (see accumRun).
func (g *gen) rowSweep(rk int64, U, n int, acc func(row, u int) int, rowOff func(int) int64, chunk int, fold func(), mix bool) {
	vb := lanes * g.SrcSize
	full, tail := rk/lanes, int(rk%lanes)
	iters, remv := full/int64(U), int(full%int64(U))
	accs := func(row, k int) []int {
		a := make([]int, k)
		for u := range a {
			a[u] = acc(row, u)
		}
		return a
	}
	kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * vb}, chunk, func() {
		for row := 0; row < n; row++ {
			g.accumRun(g.SrcDT, accs(row, U), at(rSrc, rowOff(row)), mix)
		}
	}, fold)
	if remv > 0 {
		for row := 0; row < n; row++ {
			g.accumRun(g.SrcDT, accs(row, remv), at(rSrc, rowOff(row)+iters*int64(U)*vb), mix)
		}
	}
	if tail > 0 {
		for row := 0; row < n; row++ {
			// The tail's lanes are mixed by the horizontal combine.
			g.accum(g.SrcDT, acc(row, remv%U), at(rSrc, rowOff(row)+full*vb), tail, true)
		}
	}
}

// elemSweep adds the elements of the strided innermost reduced loop e,
// U at a time into lane 0 of accumulators 0..U-1.
func (g *gen) elemSweep(e *plan.Loop, U int, chunk int, fold func()) {
	sb := e.SrcStride * g.SrcSize
	iters, rem := e.Size/int64(U), int(e.Size%int64(U))
	kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * sb}, chunk, func() {
		for u := 0; u < U; u++ {
			g.accum(g.SrcDT, u, at(rSrc, int64(u)*sb), 1, false)
		}
	}, fold)
	for u := 0; u < rem; u++ {
		g.accum(g.SrcDT, u, at(rSrc, (iters*int64(U)+int64(u))*sb), 1, false)
	}
}

// countGroups runs the count-driven L loop in groups of G outputs. When
// Count is not a multiple of G the last group is moved back to end at
// output Count-1: it recomputes (and rewrites, with the same values) up
// to G-1 outputs of the previous group instead of finishing one output at
// a time. Counts below G run single outputs. Not when an operand may be
// the dst itself (plan.Plan.DstOperand): the rewrite would read operand
// elements the group before it overwrote; the last outputs then run
// singly.
func (g *gen) countGroups(rp *rowPlan, G int, sL kernelshape.Steps, cnt int16, lm kernelshape.LaneMap, one func()) {
	g.Flush()
	top, singles, done := g.NewLabel(), g.NewLabel(), g.NewLabel()
	g.cmpImm(cnt, int64(G))
	g.Jump(arm64.ABLT, singles)
	g.label(top)
	g.rowGroup(rp, G, lm)
	g.ptrs.Advance(sL, int64(G))
	g.Flush()
	g.op3(arm64.ASUB, imm(int64(G)), cnt, reg(cnt))
	g.cmpImm(cnt, int64(G))
	g.Jump(arm64.ABGE, top)
	if g.pl.HasDstOperand() {
		g.PlaceLabel(singles)
		kernelshape.CountLoop(g, cnt, sL, one)
		g.PlaceLabel(done)
		return
	}
	// 0 <= cnt < G here.
	g.jumpReg(arm64.ACBZ, cnt, done)
	g.op3(arm64.ASUB, imm(int64(G)), cnt, reg(cnt)) // -(outputs to step back)
	back := func(p int16, step int64) {
		if step == 0 {
			return
		}
		g.movImm(rTmp, step)
		g.op3(arm64.AMUL, reg(rTmp), cnt, reg(rTmp))
		g.op3(arm64.AADD, reg(rTmp), p, reg(p))
		g.moved(p)
	}
	back(rSrc, sL.Src)
	back(rDst, sL.Dst)
	for i := 0; i < g.NBin; i++ {
		back(g.binReg[i], sL.Bin[i])
	}
	g.rowGroup(rp, G, lm)
	g.Flush()
	g.Jump(arm64.AB, done)
	g.PlaceLabel(singles)
	kernelshape.CountLoop(g, cnt, sL, one)
	g.PlaceLabel(done)
}

package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// The row shape: [kept..., reduced...], each output the combine of rows
// of src. With a contiguous innermost reduced loop (vector mode) a row
// is summed a vector at a time, with U independent accumulators and a
// partial tail; otherwise (element mode) an element at a time, with U
// accumulators.
//
// Short rows would make the per-output horizontal combine and epilogue
// the cost. So when rows are short (the configuration's group), V
// outputs (consecutive iterations of the innermost kept loop L) are
// summed at once, their results transposed into one vector and finished
// together. How a group's accumulators are laid out, how a vector row
// is swept and how a group is transposed are the instruction set's
// (RowAccs, RowSweep, Transpose): amd64 packs short rows and reads rows
// in streams, NEON loads four vectors at once.

// RowPlan is the row shape's choice for one kernel.
type RowPlan struct {
	Rows
	Group   int   // outputs summed at once (1 or V)
	RowStep int64 // bytes between consecutive outputs' rows (L's src step)
}

// RowAccs is how the accumulators of one output, or of a group of
// outputs, are laid out: Acc(row, u) is accumulator u of output row.
type RowAccs struct {
	U      int // accumulators per output
	Acc    func(row, u int) int
	Init   int     // accumulators 0..Init-1 start at the identity
	Groups [][]int // each combined into its first after the sweep, and summed into one running total
	// Lo, when not nil, packs the rows: row r goes to lanes Lo[r]... of
	// register Acc(r, 0), and a RowPacker sweeps them.
	Lo []int
}

// RowEmitter is what an instruction set supplies to Row.
type RowEmitter interface {
	GroupCounter
	Totals
	Finisher
	// ElemTypes are the plan's element types and sizes.
	ElemTypes() *Types
	// Lanes is V, the f32 lanes of a vector.
	Lanes() int
	// InitAccs sets accumulators 0..n-1 to the combine's identity.
	InitAccs(n int)
	Summer
	// RowAccs lays out the accumulators of one output (single) or of a
	// group of n outputs.
	RowAccs(single bool, n int) RowAccs
	// AddVectors adds len(accs) vectors of m lanes each, back to back
	// off bytes past the src pointer, into accs; mix says their lanes
	// may be combined with one another (a single output).
	AddVectors(accs []int, off int64, m int, mix bool)
	// AddPartial adds n lanes (fewer than a vector) at off into the
	// first n lanes of acc; its other lanes keep their values.
	AddPartial(acc int, off int64, n int)
	// AddElement combines the src element off bytes past the src
	// pointer into accumulator acc (element mode).
	AddElement(acc int, off int64)
	// HCombine sets r's lanes to the combine of its lanes.
	HCombine(r int)
	// Transpose combines the lanes of each output of a group laid out as
	// a says and returns the register holding output j in lane j.
	Transpose(a RowAccs) int
}

// RowSweeper is optional: an instruction set with a row sweep of its own
// (amd64's streams, prefetches, words and bf16 pairs) in place of
// PlainRowSweep.
type RowSweeper interface {
	// RowSweep adds one contiguous row of rk elements for each of n
	// outputs, as PlainRowSweep does.
	RowSweep(rk int64, n int, a RowAccs, rowOff func(int) int64, chunk int, fold func())
}

// RowGatherer is optional: an instruction set that sums a whole group
// of short rows back to back by gathering their elements (amd64's
// AVX-512 rows of 2 to 4 elements).
type RowGatherer interface {
	// RowGather prepares the gathers, when the configuration takes them
	// for rp, and returns how many rows one gather sums and the gather,
	// which finishes them with its lane map; nil when not.
	RowGather(rp *RowPlan) (rows int, gather func(lm LaneMap))
}

// RowSingle is optional: an instruction set with a way of its own to sum
// one output's row (amd64's byte sums by SAD).
type RowSingle interface {
	// SingleRow emits the whole sum and epilogue of one output's row
	// when the configuration takes that way, and reports whether it did.
	SingleRow(rp *RowPlan, lm LaneMap) bool
}

// RowPacker is optional: an instruction set that packs short rows of a
// group several to a register (RowAccs.Lo).
type RowPacker interface {
	// PackedSweep adds the rows of rk elements into the lanes a.Lo gives.
	PackedSweep(rk int, n int, a RowAccs, rowOff func(int) int64)
}

// GroupPrefetcher is optional: an instruction set that prefetches ahead
// of a group's rows when its configuration says so.
type GroupPrefetcher interface {
	PrefetchGroup(rp *RowPlan)
}

// Row emits the kept loops k around the row and element shapes, summing
// groups of group outputs (1: one at a time) over the reduced loops red.
func Row(e RowEmitter, k Nest, red []plan.Loop, zeroSum bool, group int) {
	rp := RowPlan{Rows: RowsOf(red, zeroSum), Group: 1}
	if len(k.Loops) == 0 {
		rowGroup(e, &rp, 1, LaneMap{N: Bcast})
		return
	}
	outer, L, lcount := k.SplitInnermost()
	rp.RowStep = L.SrcStride * e.ElemTypes().SrcSize
	rp.Group = group
	var gather func(LaneMap)
	gn := 0
	if gr, ok := e.(RowGatherer); ok {
		gn, gather = gr.RowGather(&rp)
	}
	sL := e.StepsOf(&L)
	outer.Emit(e, func() { rowL(e, &rp, L, sL, lcount, k.Cnt, gn, gather) })
}

// rowL emits the innermost kept loop L in groups of rp.Group outputs,
// or of gn gathered rows.
func rowL(e RowEmitter, rp *RowPlan, L plan.Loop, sL Steps, count bool, cnt int16, gn int, gather func(LaneMap)) {
	group := func(n int) { rowGroup(e, rp, n, Outputs(n, sL)) }
	one := func() { group(1) }
	switch {
	case gather != nil:
		// The last rows of an uncounted loop, fewer than gn, go in a
		// transposing group.
		GroupLoop(e, L.Size, gn, sL, count, cnt, func(m int) {
			if m == gn {
				gather(Outputs(m, sL))
			} else {
				group(m)
			}
		}, one)
	case count && rp.Group == 1:
		CountLoop(e, cnt, sL, one)
	default:
		GroupLoop(e, L.Size, rp.Group, sL, count, cnt, group, one)
	}
}

// rowGroup sums n outputs (1, or up to V when grouping) whose rows start
// rp.RowStep bytes apart, and finishes them with lane map lm.
func rowGroup(e RowEmitter, rp *RowPlan, n int, lm LaneMap) {
	single := rp.Group == 1 || n == 1 // one output, U accumulators
	if s, ok := e.(RowSingle); ok && single && s.SingleRow(rp, lm) {
		return
	}
	a := e.RowAccs(single, n)
	e.InitAccs(a.Init)
	rowOff := func(row int) int64 { return int64(row) * rp.RowStep }
	var iters int64 // the sweep loop's iterations of one add into each accumulator
	switch {
	case a.Lo == nil && rp.Vec:
		iters = rp.Len / int64(e.Lanes()*a.U)
	case a.Lo == nil && rp.Elem != nil:
		iters = rp.Elem.Size / int64(a.U)
	}
	mk := e.Mark()
	runs := Runs{Level: -1}
	if !rp.ZeroSum {
		pf, _ := e.(GroupPrefetcher)
		runs = SumRuns(e, rp.Outer, iters, 1, e.ElemTypes().SrcSize, a.Groups, 0, func(chunk int, fold func()) {
			if pf != nil && n > 1 {
				pf.PrefetchGroup(rp)
			}
			switch {
			case a.Lo != nil:
				e.(RowPacker).PackedSweep(int(rp.Len), n, a, rowOff)
			case rp.Vec:
				if sw, ok := e.(RowSweeper); ok {
					sw.RowSweep(rp.Len, n, a, rowOff, chunk, fold)
				} else {
					PlainRowSweep(e, rp.Len, n, a, rowOff, chunk, fold)
				}
			case rp.Elem != nil:
				ElemSweep(e, rp.Elem, a.U, chunk, fold)
			default:
				// Nothing reduced: the element combined with the
				// identity (a sum of one -0 is +0, as in the
				// interpreter).
				e.AddElement(0, 0)
			}
		})
	}
	CombineGroups(e, runs, a.Groups)
	e.Release(mk)
	if single {
		if rp.Vec {
			e.HCombine(0)
		}
		Epilogue(e, 0, lm)
		return
	}
	Epilogue(e, e.Transpose(a), lm)
}

// PlainRowSweep adds one contiguous row of rk elements for each of n
// outputs (row r at byte offset rowOff(r)) into a's accumulators: U
// vectors per output per iteration of a loop cut as RunLoop cuts it
// (chunk, fold), then the leftover vectors, then a partial tail. The
// lanes of an output mix freely: its horizontal combine folds them.
func PlainRowSweep(e RowEmitter, rk int64, n int, a RowAccs, rowOff func(int) int64, chunk int, fold func()) {
	V := int64(e.Lanes())
	vb := V * e.ElemTypes().SrcSize
	full, tail := rk/V, int(rk%V)
	U := a.U
	iters, remv := full/int64(U), int(full%int64(U))
	accs := func(row, k int) []int {
		regs := make([]int, k)
		for u := range regs {
			regs[u] = a.Acc(row, u)
		}
		return regs
	}
	RunLoop(e, e.Pointers(), iters, Steps{Src: int64(U) * vb}, chunk, func() {
		for row := 0; row < n; row++ {
			e.AddVectors(accs(row, U), rowOff(row), int(V), true)
		}
	}, fold)
	if remv > 0 {
		for row := 0; row < n; row++ {
			e.AddVectors(accs(row, remv), rowOff(row)+iters*int64(U)*vb, int(V), true)
		}
	}
	if tail > 0 {
		for row := 0; row < n; row++ {
			e.AddPartial(a.Acc(row, remv%U), rowOff(row)+full*vb, tail)
		}
	}
}

// ElemSweep adds the elements of the strided innermost reduced loop l,
// U at a time into accumulators 0..U-1.
func ElemSweep(e RowEmitter, l *plan.Loop, U int, chunk int, fold func()) {
	sb := l.SrcStride * e.ElemTypes().SrcSize
	iters, rem := l.Size/int64(U), int(l.Size%int64(U))
	RunLoop(e, e.Pointers(), iters, Steps{Src: int64(U) * sb}, chunk, func() {
		for u := 0; u < U; u++ {
			e.AddElement(u, int64(u)*sb)
		}
	}, fold)
	for u := 0; u < rem; u++ {
		e.AddElement(u, (iters*int64(U)+int64(u))*sb)
	}
}

// Combiner is what CombineTree needs: the accumulators' combine.
type Combiner interface {
	// CombineAcc sets accumulator r = r ⊕ s; s may be clobbered.
	CombineAcc(r, s int)
}

// CombineTree combines registers regs[1:] into regs[0] pairwise.
func CombineTree(e Combiner, regs []int) {
	for n := len(regs); n > 1; n = (n + 1) / 2 {
		h := (n + 1) / 2
		for i := 0; i+h < n; i++ {
			e.CombineAcc(regs[i], regs[i+h])
		}
	}
}

// Summer is what CombineGroups needs: the accumulators' combine and the
// running totals.
type Summer interface {
	Combiner
	// AddTotals adds each group's running total into its first
	// register, once the group has been combined there.
	AddTotals(groups [][]int)
}

// CombineGroups ends a sum over runs: each group combined into its first
// register, and its running total added in when the sums were cut.
func CombineGroups(e Summer, runs Runs, groups [][]int) {
	for _, regs := range groups {
		CombineTree(e, regs)
	}
	if !runs.None() {
		e.AddTotals(groups)
	}
}

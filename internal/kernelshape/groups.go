package kernelshape

// GroupCounter is what GroupLoop needs of an instruction set beyond
// Looper: comparisons of a counter with a small constant, and the
// pointer moves that step a group back.
type GroupCounter interface {
	Looper
	// BranchBelow branches to l when c < n; BranchAtLeast when c >= n;
	// BranchIfZero when c == 0. n is small and positive.
	BranchBelow(c int16, n int64, l Label)
	BranchAtLeast(c int16, n int64, l Label)
	BranchIfZero(c int16, l Label)
	// SubImm emits c -= n.
	SubImm(c int16, n int64)
	// StepBack emits p += step*c for a pointer register p.
	StepBack(p int16, step int64, c int16)
	// CanStepBack reports whether the instruction set can step the
	// pointers back by steps s times a count (amd64 multiplies by an
	// immediate of 32 bits).
	CanStepBack(s Steps) bool
	// DstOperand reports whether a binary operand may be the dst itself
	// (plan.Plan.HasDstOperand).
	DstOperand() bool
	// Goto branches to l unconditionally.
	Goto(l Label)
}

// GroupLoop emits a kept loop of n iterations with steps s in groups of
// G: chunk(m) emits m iterations at the pointers (m == G: a full group),
// one a single iteration. A counted loop (Args.Count in cnt) goes through
// CountGroups, a fixed one through Chunks.
func GroupLoop(e GroupCounter, n int64, G int, s Steps, count bool, cnt int16, chunk func(m int), one func()) {
	if count {
		CountGroups(e, G, s, cnt, func() { chunk(G) }, one)
		return
	}
	Chunks(e, e.Pointers(), n, G, s, chunk)
}

// CountGroups runs the count-driven loop with steps s in groups of G
// iterations (group emits one at the pointers, one a single iteration).
// When Count is not a multiple of G the last group is moved back to end
// at iteration Count-1: it recomputes (and rewrites, with the same
// values) up to G-1 iterations of the previous group instead of finishing
// one at a time. Counts below G run single iterations. Not when an
// operand may be the dst itself: the rewrite would read operand elements
// the group before it overwrote; the last iterations then run singly.
func CountGroups(e GroupCounter, G int, s Steps, cnt int16, group, one func()) {
	countGroups(e, G, s, cnt, e.CanStepBack(s) && !e.DstOperand(), group, one)
}

// CountGroupsInOrder is CountGroups with no group moved back: the last
// Count mod G iterations run singly, so every iteration runs once (a
// kernel whose src may be its dst cannot run a row twice).
func CountGroupsInOrder(e GroupCounter, G int, s Steps, cnt int16, group, one func()) {
	countGroups(e, G, s, cnt, false, group, one)
}

func countGroups(e GroupCounter, G int, s Steps, cnt int16, backOff bool, group, one func()) {
	ptrs := e.Pointers()
	e.Flush()
	top, singles, done := e.NewLabel(), e.NewLabel(), e.NewLabel()
	n := int64(G)
	e.BranchBelow(cnt, n, singles)
	e.Flush()
	e.PlaceLabel(top)
	group()
	ptrs.Advance(s, n)
	e.Flush()
	e.SubImm(cnt, n)
	e.BranchAtLeast(cnt, n, top)
	if backOff {
		// 0 <= cnt < G here.
		e.BranchIfZero(cnt, done)
		e.SubImm(cnt, n) // -(iterations to step back)
		ptrs.Each(s, func(p int16, step int64) {
			if step != 0 {
				e.StepBack(p, step, cnt)
			}
		})
		group()
		e.Flush()
		e.Goto(done)
	}
	e.PlaceLabel(singles)
	CountLoop(e, cnt, s, one)
	e.PlaceLabel(done)
}

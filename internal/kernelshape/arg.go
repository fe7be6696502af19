package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// The index reduction (ArgMax, ArgMin: plan.ArgPlan) kernel, written
// once over ArgEmitter. Each accumulator u is a pair of vectors: the
// best value seen in each lane and the index it was seen at. One pass
// over src compares each loaded vector with the best values (NaN above
// every number for ArgMax, below for ArgMin; a later equal element wins
// only for select_last_index) and blends in the value and the running
// index, "cur", a broadcast register that counts along the axis.
//
// Three shapes:
//
//   - Column (Inner contiguous in src and dst, at least V wide): the
//     lanes are V consecutive outputs, cur is the row; each block of U
//     vectors sweeps the R rows and stores its indices. The outputs
//     left are whole vectors, then one vector stepped back to end at
//     the last output (outputs already written are written again,
//     alike).
//   - Row (the axis contiguous, at least V long): the lanes of
//     accumulator u hold elements u*V+lane of each block of U*V; cur is
//     the block's start, and the lane's offset is added at the end. The
//     elements past the last whole vector are one vector stepped back to
//     end at R, into accumulator 0 with cur = R-V: elements seen twice
//     are the same (value, index) pairs and change no winner. The
//     accumulators' lanes are then combined: the winning value (NaN if
//     any), and the first (last) index among the lanes holding it.
//   - Element (otherwise): one element at a time, in order, into
//     accumulator 0, whose lane 0 is the result.
//
// Every src type is compared in f32 lanes (plan.ArgSrcTypes), exactly,
// and the index is an s32 lane, stored as s32 or s64.

// ArgEmitter is what an instruction set supplies to Arg.
type ArgEmitter interface {
	Looper
	// Lanes is V, the f32 lanes of a vector.
	Lanes() int
	// ArgAccs is how many accumulators the row (false) or column (true)
	// shape may use.
	ArgAccs(column bool) int
	// Prologue loads the argument block: the pointers and, when cnt is
	// not 0, Args.Count into cnt.
	Prologue(cnt int16)
	// Return leaves the kernel.
	Return()
	// ArgInit sets accumulator u's values to the identity (-Inf for
	// ArgMax, +Inf for ArgMin) and its indices to 0.
	ArgInit(u int)
	// ArgSetCur sets cur to v in every lane; ArgAddCur adds v.
	ArgSetCur(v int64)
	ArgAddCur(v int64)
	// ArgUpdate loads n elements (V, or Bcast: one element in every lane)
	// off bytes past the src pointer and takes each lane that wins into
	// accumulator u, with cur as its index.
	ArgUpdate(u int, off int64, n int)
	// ArgStoreColumn stores accumulator u's V indices off bytes past the
	// dst pointer.
	ArgStoreColumn(u int, off int64)
	// ArgFinishRow combines accumulators 0..n-1 of a row, their lanes
	// offset by u*V+lane, and stores the winner's index at the dst
	// pointer.
	ArgFinishRow(n int)
	// ArgStoreFirst stores lane 0 of accumulator 0's indices at the dst
	// pointer (the element shape's result).
	ArgStoreFirst()
}

// ArgPrefetcher is optional: an instruction set whose column shape
// prefetches the rows ahead (amd64: each row is a page or more from the
// last, where the hardware prefetchers do not follow).
type ArgPrefetcher interface {
	// PrefetchSrc prefetches the line off bytes past the src pointer.
	PrefetchSrc(off int64)
}

// argPrefetchRows is how many rows ahead a column block prefetches.
const argPrefetchRows = 8

// ArgShape is which of the three shapes a plan takes.
type ArgShape uint8

// The shapes.
const (
	ArgElement ArgShape = iota
	ArgRow
	ArgColumn
)

// ArgShapeOf returns the shape pl takes with V lanes.
func ArgShapeOf(pl *plan.ArgPlan, v int) ArgShape {
	switch {
	case pl.HasInner && pl.Inner.SrcStride == 1 && pl.Inner.DstStride == 1 && pl.Inner.Size >= int64(v):
		return ArgColumn
	case !pl.HasInner && pl.RStride == 1 && pl.R >= int64(v):
		return ArgRow
	}
	return ArgElement
}

// Arg emits the whole kernel of pl through e (the ABI of plan.Args:
// Count runs the outermost Outer loop; a plan without one runs once).
func Arg(pl *plan.ArgPlan, e ArgEmitter, srcSize int64) {
	if pl.Outputs == 0 {
		e.Return()
		return
	}
	var cnt int16
	if len(pl.Outer) > 0 {
		cnt = e.Counter()
	}
	e.Prologue(cnt)
	shape := ArgShapeOf(pl, e.Lanes())
	kept := pl.Outer
	if pl.HasInner && shape != ArgColumn {
		kept = append(append([]plan.Loop(nil), pl.Outer...), pl.Inner)
	}
	k := Nest{Loops: kept, Counted: len(pl.Outer) > 0, Cnt: cnt}
	rStep := Steps{Src: pl.RStride * srcSize}
	switch shape {
	case ArgColumn:
		k.Emit(e, func() { argColumn(e, pl, rStep) })
	case ArgRow:
		k.Emit(e, func() { argRow(e, pl, srcSize) })
	default:
		k.Emit(e, func() {
			e.ArgInit(0)
			e.ArgSetCur(0)
			Loop(e, pl.R, rStep, func() {
				e.ArgUpdate(0, 0, Bcast)
				e.ArgAddCur(1)
			})
			e.ArgStoreFirst()
		})
	}
	e.Return()
}

// argColumn emits the inner loop in blocks of U vectors, each sweeping
// the R rows.
func argColumn(e ArgEmitter, pl *plan.ArgPlan, rStep Steps) {
	v := int64(e.Lanes())
	u := int64(e.ArgAccs(true))
	s := e.StepsOf(&pl.Inner)
	block := func(n int64) {
		for i := range n {
			e.ArgInit(int(i))
		}
		e.ArgSetCur(0)
		pf, prefetch := e.(ArgPrefetcher)
		Loop(e, pl.R, rStep, func() {
			if prefetch && pl.R > argPrefetchRows {
				for b := int64(0); b < n*v*s.Src; b += 64 {
					pf.PrefetchSrc(argPrefetchRows*rStep.Src + b)
				}
			}
			for i := range n {
				e.ArgUpdate(int(i), i*v*s.Src, int(v))
			}
			e.ArgAddCur(1)
		})
		for i := range n {
			e.ArgStoreColumn(int(i), i*v*s.Dst)
		}
	}
	full := pl.Inner.Size / (u * v)
	Loop(e, full, s.Scaled(u*v), func() { block(u) })
	at := func(i int64, n int64) {
		e.Pointers().Advance(s, i)
		block(n)
		e.Pointers().Advance(s, -i)
	}
	// The rest: whole vectors, then one vector stepped back to end at
	// the last output.
	done := full * u * v
	if nv := (pl.Inner.Size - done) / v; nv > 0 {
		at(done, nv)
	}
	if pl.Inner.Size%v != 0 {
		at(pl.Inner.Size-v, 1)
	}
}

// argRow emits one row: blocks of U vectors, the whole vectors left,
// the stepped-back tail, and the combine.
func argRow(e ArgEmitter, pl *plan.ArgPlan, srcSize int64) {
	v := int64(e.Lanes())
	u := int64(e.ArgAccs(false))
	nacc := min(u, pl.R/v)
	for i := range nacc {
		e.ArgInit(int(i))
	}
	e.ArgSetCur(0)
	blocks := pl.R / (u * v)
	Loop(e, blocks, Steps{Src: u * v * srcSize}, func() {
		for i := range u {
			e.ArgUpdate(int(i), i*v*srcSize, int(v))
		}
		e.ArgAddCur(u * v)
	})
	done := blocks * u * v
	ptrs := e.Pointers()
	ptrs.Advance(Steps{Src: srcSize}, done)
	left := (pl.R - done) / v
	for i := range left {
		e.ArgUpdate(int(i), i*v*srcSize, int(v))
	}
	ptrs.Advance(Steps{Src: srcSize}, -done)
	if pl.R%v != 0 {
		e.ArgSetCur(pl.R - v)
		e.ArgUpdate(0, (pl.R-v)*srcSize, int(v))
	}
	e.ArgFinishRow(int(nacc))
}

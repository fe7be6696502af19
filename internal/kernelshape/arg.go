package kernelshape

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

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
//     A wide column of many rows goes row by row instead (ArgRowByRow):
//     the block's registers would visit each row for only a few lines
//     before the next row, a page or more further on, which the
//     hardware prefetchers follow poorly. There the best values and
//     indices of a block of up to plan.IndexScratchOutputs outputs (half
//     as many in 64-bit lanes) stay in a scratch that stays in L1 beside
//     the rows' runs it is swept with (a run of f32 is a page);
//     ArgRowsGroup rows at a time, each run of a few vectors is loaded
//     from the scratch, takes those rows' elements in order, and is
//     stored back, so that each row's part of the block is read as one
//     contiguous stream and every output still takes its rows in order.
//     The block's indices are then stored to dst.
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
// A src type is compared in f32 lanes (the float types of up to 32 bits,
// s8 and u8), in s32 lanes (the integers of 16 and 32 bits), or in
// 64-bit lanes (f64, s64 and u64), exactly, as plan.ArgSrcTypes says
// (ArgLaneBytes); integers are compared as signed (ArgIntLanes), an
// unsigned lane with its sign bit flipped (ArgUnsigned). The index is
// an s32, stored as s32 or s64; in 64-bit lanes each lane's index is
// held twice, in both halves of the lane, so that a blend under the
// lane's mask moves it whole and 32-bit index arithmetic serves every
// width.
//
// The update that keeps NaN's rule (a NaN wins, and the first NaN stays)
// takes two compares per vector: no one compare predicate tells a NaN in
// x from a NaN in the best value. Most data holds no NaN, so each
// column block and each row first runs with the one-compare update
// (ArgOrdered: an ordered compare, exact when nothing is NaN) while the
// emitter folds every loaded vector into NaN witnesses (ArgWatched); a
// witness that ends NaN (a NaN was loaded, or, on some instruction
// sets, infinities of both signs met) reruns that block or row with the
// exact update (ArgExact), writing its outputs again. An integer src
// holds no NaN and takes the one-compare update with no witness.

// ArgJITTypes reports whether pl's src and index types have machine
// code: every src of plan.ArgSrcTypes, the index s32 or s64.
func ArgJITTypes(pl *plan.ArgPlan) bool {
	_, ok := plan.ArgSrcTypes[pl.SrcDT]
	return ok && plan.IsArgIndexType(pl.IdxDT)
}

// ArgLaneBytes is the size of the lanes an index reduction compares src
// type dt in: 4 (f32 or s32 lanes) or 8 (f64, s64 or u64 lanes).
func ArgLaneBytes(dt dtypes.DataType) int64 { return int64(plan.ArgSrcTypes[dt].Size()) }

// ArgIntLanes reports whether an index reduction compares src type dt in
// signed integer lanes: each element widened exactly to s32, or an s64
// or u64 as it is (unsigned lanes with the sign bit flipped:
// ArgUnsigned).
func ArgIntLanes(dt dtypes.DataType) bool {
	lanes, ok := plan.ArgSrcTypes[dt]
	return ok && lanes != dtypes.F32 && lanes != dtypes.F64
}

// ArgNaNs reports whether src type dt can hold NaN (the float types).
func ArgNaNs(dt dtypes.DataType) bool { return dt.IsFloat() || dt == dtypes.F64 }

// ArgUnsigned reports whether pl's integer lanes hold unsigned values
// with their sign bits flipped, which maps their order onto signed
// order: a u32 or u64 src, or the magnitude of an s32 or s64 (|-2^31| is
// 2^31, |-2^63| is 2^63).
func ArgUnsigned(pl *plan.ArgPlan) bool {
	switch pl.SrcDT {
	case dtypes.U32, dtypes.U64:
		return true
	case dtypes.S32, dtypes.S64:
		return pl.Abs
	}
	return false
}

// ArgIntIdentity is the identity of an index reduction in signed integer
// lanes of the given bytes (4 or 8; ArgInit): the least value for
// ArgMax, the greatest for ArgMin. An element equal to it either wins
// (select_last_index) or leaves the index 0 of the lane's first
// element, which is its own.
func ArgIntIdentity(min bool, bytes int64) uint64 {
	sign := uint64(1) << (8*bytes - 1)
	if min {
		return sign - 1
	}
	return sign
}

// ArgGenPlan is the reduction an emitter's generator is made for: a max
// (min) of pl's src type, whose loads widen it to f32 lanes and whose
// combine is the NaN-wins max (min). A src of 64-bit lanes takes the
// generator's loops and pointers only: its plan is of f32, and the
// emitter sets the src's own type and size on the generator.
func ArgGenPlan(pl *plan.ArgPlan) *plan.Plan {
	red := plan.AlgMax.Reduction(0, 0)
	if pl.Min {
		red = plan.AlgMin.Reduction(0, 0)
	}
	dt := pl.SrcDT
	if ArgLaneBytes(dt) == 8 {
		dt = dtypes.F32
	}
	return &plan.Plan{Reduction: red, SrcDT: dt, DstDT: dtypes.F32, N: max(pl.R, 1), Outputs: pl.Outputs,
		Reduced: []plan.Loop{{Size: pl.R, SrcStride: pl.RStride}}}
}

// ArgUpdateKind is which update ArgUpdate emits.
type ArgUpdateKind uint8

// The updates.
const (
	// ArgExact is exact for every input, NaNs included.
	ArgExact ArgUpdateKind = iota
	// ArgOrdered compares once, with the ordered predicate: exact when
	// no element is NaN.
	ArgOrdered
	// ArgWatched is ArgOrdered that also folds each loaded vector into
	// the NaN witnesses (ArgClearWitness, ArgSkipUnlessNaN).
	ArgWatched
)

// ArgEmitter is what an instruction set supplies to Arg.
type ArgEmitter interface {
	Looper
	// Lanes is V, the lanes of a vector in the compared type
	// (ArgLaneBytes).
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
	// accumulator u, with cur as its index, by the update last set with
	// ArgSetUpdate (ArgExact at first).
	ArgUpdate(u int, off int64, n int)
	ArgSetUpdate(k ArgUpdateKind)
	// ArgClearWitness clears the NaN witnesses. ArgSkipUnlessNaN
	// branches to l unless one of them saw a NaN (every NaN loaded since
	// the clear is seen; on some instruction sets other values may look
	// like one).
	ArgClearWitness()
	ArgSkipUnlessNaN(l Label)
	// ArgStoreColumn stores accumulator u's V indices off bytes past the
	// dst pointer.
	ArgStoreColumn(u int, off int64)
	// ArgLoadScratch loads accumulator u's V values off bytes past the
	// scratch pointer and its indices plan.IndexScratchOutputs*4 bytes
	// further (each of them ArgLaneBytes long); ArgStoreScratch stores
	// them. The scratch pointer is the third of Pointers (Steps.Bin[0])
	// in a row-by-row column's kernel, set up by the emitter's Prologue
	// (plan.IndexArgs).
	ArgLoadScratch(u int, off int64)
	ArgStoreScratch(u int, off int64)
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
// last, where the hardware prefetchers do not follow). A row-by-row
// column prefetches the first line of each of the next group's runs as
// it starts a group: each run begins a page (with a page-aligned src) that
// neither the TLB nor the prefetchers have seen, and without the early
// touch every group's runs would wait for their translations and first
// lines together. The last group's prefetches point past the last row:
// a prefetch never faults, so they need no bound.
type ArgPrefetcher interface {
	// PrefetchSrc prefetches the line off bytes past the src pointer.
	PrefetchSrc(off int64)
}

// ArgPairUpdater is optional: an instruction set whose watched update
// can fold two loaded vectors into a NaN witness at once (AVX-512's
// row-by-row column: one ordered compare of the two into an opmask;
// AVX2: one unordered compare of the two, ORed into a mask), where each
// vector alone takes an instruction of its own.
type ArgPairUpdater interface {
	// ArgUpdatePair is ArgUpdate(u, off, V) then ArgUpdate(w, off2, V).
	ArgUpdatePair(u int, off int64, w int, off2 int64)
}

// ArgRowCurs is optional: an instruction set with vector registers to
// spare holds the indices of a row-by-row column's group of rows, set
// once per group, where each run of the group would otherwise step cur
// from row to row and back.
type ArgRowCurs interface {
	// ArgHoldRowCurs sets the held indices to cur+1 .. cur+k-1 (k at
	// most ArgRowsGroup) and reports true, or holds none and reports
	// false.
	ArgHoldRowCurs(k int) bool
	// ArgUseRowCur makes ArgUpdate take cur+r as its index: held by the
	// last ArgHoldRowCurs for r > 0, cur itself for 0.
	ArgUseRowCur(r int)
}

// ArgBlockSkipper is optional: an instruction set whose row shape skips
// the updates of a block of U vectors where none of its elements wins
// against a bound, the greatest element (least, for ArgMin) of the
// blocks before, held in every lane. A block is then its loads, a tree of
// max (min) instructions, one compare and a branch, where each vector
// would otherwise take a compare and two blends. Skipping is exact: an
// element that does not beat the bound is not the first greatest (with
// select_last_index: is less than it, so not the last greatest either),
// and the accumulators the skipped updates would have raised lose to the
// one holding the bound. It is offered under the one-compare updates
// only: under the exact one, a NaN must win wherever it is, and a tree of
// max instructions may drop it.
//
// A bound below the greatest element so far is as exact (only fewer
// blocks are skipped), so a block that was not skipped lets the
// ArgSkipRest blocks after it take their updates without the check: on
// rows that keep rising, such as ascending ones, every check fails and
// would only add to the updates.
type ArgBlockSkipper interface {
	// ArgSkips reports whether blocks may be skipped under the update
	// last set.
	ArgSkips() bool
	// ArgInitBound sets the bound to accumulator 0's values (after
	// ArgInit(0): the identity).
	ArgInitBound()
	// ArgSkipBlock branches to updates while blocks that follow one not
	// skipped are left unchecked (at most ArgSkipRest of them). Otherwise
	// it loads the n vectors off(0) .. off(n-1) bytes past the src
	// pointer, folds them into the NaN witnesses under ArgWatched, and
	// branches to past unless one of their elements wins against the
	// bound; where one does, it raises the bound to the block's greatest
	// (least) element and falls through to the block's updates.
	ArgSkipBlock(n int64, off func(i int64) int64, updates, past Label)
}

// ArgSkipRest is how many blocks after one not skipped take their
// updates unchecked.
const ArgSkipRest = 7

// argUpdates emits ArgUpdate(i, off(i), V) for accumulators 0..n-1 in
// turn, two at a time where the instruction set pairs them.
func argUpdates(e ArgEmitter, n int64, off func(i int64) int64) {
	pe, pairs := e.(ArgPairUpdater)
	for i := int64(0); i < n; i++ {
		if pairs && i+1 < n {
			pe.ArgUpdatePair(int(i), off(i), int(i+1), off(i+1))
			i++
			continue
		}
		e.ArgUpdate(int(i), off(i), e.Lanes())
	}
}

// argPrefetchRows is how many rows ahead a column block prefetches.
const argPrefetchRows = 8

// ArgRowsGroup is how many rows a row-by-row column takes per visit of
// its scratch: the scratch's loads and stores are shared by that many
// rows' loads.
const ArgRowsGroup = 4

// ArgRowsVecs is how many vectors of each row a row-by-row column takes
// per visit of its scratch (at most ArgAccs(true)).
const ArgRowsVecs = 6

// argRowsMinOutputs is the narrowest column that goes row by row: one
// wider than any instruction set's register block (AVX-512: 12 vectors
// of 16), whose rows' runs are too short for the prefetchers.
const argRowsMinOutputs = 256

// argRowsMinRows is the fewest rows a row-by-row column takes: with
// fewer, a register block's sweep is short and the scratch's loads and
// stores cost more than they save (docs/PERFORMANCE-log.md, "Zen 4:
// ArgMax and ArgMin, the column row by row").
const argRowsMinRows = 64

// ArgRowByRow reports whether pl takes the column shape row by row
// through a scratch (its kernel is called with a plan.IndexArgs block),
// on every instruction set: the width it asks for is more than any
// V.
func ArgRowByRow(pl *plan.ArgPlan) bool {
	in := pl.Inner
	return pl.HasInner && in.SrcStride == 1 && in.DstStride == 1 && in.Size >= argRowsMinOutputs && pl.R >= argRowsMinRows
}

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
		if ArgRowByRow(pl) {
			k.Emit(e, func() { argColumnRows(e, pl, rStep) })
			break
		}
		k.Emit(e, func() { argColumn(e, pl, rStep) })
	case ArgRow:
		k.Emit(e, func() { argChecked(e, pl, func() { argRow(e, pl, srcSize) }) })
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

// argChecked emits body, which writes its outputs from src alone, with
// the one-compare update: watched, and run again exactly when a witness
// is NaN, for a src that can hold NaN; only ordered for one that cannot.
func argChecked(e ArgEmitter, pl *plan.ArgPlan, body func()) {
	if !ArgNaNs(pl.SrcDT) {
		e.ArgSetUpdate(ArgOrdered)
		body()
		return
	}
	e.ArgSetUpdate(ArgWatched)
	e.ArgClearWitness()
	body()
	e.Flush()
	done := e.NewLabel()
	e.ArgSkipUnlessNaN(done)
	e.ArgSetUpdate(ArgExact)
	body()
	e.Flush()
	e.PlaceLabel(done)
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
			argUpdates(e, n, func(i int64) int64 { return i * v * s.Src })
			e.ArgAddCur(1)
		})
		for i := range n {
			e.ArgStoreColumn(int(i), i*v*s.Dst)
		}
	}
	argVectors(e, pl.Inner.Size, u, s, func(n int64) { argChecked(e, pl, func() { block(n) }) })
}

// argVectors emits body over w outputs (w >= V) at steps s per output:
// a loop over runs of u vectors, then the whole vectors left, then one
// vector stepped back to end at the last output (its outputs already
// done are done again, alike). body(n) emits n vectors at the pointers.
func argVectors(e ArgEmitter, w, u int64, s Steps, body func(n int64)) {
	v := int64(e.Lanes())
	full := w / (u * v)
	Loop(e, full, s.Scaled(u*v), func() { body(u) })
	at := func(i, n int64) {
		e.Pointers().Advance(s, i)
		body(n)
		e.Pointers().Advance(s, -i)
	}
	done := full * u * v
	if nv := (w - done) / v; nv > 0 {
		at(done, nv)
	}
	if w%v != 0 {
		at(w-v, 1)
	}
}

// argColumnRows emits the row-by-row column: the inner loop in blocks
// of up to plan.IndexScratchOutputs outputs (half as many in 64-bit
// lanes), each initialising the scratch, taking the R rows ArgRowsGroup
// at a time and storing its indices.
func argColumnRows(e ArgEmitter, pl *plan.ArgPlan, rStep Steps) {
	v := int64(e.Lanes())
	u := min(int64(e.ArgAccs(true)), ArgRowsVecs)
	s := e.StepsOf(&pl.Inner)
	// The scratch: a value (and an index) per output, each a lane long,
	// so that it holds half as many outputs of 64-bit lanes.
	per := ArgLaneBytes(pl.SrcDT)
	s.Bin[0] = per
	vec := func(i int64) int64 { return i * v * per }
	block := func(w int64) {
		argVectors(e, w, u, s, func(n int64) {
			for i := range n {
				e.ArgInit(int(i))
				e.ArgStoreScratch(int(i), vec(i))
			}
		})
		rc, _ := e.(ArgRowCurs)
		group := func(k int64) {
			held := rc != nil && rc.ArgHoldRowCurs(int(k))
			argVectors(e, w, u, s, func(n int64) {
				for i := range n {
					e.ArgLoadScratch(int(i), vec(i))
				}
				for r := range k {
					switch {
					case held:
						rc.ArgUseRowCur(int(r))
					case r > 0:
						e.ArgAddCur(1)
					}
					argUpdates(e, n, func(i int64) int64 { return r*rStep.Src + i*v*s.Src })
				}
				switch {
				case held:
					rc.ArgUseRowCur(0)
				case k > 1:
					e.ArgAddCur(1 - k)
				}
				for i := range n {
					e.ArgStoreScratch(int(i), vec(i))
				}
			})
		}
		e.ArgSetCur(0)
		groups := pl.R / ArgRowsGroup
		pf, prefetch := e.(ArgPrefetcher)
		Loop(e, groups, rStep.Scaled(ArgRowsGroup), func() {
			if prefetch {
				for r := range int64(ArgRowsGroup) {
					pf.PrefetchSrc((ArgRowsGroup + r) * rStep.Src)
				}
			}
			group(ArgRowsGroup)
			e.ArgAddCur(ArgRowsGroup)
		})
		if rest := pl.R % ArgRowsGroup; rest > 0 {
			e.Pointers().Advance(rStep, groups*ArgRowsGroup)
			group(rest)
			e.Pointers().Advance(rStep, -groups*ArgRowsGroup)
		}
		argVectors(e, w, u, s, func(n int64) {
			for i := range n {
				e.ArgLoadScratch(int(i), vec(i))
				e.ArgStoreColumn(int(i), i*v*s.Dst)
			}
		})
	}
	// Blocks of the scratch's width, then the outputs left as one block,
	// stepped back to V wide when fewer.
	W := plan.IndexScratchOutputs * 4 / per
	bs := Steps{Src: W * s.Src, Dst: W * s.Dst}
	full := pl.Inner.Size / W
	Loop(e, full, bs, func() { argChecked(e, pl, func() { block(W) }) })
	rest := pl.Inner.Size - full*W
	first := full * W
	if rest > 0 && rest < v {
		first, rest = pl.Inner.Size-v, v
	}
	if rest > 0 {
		at := Steps{Src: s.Src, Dst: s.Dst}
		e.Pointers().Advance(at, first)
		argChecked(e, pl, func() { block(rest) })
		e.Pointers().Advance(at, -first)
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
	sk, _ := e.(ArgBlockSkipper)
	skips := sk != nil && blocks > 0 && sk.ArgSkips()
	if skips {
		sk.ArgInitBound()
	}
	vec := func(i int64) int64 { return i * v * srcSize }
	Loop(e, blocks, Steps{Src: u * v * srcSize}, func() {
		if skips {
			updates, past := e.NewLabel(), e.NewLabel()
			e.Flush()
			sk.ArgSkipBlock(u, vec, updates, past)
			e.PlaceLabel(updates)
			argUpdates(e, u, vec)
			e.PlaceLabel(past)
		} else {
			argUpdates(e, u, vec)
		}
		e.ArgAddCur(u * v)
	})
	done := blocks * u * v
	ptrs := e.Pointers()
	ptrs.Advance(Steps{Src: srcSize}, done)
	left := (pl.R - done) / v
	argUpdates(e, left, vec)
	ptrs.Advance(Steps{Src: srcSize}, -done)
	if pl.R%v != 0 {
		e.ArgSetCur(pl.R - v)
		e.ArgUpdate(0, (pl.R-v)*srcSize, int(v))
	}
	e.ArgFinishRow(int(nacc))
}

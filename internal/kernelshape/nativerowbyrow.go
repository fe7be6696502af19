package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// The native row by row: a stage-1 chunk of long, wide rows that the
// runtime hints RowByRow (internal/jit/decompose.go), reduced as the f32
// kernels' RowByRow (rowbyrow.go) reduces one: a row at a time into dst,
// a contiguous row of partial results in the lanes' own type, which
// serves as the accumulators. Row 0 is combined with the identity and
// stored, each later row with what dst holds, so every output takes its
// rows in the column block's order, from the same identity: the bits are
// the column shape's. The chunk is then read as one stream, where the
// column blocks read a few lines of every row and move on to the next.

// NativeRowByRower is optional: an instruction set that takes a native
// column plan hinted RowByRow a row at a time.
type NativeRowByRower interface {
	// NativeRowByRow reports whether the runtime hinted the kernel's plan
	// RowByRow, and the bytes ahead each line of src is prefetched (0:
	// none; the instruction set is then a SrcPrefetcher).
	NativeRowByRow() (ahead int64, ok bool)
	// NativeLoadPartials loads n (V, or 1: lane 0 only) partials, off
	// bytes past the dst pointer, into accumulator u; NativeStorePartials
	// stores them from u, as the lane type.
	NativeLoadPartials(u int, off int64, n int)
	NativeStorePartials(u int, off int64, n int)
}

// nativeRowByRow reports whether pl, of kind k, has the shape the row by
// row takes where hinted: one reduced loop, that is not empty, under no
// kept loop; a contiguous Inner row of outputs at least V wide; a kind
// whose partials are its lanes, stored as they are (no finalize, no
// post-ops, no mean, a dst of the lanes' width).
func nativeRowByRow(pl *plan.Plan, k NativeKind, lay Layout, v int) bool {
	return lay.Work && !lay.ZeroSum && len(lay.Reduced) == 1 && len(lay.Kept) == 0 &&
		pl.HasInner && pl.Inner.SrcStride == 1 && pl.Inner.DstStride == 1 && pl.Inner.Size >= int64(v) &&
		k.Store == StoreLane && !k.PostOps && !k.Mean && !k.LSE && !k.FinalizesF64() &&
		int(pl.DstDT.Size()) == k.LaneBytes()
}

// nativeByRows emits the rows of red into dst a row at a time, u
// accumulators a step: each whole vector of the row, then its elements
// past the last one, each combined with dst's partial (the identity in
// row 0) and stored back; each 64-byte line of src prefetched ahead bytes
// ahead where ahead > 0.
func nativeByRows(e NativeEmitter, rb NativeRowByRower, pl *plan.Plan, k NativeKind, red plan.Loop, u int, ahead int64) {
	v := e.NativeLanes()
	sz := int64(k.Bytes)
	si := e.StepsOf(&pl.Inner)
	pf, _ := e.(SrcPrefetcher)
	if ahead <= 0 {
		pf = nil
	}
	one := func(acc int, at int64, n int, first bool) {
		off := at * sz
		if pf != nil && n == v && off%64 == 0 {
			pf.PrefetchSrc(off + ahead)
		}
		if first {
			e.NativeInit(acc)
		} else {
			rb.NativeLoadPartials(acc, off, n)
		}
		e.NativeLoad(acc, off, n)
		rb.NativeStorePartials(acc, off, n)
	}
	sweep := func(first bool) {
		Chunks(e, e.Pointers(), pl.Inner.Size, u*v, si, func(m int) {
			i := 0
			for ; (i+1)*v <= m; i++ {
				one(i, int64(i*v), v, first)
			}
			for j := i * v; j < m; j++ {
				one(0, int64(j), 1, first)
			}
		})
	}
	sweep(true)
	if red.Size > 1 {
		step := Steps{Src: red.SrcStride * sz}
		e.Pointers().Advance(step, 1)
		Loop(e, red.Size-1, step, func() { sweep(false) })
	}
}

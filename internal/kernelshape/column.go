package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// The column shape: [kept..., reduced..., Inner] with Inner contiguous in
// src. Blocks of up to ColumnConf.BlockVecs vectors of Inner are
// accumulated over the reduced rows with vertical combines, rows
// unrolled U ways into separate accumulators when the block is narrow
// (latency hiding), and finished a vector at a time; the last vector of
// Inner is partial. How a block adds a row is the instruction set's
// (ColumnBlock): amd64 takes 16-bit maxima as words and bf16 vectors in
// pairs, and prefetches; NEON loads four vectors at once.
//
// A narrow Inner of W lanes whose rows are back to back in src is read
// as one flat stream instead: M lanes per load (FlatLanes: a multiple of
// W), so that lane l always holds Inner index l mod W, and the lanes are
// folded at the end.

// ColumnConf is what the column shape takes from the kernel's
// configuration.
type ColumnConf struct {
	Flat      bool // a narrow Inner read as one flat stream
	BlockVecs int  // vectors of Inner in a block
}

// ColumnEmitter is what an instruction set supplies to Column.
type ColumnEmitter interface {
	RowEmitter
	// ColumnBlock configures a block of nv full vectors of Inner and,
	// when tail > 0, one vector of tail lanes. It emits nothing.
	ColumnBlock(nv, tail int) ColumnBlock
	// FlatLanes is M, the lanes of a flat stream's loads for an Inner of
	// w lanes: a multiple of w.
	FlatLanes(w int64) int64
	// FlatU is how many accumulators a flat stream keeps.
	FlatU() int
	// Fold combines lanes l + j*w (j < q) of r into lane l, for l < w.
	Fold(r, w, q int)
}

// ColumnBlock is how an instruction set sums one column block, laid out
// as Begin says: it adds rows and brackets the generic steps.
type ColumnBlock interface {
	// U is how many rows are unrolled into separate accumulators.
	U() int
	// Begin is called once the accumulators are at the identity, before
	// any row is added.
	Begin(l BlockLayout)
	// LoopTop begins each iteration of the loop over rows.
	LoopTop()
	// AddRow adds the block's vectors of the row off bytes past the src
	// pointer into unroll slot u's accumulators; inLoop says the row is
	// one of the loop's (not a leftover row).
	AddRow(u int, off int64, inLoop bool)
	// Swept is called when every row has been added; Combined when each
	// vector's accumulators are combined, running totals included; End
	// after the epilogues.
	Swept()
	Combined()
	End()
}

// BlockLayout is a column block's accumulators: K vectors (NV full ones
// and, when Tail > 0, one of Tail lanes), vector k of unroll slot u in
// register Acc(k, u).
type BlockLayout struct {
	K, U, NV, Tail int
	Acc            func(k, u int) int
	Width          func(k int) int // lanes of vector k
}

// Column emits the column shape for one iteration of the kept loops:
// the contiguous Inner loop in, over the reduced loops red.
func Column(e ColumnEmitter, c ColumnConf, in plan.Loop, red []plan.Loop, zeroSum bool) {
	si := e.StepsOf(&in)
	if c.Flat {
		flatColumn(e, red, in.Size, si)
		return
	}
	V := e.Lanes()
	// Inner in blocks of BlockVecs vectors; the last block holds what is
	// left: m/V full vectors and a partial one of m%V lanes.
	Chunks(e, e.Pointers(), in.Size, c.BlockVecs*V, si, func(m int) { colBlock(e, red, zeroSum, m/V, m%V, si) })
}

// colBlock sums nv full vectors of Inner plus, when tail > 0, one vector
// of tail lanes, over all reduced rows, and finishes them.
func colBlock(e ColumnEmitter, red []plan.Loop, zeroSum bool, nv, tail int, si Steps) {
	V := e.Lanes()
	K := nv
	if tail > 0 {
		K++
	}
	width := func(k int) int {
		if k == nv {
			return tail
		}
		return V
	}
	b := e.ColumnBlock(nv, tail)
	U := b.U()
	acc := func(k, u int) int { return u*K + k }
	e.InitAccs(K * U)
	b.Begin(BlockLayout{K: K, U: U, NV: nv, Tail: tail, Acc: acc, Width: width})
	// One running total per vector of the block, when the sums are cut
	// into runs.
	groups := Groups(K, U, acc)
	runs := Runs{Level: -1}
	if !zeroSum {
		if n := len(red); n == 0 {
			// Nothing reduced: the element combined with the identity
			// (a sum of one -0 is +0, as in the interpreter).
			b.AddRow(0, 0, false)
		} else {
			last := red[n-1]
			rb := last.SrcStride * e.ElemTypes().SrcSize
			iters, rem := last.Size/int64(U), int(last.Size%int64(U))
			runs = SumRuns(e, red[:n-1], iters, 1, e.ElemTypes().SrcSize, groups, acc(0, 0), func(chunk int, fold func()) {
				RunLoop(e, e.Pointers(), iters, Steps{Src: int64(U) * rb}, chunk, func() {
					b.LoopTop()
					for u := 0; u < U; u++ {
						b.AddRow(u, int64(u)*rb, true)
					}
				}, fold)
				for u := 0; u < rem; u++ {
					b.AddRow(u, (iters*int64(U)+int64(u))*rb, false)
				}
			})
		}
	}
	b.Swept()
	CombineGroups(e, runs, groups)
	b.Combined()
	for k := 0; k < K; k++ {
		Epilogue(e, acc(k, 0), Block(k, V, width(k), si))
	}
	b.End()
}

// StreamPrefetcher is optional: an instruction set that prefetches ahead
// of a flat stream when its configuration says so.
type StreamPrefetcher interface {
	// PrefetchStream prefetches the span bytes an iteration of the
	// stream's loop reads, ahead of it.
	PrefetchStream(span int64)
}

// flatColumn sums a narrow Inner of W lanes whose rows are contiguous, as
// one stream of M-lane loads per innermost reduced loop, then folds lane
// l + j*W into lane l. With W 1 every lane is folded into the one
// output, so lanes may mix on the way.
func flatColumn(e ColumnEmitter, red []plan.Loop, W int64, si Steps) {
	n := len(red)
	last := red[n-1]
	M := e.FlatLanes(W)
	size := e.ElemTypes().SrcSize
	total := last.Size * W
	nfull, remT := total/M, int(total%M)
	U := e.FlatU()
	e.InitAccs(U)
	mb := M * size
	groups := Groups(1, U, func(_, u int) int { return u })
	regs := groups[0]
	iters, remv := nfull/int64(U), int(nfull%int64(U))
	mix := W == 1
	pf, _ := e.(StreamPrefetcher)
	mk := e.Mark()
	runs := SumRuns(e, red[:n-1], iters, 1, size, groups, 0, func(chunk int, fold func()) {
		RunLoop(e, e.Pointers(), iters, Steps{Src: int64(U) * mb}, chunk, func() {
			if pf != nil {
				pf.PrefetchStream(int64(U) * mb)
			}
			e.AddVectors(regs, 0, int(M), mix)
		}, fold)
		if remv > 0 {
			e.AddVectors(regs[:remv], iters*int64(U)*mb, int(M), mix)
		}
		if remT > 0 {
			e.AddPartial(remv%U, nfull*mb, remT)
		}
	})
	CombineGroups(e, runs, groups)
	e.Release(mk)
	e.Fold(0, int(W), int(M/W))
	Epilogue(e, 0, Outputs(int(W), si))
}

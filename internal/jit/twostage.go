package jit

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// partials returns the data type of pl's partial results and the stage
// flags of its two stages. A float plan's partials are f32 (f64 for f64
// data: plan.PartialType), transformed
// and combined but not finalized (SkipFinalize), and stage 2 combines
// them (SkipTransform). An exact plan (plan.IsExact; never a mean, which
// is not split) has partials of its dst type, which its own reduction
// combines again with no stage flags: sums, products and the bitwise
// combines in the dst's two's complement width are associative, max and
// min too, and the logical ones write partial truths of 0 and 1, whose
// truths are themselves.
func partials(pl *plan.Plan) (dt dtypes.DataType, skipFinalize, skipTransform plan.Stage) {
	if plan.IsExact(pl.SrcDT, pl.Reduction) {
		return pl.DstDT, 0, 0
	}
	return plan.PartialType(pl.SrcDT), plan.SkipFinalize, plan.SkipTransform
}

// twoStage adds stage 1 (partial results of reduction chunks into a
// new scratch buffer: transformed and combined, not finalized) and stage 2
// (partials combined and finalized, post-ops, conversion).
// Stage-1 chunks are about target bytes (callBudget, or less for a plan
// of about one budget, see splitBudget).
//
// With rowByRow (the caller's rowByRow(pl)), stage 1 takes whole rows,
// or strips of wide ones (rowByRowWidth), at most rowByRowChunk of them
// per chunk, and hints its plans RowByRow.
//
// Scratch layout: [outer outputs O][chunks C][inner lanes I], so that
// stage 2 is an ordinary [O, R=C, I] plan over it: chunk j of lane i of
// outer output o sits at (o*C + j)*I + i.
func (dc *decomposer) twoStage(pl *plan.Plan, outer []rtLoop, outerCount int64, srcBuf, dstBuf, depth int, target int64, rowByRow bool) error {
	dc.setSplit("2stage")
	srcSz := esz(pl.SrcDT)
	partDT, skipFinalize, skipTransform := partials(pl)
	psz := esz(partDT) // the partials' element size
	budget := callBudget

	// A chunk row (w lanes) is at most a quarter of the budget, so each
	// chunk sums at least 4 rows and every stage shrinks the work at least
	// fourfold, even under tiny test budgets; rows the kernel sums whole
	// stay whole (at most 1 KiB, still a small part of a real budget).
	// Contiguous rows are read budget/maxTileRows bytes wide (1 KiB at the
	// 1 MiB budget) where they are that wide, so that a chunk has at most
	// maxTileRows rows, as a tile would (see maxTileRows); other rows are
	// read stageTile lanes wide.
	I, w := int64(1), int64(1)
	if pl.HasInner {
		I = pl.Inner.Size
		lanes := int64(stageTile)
		if pl.Inner.SrcStride == 1 {
			lanes = max(lanes, budget/(maxTileRows*srcSz))
		}
		w = min(I, lanes, max(1, budget/(4*srcSz)))
		if dc.wholeRows(pl) {
			w = I
		}
	}
	if rowByRow {
		dc.setSplit("rowbyrow")
		w = rowByRowWidth(I, srcSz, psz)
	}
	red := pl.Reduced
	// The chunk loop is the outermost reduced loop one iteration of which
	// fits the budget; the reduced loops outside it index chunks, and it is
	// cut into nb blocks of c iterations (the last may be shorter).
	k := len(red) - 1
	for i := range red {
		it := plan.MulSat(srcSz, w)
		for _, l := range red[i+1:] {
			it = plan.MulSat(it, l.Size)
		}
		if it <= budget {
			k = i
			break
		}
	}
	it := plan.MulSat(srcSz, w)
	for _, l := range red[k+1:] {
		it = plan.MulSat(it, l.Size)
	}
	c := min(max(budget/max(it, 1), 1), red[k].Size)
	if target < budget {
		// A plan of about one budget: chunks of about target bytes (at
		// least 4 rows, as at the full budget), at most parallelCalls
		// stage-1 calls in all. Any chunk fits the budget: the whole plan
		// does.
		c = min(c, max(target/max(it, 1), 4))
		if tiles := ceilDiv(I, w); tiles*ceilDiv(red[k].Size, c) > parallelCalls {
			c = ceilDiv(red[k].Size, max(parallelCalls/tiles, 1))
		}
	}
	if rowByRow {
		c = min(c, rowByRowChunk)
	}
	nb := ceilDiv(red[k].Size, c)
	c = ceilDiv(red[k].Size, nb)
	rc := red[k].Size - (nb-1)*c
	C := nb
	for _, l := range red[:k] {
		C = plan.MulSat(C, l.Size)
	}
	scratchBytes := plan.MulSat(plan.MulSat(plan.MulSat(outerCount, C), I), psz)
	if scratchBytes > maxScratchBytes {
		return status.Errorf(status.OutOfMemory, "jit: two-stage reduction would need %d bytes of partial sums", scratchBytes)
	}
	sbuf := bufScratch + len(dc.d.scratch)
	dc.d.scratch = append(dc.d.scratch, scratchBytes)

	// Runtime loops of stage 1: the outer outputs, the chunk-index reduced
	// loops, then the blocks of the chunk loop and the Inner tiles (both
	// handled per segment below). Dst strides are into scratch.
	var loops []rtLoop
	denseO := plan.MulSat(C, I) // partials per outer output
	for i := len(pl.Outer) - 1; i >= 0; i-- {
		loops = append([]rtLoop{{size: pl.Outer[i].Size, src: pl.Outer[i].SrcStride * srcSz, dst: denseO * psz}}, loops...)
		denseO = plan.MulSat(denseO, pl.Outer[i].Size)
	}
	denseR := plan.MulSat(nb, I)
	var chunkLoops []rtLoop
	for i := k - 1; i >= 0; i-- {
		chunkLoops = append([]rtLoop{{size: red[i].Size, src: red[i].SrcStride * srcSz, dst: denseR * psz}}, chunkLoops...)
		denseR = plan.MulSat(denseR, red[i].Size)
	}
	loops = append(loops, chunkLoops...)

	stage1 := func(rows, width int64) *plan.Plan {
		s := &plan.Plan{Reduction: pl.Reduction, Stage: pl.Stage | skipFinalize,
			SrcDT: pl.SrcDT, DstDT: partDT, Div: 1}
		s.Reduced = append(s.Reduced, plan.Loop{Size: rows, SrcStride: red[k].SrcStride})
		for _, l := range red[k+1:] {
			s.Reduced = append(s.Reduced, plan.Loop{Size: l.Size, SrcStride: l.SrcStride})
		}
		if pl.HasInner {
			s.HasInner = true
			s.Inner = plan.Loop{Size: width, SrcStride: pl.Inner.SrcStride, DstStride: 1}
		}
		counts(s)
		return s
	}
	type variant struct {
		rows, width int64
		blocks      int64 // chunk blocks this variant covers
		tiles       int64 // inner tiles this variant covers
		src, dst    int64 // base offsets in bytes
	}
	fullB, fullT := nb, I/w
	if rc != c {
		fullB--
	}
	remW := I % w
	var variants []variant
	add := func(rows, blocks, src0, dst0 int64) {
		if blocks == 0 {
			return
		}
		if fullT > 0 {
			variants = append(variants, variant{rows, w, blocks, fullT, src0, dst0})
		}
		if remW > 0 {
			var innerSrc int64
			if pl.HasInner {
				innerSrc = pl.Inner.SrcStride
			}
			variants = append(variants, variant{rows, remW, blocks, 1,
				src0 + fullT*w*innerSrc*srcSz, dst0 + fullT*w*psz})
		}
	}
	add(c, fullB, 0, 0)
	if rc != c {
		add(rc, 1, fullB*c*red[k].SrcStride*srcSz, fullB*I*psz)
	}
	var segs []segment
	for _, v := range variants {
		seg := segment{unit: dc.unitHinted(stage1(v.rows, v.width), kernelconf.Hints{RowByRow: rowByRow, FromMemory: dc.mem}), srcBuf: srcBuf, dstBuf: sbuf,
			srcOff: v.src, dstOff: v.dst}
		seg.loops = append(append([]rtLoop(nil), loops...),
			rtLoop{size: v.blocks, src: c * red[k].SrcStride * srcSz, dst: I * psz})
		if pl.HasInner {
			seg.loops = append(seg.loops, rtLoop{size: v.tiles, src: w * pl.Inner.SrcStride * srcSz, dst: w * psz})
		}
		seg.srcBytes = plan.MulSat(plan.MulSat(plan.MulSat(plan.MulSat(v.rows, it/max(w, 1)), v.width), v.blocks*v.tiles), outerCount)
		for _, l := range chunkLoops {
			seg.srcBytes = plan.MulSat(seg.srcBytes, l.size)
		}
		segs = append(segs, seg)
	}
	dc.phase(segs...)

	// Stage 2: the same outputs over the partials.
	s2 := &plan.Plan{Reduction: pl.Reduction, Stage: pl.Stage | skipTransform,
		SrcDT: partDT, DstDT: pl.DstDT, Div: pl.Div, PostOps: pl.PostOps}
	nbin := pl.BinaryCount()
	stride := plan.MulSat(C, I)
	for i := len(pl.Outer) - 1; i >= 0; i-- {
		l := pl.Outer[i]
		s2.Outer = append([]plan.Loop{{Size: l.Size, SrcStride: stride, DstStride: l.DstStride, BinStrides: l.BinStrides}}, s2.Outer...)
		stride = plan.MulSat(stride, l.Size)
	}
	s2.Reduced = []plan.Loop{{Size: C, SrcStride: I, BinStrides: make([]int64, nbin)}}
	if pl.HasInner {
		s2.HasInner = true
		s2.Inner = plan.Loop{Size: I, SrcStride: 1, DstStride: pl.Inner.DstStride, BinStrides: pl.Inner.BinStrides}
	}
	counts(s2)
	s2 = s2.Clone() // own every slice: the caller's plan stays untouched
	// Stage 2 reads the partials stage 1 wrote, from the caches.
	return dc.withMem(false, func() error { return dc.add(s2, sbuf, dstBuf, depth+1) })
}

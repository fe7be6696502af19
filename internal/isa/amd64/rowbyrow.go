package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Row by row: a column plan marked RowByRow (a stage-1 chunk of long,
// wide rows; see internal/jit/decompose.go) is reduced a row at a time into dst,
// an f32 row of the Inner width that stays in L1 and serves as the
// accumulator: row 0 is combined with the identity and stored, each later
// row with what dst holds, so every output still takes its rows in order,
// as a column block's register would. Any kind is taken so (on Zen cores
// log-sum-exp's sums of exp too; rowByRowKind): dst holds partial sums,
// products, maxima or minima of the transformed elements. Where the rows are back
// to back the chunk is read as one stream, which the column blocks (a few
// lines of every row, then the next rows) cannot do. Each 64-byte line is
// prefetched rowAhead bytes ahead (rounded up to whole rows; on Zen
// cores a stream of f32 rows less, rowByRowPrefetch): 8x512x4096
// bf16 over axis 1 ran faster with it (2 threads; 8 and 24 KiB ahead,
// 32 KiB, PREFETCHT1, T2 and NTA no better; docs/PERFORMANCE-log.md,
// "Figures behind the generators' choices (moved from code comments)").
// The likely cause is the one rowPrefetch gives: with several
// instructions per line (here a
// load and a store of the partials besides the converting combine), the
// reorder window alone keeps too few lines in flight.

// rowByRowVecs is how many vectors of a row one loop iteration adds (2,
// 8 and 12 measured the same).
const rowByRowVecs = 4

// rowByRowShape reports whether the column plan asks to be reduced row by
// row and has the shape that needs: no kept loops around the outputs, one
// reduced loop that is not empty, a kind the form takes, whose partials
// (a stage that skips the finalize, so no post-ops) are written as a
// contiguous f32 row.
func (g *gen) rowByRowShape(k kernelshape.Nest, red []plan.Loop, zeroSum bool) bool {
	pl := g.pl
	return pl.RowByRow && !zeroSum && len(k.Loops) == 0 && len(red) == 1 &&
		pl.Stage&plan.SkipFinalize != 0 && rowByRowKind(g.red, g.zen) && pl.Inner.DstStride == 1
}

// rowByRowKind reports whether reduction r is taken row by row: every
// combine, with or without |x| or x*x, and on Zen cores (zen) log-sum-exp's
// unshifted sums of exp. On the Xeon those ran at the column blocks' speed
// in some stretches and up to twice their time in others; on Zen 4, whose
// column blocks read such rows slower than their stream, they ran faster
// (docs/PERFORMANCE-log.md, "Log-sum-exp row by row on Zen cores").
func rowByRowKind(r plan.Reduction, zen bool) bool {
	if r.IsLogSumExp() {
		return zen
	}
	switch r.Transform {
	case plan.TransformNone, plan.TransformAbs, plan.TransformSquare:
		return r.Combine != plan.CombineFirst
	}
	return false
}

// reduceRowByRow emits the reduction over the rows of red, a row at a
// time.
func (g *gen) reduceRowByRow(red plan.Loop) {
	W := g.pl.Inner.Size
	si := g.StepsOf(&g.pl.Inner)
	rb := red.SrcStride * g.ssz
	pf := g.rowByRowPrefetch(W*g.ssz, rb)
	sweep := func(first bool) {
		kernelshape.Chunks(g, g.ptrs, W, rowByRowVecs*g.V, si, func(m int) {
			for v := 0; v*g.V < m; v++ {
				n := min(g.V, m-v*g.V)
				src, dst := int64(v*g.V)*g.ssz, int64(v*g.V)*4
				if pf != 0 && src%64 == 0 {
					g.op(x86.APREFETCHT0, g.m(rSrc, src+pf))
				}
				if first {
					g.initAcc(v)
				} else {
					g.load(dtypes.F32, v, g.m(rDst, dst), n)
				}
				g.accum(g.sdt, v, g.m(rSrc, src), n)
				g.store(dtypes.F32, v, g.m(rDst, dst), n)
			}
		})
	}
	sweep(true)
	if red.Size > 1 {
		step := kernelshape.Steps{Src: rb}
		g.ptrs.Advance(step, 1)
		g.Loop(red.Size-1, step, func() { sweep(false) })
	}
	if g.nanFree && !g.avx512 {
		// The partials, once complete, checked for -0 as the epilogue
		// checks an output (speculate.go).
		kernelshape.Chunks(g, g.ptrs, W, rowByRowVecs*g.V, si, func(m int) {
			for v := 0; v*g.V < m; v++ {
				n := min(g.V, m-v*g.V)
				g.load(dtypes.F32, v, g.m(rDst, int64(v*g.V)*4), n)
				g.negZeroCheck(v)
			}
		})
	}
}

// zenRowByRowL1 is how much of a Zen core's 32 KiB L1 a row-by-row
// stream of f32 rows may fill with its partials row (as long as a row, up
// to 16 KiB) and the lines prefetched ahead of its loads: past that, the
// lines in flight evict the partials, which every row reads and writes.
// On Zen 4 the f32 rows ran fastest with both within about 24 KiB
// (docs/PERFORMANCE-log.md, "Row by row prefetched to fit L1");
// 16-bit rows ran slower with less than rowAhead and keep it.
const zenRowByRowL1 = 24 << 10

// rowByRowPrefetch is the prefetch distance of the row-by-row loop over
// rows of rowBytes bytes, rb apart: for a stream of f32 rows (back to
// back) on Zen cores rowAhead or less, so that the partials row and the
// lines ahead fit zenRowByRowL1; else rowByRowAhead.
func (g *gen) rowByRowPrefetch(rowBytes, rb int64) int64 {
	if g.zen && g.ssz == 4 && rb == rowBytes {
		if ahead := min(rowAhead, zenRowByRowL1-rowBytes); ahead >= 64 && fits32(ahead+rowBytes) {
			return ahead
		}
	}
	return rowByRowAhead(rowBytes, rb)
}

// rowByRowAhead is the prefetch distance of rows of rowBytes bytes, rb
// apart: rowAhead rounded up to whole rows, so that a prefetch lands in a
// later row at the column being read (exactly rowAhead bytes or more
// when rows are back to back); 0, no prefetch, when that is too far for a
// displacement.
func rowByRowAhead(rowBytes, rb int64) int64 {
	if rowBytes <= 0 || rb <= 0 {
		return 0
	}
	d := ceilDiv(rowAhead, rowBytes) * rb
	if !fits32(d + rowBytes) {
		return 0
	}
	return d
}

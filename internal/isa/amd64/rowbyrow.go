package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Row by row: a column plan the chooser gives the RowByRow shape (a
// stage-1 chunk of long, wide rows marked so by the runtime; see
// internal/jit/decompose.go, and Choose for the kinds and targets) is
// reduced a row at a time into dst, an f32 row of the Inner width that
// stays in L1 and serves as the accumulator: row 0 is combined with the
// identity and stored, each later row with what dst holds, so every
// output still takes its rows in order, as a column block's register
// would. dst holds partial sums, products, maxima or minima of the
// transformed elements. Where the rows are back to back the chunk is
// read as one stream, which the column blocks (a few lines of every row,
// then the next rows) cannot do. Each 64-byte line is prefetched
// Conf.RowByRowAhead bytes ahead: with several instructions per line (a
// load and a store of the partials besides the converting combine), the
// reorder window alone keeps too few lines in flight
// (docs/PERFORMANCE-log.md, "Figures behind the generators' choices":
// "Row by row prefetched rowAhead ahead").

// reduceRowByRow emits the reduction over the rows of red, a row at a
// time.
func (g *gen) reduceRowByRow(red plan.Loop) {
	W := g.pl.Inner.Size
	si := g.StepsOf(&g.pl.Inner)
	rb := red.SrcStride * g.SrcSize
	pf := g.conf.RowByRowAhead
	sweep := func(first bool) {
		kernelshape.Chunks(g, g.ptrs, W, g.conf.tune.rowByRowVecs*g.V, si, func(m int) {
			for v := 0; v*g.V < m; v++ {
				n := min(g.V, m-v*g.V)
				src, dst := int64(v*g.V)*g.SrcSize, int64(v*g.V)*4
				if pf != 0 && src%64 == 0 {
					g.op(x86.APREFETCHT0, g.m(rSrc, src+pf))
				}
				if first {
					g.initAcc(v)
				} else {
					g.load(dtypes.F32, v, g.m(rDst, dst), n)
				}
				g.accum(g.SrcDT, v, g.m(rSrc, src), n)
				g.store(dtypes.F32, v, g.m(rDst, dst), n)
			}
		})
	}
	sweep(true)
	if red.Size > 1 {
		step := kernelshape.Steps{Src: rb}
		g.ptrs.Advance(step, 1)
		kernelshape.Loop(g, red.Size-1, step, func() { sweep(false) })
	}
	if g.nanFree && !g.avx512 {
		// The partials, once complete, checked for -0 as the epilogue
		// checks an output (speculate.go).
		kernelshape.Chunks(g, g.ptrs, W, g.conf.tune.rowByRowVecs*g.V, si, func(m int) {
			for v := 0; v*g.V < m; v++ {
				n := min(g.V, m-v*g.V)
				g.load(dtypes.F32, v, g.m(rDst, int64(v*g.V)*4), n)
				g.negZeroCheck(v)
			}
		})
	}
}

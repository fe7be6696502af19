package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Row by row is kernelshape.RowByRow's (see Choose for the kinds and
// targets that take it). Each 64-byte line is prefetched
// Conf.RowByRowAhead bytes ahead: with several instructions per line (a
// load and a store of the partials besides the converting combine), the
// reorder window alone keeps too few lines in flight
// (docs/PERFORMANCE-log.md, "Figures behind the generators' choices":
// "Row by row prefetched rowAhead ahead").

// reduceRowByRow emits the reduction over the rows of red, a row at a
// time, and then NaN-free AVX2 code's check of the partials.
func (g *gen) reduceRowByRow(red plan.Loop) {
	vecs := g.conf.tune.rowByRowVecs
	kernelshape.RowByRow(g, g.pl.Inner, red, vecs, g.conf.RowByRowAhead)
	if g.nanFree && !g.avx512 {
		// The partials, once complete, checked for -0 as the epilogue
		// checks an output (speculate.go).
		W := g.pl.Inner.Size
		si := g.StepsOf(&g.pl.Inner)
		kernelshape.Chunks(g, g.ptrs, W, vecs*g.V, si, func(m int) {
			for v := 0; v*g.V < m; v++ {
				n := min(g.V, m-v*g.V)
				g.load(dtypes.F32, v, g.m(rDst, int64(v*g.V)*4), n)
				g.negZeroCheck(v)
			}
		})
	}
}

// The row-by-row primitives (kernelshape.RowByRowEmitter).

func (g *gen) LoadPartials(r int, off int64, n int) { g.load(dtypes.F32, r, g.m(rDst, off), n) }

func (g *gen) StorePartials(r int, off int64, n int) { g.store(dtypes.F32, r, g.m(rDst, off), n) }

func (g *gen) PrefetchSrc(off int64) { g.op(x86.APREFETCHT0, g.m(rSrc, off)) }

package amd64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The column normalization's prefetches (kernelshape.NormColumns): a
// tile's rows are the channels, each a page or more from the last,
// which the hardware prefetchers do not run ahead of; PREFETCHT1 brings
// a line into the L2, where the tiles a few ahead wait without taking
// the L1 from the tile being swept.

// PrefetchSrcL2 prefetches the line off bytes past the src pointer into
// the L2.
func (g *gen) PrefetchSrcL2(off int64) { g.op(x86.APREFETCHT1, g.m(rSrc, off)) }

// PrefetchDstL2 prefetches the line off bytes past the dst pointer into
// the L2, so that its store does not wait for the line.
func (g *gen) PrefetchDstL2(off int64) { g.op(x86.APREFETCHT1, g.m(rDst, off)) }

var _ kernelshape.NormColumnPrefetcher = (*gen)(nil)

// TakeStage keeps a general register for the stage's address, leaving
// the loops' counters theirs (as reserveTotals does).
func (g *gen) TakeStage() bool {
	if len(g.gprFree) < len(g.pl.Outer)+len(g.pl.Reduced)+6 {
		return false
	}
	g.stage = g.Counter()
	return true
}

// StoreStage stores vector r at off bytes into the stage.
func (g *gen) StoreStage(r int, off int64) { g.op(x86.AVMOVUPS, g.vr(r), mem(g.stage, off)) }

// LoadStage loads vector r from off bytes into the stage.
func (g *gen) LoadStage(r int, off int64) { g.op(x86.AVMOVUPS, mem(g.stage, off), g.vr(r)) }

// AdvanceStage moves the stage's address by d bytes.
func (g *gen) AdvanceStage(d int64) { g.addImm(g.stage, d) }

var _ kernelshape.NormColumnStager = (*gen)(nil)

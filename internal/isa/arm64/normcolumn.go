package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The column normalization's prefetches (kernelshape.NormColumns), as
// amd64's: a tile's rows are the channels, each a page or more from the
// last, which the hardware prefetchers do not run ahead of; PRFM
// PLDL2KEEP brings a line into the L2, where the tiles a few ahead wait
// without taking the L1 from the tile being swept.

// PrefetchSrcL2 prefetches the line off bytes past the src pointer into
// the L2.
func (g *gen) PrefetchSrcL2(off int64) { g.prefetchL2(at(rSrc, off)) }

// PrefetchDstL2 prefetches the line off bytes past the dst pointer into
// the L2, so that its store does not wait for the line. PLDL2KEEP, not
// PSTL2KEEP: the map sweep reads a kept dst before it stores, and a
// load prefetch serves both.
func (g *gen) PrefetchDstL2(off int64) { g.prefetchL2(at(rDst, off)) }

// prefetchL2 emits PRFM PLDL2KEEP at x. The assembler encodes only the
// scaled form (a multiple of 8 below 32 KiB); another offset goes
// through R17 as any access's does.
func (g *gen) prefetchL2(x ref) {
	base, off := g.addrFits(x, func(o int64) bool { return fitsScaled(o, 8) })
	g.op(arm64.APRFM, mem(base, off), reg(arm64.REG_PLDL2KEEP))
}

var _ kernelshape.NormColumnPrefetcher = (*gen)(nil)

// TakeStage keeps a general register for the stage's address, leaving
// the loops' counters theirs.
func (g *gen) TakeStage() bool {
	if len(g.gprFree) < len(g.pl.Outer)+len(g.pl.Reduced)+6 {
		return false
	}
	g.stage = g.Counter()
	return true
}

// StoreStage stores vector r at off bytes into the stage.
func (g *gen) StoreStage(r int, off int64) { g.fpMem(false, 16, r, at(g.stage, off)) }

// LoadStage loads vector r from off bytes into the stage.
func (g *gen) LoadStage(r int, off int64) { g.fpMem(true, 16, r, at(g.stage, off)) }

// AdvanceStage moves the stage's address by d bytes.
func (g *gen) AdvanceStage(d int64) {
	g.addTo(g.stage, g.stage, d)
	g.moved(g.stage)
}

var _ kernelshape.NormColumnStager = (*gen)(nil)

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

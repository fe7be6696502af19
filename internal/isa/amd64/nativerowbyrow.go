package amd64

import (
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The native row by row (kernelshape.NativeRowByRower): a stage-1 chunk
// hinted RowByRow (AVX2 only, see Covers) a row at a time through its
// dst row of partials, each line of src prefetched as far ahead as the
// f32 row by row's rows of the same bytes (tuning.rowByRowAhead).

// NativeRowByRow reports the runtime's RowByRow hint and the prefetch
// distance of the plan's rows.
func (n *nativeGen) NativeRowByRow() (int64, bool) {
	if !n.byRow {
		return 0, false
	}
	sz := int64(n.k.Bytes)
	return n.conf.tune.rowByRowAhead(n.pl.Inner.Size*sz, n.pl.Reduced[0].SrcStride*sz), true
}

// NativeLoadPartials loads a whole vector of partials, or one into lane
// 0, into accumulator u.
func (n *nativeGen) NativeLoadPartials(u int, off int64, cnt int) {
	addr := n.m(rDst, off)
	if cnt == n.lanes {
		n.op(n.move(), addr, n.vr(u))
		return
	}
	switch n.k.Bytes {
	case 8:
		n.op(x86.AVMOVQ, addr, n.xr(u))
	case 4:
		n.op(x86.AVMOVD, addr, n.xr(u))
	default:
		n.op(map[bool]obj.As{true: x86.AMOVWLZX, false: x86.AMOVBLZX}[n.k.Bytes == 2], addr, reg(rScratch))
		n.op(x86.AVMOVD, reg(rScratch), n.xr(u))
	}
}

// NativeStorePartials stores accumulator u's lanes, or its lane 0, as
// partials.
func (n *nativeGen) NativeStorePartials(u int, off int64, cnt int) {
	addr := n.m(rDst, off)
	if cnt == n.lanes {
		n.op(n.move(), n.vr(u), addr)
		return
	}
	switch n.k.Bytes {
	case 8:
		n.op(x86.AVMOVQ, n.xr(u), addr)
	case 4:
		n.op(x86.AVMOVD, n.xr(u), addr)
	default:
		n.op(x86.AVMOVD, n.xr(u), reg(rScratch))
		n.op(map[bool]obj.As{true: x86.AMOVW, false: x86.AMOVB}[n.k.Bytes == 2], reg(rScratch), addr)
	}
}

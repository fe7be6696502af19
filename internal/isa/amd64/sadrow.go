package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Exact integer row sums of 8-bit data. A sum of one output whose rows
// are contiguous bytes is summed by VPSADBW against zero: each 8 bytes of
// a load add into a 64-bit lane, so a whole vector of 4V bytes costs one
// SAD and one add (u8; one XOR more for s8), where widening to f32 costs
// three instructions per V bytes. s8 bytes are biased to u8 by XOR 0x80
// (v+128), and 128 per byte summed (padding included) is taken off at
// the end. The 64-bit lanes cannot overflow (2^55 bytes), so the sum is
// exact, and it is rounded to f32 once, to nearest even, as the
// interpreter rounds its exact sum.

// sadRow sums the rows of one output (rp.Vec: contiguous rows of rp.Len
// bytes, under the reduced loops rp.Outer) and finishes it with lm.
func (g *gen) sadRow(rp *kernelshape.RowPlan, lm kernelshape.LaneMap) {
	B := int64(4 * g.V) // bytes per full vector
	full, tail := rp.Len/B, int(rp.Len%B)
	U := int(min(4, max(1, full)))
	for u := 0; u < U; u++ {
		g.zero(u)
	}
	mk := g.Mark()
	z, t := g.Tmp(), g.Tmp()
	g.zero(z)
	bias := -1
	if g.SrcDT == dtypes.S8 {
		bias = g.Tmp()
		g.constant(bias, 0x80808080)
	}
	xor := x86.AVPXOR
	if g.avx512 {
		xor = x86.AVPXORD
	}
	// sad adds the bytes at addr into the 64-bit lanes of acc: a full
	// vector, 16 bytes, or n < 16 bytes (zeros above, which a bias turns
	// into 128s like the rest).
	sad := func(acc int, addr obj.Addr, n int) {
		w := g.vr
		if n < int(B) {
			w = g.xr // VEX and EVEX clear the bits above
		}
		switch {
		case n < 16 && g.avx512:
			g.opz(x86.AVMOVDQU8, addr, g.kbits(uint32(1)<<n-1), g.xr(t))
			addr = g.xr(t)
		case n < 16:
			g.loadBytes(t, addr, n)
			addr = g.xr(t)
		}
		if bias >= 0 {
			g.op(xor, addr, w(bias), w(t))
			addr = w(t)
		}
		g.op(x86.AVPSADBW, addr, w(z), w(t))
		g.op(x86.AVPADDQ, g.vr(t), g.vr(acc), g.vr(acc))
	}
	fed := full * B // bytes summed per row, padding included
	kernelshape.EmitReducedRuns(g, g.ptrs, rp.Outer, g.SrcSize, kernelshape.Runs{Level: -1}, nil, func() {
		iters, remv := full/int64(U), int(full%int64(U))
		kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * B}, 0, func() {
			for u := 0; u < U; u++ {
				sad(u, g.m(rSrc, int64(u)*B), int(B))
			}
		}, nil)
		for u := 0; u < remv; u++ {
			sad(u, g.m(rSrc, (iters*int64(U)+int64(u))*B), int(B))
		}
		off := full * B
		for k := 0; k < tail; k += 16 {
			sad(k/16%U, g.m(rSrc, off+int64(k)), min(16, tail-k))
		}
	})
	fed += int64(tail+15) / 16 * 16
	for _, l := range rp.Outer {
		fed *= l.Size
	}
	for u := 1; u < U; u++ {
		g.op(x86.AVPADDQ, g.vr(u), g.vr(0), g.vr(0))
	}
	// The 64-bit lanes into lane 0.
	if g.avx512 {
		g.op(x86.AVEXTRACTI64X4, imm(1), g.vr(0), g.hr(t))
		g.op(x86.AVPADDQ, g.hr(t), g.hr(0), g.hr(0))
		g.op(x86.AVEXTRACTI64X2, imm(1), g.hr(0), g.xr(t))
	} else {
		g.op(x86.AVEXTRACTI128, imm(1), g.vr(0), g.xr(t))
	}
	g.op(x86.AVPADDQ, g.xr(t), g.xr(0), g.xr(0))
	g.op(x86.AVPSHUFD, imm(0x4E), g.xr(0), g.xr(t))
	g.op(x86.AVPADDQ, g.xr(t), g.xr(0), g.xr(0))
	if bias >= 0 {
		g.op(x86.AMOVQ, imm(128*fed), reg(rScratch))
		g.op(x86.AVMOVQ, reg(rScratch), g.xr(t))
		g.op(x86.AVPSUBQ, g.xr(t), g.xr(0), g.xr(0))
	}
	g.Release(mk)
	// To f32, rounded to nearest even (MXCSR's default), in every lane.
	g.op(x86.AVMOVQ, g.xr(0), reg(rScratch))
	g.op(x86.AVCVTSI2SSQ, reg(rScratch), g.xr(0), g.xr(0))
	g.op(x86.AVBROADCASTSS, g.xr(0), g.vr(0))
	kernelshape.Epilogue(g, 0, lm)
}

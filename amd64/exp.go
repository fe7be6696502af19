package amd64

import (
	"github.com/gdnn/gdnn/jit/vexp"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// exp sets every lane of r to e^r by package vexp's algorithm (its doc
// says why each step is there), in four temporaries, for both widths.
// Constants are broadcast where they are used: there is no register to
// keep them in across an AVX2 kernel.
func (g *gen) exp(r int) {
	mk := g.mark()
	defer g.release(mk)
	x := g.vr(r)
	orig, n, pr, c := g.vr(g.tmp()), g.vr(g.tmp()), g.tmp(), g.tmp()
	p := g.vr(pr)
	k := func(bits uint32) obj.Addr { g.constant(c, bits); return g.vr(c) }

	g.op(x86.AVMOVAPS, x, orig)
	g.op(x86.AVMINPS, k(vexp.HiBits), x, x)
	g.op(x86.AVMAXPS, k(vexp.LoBits), x, x)
	g.op(x86.AVMULPS, k(vexp.Log2eBits), x, n)
	g.roundEven(n)
	g.op(x86.AVFMADD231PS, k(vexp.NegLn2Hi), n, x) // x += n * -ln2hi
	g.op(x86.AVFMADD231PS, k(vexp.NegLn2Lo), n, x)

	g.constant(pr, vexp.Poly[vexp.PolyDegree])
	for i := vexp.PolyDegree - 1; i >= 0; i-- {
		g.op(x86.AVFMADD213PS, k(vexp.Poly[i]), x, p) // p = p*x + c_i
	}

	// 2^n1 and 2^n2 in n1 = c and n2 = n; x is free again.
	g.op(x86.AVCVTPS2DQ, n, n)
	g.op(x86.AVPSRAD, imm(1), n, g.vr(c))
	g.op(x86.AVPSUBD, g.vr(c), n, n)
	g.op(x86.AVPSLLD, imm(vexp.MantBits), g.vr(c), g.vr(c))
	g.op(x86.AVPSLLD, imm(vexp.MantBits), n, n)
	g.constant(r, vexp.OneBits)
	g.op(x86.AVPADDD, x, g.vr(c), g.vr(c))
	g.op(x86.AVPADDD, x, n, n)
	g.op(x86.AVMULPS, g.vr(c), p, p)
	g.op(x86.AVMULPS, n, p, x)

	g.keepNaN(x, orig, g.vr(c))
}

// roundEven rounds every lane of x to the nearest integer, ties to even.
func (g *gen) roundEven(x obj.Addr) {
	if g.avx512 {
		g.op(x86.AVRNDSCALEPS, imm(0), x, x)
		return
	}
	g.op(x86.AVROUNDPS, imm(0), x, x)
}

// keepNaN sets the lanes of x where orig is a NaN to orig, bits and all
// (arithmetic would have quietened a signalling NaN); AVX2 builds the
// lane mask in scratch.
func (g *gen) keepNaN(x, orig, scratch obj.Addr) {
	if g.avx512 {
		g.op(x86.AVCMPPS, imm(3), orig, orig, kreg(6)) // unordered
		g.op(x86.AVMOVAPS, orig, kreg(6), x)
		return
	}
	g.op(x86.AVCMPPS, imm(3), orig, orig, scratch)
	g.op(x86.AVBLENDVPS, scratch, orig, x, x)
}

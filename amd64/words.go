package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/kernelshape"
	"github.com/gdnn/gdnn/jit/plan"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Max and min of 16-bit floats in their own bits.
//
// bf16 and f16 are sign and magnitude. Read as unsigned 16-bit integers,
// the values with the sign clear (+0 up to +Inf, then the NaNs) order
// as the floats do and sit below every value with the sign set, and
// those (-0 up to -Inf, then the NaNs) order by magnitude. So over a set
// of values:
//
//   - the minimum is the largest unsigned word when any value has its
//     sign set (-0 is below +0), else the smallest unsigned word;
//   - the maximum is the largest signed word when any value has its
//     sign clear, else the smallest unsigned word;
//   - a NaN with the sign clear is the largest signed word, above the
//     word of +Inf, and one with the sign set the largest unsigned word,
//     above the word of -Inf, so either is seen, and wins (wordsWinner).
//
// Three accumulators, VPMINUW, VPMAXUW and VPMAXSW of the words as
// loaded, hold all of it exactly: three instructions per 2V values, with
// no widening, where the float combines take a widening and one to three
// instructions per V values. The winners are widened once, at the end of
// the row, into the float accumulators.

// wordsMinMax reports whether a row sweep takes its whole vectors as
// words (rowWords): a max or min of bf16 or f16 src with no transform.
func (g *gen) wordsMinMax() bool {
	c := g.red.Combine
	return (g.sdt == dtypes.BF16 || g.sdt == dtypes.F16) && g.red.Transform == plan.TransformNone &&
		(c == plan.CombineMax || c == plan.CombineMin)
}

// wordRegs are rowWords' registers: the three accumulators and a
// temporary.
type wordRegs struct{ umin, umax, smax, t int }

// takeWordRegs takes rowWords' four registers, or reports that there are
// not four. AVX2 NaN-free code has three temporaries; no src vector is
// pending once checkPending has run, so the pending register is the
// fourth.
func (g *gen) takeWordRegs() (wordRegs, bool) {
	free := g.tmpHi - g.tmpNext
	switch {
	case free >= 4:
		return wordRegs{g.tmp(), g.tmp(), g.tmp(), g.tmp()}, true
	case free == 3 && g.nanFree && !g.avx512:
		g.checkPending()
		return wordRegs{g.tmp(), g.tmp(), g.tmp(), yPending}, true
	}
	return wordRegs{}, false
}

// rowWords reduces one row of rk 16-bit values as words (see above), 2V
// values a load, U/2 loads an iteration, and combines the winners into
// the accumulators acc(0, 0) and acc(0, 1) (acc(0, 0) alone when U is 1).
// It returns how many elements it reduced: whole iterations only, the
// rest is rowSweep's.
func (g *gen) rowWords(rk int64, U int, acc func(row, u int) int, rowOff func(int) int64, chunk int, fold func()) int64 {
	W := 2 * int64(g.V)
	vb := W * g.ssz
	Up := max(1, U/2)
	iters := rk / W / int64(Up)
	if iters == 0 {
		return 0
	}
	mk := g.mark()
	defer g.release(mk)
	r, ok := g.takeWordRegs()
	if !ok {
		return 0
	}
	// The identities: every word is at most 0xFFFF unsigned, at least 0
	// unsigned and at least 0x8000 signed.
	g.constant(r.umin, 0xFFFFFFFF)
	g.zero(r.umax)
	g.constant(r.smax, 0x80008000)
	st := g.streams(1, Up, iters, vb)
	pf := g.rowPrefetch(1)
	mov := x86.AVMOVDQU
	if g.avx512 {
		mov = x86.AVMOVDQU16
	}
	kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(st.per) * vb}, chunk, func() {
		for up := 0; up < Up; up++ {
			off := rowOff(0) + st.offset(up, vb)
			if pf {
				g.prefetchLine(off, int64(up)*vb)
			}
			g.op(mov, g.m(rSrc, off), g.vr(r.t))
			g.op(x86.AVPMINUW, g.vr(r.t), g.vr(r.umin), g.vr(r.umin))
			g.op(x86.AVPMAXUW, g.vr(r.t), g.vr(r.umax), g.vr(r.umax))
			g.op(x86.AVPMAXSW, g.vr(r.t), g.vr(r.smax), g.vr(r.smax))
		}
	}, fold)
	w := g.wordsWinner(r)
	g.wordsInto(r, w, acc(0, 0), acc(0, min(1, U-1)))
	return iters * int64(Up) * W
}

// wordsWinner leaves in one of r's accumulators, and returns it, each
// lane's minimum or maximum word as the comment above finds it: a NaN
// where any was seen, in its own bits. Clobbers the others.
func (g *gen) wordsWinner(r wordRegs) int {
	inf := uint32(0x7f80) // +Inf's word; NaNs with the sign clear are above it
	if g.sdt == dtypes.F16 {
		inf = 0x7c00
	}
	k := kreg(6)
	if g.red.Combine == plan.CombineMin {
		// umin = sign seen ? umax : umin; then a NaN with the sign
		// clear (smax above +Inf, signed) wins.
		if g.avx512 {
			g.op(x86.AVPMOVW2M, g.vr(r.umax), k)
			g.op(x86.AVMOVDQU16, g.vr(r.umax), k, g.vr(r.umin))
			g.constant(r.t, inf<<16|inf)
			g.op(x86.AVPCMPGTW, g.vr(r.t), g.vr(r.smax), k)
			g.op(x86.AVMOVDQU16, g.vr(r.smax), k, g.vr(r.umin))
			return r.umin
		}
		g.op(x86.AVPSRAW, imm(15), g.vr(r.umax), g.vr(r.t))
		g.op(x86.AVPBLENDVB, g.vr(r.t), g.vr(r.umax), g.vr(r.umin), g.vr(r.umin))
		g.constant(r.t, inf<<16|inf)
		g.op(x86.AVPCMPGTW, g.vr(r.t), g.vr(r.smax), g.vr(r.t))
		g.op(x86.AVPBLENDVB, g.vr(r.t), g.vr(r.smax), g.vr(r.umin), g.vr(r.umin))
		return r.umin
	}
	// smax = no sign clear seen (smax has its sign set) ? umin : smax;
	// then a NaN with the sign set (umax above -Inf, unsigned) wins.
	negInf := inf | 0x8000
	if g.avx512 {
		g.op(x86.AVPMOVW2M, g.vr(r.smax), k)
		g.op(x86.AVMOVDQU16, g.vr(r.umin), k, g.vr(r.smax))
		g.constant(r.t, negInf<<16|negInf)
		g.op(x86.AVPCMPUW, imm(6), g.vr(r.t), g.vr(r.umax), k) // umax > -Inf's word (NLE)
		g.op(x86.AVMOVDQU16, g.vr(r.umax), k, g.vr(r.smax))
		return r.smax
	}
	g.op(x86.AVPSRAW, imm(15), g.vr(r.smax), g.vr(r.t))
	g.op(x86.AVPBLENDVB, g.vr(r.t), g.vr(r.umin), g.vr(r.smax), g.vr(r.smax))
	// umax >= -Inf's word + 1: max(umax, that) == umax.
	g.constant(r.t, (negInf+1)<<16|(negInf+1))
	g.op(x86.AVPMAXUW, g.vr(r.umax), g.vr(r.t), g.vr(r.t))
	g.op(x86.AVPCMPEQW, g.vr(r.umax), g.vr(r.t), g.vr(r.t))
	g.op(x86.AVPBLENDVB, g.vr(r.t), g.vr(r.umax), g.vr(r.smax), g.vr(r.smax))
	return r.smax
}

// wordsInto widens the 2V winning words in w to f32, exactly, and
// combines them into accA and accB (which may be the same register),
// with the src checks of NaN-free code. Uses r's registers but w's and
// r.t as it likes.
func (g *gen) wordsInto(r wordRegs, w, accA, accB int) {
	var free []int
	for _, x := range []int{r.umin, r.umax, r.smax} {
		if x != w {
			free = append(free, x)
		}
	}
	e, c := free[0], free[1]
	if g.sdt == dtypes.F16 {
		g.op(x86.AVCVTPH2PS, g.hr(w), g.vr(e))
		if g.avx512 {
			g.op(x86.AVEXTRACTI32X8, imm(1), g.vr(w), g.hr(c))
		} else {
			g.op(x86.AVEXTRACTI128, imm(1), g.vr(w), g.xr(c))
		}
		g.op(x86.AVCVTPH2PS, g.hr(c), g.vr(w))
	} else {
		// The even words shifted up, the odd ones with the low half
		// cleared: each the f32 of its bf16 (splitPair).
		g.op(x86.AVPSLLD, imm(16), g.vr(w), g.vr(e))
		g.constant(c, 0xFFFF0000)
		g.op(g.pand(), g.vr(c), g.vr(w), g.vr(w))
	}
	g.combine(accA, e)
	g.combine(accB, w)
}

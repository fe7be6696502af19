package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
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

// wordRegs are the registers of words: the three accumulators and a
// temporary for the loads.
type wordRegs struct{ umin, umax, smax, t int }

// rowWords reduces one row of rk 16-bit values as words (see above), 2V
// values a load, U/2 loads an iteration, and combines the winners into
// the accumulators acc(0, 0) and acc(0, 1) (acc(0, 0) alone when U is 1).
// It returns how many elements it reduced: whole iterations only, the
// rest is RowSweep's.
func (g *gen) rowWords(rk int64, U int, acc func(row, u int) int, rowOff func(int) int64, chunk int, fold func()) int64 {
	W := 2 * int64(g.V)
	vb := W * g.SrcSize
	Up := max(1, U/2)
	iters := rk / W / int64(Up)
	if iters == 0 {
		return 0
	}
	if g.tmpHi-g.tmpNext < 4 {
		return 0
	}
	mk := g.Mark()
	defer g.Release(mk)
	r := wordRegs{g.Tmp(), g.Tmp(), g.Tmp(), g.Tmp()}
	g.wordsInit(r)
	st := g.conf.streams(1, Up, iters, vb)
	pf := g.conf.RowPrefetch
	kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(st.per) * vb}, chunk, func() {
		for up := 0; up < Up; up++ {
			off := rowOff(0) + st.offset(up, vb)
			if pf {
				g.prefetchLine(off, int64(up)*vb)
			}
			g.wordsLoad(r, g.m(rSrc, off))
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
	if g.SrcDT == dtypes.F16 {
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

// wordsInto widens the 2V winning words in w to f32 and combines them
// into accA and accB (which may be the same register), with the src
// checks of NaN-free code. Clobbers r's registers.
func (g *gen) wordsInto(r wordRegs, w, accA, accB int) {
	g.wordsToF32(w, w, r.umax) // w is r.umin or r.smax
	g.combine(accA, w)
	g.combine(accB, r.umax)
}

// wordsToF32 widens the 2V words in w to f32, exactly and in order: the
// first V into lo, the others into hi (lo may be w; hi may not).
func (g *gen) wordsToF32(w, lo, hi int) {
	if g.avx512 {
		g.op(x86.AVEXTRACTI32X8, imm(1), g.vr(w), g.hr(hi))
	} else {
		g.op(x86.AVEXTRACTI128, imm(1), g.vr(w), g.xr(hi))
	}
	g.widen16(g.SrcDT, hi)
	if lo != w {
		g.op(x86.AVMOVAPS, g.vr(w), g.vr(lo))
	}
	g.widen16(g.SrcDT, lo)
}

// wordsLoad combines the 2V words at addr (their magnitudes, for |x|)
// into r's accumulators.
func (g *gen) wordsLoad(r wordRegs, addr obj.Addr) {
	if g.avx512 {
		g.op(x86.AVMOVDQU16, addr, g.vr(r.t))
	} else {
		g.op(x86.AVMOVDQU, addr, g.vr(r.t))
	}
	if g.red.Transform == plan.TransformAbs {
		g.op(x86.AVPSLLW, imm(1), g.vr(r.t), g.vr(r.t))
		g.op(x86.AVPSRLW, imm(1), g.vr(r.t), g.vr(r.t))
	}
	g.op(x86.AVPMINUW, g.vr(r.t), g.vr(r.umin), g.vr(r.umin))
	g.op(x86.AVPMAXUW, g.vr(r.t), g.vr(r.umax), g.vr(r.umax))
	g.op(x86.AVPMAXSW, g.vr(r.t), g.vr(r.smax), g.vr(r.smax))
}

// wordsInit sets r's accumulators to their identities: every word is at
// most 0xFFFF unsigned, at least 0 unsigned and at least 0x8000 signed.
func (g *gen) wordsInit(r wordRegs) {
	g.constant(r.umin, 0xFFFFFFFF)
	g.zero(r.umax)
	g.constant(r.smax, 0x80008000)
}

// wordPairs is how many pairs of a column block's nv full vectors and
// tail (U rows an iteration) colBlock takes as words: each pair and row
// takes a temporary beside its two accumulators, and one more is the
// load's; four are left for the block's other vectors, if any (a
// partial vector of AVX2's exact max takes that many).
func (g *gen) wordPairs(nv, tail, U int) int {
	if !g.conf.Words {
		return 0
	}
	free := g.tmpHi - g.tmpNext
	for wp := nv / 2; wp > 0; wp-- {
		need := wp*U + 1
		if 2*wp < nv || tail > 0 {
			need += 4
		}
		if need <= free {
			return wp
		}
	}
	return 0
}

// wordsToColumns turns a column block's word accumulators r into its f32
// accumulators: the winners' first V words into r.umin, the others into
// r.umax, in order, each as it would have been combined into the
// identity (NaN-free code flags a NaN among them, as combine does).
func (g *gen) wordsToColumns(r wordRegs) {
	w := g.wordsWinner(r)
	g.wordsToF32(w, r.umin, r.umax)
	switch {
	case !g.nanFree:
	case g.avx512:
		g.op(x86.AVCMPPS, imm(3), g.vr(r.umax), g.vr(r.umin), kreg(kCheck))
		g.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
	default:
		g.Fail(status.Errorf(status.RuntimeError, "amd64: words in AVX2 NaN-free code, which speculates leaves out"))
	}
}

package amd64

import (
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The column shape is kernelshape.Column's; these are its amd64
// primitives. A flat stream loads M = floor(V/W)*W lanes, so that a
// 3-wide Inner runs at 15/16 of the vector width instead of 3/16. A block
// takes a 16-bit max or min as words (words.go) and bf16 vectors in pairs
// (splitPair), prefetches the rows its configuration says, and an f32 L1
// sum takes |x| from memory with a held sign mask.
//
// When a whole iteration of the innermost kept loop is that small too
// (rows and iterations back to back, at most V/2 lanes each, as in
// [N, 2, 2] over axis 1), AVX-512 sums several iterations from one load
// (see flatOuter).

// Column emits the kept loops k around the column shape.
func (g *gen) Column(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	if g.conf.Shape == kernelconf.RowByRow {
		g.reduceRowByRow(red[0])
		return
	}
	one := func() { g.column(red, zeroSum) }
	G := g.conf.OuterGroup
	if G < 2 {
		k.Emit(g, one)
		return
	}
	outer, L, counted := k.SplitInnermost()
	sL := g.StepsOf(&L)
	outer.Emit(g, func() {
		kernelshape.GroupLoop(g, L.Size, G, sL, counted, k.Cnt, func(m int) { g.flatOuter(red, m) }, one)
	})
}

// flatOuter sums m consecutive iterations of the innermost kept loop
// (the shape outerGroup accepts), R rows of W each, with flatSums; their
// m*W outputs step along Inner.
func (g *gen) flatOuter(red []plan.Loop, m int) {
	W := int(g.pl.Inner.Size)
	si := g.StepsOf(&g.pl.Inner)
	g.flatSums(m, int(red[0].Size), W, kernelshape.LaneMap{N: m * W, DstStep: si.Dst, BinStep: si.Bin})
}

// flatSums sums m blocks of R rows of W elements, all back to back at the
// src pointer (P = R*W, m*P <= V), and finishes the m*W sums with lane
// map lm (AVX-512). One load of m*P lanes: lane g*P + r*W + i holds row
// r, element i of block g. Rotating the vector down by r*W lanes and
// adding, for r = 1..R-1, leaves the sums in lanes g*P + i (no lane wraps
// around: g*P + r*W + i < m*P), summed in row order like the
// interpreter. A compress packs them into lanes g*W + i.
func (g *gen) flatSums(m, R, W int, lm kernelshape.LaneMap) {
	P := R * W
	mk := g.Mark()
	defer g.Release(mk)
	s, v, t := g.Tmp(), g.Tmp(), g.Tmp()
	g.InitAcc(v)
	g.accum(g.SrcDT, v, g.m(rSrc, 0), m*P)
	g.op(x86.AVMOVAPS, g.vr(v), g.vr(s))
	for r := 1; r < R; r++ {
		g.rotate(t, v, r*W)
		g.combine(s, t)
	}
	var bits uint32
	for it := 0; it < m; it++ {
		for i := 0; i < W; i++ {
			bits |= 1 << (it*P + i)
		}
	}
	g.op(x86.AVCOMPRESSPS, g.vr(s), g.kbits(bits), g.vr(v))
	kernelshape.Epilogue(g, v, lm)
}

// column emits the column shape for one iteration of the kept loops.
func (g *gen) column(red []plan.Loop, zeroSum bool) {
	if g.conf.PrefetchKept {
		g.op(x86.APREFETCHT0, g.m(rSrc, g.conf.tune.pfAhead))
	}
	c := kernelshape.ColumnConf{Flat: g.conf.Shape == kernelconf.FlatColumn, BlockVecs: g.conf.ColAcc}
	kernelshape.Column(g, c, g.pl.Inner, red, zeroSum)
}

// colBlock is the amd64 lowering of one column block.
type colBlock struct {
	g       *gen
	conf    colBlockConf
	reduces bool // some row is added: not a zero sum, and a reduced loop
	l       kernelshape.BlockLayout
	pairs   int        // pair loads of full vectors 2p, 2p+1
	words   []wordRegs // word pair p of unroll slot u: words[p*U+u]
	pc      pairConsts // pair loads' constants
	vb      int64      // bytes per full vector
	perLine int        // full vectors per 64-byte line
	mk      int        // the block's temporaries
	mkWords int        // the words' temporaries
	hold    bool       // the accumulators hold temporaries off until End
	held    int        // the mark End releases
}

// ColumnBlock configures a block of nv full vectors and a tail.
func (g *gen) ColumnBlock(nv, tail int) kernelshape.ColumnBlock {
	lay := g.conf.f.lay
	return &colBlock{g: g, conf: g.conf.colBlock(nv, tail), reduces: !lay.ZeroSum && len(lay.Reduced) > 0}
}

func (b *colBlock) U() int { return b.conf.U }

// Begin takes the temporaries the block keeps and sets up its constants
// and word accumulators.
func (b *colBlock) Begin(l kernelshape.BlockLayout) {
	g := b.g
	b.l = l
	b.vb = int64(g.V) * g.SrcSize
	b.perLine = max(1, int(64/b.vb))
	// Accumulators past tmpLo (see Conf.ColAcc) hold the temporaries off
	// until the block is finished, and count as taken (placeSumExp must
	// not give them to constants).
	if l.K*l.U > g.tmpNext {
		b.hold, b.held = true, g.Mark()
		g.tmpNext = l.K * l.U
		g.tmpPeak = max(g.tmpPeak, g.tmpNext)
	}
	b.pairs = b.conf.Pairs
	// A 16-bit max or min takes the first pairs of full vectors as words
	// (words.go), as many as there are registers for.
	wp := 0
	if b.reduces {
		if wp = g.wordPairs(l.NV, l.Tail, l.U); wp > 0 {
			b.pairs = 0
		}
	}
	b.mk = g.Mark()
	// An f32 L1 sum on AVX-512 takes each |x| from memory in one VPANDD
	// with the sign mask (g.absMask, see accum), instead of a load and two
	// shifts: fewer instructions per vector, so more loads in flight (see
	// Conf.Busy).
	if g.conf.AbsMaskCols && b.reduces {
		g.holdAbsMask()
	}
	if b.pairs > 0 {
		b.pc = g.newPairConsts()
	}
	// Word pair p of unroll slot u keeps its unsigned minimum and maximum
	// in the pair's two accumulators, and its signed maximum in a
	// temporary of its own.
	b.mkWords = g.Mark()
	if wp > 0 {
		t := g.Tmp()
		for i := range wp * l.U {
			p, u := i/l.U, i%l.U
			r := wordRegs{umin: l.Acc(2*p, u), umax: l.Acc(2*p+1, u), smax: g.Tmp(), t: t}
			g.wordsInit(r)
			b.words = append(b.words, r)
		}
	}
}

// LoopTop prefetches a stream of masked rows ahead (StreamSpan).
func (b *colBlock) LoopTop() { b.g.prefetchAhead(b.conf.StreamSpan) }

// AddRow adds the K vectors of the row at byte offset off into the
// accumulators of unroll slot u, prefetching the lines of the first
// PfVecs vectors when the row is one of the loop's.
func (b *colBlock) AddRow(u int, off int64, inLoop bool) {
	g, l, vb := b.g, b.l, b.vb
	wp := len(b.words) / max(1, l.U)
	for k := 0; k < l.K; k++ {
		if inLoop && b.conf.PfDist != 0 && k < b.conf.PfVecs && k%b.perLine == 0 {
			g.op(x86.APREFETCHT0, g.m(rSrc, off+int64(k)*vb+b.conf.PfDist))
		}
		switch {
		case k < 2*wp && k%2 == 0:
			g.wordsLoad(b.words[k/2*l.U+u], g.m(rSrc, off+int64(k)*vb))
		case k < 2*wp:
			// Taken with k-1.
		case k < 2*b.pairs && k%2 == 0:
			g.combinePair(b.pc, l.Acc(k, u), l.Acc(k+1, u), g.m(rSrc, off+int64(k)*vb), 2*g.V)
		case k < 2*b.pairs:
			// Summed with k-1.
		default:
			g.accum(g.SrcDT, l.Acc(k, u), g.m(rSrc, off+int64(k)*vb), l.Width(k))
		}
	}
}

// Swept turns the word accumulators into f32 ones.
func (b *colBlock) Swept() {
	for _, r := range b.words {
		b.g.wordsToColumns(r)
	}
	b.g.Release(b.mkWords)
}

// Combined releases the block's constants and restores the order of
// pair-loaded columns.
func (b *colBlock) Combined() {
	g := b.g
	g.Release(b.mk)
	g.absMask = 0
	for p := 0; p < b.pairs; p++ {
		g.deinterleave(b.l.Acc(2*p, 0), b.l.Acc(2*p+1, 0))
	}
}

// End gives back the temporaries the accumulators held.
func (b *colBlock) End() {
	if b.hold {
		b.g.Release(b.held)
	}
}

// pairConsts are the constants of bf16 pair loads, each in a temporary:
// hiMask holds 0xFFFF0000 in every dword (0x7FFF0000 when the transform
// is |x|, see splitPair), one holds 1.0 (plain sums only, see
// combineHalves).
type pairConsts struct{ hiMask, one int }

func (g *gen) newPairConsts() pairConsts {
	pc := pairConsts{hiMask: g.Tmp()}
	if g.red.Transform == plan.TransformAbs {
		g.constant(pc.hiMask, 0x7FFF0000)
	} else {
		g.constant(pc.hiMask, 0xFFFF0000)
	}
	if g.plainSum() {
		pc.one = g.Tmp()
		g.constant(pc.one, 0x3f800000)
	}
	return pc
}

// splitPair sets e to the even-indexed bf16 values of the pair load src
// (memory on AVX-512, else o) and o to the odd ones, both exact f32: the
// dwords shifted left by 16, and the dwords with the low half cleared by
// hiMask. For |x| the even shift is by 17 and then back by 1, and
// hiMask clears the sign too: the halves come out as |x|, in one
// instruction more for the pair instead of four.
func (g *gen) splitPair(pc pairConsts, e, o int, src obj.Addr) {
	abs := g.red.Transform == plan.TransformAbs
	if abs {
		g.op(x86.AVPSLLD, imm(17), src, g.vr(e))
		g.op(x86.AVPSRLD, imm(1), g.vr(e), g.vr(e))
	} else {
		g.op(x86.AVPSLLD, imm(16), src, g.vr(e))
	}
	if g.avx512 {
		g.op(x86.AVPANDD, src, g.vr(pc.hiMask), g.vr(o))
	} else {
		g.op(x86.AVPAND, g.vr(pc.hiMask), src, g.vr(o))
	}
}

// combineHalves combines the even halves e and the odd halves o of a
// pair load into the accumulators even and odd (the same register when
// there is one), clobbering e and o. A plain sum's odd add is
// VFMADD231PS by 1.0: o*1 is exact, so it rounds as VADDPS does, bit for
// bit, but it issues on the FMA pipes, beside the even add on the add
// pipes: pair sums in L2 are short of add pipes, not of loads
// (docs/PERFORMANCE-log.md, "Figures behind the generators' choices":
// "bf16 pair sums' odd add as an FMA by 1.0"). NaN-free max and min
// (speculate.go) check both halves with one compare.
func (g *gen) combineHalves(pc pairConsts, even, odd, e, o int) {
	if g.plainSum() {
		g.vadd(even, e)
		g.op(x86.AVFMADD231PS, g.vr(pc.one), g.vr(o), g.vr(odd))
		return
	}
	if g.red.Transform != plan.TransformAbs { // splitPair took |x|
		g.transform(e)
		g.transform(o)
	}
	if g.nanFree {
		g.pairFast(even, odd, e, o)
		return
	}
	g.combine(even, e)
	g.combine(odd, o)
}

// combinePair combines n bf16 values at addr (n <= 2V, the words past n
// zeroed, not read: a sum's identity; AVX2 only n == 2V) into two
// accumulators: the even-indexed values into even, the odd ones into
// odd (splitPair). One load feeds two combines, five instructions per 2V
// values of a sum instead of six (rowPairs' loop, shifting and masking
// straight from memory, takes four); deinterleave restores the order of
// columns.
func (g *gen) combinePair(pc pairConsts, even, odd int, addr obj.Addr, n int) {
	mk := g.Mark()
	e, o := g.Tmp(), g.Tmp()
	switch {
	case !g.avx512:
		if n != 2*g.V {
			g.Fail(status.Errorf(status.Unimplemented, "amd64: AVX2 pair load of %d bf16 values", n))
		}
		g.op(x86.AVMOVDQU, addr, g.vr(o))
	case n == 2*g.V:
		g.op(x86.AVMOVDQU32, addr, g.vr(o))
	default:
		g.opz(x86.AVMOVDQU16, addr, g.kbits(uint32(1)<<n-1), g.vr(o))
	}
	g.splitPair(pc, e, o, g.vr(o))
	g.combineHalves(pc, even, odd, e, o)
	g.Release(mk)
}

// deinterleave turns the pair results of combinePair (lane i of even is value
// 2i, lane i of odd value 2i+1) into two vectors in value order: values
// 0..V-1 into even, V..2V-1 into odd.
func (g *gen) deinterleave(even, odd int) {
	mk := g.Mark()
	defer g.Release(mk)
	lo, hi := g.Tmp(), g.Tmp()
	if !g.avx512 {
		// Per 128-bit half: lo = [e0 o0 e1 o1 | e4 o4 e5 o5] (values
		// 0-3 | 8-11), hi = values 4-7 | 12-15; then the halves joined.
		g.op(x86.AVUNPCKLPS, g.vr(odd), g.vr(even), g.vr(lo))
		g.op(x86.AVUNPCKHPS, g.vr(odd), g.vr(even), g.vr(hi))
		g.op(x86.AVPERM2F128, imm(0x20), g.vr(hi), g.vr(lo), g.vr(even))
		g.op(x86.AVPERM2F128, imm(0x31), g.vr(hi), g.vr(lo), g.vr(odd))
		return
	}
	var il, ih [16]int
	for j := range il {
		// Index bit 4 picks the second table (odd).
		il[j] = j/2 + 16*(j%2)
		ih[j] = il[j] + 8
	}
	g.index16(lo, il)
	g.index16(hi, ih)
	g.op(x86.AVPERMI2PS, g.vr(odd), g.vr(even), g.vr(lo))
	g.op(x86.AVPERMI2PS, g.vr(odd), g.vr(even), g.vr(hi))
	g.op(x86.AVMOVAPS, g.vr(lo), g.vr(even))
	g.op(x86.AVMOVAPS, g.vr(hi), g.vr(odd))
}

// index16 builds a 16-dword index vector in zmm r from byte values.
func (g *gen) index16(r int, idx [16]int) {
	var lo, hi uint64
	for i := 0; i < 8; i++ {
		lo |= uint64(idx[i]&0xFF) << (8 * i)
		hi |= uint64(idx[i+8]&0xFF) << (8 * i)
	}
	g.op(x86.AMOVQ, imm(int64(lo)), reg(rScratch))
	g.op(x86.AVMOVQ, reg(rScratch), g.xr(r))
	g.op(x86.AMOVQ, imm(int64(hi)), reg(rScratch))
	g.op(x86.AVPINSRQ, imm(1), reg(rScratch), g.xr(r), g.xr(r))
	g.op(x86.AVPMOVZXBD, g.xr(r), g.vr(r))
}

// FlatLanes is M = floor(V/w)*w.
func (g *gen) FlatLanes(w int64) int64 { return (int64(g.V) / w) * w }

// FlatU is the flat stream's accumulators.
func (g *gen) FlatU() int { return g.conf.FlatU }

// PrefetchStream prefetches a flat stream when the configuration says
// so (Conf.FlatPrefetch).
func (g *gen) PrefetchStream(span int64) {
	if g.conf.FlatPrefetch {
		g.prefetchAhead(span)
	}
}

// AddVectors adds vectors of m lanes back to back, one accum each.
func (g *gen) AddVectors(accs []int, off int64, m int, _ bool) {
	for i, a := range accs {
		g.accum(g.SrcDT, a, g.m(rSrc, off+int64(i*m)*g.SrcSize), m)
	}
}

// AddPartial adds n lanes, masked.
func (g *gen) AddPartial(acc int, off int64, n int) { g.accum(g.SrcDT, acc, g.m(rSrc, off), n) }

// Fold combines lanes l + j*w (j < q) into lane l, for l < w: halving
// while q is even, peeling the last block while q is odd.
func (g *gen) Fold(r, w, q int) {
	if q <= 1 {
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	if q%2 == 1 {
		e := g.Tmp()
		g.rotate(e, r, (q-1)*w)
		g.Fold(r, w, q-1)
		g.CombineAcc(r, e)
		return
	}
	t := g.Tmp()
	g.rotate(t, r, (q/2)*w)
	g.CombineAcc(r, t)
	g.Fold(r, w, q/2)
}

package amd64

import (
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The column shape: [kept..., reduced..., Inner] with Inner contiguous in
// src. Blocks of up to nacc vectors of Inner are accumulated over the
// reduced rows with vertical adds, rows unrolled U ways into separate
// accumulators when the block is narrow (latency hiding), and finished a
// vector at a time; the last vector of Inner is masked.
//
// A narrow Inner (at most V/2 lanes) whose rows are back to back in src
// is read as one flat stream instead: M = floor(V/W)*W lanes per load, so
// that lane l always holds Inner index l mod W, and the lanes are folded
// at the end. A 3-wide Inner then runs at 15/16 of the vector width
// instead of 3/16.
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
	g.initAcc(v)
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
	in := g.pl.Inner
	W := in.Size
	si := g.StepsOf(&in)
	if g.conf.PrefetchKept {
		g.op(x86.APREFETCHT0, g.m(rSrc, g.conf.tune.pfAhead))
	}
	if g.conf.Shape == kernelconf.FlatColumn {
		g.flatColumn(red, W, si)
		return
	}
	// Inner in blocks of nacc vectors; the last block holds what is left:
	// m/V full vectors and a partial one of m%V lanes.
	kernelshape.Chunks(g, g.ptrs, W, g.conf.ColAcc*g.V, si, func(m int) { g.colBlock(red, zeroSum, m/g.V, m%g.V, si) })
}

// colBlock sums nv full vectors of Inner plus, when tail > 0, one vector
// of tail lanes, over all reduced rows, and finishes them.
func (g *gen) colBlock(red []plan.Loop, zeroSum bool, nv, tail int, si kernelshape.Steps) {
	K := nv
	if tail > 0 {
		K++
	}
	width := func(k int) int {
		if k == nv {
			return tail
		}
		return g.V
	}
	bc := g.conf.colBlock(nv, tail)
	U := bc.U
	vb := int64(g.V) * g.SrcSize
	acc := func(k, u int) int { return u*K + k }
	g.InitAccs(K * U)
	// Accumulators past tmpLo (see Conf.ColAcc) hold the temporaries off
	// until the block is finished, and count as taken (placeSumExp must
	// not give them to constants).
	if K*U > g.tmpNext {
		defer g.Release(g.Mark())
		g.tmpNext = K * U
		g.tmpPeak = max(g.tmpPeak, g.tmpNext)
	}
	pairs := bc.Pairs
	// A 16-bit max or min takes the first pairs of full vectors as words
	// (words.go), as many as there are registers for.
	wp := 0
	if !zeroSum && len(red) > 0 {
		if wp = g.wordPairs(nv, tail, U); wp > 0 {
			pairs = 0
		}
	}
	mk := g.Mark()
	// An f32 L1 sum on AVX-512 takes each |x| from memory in one VPANDD
	// with the sign mask (g.absMask, see accum), instead of a load and two
	// shifts: fewer instructions per vector, so more loads in flight (see
	// Conf.Busy).
	if g.conf.AbsMaskCols && !zeroSum && len(red) > 0 {
		g.holdAbsMask()
	}
	var pc pairConsts
	if pairs > 0 {
		pc = g.newPairConsts()
	}
	// Word pair p of unroll slot u keeps its unsigned minimum and maximum
	// in the pair's two accumulators, and its signed maximum in a
	// temporary of its own.
	var words []wordRegs
	mkWords := g.Mark()
	if wp > 0 {
		t := g.Tmp()
		for i := range wp * U {
			p, u := i/U, i%U
			r := wordRegs{umin: acc(2*p, u), umax: acc(2*p+1, u), smax: g.Tmp(), t: t}
			g.wordsInit(r)
			words = append(words, r)
		}
	}
	// Full vectors whose lines are prefetched (whole 64-byte lines), one
	// prefetch per line.
	perLine := max(1, int(64/vb))
	pfVecs, pfDist, streamSpan := bc.PfVecs, bc.PfDist, bc.StreamSpan
	// addRow adds the K vectors of the row at byte offset off into the
	// accumulators of unroll slot u, prefetching when pf.
	addRow := func(u int, off int64, pf bool) {
		for k := 0; k < K; k++ {
			if pf && pfDist != 0 && k < pfVecs && k%perLine == 0 {
				g.op(x86.APREFETCHT0, g.m(rSrc, off+int64(k)*vb+pfDist))
			}
			switch {
			case k < 2*wp && k%2 == 0:
				g.wordsLoad(words[k/2*U+u], g.m(rSrc, off+int64(k)*vb))
			case k < 2*wp:
				// Taken with k-1.
			case k < 2*pairs && k%2 == 0:
				g.combinePair(pc, acc(k, u), acc(k+1, u), g.m(rSrc, off+int64(k)*vb), 2*g.V)
			case k < 2*pairs:
				// Summed with k-1.
			default:
				g.accum(g.SrcDT, acc(k, u), g.m(rSrc, off+int64(k)*vb), width(k))
			}
		}
	}
	// One running total per vector of the block, when the sums are cut
	// into runs.
	groups := kernelshape.Groups(K, U, acc)
	runs := kernelshape.Runs{Level: -1}
	if !zeroSum {
		if n := len(red); n == 0 {
			// Nothing reduced: the element combined with the
			// identity (a sum of one -0 is +0, as in the interpreter).
			for k := 0; k < K; k++ {
				g.accum(g.SrcDT, acc(k, 0), g.m(rSrc, int64(k)*vb), width(k))
			}
		} else {
			last := red[n-1]
			rb := last.SrcStride * g.SrcSize
			iters, rem := last.Size/int64(U), int(last.Size%int64(U))
			runs = kernelshape.SumRuns(g, red[:n-1], iters, 1, g.SrcSize, groups, acc(0, 0), func(chunk int, fold func()) {
				kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * rb}, chunk, func() {
					g.prefetchAhead(streamSpan)
					for u := 0; u < U; u++ {
						addRow(u, int64(u)*rb, true)
					}
				}, fold)
				for u := 0; u < rem; u++ {
					addRow(u, (iters*int64(U)+int64(u))*rb, false)
				}
			})
		}
	}
	for _, r := range words {
		g.wordsToColumns(r)
	}
	g.Release(mkWords)
	for k := 0; k < K; k++ {
		kernelshape.CombineTree(g, groups[k])
	}
	if !runs.None() {
		g.AddTotals(groups)
	}
	g.Release(mk)
	g.absMask = 0
	for p := 0; p < pairs; p++ {
		g.deinterleave(acc(2*p, 0), acc(2*p+1, 0))
	}
	for k := 0; k < K; k++ {
		kernelshape.Epilogue(g, acc(k, 0), kernelshape.Block(k, g.V, width(k), si))
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

// flatColumn sums a narrow Inner of W lanes whose rows are contiguous, as
// one stream of M-lane loads per innermost reduced loop, then folds lane
// l + j*W into lane l.
func (g *gen) flatColumn(red []plan.Loop, W int64, si kernelshape.Steps) {
	n := len(red)
	last := red[n-1]
	M := (int64(g.V) / W) * W
	total := last.Size * W
	nfull, remT := total/M, int(total%M)
	U := g.conf.FlatU
	g.InitAccs(U)
	mb := M * g.SrcSize
	groups := kernelshape.Groups(1, U, func(_, u int) int { return u })
	regs := groups[0]
	iters, remv := nfull/int64(U), int(nfull%int64(U))
	mk := g.Mark()
	runs := kernelshape.SumRuns(g, red[:n-1], iters, 1, g.SrcSize, groups, 0, func(chunk int, fold func()) {
		kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * mb}, chunk, func() {
			if g.conf.FlatPrefetch {
				g.prefetchAhead(int64(U) * mb)
			}
			for u := 0; u < U; u++ {
				g.accum(g.SrcDT, u, g.m(rSrc, int64(u)*mb), int(M))
			}
		}, fold)
		for u := 0; u < remv; u++ {
			g.accum(g.SrcDT, u, g.m(rSrc, (iters*int64(U)+int64(u))*mb), int(M))
		}
		if remT > 0 {
			g.accum(g.SrcDT, remv%U, g.m(rSrc, nfull*mb), remT)
		}
	})
	kernelshape.CombineTree(g, regs)
	if !runs.None() {
		g.AddTotals(groups)
	}
	g.Release(mk)
	g.fold(0, int(W), int(M/W))
	kernelshape.Epilogue(g, 0, kernelshape.Outputs(int(W), si))
}

// fold combines lanes l + j*w (j < q) into lane l, for l < w: halving
// while q is even, peeling the last block while q is odd.
func (g *gen) fold(r, w, q int) {
	if q <= 1 {
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	if q%2 == 1 {
		e := g.Tmp()
		g.rotate(e, r, (q-1)*w)
		g.fold(r, w, q-1)
		g.CombineAcc(r, e)
		return
	}
	t := g.Tmp()
	g.rotate(t, r, (q/2)*w)
	g.CombineAcc(r, t)
	g.fold(r, w, q/2)
}

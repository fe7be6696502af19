package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
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

// chainTarget is how many independent add chains a loop body should have
// to cover the FP add latency at two adds per cycle.
const chainTarget = 8

// Column emits the kept loops k around the column shape.
func (g *gen) Column(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	if g.rowByRowShape(k, red, zeroSum) {
		g.reduceRowByRow(red[0])
		return
	}
	one := func() { g.column(red, zeroSum) }
	G := g.outerGroup(k, red, zeroSum)
	if G < 2 {
		k.Emit(g, one)
		return
	}
	outer, L, counted := k.SplitInnermost()
	sL := g.StepsOf(&L)
	outer.Emit(g, func() {
		g.groupLoop(L.Size, G, sL, counted, k.Cnt, func(m int) { g.flatOuter(red, m) }, one)
	})
}

// outerGroup returns how many iterations of the innermost kept loop of k
// flatOuter sums at once, or 0 where it does not apply. It needs AVX-512,
// one reduced loop whose rows are back to back (stride W, the Inner
// width), iterations back to back (stride P = R*W) of at most V/2 lanes,
// and outputs and operands laid out alike along the loop and Inner, so
// that the packed results map to dst with one step.
func (g *gen) outerGroup(k kernelshape.Nest, red []plan.Loop, zeroSum bool) int {
	if !g.avx512 || zeroSum || len(red) != 1 || len(k.Loops) == 0 {
		return 0
	}
	in, L := g.pl.Inner, k.Loops[len(k.Loops)-1]
	W := in.Size
	P := red[0].Size * W
	if red[0].SrcStride != W || L.SrcStride != P || P > int64(g.V/2) || L.DstStride != W*in.DstStride {
		return 0
	}
	for b := 0; b < g.nbin; b++ {
		if L.BinStrides[b] != W*in.BinStrides[b] {
			return 0
		}
	}
	return g.V / int(P)
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
	mk := g.mark()
	defer g.release(mk)
	s, v, t := g.tmp(), g.tmp(), g.tmp()
	g.initAcc(v)
	g.accum(g.sdt, v, g.m(rSrc, 0), m*P)
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
	g.epilogue(v, lm)
}

// column emits the column shape for one iteration of the kept loops.
func (g *gen) column(red []plan.Loop, zeroSum bool) {
	in := g.pl.Inner
	W := in.Size
	si := g.StepsOf(&in)
	n := len(red)
	if !zeroSum {
		g.prefetchKept()
	}
	if !zeroSum && n > 0 && W <= int64(g.V/2) && red[n-1].SrcStride == W {
		g.flatColumn(red, W, si)
		return
	}
	// Inner in blocks of nacc vectors; the last block holds what is left:
	// m/V full vectors and a partial one of m%V lanes.
	kernelshape.Chunks(g, g.ptrs, W, g.colAcc()*g.V, si, func(m int) { g.colBlock(red, zeroSum, m/g.V, m%g.V, si) })
}

// colAcc is how many accumulators a column block may use: nacc, or 12 on
// AVX2 when nothing needs more than the two temporaries that leaves (f32
// in and out, sums with no exp, no post-ops, a finalize of one constant
// at most). A wider block reads more of each strided row per visit,
// which the hardware prefetchers follow better: 12 instead of 8 ran
// 1024x4096 f32 over rows, and the middle axis of 8x512x4096 and of
// 16x1568x4096, faster at 2 threads (docs/PERFORMANCE-log.md, "Figures
// behind the generators' choices (moved from code comments)").
func (g *gen) colAcc() int {
	if !g.avx512 && g.sdt == dtypes.F32 && g.ddt == dtypes.F32 && len(g.pl.PostOps) == 0 && g.add && g.red.Transform != plan.TransformExp && !g.finalizeNeedsTemps() {
		return avx2WideAcc
	}
	return g.nacc
}

// avx2WideAcc is colAcc's AVX2 accumulator count: ymm0-11, leaving
// ymm12-13 as temporaries (ymm14-15 hold hoisted tail masks).
const avx2WideAcc = 12

// prefetchKept prefetches pfAhead bytes ahead of an iteration of the
// innermost kept loop when its iterations are less than a line apart
// ([4194304, 2, 2] over axis 1: 16 bytes and some 20 instructions each,
// too many per line for the reorder window to keep memory busy; it ran
// faster with the prefetch: docs/PERFORMANCE-log.md, "Figures behind the
// generators' choices (moved from code comments)"). Iterations sharing a
// line prefetch it again, which costs little.
func (g *gen) prefetchKept() {
	n := len(g.pl.Outer)
	if n == 0 {
		return
	}
	if step := g.pl.Outer[n-1].SrcStride * g.ssz; step <= 0 || step >= 64 {
		return
	}
	g.op(x86.APREFETCHT0, g.m(rSrc, pfAhead))
}

// narrowBytes is the widest 16-bit column block, in bytes per row, that
// is summed with pair loads (bf16, AVX-512) and software prefetch; pfRows
// is how many rows ahead the prefetch reads (16 measured best for
// 256-byte rows, 4 and 8 slower). AVX2 blocks (at most 128 bytes of a
// 16-bit row) are prefetched only when rows are at most pfMaxStride bytes
// apart; see colBlock.
const (
	narrowBytes = 256
	pfRows      = 16
	pfMaxStride = 4096
)

// pfRowsBusy is how many rows ahead a block whose elements take more
// than the plain sum's one instruction each prefetches (or as many as one
// iteration of its loop loads, if more): a row of such a block takes long
// enough that four cover the memory's latency, and prefetching further
// ahead ran slower (rows 16 KiB apart; see docs/PERFORMANCE-log.md).
// AVX2 blocks whose elements go through exp (about three times AVX-512's
// instructions per element) ran fastest at pfRows and keep it.
const pfRowsBusy = 4

// busyBlock reports whether an f32 column block over rows rb bytes apart
// is prefetched because its elements cost more than a plain sum's one
// instruction each (abs and add, a square and add, max and min with
// their NaN and signed-zero handling, more of it on AVX2, which has no
// VRANGEPS): rows at least a page apart put each row's few lines in a new
// page, which the hardware prefetchers do not follow, so the loads in
// flight are what the reorder window holds, and it holds fewer of them
// the more instructions each takes. Over rows 16 KiB apart these kinds
// fell well behind the sum without the prefetch and came close to it with
// it (docs/PERFORMANCE-log.md). Sums, means and products, one instruction
// per vector from memory, keep the hardware's prefetch alone (products
// ran the same either way). Exp blocks are prefetched on their own terms.
func (g *gen) busyBlock(rb int64) bool {
	return g.sdt == dtypes.F32 && g.red.Transform != plan.TransformExp && !g.plainSum() && !g.plainProduct() && rb >= pfMaxStride
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
	rows := int64(1)
	if n := len(red); n > 0 {
		rows = red[n-1].Size
	}
	U := max(1, min(g.colAcc()/K, (chainTarget+K-1)/K, int(min(rows, 64))))
	if zeroSum {
		U = 1
	}
	vb := int64(g.V) * g.ssz
	if n := len(red); n > 0 {
		// Unrolled rows are addressed by displacement: keep them in 32 bits.
		for U > 1 && !fits32(int64(U-1)*red[n-1].SrcStride*g.ssz+int64(K)*vb) {
			U--
		}
	}
	acc := func(k, u int) int { return u*K + k }
	g.initAccs(K * U)
	// Accumulators past tmpLo (see colAcc) hold the temporaries off
	// until the block is finished, and count as taken (placeSumExp must
	// not give them to constants).
	if K*U > g.tmpNext {
		defer g.release(g.mark())
		g.tmpNext = K * U
		g.tmpPeak = max(g.tmpPeak, g.tmpNext)
	}
	// Narrow 16-bit blocks (at most narrowBytes per row, as the runtime's
	// Inner tiles of a wide Inner are) get two things on AVX-512. bf16
	// full vectors 2p and 2p+1 are taken from one pair load (combinePair),
	// the rest one vector at a time. And every 64-byte line of the full
	// vectors is prefetched pfRows rows ahead in the main loop: the
	// hardware prefetchers follow a few lines per strided row poorly (a
	// 32x3136x128-of-256 bf16 tile ran faster with both). A prefetch
	// never faults, so the ones past the last row are harmless. Wider
	// blocks, which the hardware prefetchers keep up with, ran slower
	// with both on the Xeon and keep the plain path (docs/PERFORMANCE-log.md,
	// "Pair loads in wide bf16 blocks").
	//
	// AVX2 blocks are always narrow (8 vectors). bf16 ones get the pairs
	// (bf16 over rows, 1 thread: [512, 128] and [1024, 4096] ran faster,
	// from DRAM a little), and all get the prefetch where rows are at
	// most pfMaxStride bytes apart: GAP over NHWC bf16/f16 (512-byte rows)
	// and rows of 1-4 KiB ran faster with it. Rows 8 KiB apart gained
	// only where the data came from DRAM and lost where it sat in L3
	// (1024x4096 and 2048x4096 reduced over rows). The figures of this
	// paragraph and of the tile above: docs/PERFORMANCE-log.md, "Figures
	// behind the generators' choices (moved from code comments)".
	//
	// On Zen cores (Options.Zen) wider bf16 blocks take the pair loads
	// too, without the prefetch: there the widening (VPMOVZXWD, VPSLLD
	// and the add per vector) is what bounds them, from L3 as from L2
	// (docs/PERFORMANCE-log.md, "Zen 4: pair loads in wide bf16 blocks").
	narrow := g.ssz == 2 && !zeroSum && len(red) > 0 && int64(nv)*vb <= narrowBytes
	pairs := 0
	if g.bf16Pairs() && !zeroSum && len(red) > 0 && (narrow || g.zen) {
		pairs = nv / 2
	}
	// A 16-bit max or min takes the first pairs of full vectors as words
	// (words.go), as many as there are registers for.
	wp := 0
	if !zeroSum && len(red) > 0 {
		if wp = g.wordPairs(nv, tail, U); wp > 0 {
			pairs = 0
		}
	}
	prefetch := narrow
	if n := len(red); narrow && !g.avx512 {
		prefetch = red[n-1].SrcStride*g.ssz <= pfMaxStride
	}
	// Blocks whose elements go through exp (an unshifted log-sum-exp) are
	// prefetched too, at any width: its twenty-odd instructions per vector
	// leave the reorder window too few loads to keep memory busy. So are
	// the f32 blocks of the other kinds that take more than one
	// instruction per vector, over rows a page or more apart (busyBlock).
	expBlock := g.red.Transform == plan.TransformExp
	busy := false
	if n := len(red); !zeroSum && n > 0 {
		busy = g.busyBlock(red[n-1].SrcStride * g.ssz)
		prefetch = prefetch || expBlock || busy
	}
	mk := g.mark()
	// An f32 L1 sum on AVX-512 takes each |x| from memory in one VPANDD
	// with the sign mask (g.absMask, see accum), instead of a load and two
	// shifts: fewer instructions per vector, so more loads in flight (see
	// busyBlock).
	if g.avx512 && !zeroSum && len(red) > 0 {
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
	mkWords := g.mark()
	if wp > 0 {
		t := g.tmp()
		for i := range wp * U {
			p, u := i/U, i%U
			r := wordRegs{umin: acc(2*p, u), umax: acc(2*p+1, u), smax: g.tmp(), t: t}
			g.wordsInit(r)
			words = append(words, r)
		}
	}
	var pfDist int64
	// Full vectors whose lines are prefetched (whole 64-byte lines), one
	// prefetch per line.
	perLine := max(1, int(64/vb))
	pfVecs := 0
	if prefetch {
		pfVecs = nv / perLine * perLine
	}
	if n := len(red); pfVecs > 0 {
		rowsAhead := int64(pfRows)
		if (g.avx512 && expBlock) || busy {
			rowsAhead = int64(max(pfRowsBusy, U)) // past the rows an iteration loads
		}
		pfDist = rowsAhead * red[n-1].SrcStride * g.ssz
		if !fits32(pfDist + int64(U)*red[n-1].SrcStride*g.ssz + int64(K)*vb) {
			pfDist = 0
		}
	}
	// A block of one masked vector (an Inner narrower than V that
	// flatColumn does not take) whose rows are less than a line apart is
	// a dense stream of masked loads, which the hardware prefetchers do
	// not follow (see flatPrefetch): every line of it is prefetched
	// pfAhead bytes ahead, once per loop iteration of U rows. [N, W]
	// over axis 0 with W = 9..15 (32-64 MiB of src, 2 threads) read far
	// slower than W = 8 and 16 (full loads), and nearly as fast with the
	// prefetch (docs/PERFORMANCE-log.md, "Figures behind the generators'
	// choices (moved from code comments)"). Rows a line or more apart are
	// followed: [4M, 15] f32 with rows 16 apart ran as fast as [4M, 16].
	var streamSpan int64
	if n := len(red); n > 0 && !zeroSum && nv == 0 && g.flatPrefetch(int64(tail)) {
		if rb := red[n-1].SrcStride * g.ssz; rb > 0 && rb < 64 {
			streamSpan = int64(U) * rb
		}
	}
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
				g.accum(g.sdt, acc(k, u), g.m(rSrc, off+int64(k)*vb), width(k))
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
				g.accum(g.sdt, acc(k, 0), g.m(rSrc, int64(k)*vb), width(k))
			}
		} else {
			last := red[n-1]
			rb := last.SrcStride * g.ssz
			iters, rem := last.Size/int64(U), int(last.Size%int64(U))
			runs = g.runsOf(red[:n-1], iters, 1)
			if !runs.None() {
				g.placeTotals(groups, acc(0, 0))
			}
			chunk := runs.SweepChunk(red[:n-1])
			fold := func() { g.foldRun(groups) }
			kernelshape.EmitReducedRuns(g, g.ptrs, red[:n-1], g.ssz, runs, fold, func() {
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
	g.release(mkWords)
	for k := 0; k < K; k++ {
		g.sumTree(groups[k])
	}
	if !runs.None() {
		g.addTotals(groups)
	}
	g.release(mk)
	g.absMask = 0
	for p := 0; p < pairs; p++ {
		g.deinterleave(acc(2*p, 0), acc(2*p+1, 0))
	}
	for k := 0; k < K; k++ {
		g.epilogue(acc(k, 0), kernelshape.Block(k, g.V, width(k), si))
	}
}

// pairConsts are the constants of bf16 pair loads, each in a temporary:
// hiMask holds 0xFFFF0000 in every dword (0x7FFF0000 when the transform
// is |x|, see splitPair), one holds 1.0 (plain sums only, see
// combineHalves).
type pairConsts struct{ hiMask, one int }

func (g *gen) newPairConsts() pairConsts {
	pc := pairConsts{hiMask: g.tmp()}
	if g.red.Transform == plan.TransformAbs {
		g.constant(pc.hiMask, 0x7FFF0000)
	} else {
		g.constant(pc.hiMask, 0xFFFF0000)
	}
	if g.plainSum() {
		pc.one = g.tmp()
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

// bf16Pairs reports whether bf16 src is taken a pair load at a time
// (combinePair, rowPairs): any kind but log-sum-exp's sums of exp (whose exp
// wants a vector at a time) and a copy.
func (g *gen) bf16Pairs() bool {
	t := g.red.Transform
	return g.sdt == dtypes.BF16 && g.red.Combine != plan.CombineFirst &&
		(t == plan.TransformNone || t == plan.TransformAbs || t == plan.TransformSquare)
}

// combineHalves combines the even halves e and the odd halves o of a
// pair load into the accumulators even and odd (the same register when
// there is one), clobbering e and o. A plain sum's odd add is
// VFMADD231PS by 1.0: o*1 is exact, so it rounds as VADDPS does, bit for
// bit, but it issues on the FMA pipes, beside the even add on the add
// pipes. Pair sums are short of add pipes, not of loads: bf16 sums in L2
// (1 thread, [262144] and [256, 1024] over rows) ran faster so, on
// AVX-512 and AVX2; sums from L3 or DRAM ran as before
// (docs/PERFORMANCE-log.md, "Figures behind the generators' choices
// (moved from code comments)"). NaN-free max and min (speculate.go)
// check both halves with one compare.
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
	mk := g.mark()
	e, o := g.tmp(), g.tmp()
	switch {
	case !g.avx512:
		if n != 2*g.V {
			g.fail(status.Errorf(status.Unimplemented, "amd64: AVX2 pair load of %d bf16 values", n))
		}
		g.op(x86.AVMOVDQU, addr, g.vr(o))
	case n == 2*g.V:
		g.op(x86.AVMOVDQU32, addr, g.vr(o))
	default:
		g.opz(x86.AVMOVDQU16, addr, g.kbits(uint32(1)<<n-1), g.vr(o))
	}
	g.splitPair(pc, e, o, g.vr(o))
	g.combineHalves(pc, even, odd, e, o)
	g.release(mk)
}

// deinterleave turns the pair results of combinePair (lane i of even is value
// 2i, lane i of odd value 2i+1) into two vectors in value order: values
// 0..V-1 into even, V..2V-1 into odd.
func (g *gen) deinterleave(even, odd int) {
	mk := g.mark()
	defer g.release(mk)
	lo, hi := g.tmp(), g.tmp()
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
	U := int(max(1, min(chainTarget, int64(g.nacc), nfull)))
	g.initAccs(U)
	mb := M * g.ssz
	groups := kernelshape.Groups(1, U, func(_, u int) int { return u })
	regs := groups[0]
	iters, remv := nfull/int64(U), int(nfull%int64(U))
	runs := g.runsOf(red[:n-1], iters, 1)
	mk := g.mark()
	if !runs.None() {
		g.placeTotals(groups, 0)
	}
	fold := func() { g.foldRun(groups) }
	kernelshape.EmitReducedRuns(g, g.ptrs, red[:n-1], g.ssz, runs, fold, func() {
		kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(U) * mb}, runs.SweepChunk(red[:n-1]), func() {
			if g.flatPrefetch(M) {
				g.prefetchAhead(int64(U) * mb)
			}
			for u := 0; u < U; u++ {
				g.accum(g.sdt, u, g.m(rSrc, int64(u)*mb), int(M))
			}
		}, fold)
		for u := 0; u < remv; u++ {
			g.accum(g.sdt, u, g.m(rSrc, (iters*int64(U)+int64(u))*mb), int(M))
		}
		if remT > 0 {
			g.accum(g.sdt, remv%U, g.m(rSrc, nfull*mb), remT)
		}
	})
	g.sumTree(regs)
	if !runs.None() {
		g.addTotals(groups)
	}
	g.release(mk)
	g.fold(0, int(W), int(M/W))
	g.epilogue(0, kernelshape.Outputs(int(W), si))
}

// flatPrefetch reports whether a dense stream of M-lane loads (flatColumn,
// and colBlock's single masked vector) is prefetched, a line per 64
// bytes, pfAhead bytes ahead: when the loads are masked (M < V; AVX2
// 16-bit loads are exact-size moves instead).
// The hardware prefetchers did not follow a stream of masked loads:
// [N, W] over axis 0 with W = 3, 5 or 7 (32 MiB of bf16, 64 MiB of f32,
// 2 threads) read far slower than W = 4 or 8 (full loads), and about as
// fast with the prefetch (docs/PERFORMANCE-log.md, "Figures behind the
// generators' choices (moved from code comments)").
func (g *gen) flatPrefetch(M int64) bool {
	return M < int64(g.V) && (g.avx512 || g.sdt == dtypes.F32)
}

// fold combines lanes l + j*w (j < q) into lane l, for l < w: halving
// while q is even, peeling the last block while q is odd.
func (g *gen) fold(r, w, q int) {
	if q <= 1 {
		return
	}
	mk := g.mark()
	defer g.release(mk)
	if q%2 == 1 {
		e := g.tmp()
		g.rotate(e, r, (q-1)*w)
		g.fold(r, w, q-1)
		g.combineAcc(r, e)
		return
	}
	t := g.tmp()
	g.rotate(t, r, (q/2)*w)
	g.combineAcc(r, t)
	g.fold(r, w, q/2)
}

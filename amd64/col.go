package amd64

import (
	"github.com/gdnn/gdnn/jit/plan"
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

// chainTarget is how many independent add chains a loop body should have
// to cover the FP add latency at two adds per cycle.
const chainTarget = 8

// column emits the column shape for one iteration of the kept loops.
func (g *gen) column(red []plan.Loop, zeroSum bool) {
	in := g.pl.Inner
	W := in.Size
	si := g.stepsOf(&in)
	n := len(red)
	if !zeroSum && n > 0 && W <= int64(g.V/2) && red[n-1].SrcStride == W {
		g.flatColumn(red, W, si)
		return
	}
	V := int64(g.V)
	fullVec, tail := W/V, int(W%V)
	K := int64(g.nacc)
	nb, remVec := fullVec/K, int(fullVec%K)
	var sb steps
	sb.src, sb.dst = si.src*K*V, si.dst*K*V
	for i := range sb.bin {
		sb.bin[i] = si.bin[i] * K * V
	}
	g.loop(nb, sb, func() { g.colBlock(red, zeroSum, int(K), 0, si) })
	if remVec > 0 || tail > 0 {
		g.advance(si, nb*K*V)
		g.colBlock(red, zeroSum, remVec, tail, si)
		g.advance(si, -nb*K*V)
	}
}

// colBlock sums nv full vectors of Inner plus, when tail > 0, one vector
// of tail lanes, over all reduced rows, and finishes them.
func (g *gen) colBlock(red []plan.Loop, zeroSum bool, nv, tail int, si steps) {
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
	U := max(1, min(g.nacc/K, (chainTarget+K-1)/K, int(min(rows, 64))))
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
	for i := 0; i < K*U; i++ {
		g.zero(i)
	}
	if !zeroSum {
		if n := len(red); n == 0 {
			// Nothing reduced: the "sum" is the element itself
			// (added to +0 like every sum, as the interpreter does).
			for k := 0; k < K; k++ {
				g.accum(g.sdt, acc(k, 0), g.m(rSrc, int64(k)*vb), width(k))
			}
		} else {
			last := red[n-1]
			rb := last.SrcStride * g.ssz
			g.reducedNest(red[:n-1], func() {
				iters, rem := last.Size/int64(U), int(last.Size%int64(U))
				g.loop(iters, steps{src: int64(U) * rb}, func() {
					for u := 0; u < U; u++ {
						for k := 0; k < K; k++ {
							g.accum(g.sdt, acc(k, u), g.m(rSrc, int64(u)*rb+int64(k)*vb), width(k))
						}
					}
				})
				for u := 0; u < rem; u++ {
					for k := 0; k < K; k++ {
						g.accum(g.sdt, acc(k, u), g.m(rSrc, (iters*int64(U)+int64(u))*rb+int64(k)*vb), width(k))
					}
				}
			})
		}
	}
	for k := 0; k < K; k++ {
		regs := make([]int, U)
		for u := range regs {
			regs[u] = acc(k, u)
		}
		g.sumTree(regs)
		lm := laneMap{n: width(k), dstOff: int64(k) * int64(g.V) * si.dst, dstStep: si.dst}
		for i := 0; i < g.nbin; i++ {
			lm.binOff[i] = int64(k) * int64(g.V) * si.bin[i]
			lm.binStep[i] = si.bin[i]
		}
		g.epilogue(acc(k, 0), lm)
	}
}

// flatColumn sums a narrow Inner of W lanes whose rows are contiguous, as
// one stream of M-lane loads per innermost reduced loop, then folds lane
// l + j*W into lane l.
func (g *gen) flatColumn(red []plan.Loop, W int64, si steps) {
	n := len(red)
	last := red[n-1]
	M := (int64(g.V) / W) * W
	total := last.Size * W
	nfull, remT := total/M, int(total%M)
	U := int(max(1, min(chainTarget, int64(g.nacc), nfull)))
	for u := 0; u < U; u++ {
		g.zero(u)
	}
	mb := M * g.ssz
	g.reducedNest(red[:n-1], func() {
		iters, remv := nfull/int64(U), int(nfull%int64(U))
		g.loop(iters, steps{src: int64(U) * mb}, func() {
			for u := 0; u < U; u++ {
				g.accum(g.sdt, u, g.m(rSrc, int64(u)*mb), int(M))
			}
		})
		for u := 0; u < remv; u++ {
			g.accum(g.sdt, u, g.m(rSrc, (iters*int64(U)+int64(u))*mb), int(M))
		}
		if remT > 0 {
			g.accum(g.sdt, remv%U, g.m(rSrc, nfull*mb), remT)
		}
	})
	regs := make([]int, U)
	for u := range regs {
		regs[u] = u
	}
	g.sumTree(regs)
	g.fold(0, int(W), int(M/W))
	lm := laneMap{n: int(W), dstStep: si.dst}
	if W == 1 {
		lm.n = bcast
	}
	for i := 0; i < g.nbin; i++ {
		lm.binStep[i] = si.bin[i]
	}
	g.epilogue(0, lm)
}

// fold adds lanes l + j*w (j < q) into lane l, for l < w: halving while q
// is even, peeling the last block while q is odd.
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
		g.vadd(r, e)
		return
	}
	t := g.tmp()
	g.rotate(t, r, (q/2)*w)
	g.vadd(r, t)
	g.fold(r, w, q/2)
}

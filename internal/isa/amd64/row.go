package amd64

import (
	"sort"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The row shape is kernelshape.Row's; these are its amd64 primitives.
// Rows of at most V/2 (V/4) elements go two (four) to a register in a
// transposing group, saving transpose levels (packSkip); AVX-512 bf16
// rows of up to V go two to a register at two elements per lane
// (pairPacked), and rows of V+1 to 2V-1 are one masked load at two
// elements per lane (rowPairs). Rows of 2 to 4 elements back to back
// (channel means of RGB or RGBA data) go faster still on AVX-512,
// gathered 16 at a time (gather).

// Row emits the row and element shapes.
func (g *gen) Row(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	kernelshape.Row(g, k, red, zeroSum, g.conf.Group)
}

// Lanes is V.
func (g *gen) Lanes() int { return g.V }

// RowGather hoists the gathers' indices when the configuration gathers.
func (g *gen) RowGather(rp *kernelshape.RowPlan) (int, func(kernelshape.LaneMap)) {
	if !g.conf.Gather {
		return 0, nil
	}
	gi := g.hoistGather(int(rp.Len))
	return g.V, func(lm kernelshape.LaneMap) { g.gather(gi, lm) }
}

// SingleRow sums a row of bytes by SAD when the configuration says so.
func (g *gen) SingleRow(rp *kernelshape.RowPlan, lm kernelshape.LaneMap) bool {
	if !rp.Vec || rp.ZeroSum || !g.conf.SADRows {
		return false
	}
	g.sadRow(rp, lm)
	return true
}

// RowAccs lays the accumulators out: for one output, U of them
// (0..U-1); for a group, one per output, placed so that the transpose
// leaves output j in lane j, or packed several rows to a register.
func (g *gen) RowAccs(single bool, n int) kernelshape.RowAccs {
	if single {
		U := g.conf.RowU
		return kernelshape.RowAccs{U: U, Acc: func(_, u int) int { return u }, Init: U,
			Groups: kernelshape.Groups(1, U, func(_, u int) int { return u })}
	}
	order, _ := transposeOrder(g.V)
	regOf := make([]int, n)
	copy(regOf, order)
	nzero := g.V
	var lo []int
	if skip := g.conf.PackSkip; skip > 0 {
		blocks, _ := packedBlocks(g.V, skip)
		lo = make([]int, n)
		for lane := 0; lane < n; lane++ {
			b := blocks[order[lane]]
			regOf[lane], lo[lane] = b.reg, b.lo
		}
		nzero = g.V >> skip
	}
	return kernelshape.RowAccs{U: 1, Acc: func(row, u int) int { return regOf[row] + u }, Init: nzero,
		Groups: kernelshape.Groups(nzero, 1, func(p, _ int) int { return p }), Lo: lo}
}

// Transpose transposes a group's registers, packed or not.
func (g *gen) Transpose(a kernelshape.RowAccs) int {
	skip := 0
	if a.Lo != nil {
		skip = g.conf.PackSkip
	}
	regs := make([]int, g.V>>skip)
	for p := range regs {
		regs[p] = p
	}
	return g.transposeFrom(regs, skip)
}

// AddElement adds one src element, broadcast into every lane.
func (g *gen) AddElement(acc int, off int64) { g.accum(g.SrcDT, acc, g.m(rSrc, off), bcast) }

// PackedSweep adds packed rows (see packedSweep).
func (g *gen) PackedSweep(rk int, n int, a kernelshape.RowAccs, rowOff func(int) int64) {
	regOf := make([]int, n)
	for row := range regOf {
		regOf[row] = a.Acc(row, 0)
	}
	g.packedSweep(rk, regOf, a.Lo, rowOff)
}

// packedSweep adds rows of rk elements (row r, for each r of regOf, at
// byte offset rowOff(r)) into lanes lo[r]..lo[r]+rk-1 of register
// regOf[r]. On AVX-512, by masked loads from lo[r] elements before each
// row, which read and fault on no other element: f32 rows add straight
// from memory, merge-masked; 16-bit rows sharing a register are merged
// into one temporary first, so one conversion and one add serve them
// all. AVX2 builds each register from the rows' bytes (packedInserts).
func (g *gen) packedSweep(rk int, regOf, lo []int, rowOff func(int) int64) {
	rowsIn := make([][]int, g.V) // each register's rows, in row order
	for row, q := range regOf {
		rowsIn[q] = append(rowsIn[q], row)
	}
	if !g.avx512 {
		g.packedInserts(rk, rowsIn, lo, rowOff)
		return
	}
	per, load := 1, g.hr
	if g.conf.PairPacked {
		per, load = 2, g.vr
	}
	addr := func(row int) obj.Addr { return g.m(rSrc, rowOff(row)-int64(per*lo[row])*g.SrcSize) }
	mask := func(row int) obj.Addr { return g.kbits((uint32(1)<<rk - 1) << (per * lo[row])) }
	if g.SrcDT == dtypes.F32 {
		for row, q := range regOf {
			g.op(x86.AVADDPS, addr(row), g.vr(q), mask(row), g.vr(q))
		}
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	t := g.Tmp()
	for q, rows := range rowsIn {
		if len(rows) == 0 {
			continue
		}
		// The first load clears the lanes no row fills.
		g.opz(x86.AVMOVDQU16, addr(rows[0]), mask(rows[0]), load(t))
		for _, row := range rows[1:] {
			g.op(x86.AVMOVDQU16, addr(row), mask(row), load(t))
		}
		if per == 2 {
			e := g.Tmp()
			g.op(x86.AVPSLLD, imm(16), g.vr(t), g.vr(e))
			g.opz(x86.AVMOVDQU16, g.vr(t), g.kbits(0xAAAAAAAA), g.vr(t))
			g.vadd(q, e)
			g.vadd(q, t)
			g.Release(e)
		} else {
			g.widen16(g.SrcDT, t)
			g.vadd(q, t)
		}
	}
}

// xpiece is a row's bytes bound for a 16-byte register: n bytes from
// src offset src, to byte off.
type xpiece struct {
	src    int64
	off, n int
}

// packedInserts is packedSweep for AVX2, which has no merging loads: the
// 16-byte halves of each register are built from the rows' bytes by
// exact-size moves and inserts (VPINSRQ/D/W), a 16-bit half then widened
// to the whole register, f32 halves joined by VINSERTF128; one add per
// register. No byte outside a row is read.
func (g *gen) packedInserts(rk int, rowsIn [][]int, lo []int, rowOff func(int) int64) {
	mk := g.Mark()
	defer g.Release(mk)
	t, u := g.Tmp(), g.Tmp()
	half := 16 / int(g.SrcSize) // lanes per 16 bytes of src
	for q, rows := range rowsIn {
		if len(rows) == 0 {
			continue
		}
		var lowP, highP []xpiece
		for _, row := range rows {
			p := xpiece{src: rowOff(row), off: lo[row] * int(g.SrcSize), n: rk * int(g.SrcSize)}
			if lo[row] < half {
				lowP = append(lowP, p)
			} else {
				p.off -= 16
				highP = append(highP, p)
			}
		}
		g.fillXmm(t, lowP)
		if g.SrcDT == dtypes.F32 {
			if highP != nil {
				g.fillXmm(u, highP)
				g.op(x86.AVINSERTF128, imm(1), g.xr(u), g.vr(t), g.vr(t))
			}
		} else {
			g.widen16(g.SrcDT, t)
		}
		g.vadd(q, t)
	}
}

// fillXmm sets xmm x (and clears the rest of its register) to the
// pieces, zeros elsewhere: a zeroing move when a piece starts the
// register, else a clear, then inserts of 8, 4 and 2 bytes.
func (g *gen) fillXmm(x int, pcs []xpiece) {
	sort.Slice(pcs, func(i, j int) bool { return pcs[i].off < pcs[j].off })
	xr := g.xr(x)
	if len(pcs) == 0 || pcs[0].off != 0 || pcs[0].n < 4 {
		g.op(x86.AVPXOR, xr, xr, xr)
	} else {
		p := &pcs[0]
		w := 4
		switch {
		case p.n >= 16:
			g.op(x86.AVMOVDQU, g.m(rSrc, p.src), xr)
			w = 16
		case p.n >= 8:
			g.op(x86.AVMOVQ, g.m(rSrc, p.src), xr)
			w = 8
		default:
			g.op(x86.AVMOVD, g.m(rSrc, p.src), xr)
		}
		p.src += int64(w)
		p.off += w
		p.n -= w
	}
	for _, p := range pcs {
		for p.n > 0 {
			switch {
			case p.off%8 == 0 && p.n >= 8:
				g.op(x86.AVPINSRQ, imm(int64(p.off/8)), g.m(rSrc, p.src), xr, xr)
				p.src, p.off, p.n = p.src+8, p.off+8, p.n-8
			case p.off%4 == 0 && p.n >= 4:
				g.op(x86.AVPINSRD, imm(int64(p.off/4)), g.m(rSrc, p.src), xr, xr)
				p.src, p.off, p.n = p.src+4, p.off+4, p.n-4
			default:
				g.op(x86.AVPINSRW, imm(int64(p.off/2)), g.m(rSrc, p.src), xr, xr)
				p.src, p.off, p.n = p.src+2, p.off+2, p.n-2
			}
		}
	}
}

// PrefetchGroup prefetches the lines of the group pfAhead bytes ahead,
// when the configuration says so (Conf.GroupPrefetch).
func (g *gen) PrefetchGroup(rp *kernelshape.RowPlan) {
	if g.conf.GroupPrefetch {
		g.prefetchAhead(int64(g.V) * rp.RowStep)
	}
}

// prefetchAhead prefetches the lines of span bytes at the src pointer,
// pfAhead bytes ahead, one prefetch per 64 bytes (none when the
// displacements would not fit in 32 bits).
func (g *gen) prefetchAhead(span int64) {
	ahead := g.conf.tune.pfAhead
	if !fits32(ahead + span) {
		return
	}
	for off := int64(0); off < span; off += 64 {
		g.op(x86.APREFETCHT0, g.m(rSrc, ahead+off))
	}
}

// RowSweep adds one contiguous row of rk elements for each of n outputs:
// U vectors per output per iteration, then the leftover vectors, then a
// masked tail. A row of a 16-bit max or min goes a register of words at a
// time first (rowWords), and bf16 rows of other kinds two vectors per
// load (rowPairs: its lanes mix elements, and its masked pair adds zeros).
func (g *gen) RowSweep(rk int64, n int, a kernelshape.RowAccs, rowOff func(int) int64, chunk int, fold func()) {
	U, acc := a.U, a.Acc
	V := int64(g.V)
	vb := V * g.SrcSize
	base := int64(0) // elements done by rowWords or rowPairs
	switch {
	case g.conf.Words && n == 1:
		base = g.rowWords(rk, U, acc, rowOff, chunk, fold)
	case g.conf.BF16Pairs && (U >= 2 || n > 1):
		base = g.rowPairs(rk, U, n, acc, rowOff, chunk, fold)
	}
	left := rk - base
	full, tail := left/V, int(left%V)
	if full > 0 && g.absMask == 0 {
		mk := g.Mark()
		g.holdAbsMask()
		defer func() { g.absMask = 0; g.Release(mk) }()
	}
	iters, remv := full/int64(U), int(full%int64(U))
	at := func(row int, vec int64) obj.Addr { return g.m(rSrc, rowOff(row)+base*g.SrcSize+vec*vb) }
	st := g.conf.streams(n, U, iters, vb)
	pf := n == 1 && g.conf.RowPrefetch
	g.testedLoops = g.conf.Paced
	defer func() { g.testedLoops = false }()
	kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(st.per) * vb}, chunk, func() {
		for u := 0; u < U; u++ {
			for row := 0; row < n; row++ {
				off := rowOff(row) + base*g.SrcSize + st.offset(u, vb)
				if pf {
					g.prefetchLine(off, int64(u)*vb)
				}
				g.accum(g.SrcDT, acc(row, u), g.m(rSrc, off), g.V)
			}
		}
	}, fold)
	for u := 0; u < remv; u++ {
		for row := 0; row < n; row++ {
			g.accum(g.SrcDT, acc(row, u), at(row, iters*int64(U)+int64(u)), g.V)
		}
	}
	if tail > 0 {
		for row := 0; row < n; row++ {
			g.accum(g.SrcDT, acc(row, remv%U), at(row, full), tail)
		}
	}
}

// rowPairs reduces bf16 rows a full register of 2V values at a time
// (splitPair): the even elements are the dwords shifted left by 16, the
// odd ones the dwords with the low half cleared, both exact f32. Lanes
// then mix neighbouring elements, which a row reduction does not mind,
// and a load feeds two combines instead of one (a sum takes 4
// instructions per 2V elements instead of 6). On AVX-512 a last
// V+1..2V-1 elements of a sum are one masked pair load too, instead of a
// vector and a masked tail (5 instructions instead of 7: rows of 17 to
// 31 bf16 are all such a pair); the zeros it reads past the row are the
// identity of sums only.
// It returns how many elements of each row it reduced.
func (g *gen) rowPairs(rk int64, U, n int, acc func(row, u int) int, rowOff func(int) int64, chunk int, fold func()) int64 {
	V2 := 2 * int64(g.V)
	pb := V2 * g.SrcSize // bytes per pair load
	Up := max(1, U/2)
	iters := rk / V2 / int64(Up)
	done := iters * int64(Up) * V2
	last := 0 // elements of the masked pair, or 0
	if rest := rk - done; g.conf.PairTail && rest > int64(g.V) && rest < V2 {
		last = int(rest)
	}
	if iters == 0 && last == 0 {
		return 0
	}
	st := g.conf.streams(n, Up, iters, pb)
	pf := n == 1 && g.conf.RowPrefetch
	mk := g.Mark()
	defer g.Release(mk)
	pc := g.newPairConsts()
	// Accumulators: even half into acc(row, 2up), odd into acc(row, 2up+1),
	// or both into acc(row, 0) when there is only one (groups).
	even, odd := func(up int) int { return 0 }, func(up int) int { return 0 }
	if U >= 2 {
		even, odd = func(up int) int { return 2 * up }, func(up int) int { return 2*up + 1 }
	}
	kernelshape.RunLoop(g, g.ptrs, iters, kernelshape.Steps{Src: int64(st.per) * pb}, chunk, func() {
		for up := 0; up < Up; up++ {
			for row := 0; row < n; row++ {
				off := rowOff(row) + st.offset(up, pb)
				if pf {
					g.prefetchLine(off, int64(up)*pb)
				}
				addr := g.m(rSrc, off)
				m2 := g.Mark()
				e, o := g.Tmp(), g.Tmp()
				if !g.avx512 {
					g.op(x86.AVMOVDQU, addr, g.vr(o))
					addr = g.vr(o)
				}
				g.splitPair(pc, e, o, addr)
				g.combineHalves(pc, acc(row, even(up)), acc(row, odd(up)), e, o)
				g.Release(m2)
			}
		}
	}, fold)
	if last > 0 {
		for row := 0; row < n; row++ {
			g.combinePair(pc, acc(row, even(0)), acc(row, odd(0)), g.m(rSrc, rowOff(row)+done*g.SrcSize), last)
		}
	}
	return done + int64(last)
}

// readStreams is how a row loop with several loads per iteration spreads
// them over a row: per consecutive loads in each of the row's streams,
// the streams apart by gap bytes.
type readStreams struct {
	per int
	gap int64
}

// offset is the byte offset, from the loop's pointer, of load u of an
// iteration, each load unit bytes.
func (s readStreams) offset(u int, unit int64) int64 {
	return int64(u/s.per)*s.gap + int64(u%s.per)*unit
}

// prefetchLine prefetches rowAhead bytes past the load at displacement
// off, whose offset in its iteration is at, when at starts a 64-byte
// line of the iteration (AVX2 and f16 loads are less than a line).
func (g *gen) prefetchLine(off, at int64) {
	if ahead := g.conf.tune.rowAhead; at%64 == 0 && fits32(off+ahead) {
		g.op(x86.APREFETCHT0, g.m(rSrc, off+ahead))
	}
}

// gatherIdx holds the registers of gather's permute indices: for element
// r of a row, one VPERMT2PS step per vector after the first (rows of 4:
// gather4's one index, in reg[0][0]).
type gatherIdx struct {
	rk  int
	reg [3][2]int
}

// hoistGather takes the top temporaries for good (rk*(rk-1) for rows of
// 2 and 3, one for rows of 4) and builds gather's indices in them in the
// prologue. For 16 rows of rk (16*rk elements in vectors v0..v[rk-1]),
// element rk*j+r goes to lane j: the first step picks it from v0:v1 when
// it is below 32, each later step c keeps the lane or picks it from v[c].
func (g *gen) hoistGather(rk int) *gatherIdx {
	gi := &gatherIdx{rk: rk}
	if rk == 4 {
		// gather4's one index: lanes 0, 4, 8, 12 of each table.
		var idx [16]int
		for j := 0; j < 8; j++ {
			idx[j] = 4 * j
		}
		g.tmpHi--
		reg := g.tmpHi
		gi.reg[0][0] = reg
		g.InsertAfter(&g.pro, func() { g.index16(reg, idx) })
		return gi
	}
	for r := 0; r < rk; r++ {
		for c := 1; c < rk; c++ {
			var idx [16]int
			for j := range idx {
				e := rk*j + r
				switch {
				case c == 1 && e < 32:
					idx[j] = e
				case c > 1 && e >= 16*c && e < 16*(c+1):
					idx[j] = 16 + e - 16*c
				default:
					idx[j] = j
				}
			}
			g.tmpHi--
			reg := g.tmpHi
			gi.reg[r][c-1] = reg
			g.InsertAfter(&g.pro, func() { g.index16(reg, idx) })
		}
	}
	return gi
}

// gather sums 16 rows of gi.rk elements back to back at the src pointer:
// rk loads, then for each element of a row rk-1 VPERMT2PS gather it from
// all 16 rows into one vector, and rk combines (from the identity, in row
// order like the interpreter) leave the 16 results in lane order for one
// epilogue.
func (g *gen) gather(gi *gatherIdx, lm kernelshape.LaneMap) {
	if gi.rk == 4 {
		g.gather4(gi.reg[0][0], lm)
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	var v [3]int
	vb := int64(g.V) * g.SrcSize
	for k := 0; k < gi.rk; k++ {
		v[k] = g.Tmp()
		g.load(g.SrcDT, v[k], g.m(rSrc, int64(k)*vb), g.V)
		g.transform(v[k])
	}
	s, t := g.Tmp(), g.Tmp()
	g.InitAcc(s)
	for r := 0; r < gi.rk; r++ {
		g.op(x86.AVMOVAPS, g.vr(v[0]), g.vr(t))
		for c := 1; c < gi.rk; c++ {
			g.op(x86.AVPERMT2PS, g.vr(v[c]), g.vr(gi.reg[r][c-1]), g.vr(t))
		}
		g.combine(s, t)
	}
	kernelshape.Epilogue(g, s, lm)
}

// gather4 sums 16 rows of 4 elements back to back at the src pointer:
// four loads; each 128-bit lane is one row, summed within the lane by two
// VPERMILPS swaps and combines (pairwise, like the transposing groups);
// two VPERMT2PS with index idx take lanes 0, 4, 8, 12 of two vectors
// each, and a VSHUFF32X4 joins the halves. Combining the results with the
// identity turns a -0 sum into +0, as the interpreter's sums from +0 give.
func (g *gen) gather4(idx int, lm kernelshape.LaneMap) {
	mk := g.Mark()
	defer g.Release(mk)
	var v [4]int
	vb := int64(g.V) * g.SrcSize
	t := g.Tmp()
	for k := range v {
		v[k] = g.Tmp()
		g.load(g.SrcDT, v[k], g.m(rSrc, int64(k)*vb), g.V)
		g.transform(v[k])
		g.op(x86.AVPERMILPS, imm(0xB1), g.vr(v[k]), g.vr(t))
		g.combine(v[k], t)
		g.op(x86.AVPERMILPS, imm(0x4E), g.vr(v[k]), g.vr(t))
		g.combine(v[k], t)
	}
	g.op(x86.AVPERMT2PS, g.vr(v[1]), g.vr(idx), g.vr(v[0]))
	g.op(x86.AVPERMT2PS, g.vr(v[3]), g.vr(idx), g.vr(v[2]))
	g.op(x86.AVSHUFF32X4, imm(0x44), g.vr(v[2]), g.vr(v[0]), g.vr(t))
	g.InitAcc(v[1])
	g.combine(v[1], t)
	kernelshape.Epilogue(g, v[1], lm)
}

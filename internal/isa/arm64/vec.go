package arm64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Vector primitives. Values in registers are always f32 (V lanes); the
// 16-bit and 8-bit types exist only in memory and during conversion.

// bcast is the lane count that means "one element, in every lane" for
// load, and "one output, in lane 0" for a lane map and store.
const bcast = kernelshape.Bcast

// v4s is vector register i as V3.S4; v16b as V3.B16.
func v4s(i int) obj.Addr  { return varng(i, arr4S) }
func v16b(i int) obj.Addr { return varng(i, arr16B) }

// vop emits the golang-asm three-register vector instruction
// d = n OP m in arrangement arr (Go order: m, n, d).
func (g *gen) vop(as obj.As, arr int16, d, n, m int) {
	g.Add(&obj.Prog{As: as, From: varng(m, arr), Reg: varng(n, arr).Reg, To: varng(d, arr)})
}

// vshift emits a vector shift by an immediate: d = n SHIFT sh (4S).
func (g *gen) vshift(as obj.As, d, n int, sh int64) {
	g.Add(&obj.Prog{As: as, From: imm(sh), Reg: v4s(n).Reg, To: v4s(d)})
}

// fop emits a raw three-register float op d = n OP m.
func (g *gen) fop(op uint32, d, n, m int) { g.word(rrr(op, d, n, m)) }

// zero sets vector register r to +0 in every lane.
func (g *gen) zero(r int) { g.vop(arm64.AVEOR, arr16B, r, r, r) }

// setConst broadcasts the 32-bit pattern bits into every lane of r.
func (g *gen) setConst(r int, bits uint32) {
	if bits == 0 {
		g.zero(r)
		return
	}
	g.movImm(rTmp, int64(bits))
	g.op(arm64.AVMOV, reg(rTmp), v4s(r))
}

// vconst returns a register holding bits in every lane. Constants are
// set once in the prologue while slots last; after that they are built
// into a temporary, which the caller's release frees.
func (g *gen) vconst(bits uint32) int {
	return g.pooled(twice(bits), func(r int) { g.setConst(r, bits) })
}

// vconst64 is vconst of a 64-bit pattern, which every 64 bits of the
// register hold (the native kernels' constants: f64 and 64-bit lanes).
func (g *gen) vconst64(p uint64) int {
	return g.pooled(p, func(r int) {
		if p == 0 {
			g.zero(r)
			return
		}
		g.bcast64(r, p)
	})
}

// pooled returns the register of the constant pool that holds pattern p
// in every 64 bits, set by set where it is new.
func (g *gen) pooled(p uint64, set func(r int)) int {
	for _, s := range g.consts {
		if s.bits == p {
			return s.reg
		}
	}
	if r := constLo + len(g.consts); r < constHi {
		g.InsertAfter(&g.pro, func() { set(r) })
		g.consts = append(g.consts, constSlot{p, r})
		return r
	}
	t := g.Tmp()
	set(t)
	return t
}

// twice is the 64-bit pattern of a 32-bit constant in every lane.
func twice(bits uint32) uint64 { return uint64(bits)<<32 | uint64(bits) }

// bcast64 sets both 64-bit lanes of r to p.
func (g *gen) bcast64(r int, p uint64) {
	g.movImm(rTmp, int64(p))
	g.op(arm64.AVMOV, reg(rTmp), varng(r, arr2D))
}

// toF32 converts the V elements of type dt in the low bytes of r (as a
// load leaves them) to f32 lanes: exactly, except that an s32 beyond 2^24
// rounds to nearest even, as Go's float32(int32) does.
func (g *gen) toF32(dt dtypes.DataType, r int) {
	switch {
	case dt == dtypes.F32:
	case dt == dtypes.S32:
		g.intToF32(dt, r)
	case dt.IsInt8():
		g.widen8(dt, r, r, false)
		g.widen16(dt, r, r, false)
		g.intToF32(dt, r)
	default:
		g.widenLow(dt, r, r)
	}
}

// load puts elements of type dt at x, as f32, into register r:
// n == bcast: one element in every lane; n == V: a full vector;
// 0 < n < V: the first n elements, zeros above, reading no byte past
// element n-1.
func (g *gen) load(dt dtypes.DataType, r int, x ref, n int) {
	sz := int64(dt.Size())
	switch {
	case n == bcast:
		g.fpMem(true, sz, r, x)
		g.toF32(dt, r)
		g.op(arm64.AVDUP, velem(r, arm64.ARNG_S, 0), v4s(r))
	case n == lanes:
		g.fpMem(true, lanes*sz, r, x)
		g.toF32(dt, r)
	case n > 0 && n < lanes:
		g.loadPart(sz, r, x, n)
		g.toF32(dt, r)
	default:
		g.Fail(status.Errorf(status.RuntimeError, "arm64: load of %d lanes", n))
	}
}

// elemArr is the element arrangement (for lane inserts and extracts) of
// sz-byte elements.
func elemArr(sz int64) int16 {
	switch sz {
	case 1:
		return arm64.ARNG_B
	case 2:
		return arm64.ARNG_H
	}
	return arm64.ARNG_S
}

// loadPart reads exactly n (1..V-1) elements of sz bytes into the low
// lanes of r, zeros above: a scalar load of the first two or one, and the
// third one inserted from a second register.
func (g *gen) loadPart(sz int64, r int, x ref, n int) {
	first := min(n, 2)
	g.fpMem(true, sz*int64(first), r, x)
	if n == 3 {
		mk := g.Mark()
		t := g.Tmp()
		g.fpMem(true, sz, t, x.plus(2*sz))
		ea := elemArr(sz)
		g.op(arm64.AVMOV, velem(t, ea, 0), velem(r, ea, 2))
		g.Release(mk)
	}
}

// loadVecs loads k consecutive full vectors of dt at x (f32: up to 4,
// 16-bit types: up to 8) into temporaries, as f32, and returns the
// register of each vector; the caller's release frees them. f32: at a
// physical offset of 0 one LD1 with post-increment (the pointer moves,
// which the pending increment records), elsewhere pairs (LDP) and single
// loads. 16-bit types: two vectors per 128-bit register (eight values,
// loaded the same ways), widened from its upper half into a new register
// and from its lower half in place; a last odd vector from a 64-bit load.
func (g *gen) loadVecs(dt dtypes.DataType, k int, x ref) []int {
	if dt.IsInt8() {
		return g.loadVecs8(dt, k, x)
	}
	regs := make([]int, k)
	base, off := g.phys(x)
	if dt == dtypes.F32 {
		t := g.tmps(k)
		for i := range regs {
			regs[i] = t + i
		}
		if off == 0 {
			g.ld1Post(base, t, k, arr4S)
			return regs
		}
		i := 0
		for ; i+1 < k; i += 2 {
			b, o := g.addrFor(x.plus(int64(i)*16), 16, true)
			g.word(ldpQ(t+i, t+i+1, int(b-arm64.REG_R0), o))
		}
		if i < k {
			g.fpMem(true, 16, t+i, x.plus(int64(i)*16))
		}
		return regs
	}
	pairs := k / 2
	if pairs > 0 {
		l := g.loadQs(x, pairs, arr8H)
		for i := 0; i < pairs; i++ {
			hi := g.Tmp()
			g.widenHigh(dt, hi, l+i)
			g.widenLow(dt, l+i, l+i)
			regs[2*i], regs[2*i+1] = l+i, hi
		}
	}
	if k%2 == 1 {
		t := g.Tmp()
		g.fpMem(true, 8, t, x.plus(int64(pairs)*16))
		g.widenLow(dt, t, t)
		regs[k-1] = t
	}
	return regs
}

// loadQs loads n consecutive 128-bit registers at x into new
// temporaries and returns the first: at a physical offset of 0 one LD1
// (arrangement arr) with post-increment, elsewhere one load each.
func (g *gen) loadQs(x ref, n int, arr int16) int {
	l := g.tmps(n)
	if base, off := g.phys(x); off == 0 {
		g.ld1Post(base, l, n, arr)
		return l
	}
	for i := 0; i < n; i++ {
		g.fpMem(true, 16, l+i, x.plus(int64(i)*16))
	}
	return l
}

// loadVecs8 is loadVecs for 8-bit integers: four vectors per 128-bit
// register (sixteen values, loaded as f32 vectors are), each widened to
// two registers of 16-bit values and those to four of 32-bit ones; a
// last pair of vectors from a 64-bit load, a last single one from a
// 32-bit load; then every vector converted to f32 (exact).
func (g *gen) loadVecs8(dt dtypes.DataType, k int, x ref) []int {
	regs := make([]int, 0, k)
	quads := k / 4
	if quads > 0 {
		l := g.loadQs(x, quads, arr16B)
		for i := 0; i < quads; i++ {
			lo := l + i
			hi := g.Tmp()
			g.widen8(dt, hi, lo, true)
			g.widen8(dt, lo, lo, false)
			for _, h := range []int{lo, hi} {
				up := g.Tmp()
				g.widen16(dt, up, h, true)
				g.widen16(dt, h, h, false)
				regs = append(regs, h, up)
			}
		}
	}
	rest := int64(quads) * 16
	if k%4 >= 2 {
		t := g.Tmp()
		g.fpMem(true, 8, t, x.plus(rest))
		up := g.Tmp()
		g.widen8(dt, t, t, false)
		g.widen16(dt, up, t, true)
		g.widen16(dt, t, t, false)
		regs = append(regs, t, up)
		rest += 8
	}
	if k%2 == 1 {
		t := g.Tmp()
		g.fpMem(true, 4, t, x.plus(rest))
		g.widen8(dt, t, t, false)
		g.widen16(dt, t, t, false)
		regs = append(regs, t)
	}
	for _, r := range regs {
		g.intToF32(dt, r)
	}
	return regs
}

// widen8 sign- or zero-extends (as dt is s8 or u8) the low eight bytes of
// s, or with hi its upper eight, to 16-bit lanes of d.
func (g *gen) widen8(dt dtypes.DataType, d, s int, hi bool) {
	op := [2][2]uint32{{opSXTL8, opSXTL8hi}, {opUXTL8, opUXTL8hi}}[b2i(dt == dtypes.U8)][b2i(hi)]
	g.word(rr(op, d, s))
}

// widen16 extends the low (or with hi the upper) four 16-bit lanes of s
// to 32-bit lanes of d, signed for s8 data, unsigned for u8.
func (g *gen) widen16(dt dtypes.DataType, d, s int, hi bool) {
	op := [2][2]uint32{{opSXTL16, opSXTL16hi}, {opUXTL16, opUXTL16hi}}[b2i(dt == dtypes.U8)][b2i(hi)]
	g.word(rr(op, d, s))
}

// intToF32 converts the 32-bit integer lanes of r (from s8, u8 or s32
// data) to f32, rounding to nearest even (FPCR's default); every 8-bit
// value is exact.
func (g *gen) intToF32(dt dtypes.DataType, r int) {
	if dt == dtypes.U8 {
		g.word(rr(opUCVTF, r, r))
		return
	}
	g.word(rr(opSCVTF, r, r))
}

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ld1Post emits LD1 {v<t>..v<t+k-1>}, [base], #bytes with
// post-increment, and records the pointer's move.
func (g *gen) ld1Post(base int16, t, k int, arr int16) {
	p := g.op(arm64.AVLD1, mem(base, int64(k)*16), vlist(t, k, arr))
	p.Scond = arm64.C_XPOST
	g.ptrs.Bump(base, -int64(k)*16)
	g.moved(base)
}

// widenLow and widenHigh convert the lower or upper four 16-bit values
// of register s to f32 lanes of d.
func (g *gen) widenLow(dt dtypes.DataType, d, s int) {
	if dt == dtypes.F16 {
		g.word(rr(opFCVTL, d, s))
		return
	}
	g.word(rr(opSHLL, d, s))
}

func (g *gen) widenHigh(dt dtypes.DataType, d, s int) {
	if dt == dtypes.F16 {
		g.word(rr(opFCVTL2, d, s))
		return
	}
	g.word(rr(opSHLL2, d, s))
}

// accum combines n elements of src type dt at x, transformed, into
// accumulator acc (same n convention as load). The lanes above a partial
// load hold the transformed +0; with fill they hold the identity instead,
// as they must wherever lanes are later mixed. Callers pass fill false
// only where the upper lanes are never outputs and never mixed (column
// tails, element mode's lane 0).
func (g *gen) accum(dt dtypes.DataType, acc int, x ref, n int, fill bool) {
	mk := g.Mark()
	t := g.Tmp()
	g.load(dt, t, x, n)
	if n == bcast || n == lanes || !fill {
		g.transformCombine(acc, t)
	} else {
		g.transform(t)
		g.fillIdentity(t, n)
		g.combine(acc, t)
	}
	g.Release(mk)
}

// accumRun combines len(accs) consecutive full vectors at x,
// transformed, into the accumulators accs, loading a run at a time (see
// loadVecs). With mix the caller combines all of accs, every lane, into
// one result, so lanes may be mixed on the way: 8-bit sums are then
// summed pairwise in integers first (see accumQuads).
func (g *gen) accumRun(dt dtypes.DataType, accs []int, x ref, mix bool) {
	// Vectors per run: what one LD1 brings for f32 (four registers);
	// two registers' worth for the narrower types, whose widened
	// vectors take the remaining temporaries.
	// An exp's own temporaries leave room for four vectors only.
	run := 4
	if dt != dtypes.F32 && !g.expTransform() {
		run = 8
	}
	vb := lanes * int64(dt.Size())
	for i := 0; i < len(accs); i += run {
		k := min(run, len(accs)-i)
		mk := g.Mark()
		if xi := x.plus(int64(i) * vb); mix && g.conf.PairSums {
			g.accumQuads(dt, accs[i:i+k], xi)
		} else {
			for j, r := range g.loadVecs(dt, k, xi) {
				g.transformCombine(accs[i+j], r)
			}
		}
		g.Release(mk)
	}
}

// accumQuads adds len(accs) vectors of 8-bit data at x into accs with
// lanes mixed: each 16 bytes (four vectors) are added pairwise twice
// (SADDLP/UADDLP, 16B -> 8H -> 4S: four exact sums of four bytes each),
// converted once and added into one accumulator, where the plain path
// widens twice and converts four registers; the vectors left over go
// the plain way.
func (g *gen) accumQuads(dt dtypes.DataType, accs []int, x ref) {
	k := len(accs)
	quads := k / 4
	if quads > 0 {
		base, off := g.phys(x)
		l := g.tmps(quads)
		if off == 0 {
			g.ld1Post(base, l, quads, arr16B)
		} else {
			for i := 0; i < quads; i++ {
				g.fpMem(true, 16, l+i, x.plus(int64(i)*16))
			}
		}
		op8, op16 := uint32(opSADDLP8), uint32(opSADDLP16)
		if dt == dtypes.U8 {
			op8, op16 = opUADDLP8, opUADDLP16
		}
		for i := 0; i < quads; i++ {
			r := l + i
			g.word(rr(op8, r, r))
			g.word(rr(op16, r, r))
			g.intToF32(dt, r)
			g.combine(accs[i], r)
		}
	}
	if rest := k - 4*quads; rest > 0 {
		for j, r := range g.loadVecs(dt, rest, x.plus(int64(quads)*16)) {
			g.combine(accs[quads+j], r)
		}
	}
}

// vadd sets r += s (running totals, which only sums keep).
func (g *gen) vadd(r, s int) { g.fop(opFADD, r, r, s) }

// rotate sets dst[i] = src[(i+d) mod V].
func (g *gen) rotate(dst, src, d int) {
	d %= lanes
	// EXT takes bytes d*4.. of src followed by the first d*4 bytes.
	g.Add(&obj.Prog{As: arm64.AVEXT, From: imm(int64(4 * d)), Reg: v16b(src).Reg,
		RestArgs: []obj.Addr{v16b(src)}, To: v16b(dst)})
}

// LaneBcast sets every lane of dst to lane j of src.
func (g *gen) LaneBcast(dst, src, j int) {
	g.op(arm64.AVDUP, velem(src, arm64.ARNG_S, j), v4s(dst))
}

// HCombine sets every lane of r to the combine of r's lanes: two
// pairwise combines (FADDP for sums).
func (g *gen) HCombine(r int) {
	g.pairwise(r, r, r)
	g.pairwise(r, r, r)
}

// CombineAcc sets accumulator r = r op s (kernelshape.Combiner).
func (g *gen) CombineAcc(r, s int) { g.combine(r, s) }

// transpose4 combines the lanes of each of the four registers regs and
// puts the result of regs[j] in lane j of regs[0]: pairwise combines of
// neighbours, twice. The inputs are clobbered.
func (g *gen) transpose4(regs [4]int) int {
	g.pairwise(regs[0], regs[0], regs[1])
	g.pairwise(regs[2], regs[2], regs[3])
	g.pairwise(regs[0], regs[0], regs[2])
	return regs[0]
}

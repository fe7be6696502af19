package arm64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/kernelshape"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Vector primitives. Values in registers are always f32 (V lanes); the
// 16-bit types exist only in memory and during conversion.

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
	for _, s := range g.consts {
		if s.bits == bits {
			return s.reg
		}
	}
	if r := constLo + len(g.consts); r < constHi {
		g.InsertAfter(&g.pro, func() { g.setConst(r, bits) })
		g.consts = append(g.consts, constSlot{bits, r})
		return r
	}
	t := g.tmp()
	g.setConst(t, bits)
	return t
}

// widen converts the V 16-bit values in the low half of r to f32 lanes
// (bf16 is the upper half of an f32).
func (g *gen) widen(dt dtypes.DataType, r int) { g.widenLow(dt, r, r) }

// load puts elements of type dt at x, as f32, into register r:
// n == bcast: one element in every lane; n == V: a full vector;
// 0 < n < V: the first n elements, zeros above, reading no byte past
// element n-1.
func (g *gen) load(dt dtypes.DataType, r int, x ref, n int) {
	sz := int64(dt.Size())
	switch {
	case n == bcast:
		g.fpMem(true, sz, r, x)
		if dt != dtypes.F32 {
			g.widen(dt, r)
		}
		g.op(arm64.AVDUP, velem(r, arm64.ARNG_S, 0), v4s(r))
	case n == lanes:
		g.fpMem(true, lanes*sz, r, x)
		if dt != dtypes.F32 {
			g.widen(dt, r)
		}
	case n > 0 && n < lanes:
		g.loadPart(sz, r, x, n)
		if dt != dtypes.F32 {
			g.widen(dt, r)
		}
	default:
		g.fail(graph.Errorf(graph.RuntimeError, "arm64: load of %d lanes", n))
	}
}

// loadPart reads exactly n (1..V-1) elements of sz bytes into the low
// lanes of r, zeros above: a scalar load of the first two or one, and the
// third one inserted from a second register.
func (g *gen) loadPart(sz int64, r int, x ref, n int) {
	first := min(n, 2)
	g.fpMem(true, sz*int64(first), r, x)
	if n == 3 {
		mk := g.mark()
		t := g.tmp()
		g.fpMem(true, sz, t, x.plus(2*sz))
		ea := int16(arm64.ARNG_S)
		if sz == 2 {
			ea = arm64.ARNG_H
		}
		g.op(arm64.AVMOV, velem(t, ea, 0), velem(r, ea, 2))
		g.release(mk)
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
		l := g.tmps(pairs)
		if off == 0 {
			g.ld1Post(base, l, pairs, arr8H)
		} else {
			for i := 0; i < pairs; i++ {
				g.fpMem(true, 16, l+i, x.plus(int64(i)*16))
			}
		}
		for i := 0; i < pairs; i++ {
			hi := g.tmp()
			g.widenHigh(dt, hi, l+i)
			g.widenLow(dt, l+i, l+i)
			regs[2*i], regs[2*i+1] = l+i, hi
		}
	}
	if k%2 == 1 {
		t := g.tmp()
		g.fpMem(true, 8, t, x.plus(int64(pairs)*16))
		g.widenLow(dt, t, t)
		regs[k-1] = t
	}
	return regs
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
	mk := g.mark()
	t := g.tmp()
	g.load(dt, t, x, n)
	g.transform(t)
	if fill {
		g.fillIdentity(t, n)
	}
	g.combine(acc, t)
	g.release(mk)
}

// accumRun combines len(accs) consecutive full vectors at x,
// transformed, into the accumulators accs, loading a run at a time (see
// loadVecs).
func (g *gen) accumRun(dt dtypes.DataType, accs []int, x ref) {
	run := 4
	if dt != dtypes.F32 {
		run = 8
	}
	vb := lanes * int64(dt.Size())
	for i := 0; i < len(accs); i += run {
		k := min(run, len(accs)-i)
		mk := g.mark()
		for j, r := range g.loadVecs(dt, k, x.plus(int64(i)*vb)) {
			g.transform(r)
			g.combine(accs[i+j], r)
		}
		g.release(mk)
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

// laneBcast sets every lane of dst to lane j of src.
func (g *gen) laneBcast(dst, src, j int) {
	g.op(arm64.AVDUP, velem(src, arm64.ARNG_S, j), v4s(dst))
}

// hcombine sets every lane of r to the combine of r's lanes: two
// pairwise combines (FADDP for sums).
func (g *gen) hcombine(r int) {
	g.pairwise(r, r, r)
	g.pairwise(r, r, r)
}

// combineTree combines registers regs[1:] into regs[0] pairwise.
func (g *gen) combineTree(regs []int) {
	for n := len(regs); n > 1; n = (n + 1) / 2 {
		h := (n + 1) / 2
		for i := 0; i+h < n; i++ {
			g.combine(regs[i], regs[i+h])
		}
	}
}

// transpose4 combines the lanes of each of the four registers regs and
// puts the result of regs[j] in lane j of regs[0]: pairwise combines of
// neighbours, twice. The inputs are clobbered.
func (g *gen) transpose4(regs [4]int) int {
	g.pairwise(regs[0], regs[0], regs[1])
	g.pairwise(regs[2], regs[2], regs[3])
	g.pairwise(regs[0], regs[0], regs[2])
	return regs[0]
}

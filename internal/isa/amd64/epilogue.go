package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The epilogue is kernelshape.Epilogue; these are its primitives.

// GuardFinalize flags -0 outputs of AVX2 NaN-free code (see negZeroCheck)
// before Finalize.
func (g *gen) GuardFinalize(r int) {
	if g.nanFree && !g.avx512 {
		g.negZeroCheck(r)
	}
}

// SingleLanes: a single output fills every lane (see kernelshape.Finisher).
func (g *gen) SingleLanes() int { return bcast }

// Operands are the plan's post-ops and operand sizes.
func (g *gen) Operands() kernelshape.Operands {
	return kernelshape.Operands{PostOps: g.pl.PostOps, DstSize: g.DstSize, BinSizes: g.BinSizes()}
}

// LoadOperand loads n lanes of binary operand i at off into r.
func (g *gen) LoadOperand(i, r int, off int64, n int) {
	g.load(g.BinDT[i], r, g.m(g.binReg[i], off), n)
}

// StoreDst stores n lanes of r to dst at off: a whole vector
// non-temporally while StreamDst is on (an f32 dst's, or the half
// register a 16-bit dst's converts into).
func (g *gen) StoreDst(r int, off int64, n int) {
	switch {
	case !g.stream.on || n != g.V:
	case g.DstDT == dtypes.F32:
		g.op(x86.AVMOVNTPS, g.vr(r), g.m(rDst, off))
		g.stream.used = true
		return
	case halfType(g.DstDT):
		mk := g.Mark()
		h := g.Tmp()
		g.toHalf(g.DstDT, h, r)
		g.storeWhole(x86.AVMOVDQU, g.hr(h), g.m(rDst, off))
		g.Release(mk)
		return
	}
	g.store(g.DstDT, r, g.m(rDst, off), n)
}

// halfType reports whether dt is a 16-bit float, f16 or bf16.
func halfType(dt dtypes.DataType) bool { return dt == dtypes.F16 || dt == dtypes.BF16 }

// StreamAlign is the alignment of a dst of type dt that the streamed
// stores of code emitted with o need (kernelshape.Norm.StreamDst), or 0
// where such a dst streams nothing: VMOVNTPS and VMOVNTDQ fault on an
// address not aligned to what they store, a whole vector of dt, or a
// pair of them where the map stores pairs (PairsDst).
func StreamAlign(dt dtypes.DataType, o Options) int64 {
	v := int64(32)
	if o.AVX512 {
		v = 64
	}
	switch {
	case dt == dtypes.F32 || pairsBF16(dt, o.AVX512, o.BF16):
		return v
	case halfType(dt):
		return v / 2
	}
	return 0
}

// PairsDst: a bf16 dst converts two vectors at once, AVX-512's native
// one with one instruction and one check (storeBF16Pair), AVX2's with
// one pack and one NaN check (storeBF16PairRounded).
func (g *gen) PairsDst() bool { return pairsBF16(g.DstDT, g.avx512, g.bf16) }

// pairsBF16 reports whether a dst of type dt is stored in pairs of
// vectors (PairsDst) by code for AVX-512 (avx512) with or without its
// native bf16 conversion (bf16), or for AVX2. AVX-512 without it keeps
// its single stores, whose VPMOVDW packs a vector in one instruction.
func pairsBF16(dt dtypes.DataType, avx512, bf16 bool) bool {
	return dt == dtypes.BF16 && (bf16 || !avx512)
}

// StoreDstPair stores whole vectors a and b to dst, a at off and b right
// after it, as two StoreDst would.
func (g *gen) StoreDstPair(a, b int, off int64) {
	switch {
	case !g.PairsDst() || g.rowStores.on:
		g.StoreDst(a, off, g.V)
		g.StoreDst(b, off+int64(g.V)*g.DstSize, g.V)
	case g.avx512:
		g.storeBF16Pair(a, b, g.m(rDst, off))
	default:
		g.storeBF16PairRounded(a, b, g.m(rDst, off))
	}
}

var _ kernelshape.DstPairStorer = (*gen)(nil)

// streamStores is the state of StreamDst: on while the map's stores are
// non-temporal, used once one was emitted (Return then fences them).
type streamStores struct{ on, used bool }

// StreamDst turns the non-temporal dst stores on or off. VMOVNTPS and
// VMOVNTDQ fault on an address not aligned to what they store: the
// caller of a kernel that streams guarantees dst and every row's start
// are aligned to StreamAlign (see kernelshape.Norm.StreamDst).
func (g *gen) StreamDst(on bool) { g.stream.on = on }

var _ kernelshape.DstStreamer = (*gen)(nil)

// Eltwise applies a unary post-op to r, matching plan.Eltwise exactly
// (NaN in, the same NaN out; signed zeros as the reference gives them).
func (g *gen) Eltwise(op plan.PostOp, r int) {
	mk := g.Mark()
	defer g.Release(mk)
	if g.eltwiseLanes(&f32Lanes, op, r) {
		return
	}
	switch op.Kind {
	case ops.HardSigmoid:
		g.hardSigmoid(op, r)
	case ops.HardSwish:
		g.hardSwish(r)
	case ops.Pow:
		g.pow(op.Beta, r)
	case ops.Exp:
		g.exp(r)
	case ops.Log:
		g.log(r)
	default:
		if p, ok := programFor(op); ok {
			g.program(p, r)
			return
		}
		g.Fail(status.Errorf(status.Unimplemented, "amd64: post-op %v is not emitted", op.Kind))
	}
}

// Binary sets r = r OP t for a binary post-op (the result on the left),
// matching plan.Binary (binaryLanes). t is clobbered.
func (g *gen) Binary(k ops.Kind, r, t int) {
	if !g.binaryLanes(&f32Lanes, k, r, t) {
		g.Fail(status.Errorf(status.Unimplemented, "amd64: binary post-op %v is not emitted", k))
	}
}

// rangeExact sets x = x max/min y (y a register or memory, read under
// the opmask mask when not nil) with plan.Binary's semantics, in three
// instructions where VMAXPS both ways round, AND and the NaN fix-up took
// five. VRANGEPS (AVX512DQ; bits 1:0 of the immediate select min 00 or
// max 01, bits 3:2 = 01 take the sign from the compare result) orders
// -0 below +0 in either order, but treats a quiet NaN in either source as
// missing (IEEE minNum/maxNum: measured on Zen 4, as the SDM's table
// says), so the lanes where either side is NaN are found first with an
// unordered compare and set to all-ones (a NaN) after. x stays a register
// and y is not written. TestMaxMinAllPairs checks every pair of special
// values on the CPU.
func (g *gen) rangeExact(k ops.Kind, y, x obj.Addr, mask *obj.Addr) {
	g.rangeIn(&f32Lanes, k, y, x, mask)
}

// rangeIn is rangeExact in w lanes (VRANGEPD is VRANGEPS's f64 form).
func (g *gen) rangeIn(w *laneOps, k ops.Kind, y, x obj.Addr, mask *obj.Addr) {
	ctl := rangeCtl(k)
	if mask == nil {
		g.op(w.cmp, imm(3), y, x, kreg(6))
		g.op(w.rng, imm(ctl), y, x, x)
	} else {
		g.op(w.cmp, imm(3), y, x, *mask, kreg(6))
		g.op(w.rng, imm(ctl), y, x, *mask, x)
	}
	g.op(w.ternlog, imm(0xFF), x, x, kreg(6), x)
}

// rangeCtl is VRANGEPS's immediate for k: bits 1:0 select min (00) or
// max (01), bits 3:2 = 01 take the sign from the compare result.
func rangeCtl(k ops.Kind) int64 {
	if k == ops.Maximum {
		return 0b0101
	}
	return 0b0100
}

// minMaxIn sets x = x max/min y in w lanes with plan.Binary's semantics
// from VMAXPS and VMINPS (VMAXPD, VMINPD): AVX2's max and min, and
// AVX-512's exact min, for which these three instructions are faster
// than rangeExact's three (docs/PERFORMANCE-log.md, "Max and min after
// VRANGEPS"); y is clobbered.
func (g *gen) minMaxIn(w *laneOps, k ops.Kind, x, y obj.Addr) {
	switch k {
	case ops.Minimum:
		// VMINPS(a, b) is a < b ? a : b, else b. Taken both ways round
		// the two agree unless the inputs are equal (then OR picks -0
		// from a signed-zero pair) or one is NaN (then one of the two
		// is that NaN, and OR with a NaN is a NaN).
		mk := g.Mark()
		u := g.Tmp()
		g.op(w.min, y, x, g.vr(u))
		g.op(w.min, x, y, y)
		g.op(g.porOf(w), g.vr(u), y, x)
		g.Release(mk)
	case ops.Maximum:
		// As Minimum with AND for the zeros (+0 wins); AND cannot keep
		// a NaN, so unordered lanes are set to all-ones (a NaN).
		mk := g.Mark()
		u, m := g.Tmp(), g.Tmp()
		g.op(w.cmp, imm(3), y, x, g.vr(m))
		g.op(w.max, y, x, g.vr(u))
		g.op(w.max, x, y, y)
		g.op(x86.AVPAND, g.vr(u), y, x)
		g.op(x86.AVPOR, g.vr(m), x, x)
		g.Release(mk)
	}
}

// pand and por are the bitwise AND and OR of the width in use (the EVEX
// forms need an element size).
func (g *gen) pand() obj.As {
	if g.avx512 {
		return x86.AVPANDD
	}
	return x86.AVPAND
}

func (g *gen) por() obj.As {
	if g.avx512 {
		return x86.AVPORD
	}
	return x86.AVPOR
}

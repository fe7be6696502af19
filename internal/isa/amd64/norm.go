package amd64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The fused normalization kernel is kernelshape.NormRows; these are its
// primitives, beside the epilogue's (LoadOperand, Eltwise, StoreDst).

// EmitNorm returns x86-64 machine code for the fused normalization n,
// called as a reduction kernel is (plan.Args, Count rows of its first
// Outer loop). A post-op or data type the emitter lacks is an
// Unimplemented error.
func EmitNorm(n *kernelshape.Norm, o Options) (plan.Code, error) {
	if err := checkNorm(n); err != nil {
		return plan.Code{}, err
	}
	// Held constants take temporaries for good: a kernel that then runs
	// short of them is built again with none held, and then, where rows
	// are interleaved (the post-ops need many temporaries, say), a row
	// at a time.
	var err error
	rows, staged := 0, false
	for _, holdNone := range []bool{false, true} {
		c := Conf{Target: o.Target()}
		c.f.avx512 = o.AVX512
		g := newGenConf(newAsm(), n.Plan, c)
		g.dequant, g.holdNone, g.norm = n.Dequant, holdNone, true
		rows, staged = kernelshape.NormShape(g, n)
		var text []byte
		if text, err = kernelshape.Assemble(g); err == nil {
			return plan.Code{Text: text, Staged: staged}, nil
		}
	}
	if rows > 1 {
		one := *n
		one.OneRow = true
		return EmitNorm(&one, o)
	}
	return plan.Code{}, err
}

// checkNorm refuses what the fused kernel's primitives do not emit.
func checkNorm(n *kernelshape.Norm) error {
	pl := n.Plan
	if pl == nil || len(pl.Reduced) != 1 || len(pl.Outer) > maxDepth {
		return status.Errorf(status.InvalidArguments, "amd64: a fused normalization needs one row loop and at most %d row loops", maxDepth)
	}
	if !(isFloat(pl.SrcDT) || pl.SrcDT.IsInt8() && n.Dequant != nil) || !takesDataTypes(pl.SrcDT, pl.DstDT) {
		return status.Errorf(status.Unimplemented, "amd64: fused normalization of %v into %v", pl.SrcDT, pl.DstDT)
	}
	for _, op := range pl.PostOps {
		if !kernelshape.VectorPostOp(op.Kind) {
			return status.Errorf(status.Unimplemented, "amd64: post-op %v is not emitted", op.Kind)
		}
	}
	if len(pl.Outer)+pl.BinaryCount()+1 > pointerAndCounterRegisters {
		return status.Errorf(status.Unimplemented, "amd64: a fused normalization of %d row loops and %d operands needs more general registers",
			len(pl.Outer), pl.BinaryCount())
	}
	return nil
}

// NormRegs: the accumulator registers are the shape's.
func (g *gen) NormRegs() int { return g.nacc }

// normMinTemps is how many temporaries WidenNorm leaves: the exp's, a
// copy, and a converting store's.
const normMinTemps = 4

// WidenNorm raises the temporaries' floor to n, before any are taken.
func (g *gen) WidenNorm(n int) bool {
	if g.tmpPeak > g.tmpLo || g.tmpNext != g.tmpLo || n < g.tmpLo || g.tmpHi-n < normMinTemps {
		return false
	}
	g.tmpLo, g.tmpNext = n, n
	return true
}

// LoadSrc loads n lanes of src at off into r: with a fused Dequantize,
// s8 or u8 dequantized in registers.
func (g *gen) LoadSrc(r int, off int64, n int) {
	if g.SrcDT == dtypes.BF16 && n == g.V && g.loadBF16Permuted(r, g.m(rSrc, off)) {
		return
	}
	g.load(g.SrcDT, r, g.m(rSrc, off), n)
	if g.dequant != nil {
		kernelshape.Dequantize(g, g.dequant, r)
	}
}

// StoreStat stores lane 0 of r to binary operand i, a kept statistic.
func (g *gen) StoreStat(i, r int) { g.store(dtypes.F32, r, g.m(g.binReg[i], 0), 1) }

// LoadDst loads n lanes of the f32 dst at off into r.
func (g *gen) LoadDst(r int, off int64, n int) { g.load(dtypes.F32, r, g.m(rDst, off), n) }

// ExpShifted sets r to e^r for a softmax's r = x - m (expShifted).
func (g *gen) ExpShifted(r int) { g.expShifted(r) }

// LogSum sets r to log(r) for a softmax's sum of exps (logSum).
func (g *gen) LogSum(r int) { g.logSum(r) }

// SetConst broadcasts v into r.
func (g *gen) SetConst(r int, v float32) { g.constF32(r, v) }

// HeldConst takes the top temporary for v from the prologue on, where
// no code so far has used it and normMinTemps are left; else it builds v
// in a temporary here.
func (g *gen) HeldConst(v float32) int { return g.heldBits(math.Float32bits(v)) }

// heldBits is HeldConst for a 32-bit pattern, which need not be a float.
func (g *gen) heldBits(bits uint32) int {
	if r, ok := g.hold(uint64(bits), func(r int) { g.constant(r, bits) }); ok {
		return r
	}
	t := g.Tmp()
	g.constant(t, bits)
	return t
}

// hold returns the register that holds the vector key names from the
// prologue on, which build sets there: the top temporary, taken where
// no code so far has used it and normMinTemps are left. It reports
// false where none can be taken.
func (g *gen) hold(key uint64, build func(r int)) (int, bool) {
	for _, h := range g.held {
		if h.key == key {
			return h.reg, true
		}
	}
	r := g.tmpHi - 1
	if g.holdNone || g.tmpPeak > r || r-g.tmpLo < normMinTemps {
		return 0, false
	}
	g.tmpHi = r
	g.InsertAfter(&g.pro, func() { build(r) })
	g.held = append(g.held, heldSlot{key, r})
	return r, true
}

// Copy sets dst = src.
func (g *gen) Copy(dst, src int) { g.op(x86.AVMOVAPS, g.vr(src), g.vr(dst)) }

// Arith sets r = r OP s: Binary's four arithmetic kinds leave s as it is.
func (g *gen) Arith(k ops.Kind, r, s int) { g.Binary(k, r, s) }

// normOp sets r = r c s: VADDPS, or VMAXPS (which returns s where
// either is NaN or both are zeros: NormMaxAny allows it).
func (g *gen) normOp(c kernelshape.NormCombine, r, s int) {
	as := x86.AVADDPS
	if c == kernelshape.NormMaxAny {
		as = x86.AVMAXPS
	}
	g.op(as, g.vr(s), g.vr(r), g.vr(r))
}

// Accumulate combines the first n lanes of t into acc: AVX-512 merges
// under an opmask, AVX2 blends the combine back.
func (g *gen) Accumulate(c kernelshape.NormCombine, acc, t, n int) {
	if n == g.V {
		g.normOp(c, acc, t)
		return
	}
	mk := g.Mark()
	u := g.Tmp()
	g.op(x86.AVMOVAPS, g.vr(acc), g.vr(u))
	g.normOp(c, u, t)
	if g.avx512 {
		g.op(x86.AVMOVAPS, g.vr(u), g.vmask(n), g.vr(acc))
	} else {
		g.op(x86.AVBLENDVPS, g.vmask(n), g.vr(u), g.vr(acc), g.vr(acc))
	}
	g.Release(mk)
}

// AccumulateSquare adds t*t to acc in one VFMADD231PS.
func (g *gen) AccumulateSquare(acc, t int) {
	g.op(x86.AVFMADD231PS, g.vr(t), g.vr(t), g.vr(acc))
}

// MulAdd sets r = r*a + b in one VFMADD213PS.
func (g *gen) MulAdd(r, a, b int) {
	g.op(x86.AVFMADD213PS, g.vr(b), g.vr(a), g.vr(r))
}

var _ kernelshape.MulAdder = (*gen)(nil)

// DivideUniform divides lane 0 (VDIVSS) and broadcasts it: a scalar
// division issues once, where a vector's takes the divider for several
// times as long.
func (g *gen) DivideUniform(r, s int) {
	g.op(x86.AVDIVSS, g.xr(s), g.xr(r), g.xr(r))
	g.op(x86.AVBROADCASTSS, g.xr(r), g.vr(r))
}

// SqrtUniform takes the root of lane 0 (VSQRTSS) and broadcasts it, as
// DivideUniform does.
func (g *gen) SqrtUniform(r int) {
	g.op(x86.AVSQRTSS, g.xr(r), g.xr(r), g.xr(r))
	g.op(x86.AVBROADCASTSS, g.xr(r), g.vr(r))
}

// HReduce leaves the combine of r's lanes in every lane, as HCombine
// does for the plan's combine.
func (g *gen) HReduce(c kernelshape.NormCombine, r int) {
	mk := g.Mark()
	t := g.Tmp()
	step := func() { g.normOp(c, r, t) }
	if g.avx512 {
		g.op(x86.AVSHUFF32X4, imm(0x4E), g.vr(r), g.vr(r), g.vr(t))
		step()
		g.op(x86.AVSHUFF32X4, imm(0xB1), g.vr(r), g.vr(r), g.vr(t))
		step()
	} else {
		g.op(x86.AVPERM2F128, imm(0x01), g.vr(r), g.vr(r), g.vr(t))
		step()
	}
	g.op(x86.AVPERMILPS, imm(0x4E), g.vr(r), g.vr(t))
	step()
	g.op(x86.AVPERMILPS, imm(0xB1), g.vr(r), g.vr(t))
	step()
	g.Release(mk)
}

var _ kernelshape.NormEmitter = (*gen)(nil)

// isFloat reports whether dt is f32, bf16 or f16.
func isFloat(dt dtypes.DataType) bool {
	return dt == dtypes.F32 || dt == dtypes.BF16 || dt == dtypes.F16
}

// LoadEps broadcasts NormArgs.Eps into r (DI still points at the
// argument block).
func (g *gen) LoadEps(r int) { g.load(dtypes.F32, r, mem(rDI, plan.ArgEps), bcast) }

// StoreSrc stores n lanes of r to src at off (a residual sum).
func (g *gen) StoreSrc(r int, off int64, n int) { g.store(g.SrcDT, r, g.m(rSrc, off), n) }

// PackedRows: a register packs one row's statistics in each 128-bit
// block: four on AVX-512, two on AVX2.
func (g *gen) PackedRows() int {
	if g.avx512 {
		return 4
	}
	return 2
}

// PackRow sets 128-bit block i of dst to src's (VINSERTF32X4; AVX2's
// VBLENDPS takes the block from src, all of whose lanes are one value).
func (g *gen) PackRow(dst, src, i int) {
	if !g.avx512 {
		g.op(x86.AVBLENDPS, imm(int64(0x0F<<(4*i))), g.vr(src), g.vr(dst), g.vr(dst))
		return
	}
	g.op(x86.AVINSERTF32X4, imm(int64(i)), g.xr(src), g.vr(dst), g.vr(dst))
}

// UnpackRow copies 128-bit block i of src to every block of dst
// (VSHUFF32X4; AVX2's VPERM2F128); its four lanes are one value.
func (g *gen) UnpackRow(dst, src, i int) {
	if !g.avx512 {
		g.op(x86.AVPERM2F128, imm(int64(i*0x11)), g.vr(src), g.vr(src), g.vr(dst))
		return
	}
	g.op(x86.AVSHUFF32X4, imm(int64(i*0x55)), g.vr(src), g.vr(src), g.vr(dst))
}

var _ kernelshape.NormRowPacker = (*gen)(nil)

// loadBF16Permuted loads a whole vector of bf16 at addr into r as f32,
// as load does, with one VPERMW where load takes VPMOVZXWD and VPSLLD,
// two ops of the vector pipes that a Zen core's bf16 rows are bound by:
// the index puts word i into the upper half of dword i, and the opmask
// zeroes the lower halves. It reports false, emitting nothing, but on a
// Zen core's AVX-512 where the index and the opmask can be held.
func (g *gen) loadBF16Permuted(r int, addr obj.Addr) bool {
	if !g.permutesBF16() {
		return false
	}
	idx, ok := g.hold(heldWordsUp, func(r int) {
		// Dword i = i << 16: its upper word picks word i.
		g.op(x86.AMOVQ, imm(0x0706050403020100), reg(rScratch))
		g.op(x86.AVMOVQ, reg(rScratch), g.xr(r))
		g.op(x86.AMOVQ, imm(0x0F0E0D0C0B0A0908), reg(rScratch))
		g.op(x86.AVPINSRQ, imm(1), reg(rScratch), g.xr(r), g.xr(r))
		g.op(x86.AVPMOVZXBD, g.xr(r), g.vr(r))
		g.op(x86.AVPSLLD, imm(16), g.vr(r), g.vr(r))
	})
	if !ok {
		return false
	}
	g.op(x86.AVMOVDQU16, addr, g.hr(r))
	g.opz(x86.AVPERMW, g.vr(r), g.vr(idx), g.kbits(oddWords), g.vr(r))
	return true
}

// PairsSrc reports whether the statistics sweeps take bf16 src a pair
// of vectors at a time (LoadSrcPair): where LoadSrc widens a vector in
// two instructions (VPMOVZXWD and VPSLLD), a pair load widens two in
// two (AVX-512) or three (AVX2, whose shifts take no memory operand).
// A Zen core's AVX-512 widens a vector in one already
// (loadBF16Permuted).
func (g *gen) PairsSrc() bool {
	return g.SrcDT == dtypes.BF16 && g.dequant == nil && !g.permutesBF16()
}

// LoadSrcPair sets even to the even-indexed bf16 values of the 2V at
// off and odd to the others, both exact f32: the dwords shifted left by
// 16, and the dwords with their low word cleared.
func (g *gen) LoadSrcPair(even, odd int, off int64) {
	addr := g.m(rSrc, off)
	hi := g.heldBits(0xFFFF0000)
	if g.avx512 {
		g.op(x86.AVPSLLD, imm(16), addr, g.vr(even))
		g.op(x86.AVPANDD, addr, g.vr(hi), g.vr(odd))
		return
	}
	g.op(x86.AVMOVDQU, addr, g.vr(odd))
	g.op(x86.AVPSLLD, imm(16), g.vr(odd), g.vr(even))
	g.op(x86.AVPAND, g.vr(hi), g.vr(odd), g.vr(odd))
}

var _ kernelshape.SrcPairLoader = (*gen)(nil)

// permutesBF16 reports whether loadBF16Permuted takes whole vectors.
func (g *gen) permutesBF16() bool {
	return g.avx512 && g.conf.Target.Family == kernelconf.Zen && g.kbitsHeld(oddWords)
}

// oddWords is the opmask of the upper word of every dword.
const oddWords = 0xAAAAAAAA

// heldWordsUp is hold's key of loadBF16Permuted's index, above every
// 32-bit constant's.
const heldWordsUp = 1 << 32

// SkipUnlessBelow branches to l unless a lane of r is below v (an
// ordered compare: a NaN lane is not).
func (g *gen) SkipUnlessBelow(r int, v float32, l kernelshape.Label) {
	mk := g.Mark()
	defer g.Release(mk)
	c := g.Tmp()
	g.SetConst(c, v)
	if g.avx512 {
		k := kreg(6)
		g.op(x86.AVCMPPS, imm(cmpLTOrd), g.vr(c), g.vr(r), k)
		g.op(x86.AKORTESTW, k, k)
		g.Jump(x86.AJEQ, l)
		return
	}
	g.op(x86.AVCMPPS, imm(cmpLTOrd), g.vr(c), g.vr(r), g.vr(c))
	g.op(x86.AVPTEST, g.vr(c), g.vr(c))
	g.Jump(x86.AJEQ, l)
}

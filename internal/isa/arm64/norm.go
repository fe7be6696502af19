package arm64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The fused normalization kernel is kernelshape.NormRows; these are its
// primitives, beside the epilogue's (LoadOperand, Eltwise, StoreDst), as
// amd64 has them.

// EmitNorm returns NEON machine code for the fused normalization n,
// called as a reduction kernel is (plan.Args, Count rows of its first
// Outer loop). A post-op or data type the emitter lacks is an
// Unimplemented error.
func EmitNorm(n *kernelshape.Norm) (plan.Code, error) {
	pl := n.Plan
	if pl == nil || len(pl.Reduced) != 1 || len(pl.Outer) > maxDepth {
		return plan.Code{}, status.Errorf(status.InvalidArguments, "arm64: a fused normalization needs one row loop and at most %d row loops", maxDepth)
	}
	if !(isFloat(pl.SrcDT) || pl.SrcDT.IsInt8() && n.Dequant != nil) || !dataTypes(pl.SrcDT, pl.DstDT) {
		return plan.Code{}, status.Errorf(status.Unimplemented, "arm64: fused normalization of %v into %v", pl.SrcDT, pl.DstDT)
	}
	for _, op := range pl.PostOps {
		if !kernelshape.VectorPostOp(op.Kind) {
			return plan.Code{}, status.Errorf(status.Unimplemented, "arm64: post-op %v is not emitted", op.Kind)
		}
	}
	g := newGen(pl)
	g.dequant = n.Dequant
	rows, staged := kernelshape.NormShape(g, n)
	text, err := kernelshape.Assemble(g)
	if err != nil && rows > 1 {
		// The interleaved rows left too few temporaries (for the
		// post-ops, say): a row at a time.
		one := *n
		one.OneRow = true
		return EmitNorm(&one)
	}
	if err != nil {
		return plan.Code{}, err
	}
	return plan.Code{Text: text, Staged: staged}, nil
}

// isFloat reports whether dt is f32, bf16 or f16.
func isFloat(dt dtypes.DataType) bool {
	return dt == dtypes.F32 || dt == dtypes.BF16 || dt == dtypes.F16
}

// NormRegs: the accumulator registers are the shape's.
func (g *gen) NormRegs() int { return nacc }

// normMinTemps is how many temporaries WidenNorm leaves: the exp's, a
// copy, and a converting store's.
const normMinTemps = 4

// WidenNorm raises the temporaries' floor to n, before any are taken.
func (g *gen) WidenNorm(n int) bool {
	if g.tmpNext != g.tmpFloor || n < g.tmpFloor || tmpHi-n < normMinTemps {
		return false
	}
	g.tmpFloor, g.tmpNext = n, n
	return true
}

// LoadSrc loads n lanes of src at off into r: with a fused Dequantize,
// s8 or u8 dequantized in registers.
func (g *gen) LoadSrc(r int, off int64, n int) {
	g.load(g.SrcDT, r, at(rSrc, off), n)
	if g.dequant != nil {
		kernelshape.Dequantize(g, g.dequant, r)
	}
}

// StoreStat stores lane 0 of r to binary operand i, a kept statistic.
func (g *gen) StoreStat(i, r int) { g.store(dtypes.F32, r, at(g.binReg[i], 0), 1) }

// LoadDst loads n lanes of the f32 dst at off into r.
func (g *gen) LoadDst(r int, off int64, n int) { g.load(dtypes.F32, r, at(rDst, off), n) }

// ExpShifted sets r to e^r for a softmax's r = x - m (expShifted).
func (g *gen) ExpShifted(r int) { g.expShifted(r) }

// LogSum sets r to log(r) for a softmax's sum of exps (logSum).
func (g *gen) LogSum(r int) { g.logSum(r) }

// SetConst broadcasts v into r.
func (g *gen) SetConst(r int, v float32) { g.setConst(r, math.Float32bits(v)) }

// HeldConst is the constant pool's register for v (vconst): set in the
// prologue while the pool has slots, else in a temporary here.
func (g *gen) HeldConst(v float32) int { return g.vconst(math.Float32bits(v)) }

// Copy sets dst = src.
func (g *gen) Copy(dst, src int) { g.vmov(dst, src) }

// Arith sets r = r OP s: Binary's four arithmetic kinds leave s as it is.
func (g *gen) Arith(k ops.Kind, r, s int) { g.Binary(k, r, s) }

// Accumulate combines the first n lanes of t into acc: the lanes of t
// past n are set to the identity first (NEON has no lane masks). FMAX
// propagates NaNs, more than NormMaxAny asks.
func (g *gen) Accumulate(c kernelshape.NormCombine, acc, t, n int) {
	if n < lanes {
		id := float32(0)
		if c == kernelshape.NormMaxAny {
			id = float32(math.Inf(-1))
		}
		mk := g.Mark()
		c := g.vconst(math.Float32bits(id))
		for j := n; j < lanes; j++ {
			g.op(arm64.AVMOV, velem(c, arm64.ARNG_S, 0), velem(t, arm64.ARNG_S, j))
		}
		g.Release(mk)
	}
	if c == kernelshape.NormMaxAny {
		g.fop(opFMAX, acc, acc, t)
		return
	}
	g.fop(opFADD, acc, acc, t)
}

// AccumulateSquare adds t*t to acc in one FMLA.
func (g *gen) AccumulateSquare(acc, t int) { g.vop(arm64.AVFMLA, arr4S, acc, t, t) }

// MulAdd sets r = r*a + b: b += r*a in one FMLA, then copied to r.
func (g *gen) MulAdd(r, a, b int) {
	g.vop(arm64.AVFMLA, arr4S, b, r, a)
	g.Copy(r, b)
}

var _ kernelshape.MulAdder = (*gen)(nil)

// DivideUniform and SqrtUniform take every lane, as Arith and Eltwise
// do: no arm64 core has been measured faster with the scalar forms.
func (g *gen) DivideUniform(r, s int) { g.Arith(ops.Divide, r, s) }
func (g *gen) SqrtUniform(r int)      { g.Eltwise(plan.PostOp{Kind: ops.Sqrt}, r) }

// HReduce leaves the sum or max of r's lanes in every lane: two pairwise
// combines (FADDP, FMAXP: NaN-propagating).
func (g *gen) HReduce(c kernelshape.NormCombine, r int) {
	op := combineTable[plan.CombineAdd].pair
	if c == kernelshape.NormMaxAny {
		op = combineTable[plan.CombineMax].pair
	}
	g.fop(op, r, r, r)
	g.fop(op, r, r, r)
}

var _ kernelshape.NormEmitter = (*gen)(nil)

// LoadEps broadcasts NormArgs.Eps into r (rArgs still points at the
// argument block).
func (g *gen) LoadEps(r int) { g.load(dtypes.F32, r, at(rArgs, plan.ArgEps), bcast) }

// StoreSrc stores n lanes of r to src at off (a residual sum).
func (g *gen) StoreSrc(r int, off int64, n int) { g.store(g.SrcDT, r, at(rSrc, off), n) }

// PackedRows: NEON packs four rows' statistics, one to each lane.
func (g *gen) PackedRows() int { return 4 }

// PackRow sets lane i of dst to lane 0 of src (INS).
func (g *gen) PackRow(dst, src, i int) {
	g.op(arm64.AVMOV, velem(src, arm64.ARNG_S, 0), velem(dst, arm64.ARNG_S, i))
}

// UnpackRow sets every lane of dst to lane i of src (DUP).
func (g *gen) UnpackRow(dst, src, i int) {
	g.op(arm64.AVDUP, velem(src, arm64.ARNG_S, i), v4s(dst))
}

var _ kernelshape.NormRowPacker = (*gen)(nil)

// opFMINNMV is FMINNMV Sd, Vn.4S: the least of Vn's lanes that are
// numbers (NaN only where every lane is one).
const opFMINNMV = 0x6EB0C800

// SkipUnlessBelow branches to l unless a lane of r is below v: FMINNMV
// takes the least lane that is a number, and B.PL branches unless it is
// below v (a NaN, unordered, is not below).
func (g *gen) SkipUnlessBelow(r int, v float32, l kernelshape.Label) {
	mk := g.Mark()
	defer g.Release(mk)
	t, c := g.Tmp(), g.Tmp()
	g.word(rr(opFMINNMV, t, r))
	g.SetConst(c, v)
	g.word(rrr(opFCMPS, 0, t, c))
	g.Jump(arm64.ABPL, l)
}

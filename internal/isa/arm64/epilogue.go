package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The epilogue is kernelshape.Epilogue; these are its primitives.

// SingleLanes: a single output sits in lane 0 alone, so its operand is
// one element (see kernelshape.Finisher).
func (g *gen) SingleLanes() int { return 1 }

// Operands are the plan's post-ops and operand sizes.
func (g *gen) Operands() kernelshape.Operands {
	return kernelshape.Operands{PostOps: g.pl.PostOps, DstSize: g.DstSize, BinSizes: g.BinSizes()}
}

// LoadOperand loads n lanes of binary operand i at off into r.
func (g *gen) LoadOperand(i, r int, off int64, n int) {
	g.load(g.BinDT[i], r, at(g.binReg[i], off), n)
}

// StoreDst stores n lanes of r to dst at off.
func (g *gen) StoreDst(r int, off int64, n int) { g.store(g.DstDT, r, at(rDst, off), n) }

// Eltwise applies a unary post-op to r, matching plan.Eltwise exactly
// (NaN in, a NaN out; signed zeros as the reference gives them).
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
		g.Fail(status.Errorf(status.Unimplemented, "arm64: post-op %v is not emitted", op.Kind))
	}
}

// Binary sets r = r OP t for a binary post-op (the result on the left),
// matching plan.Binary (binaryLanes).
func (g *gen) Binary(k ops.Kind, r, t int) {
	if !g.binaryLanes(&f32Lanes, k, r, t) {
		g.Fail(status.Errorf(status.Unimplemented, "arm64: binary post-op %v is not emitted", k))
	}
}

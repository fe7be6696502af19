package arm64

import (
	"math"

	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
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
	switch op.Kind {
	case ops.Abs:
		g.word(rr(opFABS, r, r))
	case ops.Clamp:
		// Compare and select rather than FMAX/FMIN: those order -0
		// below +0, but the reference only replaces x when x < alpha
		// or x > beta, so Clamp(-0) with alpha +0 stays -0. The
		// compares are false for NaN, which therefore passes through.
		m := g.Tmp()
		a := g.vconst(math.Float32bits(op.Alpha))
		g.fop(opFCMGT, m, a, r) // alpha > x
		g.vop(arm64.AVBIT, arr16B, r, a, m)
		b := g.vconst(math.Float32bits(op.Beta))
		g.fop(opFCMGT, m, r, b) // x > beta
		g.vop(arm64.AVBIT, arr16B, r, b, m)
	case ops.Square:
		g.fop(opFMUL, r, r, r)
	case ops.Sqrt:
		g.word(rr(opFSQRT, r, r))
	case ops.Round:
		g.word(rr(opFRINTN, r, r))
	case ops.ReLU:
		// x <= 0 (ordered, so not NaN; -0 too) becomes +0.
		m := g.Tmp()
		g.word(rr(opFCMLE0, m, r))
		g.fop(opBIC, r, r, m)
	case ops.LeakyReLU:
		// Only x < 0 (ordered) is scaled: NaN and -0 stay as they are.
		m := g.Tmp()
		t := g.Tmp()
		g.word(rr(opFCMLT0, m, r))
		g.fop(opFMUL, t, r, g.vconst(math.Float32bits(op.Alpha)))
		g.vop(arm64.AVBIT, arr16B, r, t, m)
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
// matching plan.Binary. FMAX and FMIN already give NaN when either side
// is NaN and order -0 below +0, as the reference does.
func (g *gen) Binary(k ops.Kind, r, t int) {
	op, ok := binaryOps[k]
	if !ok {
		g.Fail(status.Errorf(status.Unimplemented, "arm64: binary post-op %v is not emitted", k))
		return
	}
	g.fop(op.s, r, r, t)
}

// binaryOps are the binary post-ops' instructions on f32 lanes (4S) and
// on f64 lanes (2D, the native kernel's: nativepost.go).
var binaryOps = map[ops.Kind]struct{ s, d uint32 }{
	ops.Add:      {opFADD, opFADD2D},
	ops.Subtract: {opFSUB, opFSUB2D},
	ops.Multiply: {opFMUL, opFMUL2D},
	ops.Divide:   {opFDIV, opFDIV2D},
	ops.Maximum:  {opFMAX, opFMAX2D},
	ops.Minimum:  {opFMIN, opFMIN2D},
}

package arm64

import (
	"math"

	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// epilogue turns the combined values in register r into outputs: the
// finalize (the mean's true f32 division by Div), the post-ops,
// conversion to dst and the store. Lanes that map to unit-stride dst
// (and unit-stride or broadcast operands) are done as one vector; any
// other layout lane by lane. r is clobbered.
func (g *gen) epilogue(r int, lm kernelshape.LaneMap) {
	g.finalize(r)
	if lm.N == bcast || lm.Contiguous(g.dsz, g.bsz[:g.nbin]) {
		g.finish(r, lm)
		return
	}
	mk := g.mark()
	t := g.tmp()
	for j := 0; j < lm.N; j++ {
		g.laneBcast(t, r, j)
		g.finish(t, lm.Lane(j))
	}
	g.release(mk)
}

// finish applies the post-ops to r and stores it (vector or bcast layout).
func (g *gen) finish(r int, lm kernelshape.LaneMap) {
	bin := 0
	for _, op := range g.pl.PostOps {
		if !op.Kind.IsBinary() {
			g.eltwise(op, r)
			continue
		}
		mk := g.mark()
		t := g.tmp()
		n := lm.N
		switch {
		case n == bcast:
			n = 1 // only lane 0 is an output
		case lm.BinStep[bin] == 0:
			n = bcast
		}
		g.load(g.bdt[bin], t, at(g.binReg[bin], lm.BinOff[bin]), n)
		g.binary(op.Kind, r, t)
		g.release(mk)
		bin++
	}
	g.store(g.ddt, r, at(rDst, lm.DstOff), lm.N)
}

// eltwise applies a unary post-op to r, matching plan.Eltwise exactly
// (NaN in, a NaN out; signed zeros as the reference gives them).
func (g *gen) eltwise(op plan.PostOp, r int) {
	mk := g.mark()
	defer g.release(mk)
	switch op.Kind {
	case plan.Abs:
		g.word(rr(opFABS, r, r))
	case plan.Clamp:
		// Compare and select rather than FMAX/FMIN: those order -0
		// below +0, but the reference only replaces x when x < alpha
		// or x > beta, so Clamp(-0) with alpha +0 stays -0. The
		// compares are false for NaN, which therefore passes through.
		m := g.tmp()
		a := g.vconst(math.Float32bits(op.Alpha))
		g.fop(opFCMGT, m, a, r) // alpha > x
		g.vop(arm64.AVBIT, arr16B, r, a, m)
		b := g.vconst(math.Float32bits(op.Beta))
		g.fop(opFCMGT, m, r, b) // x > beta
		g.vop(arm64.AVBIT, arr16B, r, b, m)
	case plan.Square:
		g.fop(opFMUL, r, r, r)
	case plan.Sqrt:
		g.word(rr(opFSQRT, r, r))
	case plan.Round:
		g.word(rr(opFRINTN, r, r))
	case plan.ReLU:
		// x <= 0 (ordered, so not NaN; -0 too) becomes +0.
		m := g.tmp()
		g.word(rr(opFCMLE0, m, r))
		g.fop(opBIC, r, r, m)
	case plan.LeakyReLU:
		// Only x < 0 (ordered) is scaled: NaN and -0 stay as they are.
		m := g.tmp()
		t := g.tmp()
		g.word(rr(opFCMLT0, m, r))
		g.fop(opFMUL, t, r, g.vconst(math.Float32bits(op.Alpha)))
		g.vop(arm64.AVBIT, arr16B, r, t, m)
	case plan.HardSigmoid:
		g.hardSigmoid(op, r)
	case plan.HardSwish:
		g.hardSwish(r)
	case plan.Pow:
		g.pow(op.Beta, r)
	case plan.Exp:
		g.exp(r)
	case plan.Log:
		g.log(r)
	default:
		if p, ok := programFor(op); ok {
			g.program(p, r)
			return
		}
		g.fail(status.Errorf(status.Unimplemented, "arm64: post-op %v is not emitted", op.Kind))
	}
}

// binary sets r = r OP t for a binary post-op (the result on the left),
// matching plan.Binary. FMAX and FMIN already give NaN when either side
// is NaN and order -0 below +0, as the reference does.
func (g *gen) binary(k plan.Kind, r, t int) {
	switch k {
	case plan.Add:
		g.fop(opFADD, r, r, t)
	case plan.Subtract:
		g.fop(opFSUB, r, r, t)
	case plan.Multiply:
		g.fop(opFMUL, r, r, t)
	case plan.Divide:
		g.fop(opFDIV, r, r, t)
	case plan.Maximum:
		g.fop(opFMAX, r, r, t)
	case plan.Minimum:
		g.fop(opFMIN, r, r, t)
	default:
		g.fail(status.Errorf(status.Unimplemented, "arm64: binary post-op %v is not emitted", k))
	}
}

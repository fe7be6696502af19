package arm64

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The post-ops that f32 lanes (4S, the f32 epilogue) and f64 lanes (2D,
// the native kernel's f64 epilogue, nativepost.go) compute with the
// same steps, written once over laneOps, the instructions of one lane
// width.

// laneOps are the instructions and constants of one float lane width.
type laneOps struct {
	// binary are the binary post-ops' instructions: FMAX and FMIN give
	// NaN when either side is NaN and order -0 below +0, as plan.Binary
	// and plan.BinaryF64 do.
	binary                                map[ops.Kind]uint32
	abs, sqrt, rintn, mul, cmgt, le0, lt0 uint32
	// konst returns a register holding the parameter v in every lane.
	konst func(g *gen, v float32) int
}

var f32Lanes = laneOps{
	binary: map[ops.Kind]uint32{ops.Add: opFADD, ops.Subtract: opFSUB, ops.Multiply: opFMUL, ops.Divide: opFDIV,
		ops.Maximum: opFMAX, ops.Minimum: opFMIN},
	abs: opFABS, sqrt: opFSQRT, rintn: opFRINTN, mul: opFMUL, cmgt: opFCMGT, le0: opFCMLE0, lt0: opFCMLT0,
	konst: func(g *gen, v float32) int { return g.vconst(math.Float32bits(v)) },
}

var f64Lanes = laneOps{
	binary: map[ops.Kind]uint32{ops.Add: opFADD2D, ops.Subtract: opFSUB2D, ops.Multiply: opFMUL2D, ops.Divide: opFDIV2D,
		ops.Maximum: opFMAX2D, ops.Minimum: opFMIN2D},
	abs: opFABS2D, sqrt: opFSQRT2D, rintn: opFRINTN2D, mul: opFMUL2D, cmgt: opFCMGT2D, le0: opFCMLE02D, lt0: opFCMLT02D,
	konst: func(g *gen, v float32) int { return g.vconst64(math.Float64bits(float64(v))) },
}

// eltwiseLanes applies the unary post-op op to the w lanes of r, as
// plan.Eltwise (f32) or plan.EltwiseF64 (f64) has it, bit for bit (NaN
// in, a NaN out; signed zeros as the reference gives them), and
// reports whether op is one of those written here.
func (g *gen) eltwiseLanes(w *laneOps, op plan.PostOp, r int) bool {
	switch op.Kind {
	case ops.Abs:
		g.word(rr(w.abs, r, r))
	case ops.Clamp:
		// Compare and select rather than FMAX/FMIN: those order -0
		// below +0, but the reference only replaces x when x < alpha
		// or x > beta, so Clamp(-0) with alpha +0 stays -0. The
		// compares are false for NaN, which therefore passes through.
		m := g.Tmp()
		a := w.konst(g, op.Alpha)
		g.fop(w.cmgt, m, a, r) // alpha > x
		g.vop(arm64.AVBIT, arr16B, r, a, m)
		b := w.konst(g, op.Beta)
		g.fop(w.cmgt, m, r, b) // x > beta
		g.vop(arm64.AVBIT, arr16B, r, b, m)
	case ops.Square:
		g.fop(w.mul, r, r, r)
	case ops.Sqrt:
		g.word(rr(w.sqrt, r, r))
	case ops.Round:
		g.word(rr(w.rintn, r, r))
	case ops.ReLU:
		// x <= 0 (ordered, so not NaN; -0 too) becomes +0.
		m := g.Tmp()
		g.word(rr(w.le0, m, r))
		g.fop(opBIC, r, r, m)
	case ops.LeakyReLU:
		// Only x < 0 (ordered) is scaled: NaN and -0 stay as they are.
		m := g.Tmp()
		t := g.Tmp()
		g.word(rr(w.lt0, m, r))
		g.fop(w.mul, t, r, w.konst(g, op.Alpha))
		g.vop(arm64.AVBIT, arr16B, r, t, m)
	default:
		return false
	}
	return true
}

// binaryLanes sets r = r OP t in w lanes for the binary post-op k (the
// result on the left) and reports whether k is one of them.
func (g *gen) binaryLanes(w *laneOps, k ops.Kind, r, t int) bool {
	op, ok := w.binary[k]
	if ok {
		g.fop(op, r, r, t)
	}
	return ok
}

package kernelshape

import (
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// Finisher is what an instruction set supplies to Epilogue: vector
// registers by number, temporaries in stack order, and the operations
// that turn a combined value into stored outputs. Memory is named by a
// byte offset from where dst or a binary operand logically points; the
// emitter folds its pending pointer moves in.
type Finisher interface {
	// Tmp takes a temporary vector register; Release(Mark()) frees,
	// in stack order, every one taken since the Mark. How many there
	// are is the emitter's (amd64 has fewer under speculation or with
	// totals in registers): one too many records an error that Emit
	// returns, and generation goes on harmlessly.
	Tmp() int
	Mark() int
	Release(mark int)
	// Finalize turns the combined values in r into the reduction's
	// results (nothing when the plan writes partials).
	Finalize(r int)
	// LaneBcast sets every lane of dst to lane j of src.
	LaneBcast(dst, src, j int)
	// Eltwise applies unary post-op op to r, as plan.Eltwise does.
	Eltwise(op plan.PostOp, r int)
	// LoadOperand loads n lanes (Bcast: one element, in every lane) of
	// binary operand i, off bytes past its pointer, into r as f32.
	LoadOperand(i, r int, off int64, n int)
	// Binary sets r = r OP t for binary post-op k, as plan.Binary does;
	// t is clobbered.
	Binary(k ops.Kind, r, t int)
	// StoreDst writes n lanes of r (Bcast: one output) to dst, off bytes
	// past its pointer, converted to dst's type; r is left unchanged.
	StoreDst(r int, off int64, n int)
	// SingleLanes is the lane count LoadOperand is given for one output
	// (a Bcast LaneMap) of an operand that is not broadcast: Bcast
	// where the emitter's single outputs fill every lane, 1 where they
	// sit in lane 0 alone and one element is all there is to load.
	SingleLanes() int
	// Operands are the plan's post-ops and the element sizes of dst and
	// of each binary operand.
	Operands() Operands
}

// Operands is what the epilogue reads of a plan's outputs.
type Operands struct {
	PostOps  []plan.PostOp
	DstSize  int64
	BinSizes []int64 // one per binary post-op, in order
}

// FinalizeGuard is optional: an emitter whose speculative code must see
// each combined value before Finalize (amd64's NaN-free AVX2 max can give
// -0 where +0 is due, and flags such outputs so that none is written)
// does so in GuardFinalize.
type FinalizeGuard interface {
	GuardFinalize(r int)
}

// Epilogue turns the combined values in register r into outputs: the
// finalize, the post-ops (binary ones with their operands loaded as lm
// maps them), conversion to dst and the store. Lanes that map to
// unit-stride dst (and unit-stride or broadcast operands) are done as
// one vector; any other layout lane by lane. r is clobbered.
func Epilogue(f Finisher, r int, lm LaneMap) {
	if g, ok := f.(FinalizeGuard); ok {
		g.GuardFinalize(r)
	}
	f.Finalize(r)
	ops := f.Operands()
	if lm.N == Bcast || lm.Contiguous(ops.DstSize, ops.BinSizes) {
		finish(f, ops, r, lm)
		return
	}
	mk := f.Mark()
	t := f.Tmp()
	for j := 0; j < lm.N; j++ {
		f.LaneBcast(t, r, j)
		finish(f, ops, t, lm.Lane(j))
	}
	f.Release(mk)
}

// finish applies the post-ops to r and stores it (vector or Bcast
// layout).
func finish(f Finisher, ops Operands, r int, lm LaneMap) { finishFrom(f, ops, 0, r, lm) }

// finishFrom is finish with the post-ops from from on (those before it
// are binary operands read elsewhere: a residual sum's).
func finishFrom(f Finisher, ops Operands, from, r int, lm LaneMap) {
	postOpsFrom(f, ops, from, r, lm)
	f.StoreDst(r, lm.DstOff, lm.N)
}

// postOpsFrom is finishFrom without the store: the post-ops from post-op
// from on, applied to r.
func postOpsFrom(f Finisher, ops Operands, from, r int, lm LaneMap) {
	bin := 0
	for i, op := range ops.PostOps {
		if i < from {
			if op.Kind.IsBinary() {
				bin++
			}
			continue
		}
		if !op.Kind.IsBinary() {
			f.Eltwise(op, r)
			continue
		}
		mk := f.Mark()
		t := f.Tmp()
		loadBinary(f, bin, t, lm)
		f.Binary(op.Kind, r, t)
		f.Release(mk)
		bin++
	}
}

// loadBinary loads binary operand bin's values of lm into t, as a
// post-op reads them.
func loadBinary(f Finisher, bin, t int, lm LaneMap) {
	n := lm.N
	switch {
	case n == Bcast:
		n = f.SingleLanes()
	case lm.BinStep[bin] == 0:
		n = Bcast
	}
	f.LoadOperand(bin, t, lm.BinOff[bin], n)
}

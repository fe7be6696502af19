package arm64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The native kernel's f64 post-ops (kernelshape/nativepost.go), as
// amd64's: kernelshape.Epilogue over a Finisher whose lanes are the
// native kernel's two f64 lanes. Each op is plan.EltwiseF64's or
// plan.BinaryF64's, bit for bit: correctly rounded instructions in the
// interpreter's order, or compares and selects; but Exp and Log, which
// are package vf64's (expf64.go). A single output is in lane 0 (every lane holds
// it after NativeStoreFirst's butterfly, but only lane 0 is stored).

// f64Epilogue is the Finisher of a native kernel's f64 results.
type f64Epilogue struct{ n *nativeGen }

// epilogue finalizes r, applies the post-ops and stores lm's outputs
// through kernelshape.Epilogue.
func (n *nativeGen) epilogue(r int, lm kernelshape.LaneMap) {
	kernelshape.Epilogue(f64Epilogue{n}, r, lm)
}

func (f f64Epilogue) Tmp() int                       { return f.n.Tmp() }
func (f f64Epilogue) Mark() int                      { return f.n.Mark() }
func (f f64Epilogue) Release(mark int)               { f.n.Release(mark) }
func (f f64Epilogue) Finalize(r int)                 { f.n.finalize(r) }
func (f f64Epilogue) SingleLanes() int               { return 1 }
func (f f64Epilogue) Operands() kernelshape.Operands { return f.n.Operands() }

// LaneBcast sets both f64 lanes of dst to lane j of src.
func (f f64Epilogue) LaneBcast(dst, src, j int) {
	f.n.op(arm64.AVDUP, velem(src, arm64.ARNG_D, j), varng(dst, arr2D))
}

// LoadOperand loads m lanes (2, 1: lane 0, or bcast: one element in both
// lanes) of binary operand i at off into the f64 lanes of r, widened
// exactly: f64 as it is, s32 by SXTL and SCVTF in 64-bit lanes (exact),
// the others as f32 (exact for them) and then FCVTL.
func (f f64Epilogue) LoadOperand(i, r int, off int64, m int) {
	n := f.n
	dt := n.BinDT[i]
	x := at(n.binReg[i], off)
	count := int64(m)
	if m == bcast {
		count = 1
	}
	switch dt {
	case dtypes.F64:
		n.fpMem(true, 8*count, r, x)
	case dtypes.S32:
		n.fpMem(true, 4*count, r, x)
		n.word(rr(opSXTL32, r, r))
		n.word(rr(opSCVTF2D, r, r))
	case dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8:
		n.load(dt, r, x, int(count))
		n.word(rr(opFCVTL2D, r, r))
	default:
		n.Fail(status.Errorf(status.Unimplemented, "arm64: f64 post-ops read no %v operand", dt))
		return
	}
	if m == bcast {
		f.LaneBcast(r, r, 0)
	}
}

// StoreDst stores m lanes of r (bcast or 1: lane 0) as dst's type, f64
// or f32 rounded to nearest even; r is left unchanged.
func (f f64Epilogue) StoreDst(r int, off int64, m int) {
	n := f.n
	count := int64(m)
	if m == bcast {
		count = 1
	}
	if n.k.Store == kernelshape.StoreF32 {
		mk := n.Mark()
		t := n.Tmp()
		n.word(rr(opFCVTN2D, t, r))
		n.fpMem(false, 4*count, t, at(rDst, off))
		n.Release(mk)
		return
	}
	n.fpMem(false, 8*count, r, at(rDst, off))
}

// Binary sets r = r OP t in f64 lanes as plan.BinaryF64 (binaryLanes).
func (f f64Epilogue) Binary(k ops.Kind, r, t int) {
	if !f.n.binaryLanes(&f64Lanes, k, r, t) {
		f.n.Fail(status.Errorf(status.Unimplemented, "arm64: f64 binary post-op %v is not emitted", k))
	}
}

// Eltwise applies a unary post-op to the f64 lanes of r as
// plan.EltwiseF64 (a NaN in gives a NaN out): eltwiseLanes' ops,
// HardSigmoid, HardSwish and Pow by the steps the f32 epilogue takes in
// f64 lanes, package vf64's Exp and Log, and the post-ops package vf64
// writes over them (vf64.Emit through f64Ops: Sigmoid, Tanh, Elu,
// SoftPlus, Mish, GELUTanh, GELUErf).
func (f f64Epilogue) Eltwise(op plan.PostOp, r int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	if n.eltwiseLanes(&f64Lanes, op, r) {
		return
	}
	switch op.Kind {
	case ops.HardSigmoid:
		n.hardSigmoidF64(op, r, n.Tmp())
	case ops.HardSwish:
		n.hardSwishF64(r, n.Tmp())
	case ops.Pow:
		n.powNative(op.Beta, r)
	case ops.Exp:
		n.expF64(r)
	case ops.Log:
		n.logF64(r)
	default:
		if vf64.Emit(f64Ops{n}, op, r) {
			return
		}
		n.Fail(status.Errorf(status.Unimplemented, "arm64: f64 post-op %v is not emitted", op.Kind))
	}
}

// powNative sets the f64 lanes of r to r^beta for ops.PowBetas as
// plan.EltwiseF64: beta 0 gives 1 but keeps a NaN, 1 leaves r, 2 is one
// product, the others powF64's steps.
func (n *nativeGen) powNative(beta float32, r int) {
	mk := n.Mark()
	defer n.Release(mk)
	switch beta {
	case 1:
	case 2:
		n.fop(opFMUL2D, r, r, r)
	case 0:
		m := n.Tmp()
		n.fop(opFCMEQ2D, m, r, r) // not a NaN
		n.vop(arm64.AVBIT, arr16B, r, n.vconst64(math.Float64bits(1)), m)
	default:
		n.powF64(beta, r, n.Tmp())
	}
}

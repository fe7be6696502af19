package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The native kernel's f64 post-ops (kernelshape/nativepost.go):
// kernelshape.Epilogue over a Finisher whose lanes are the native
// kernel's f64 lanes, V of them (8 on AVX-512, 4 on AVX2). Each op is
// plan.EltwiseF64's or plan.BinaryF64's, bit for bit: one correctly
// rounded instruction, or compares and selects; but Exp and Log, which
// are package vf64's (expf64.go). A single output (the
// row and element shapes) is in every lane, as NativeStoreFirst leaves
// it.

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
func (f f64Epilogue) SingleLanes() int               { return bcast }
func (f f64Epilogue) Operands() kernelshape.Operands { return f.n.Operands() }
func (f f64Epilogue) LoadOperand(i, r int, off int64, m int) {
	f.n.loadF64(f.n.BinDT[i], r, f.n.m(f.n.binReg[i], off), m)
}

// LaneBcast sets every f64 lane of dst to lane j of src.
func (f f64Epilogue) LaneBcast(dst, src, j int) {
	n := f.n
	if j == 0 {
		n.op(x86.AVBROADCASTSD, n.xr(src), n.vr(dst))
		return
	}
	if !n.avx512 {
		n.op(x86.AVPERMPD, imm(int64(j*0x55)), n.vr(src), n.vr(dst))
		return
	}
	mk := n.Mark()
	t := n.Tmp()
	n.pattern(t, uint64(j))
	n.op(x86.AVPERMPD, n.vr(src), n.vr(t), n.vr(dst))
	n.Release(mk)
}

// StoreDst stores m lanes of r (bcast: lane 0) as dst's type, f64 or
// f32 rounded to nearest even; r is left unchanged.
func (f f64Epilogue) StoreDst(r int, off int64, m int) {
	n := f.n
	addr := n.m(rDst, off)
	one := m == bcast || m == 1
	switch {
	case n.k.Store == kernelshape.StoreF32 && one:
		mk := n.Mark()
		t := n.Tmp()
		n.op(x86.AVCVTSD2SS, n.xr(r), n.xr(t), n.xr(t))
		n.op(x86.AVMOVSS, n.xr(t), addr)
		n.Release(mk)
	case n.k.Store == kernelshape.StoreF32:
		mk := n.Mark()
		n.storeF32s(r, n.Tmp(), addr)
		n.Release(mk)
	case one:
		n.op(x86.AVMOVQ, n.xr(r), addr)
	default:
		n.op(x86.AVMOVUPD, n.vr(r), addr)
	}
}

// loadF64 loads m lanes (V, or bcast: one element in every lane) of
// type dt at addr into the f64 lanes of r, widened exactly.
func (n *nativeGen) loadF64(dt dtypes.DataType, r int, addr obj.Addr, m int) {
	if m != n.lanes {
		switch dt {
		case dtypes.F64:
			n.op(x86.AVBROADCASTSD, addr, n.vr(r))
		case dtypes.S32:
			// The f32 loads would round it: convert the dword itself.
			n.op(x86.AVCVTSI2SDL, addr, n.xr(r), n.xr(r))
			n.op(x86.AVBROADCASTSD, n.xr(r), n.vr(r))
		default:
			// Broadcast as f32 (exact for these types), then widened.
			n.load(dt, r, addr, bcast)
			n.op(x86.AVCVTPS2PD, n.hr(r), n.vr(r))
		}
		return
	}
	h := n.hr(r) // V f32 or s32 lanes
	switch dt {
	case dtypes.F64:
		n.op(x86.AVMOVUPD, addr, n.vr(r))
		return
	case dtypes.F32:
		n.op(x86.AVCVTPS2PD, addr, n.vr(r))
		return
	case dtypes.S32:
		n.op(x86.AVCVTDQ2PD, addr, n.vr(r))
		return
	case dtypes.BF16:
		n.op(x86.AVPMOVZXWD, addr, h)
		n.op(x86.AVPSLLD, imm(16), h, h)
	case dtypes.F16:
		n.op(x86.AVCVTPH2PS, addr, h)
	case dtypes.S8:
		n.op(x86.AVPMOVSXBD, addr, h)
		n.op(x86.AVCVTDQ2PD, h, n.vr(r))
		return
	case dtypes.U8:
		n.op(x86.AVPMOVZXBD, addr, h)
		n.op(x86.AVCVTDQ2PD, h, n.vr(r))
		return
	default:
		n.Fail(status.Errorf(status.Unimplemented, "amd64: f64 post-ops read no %v operand", dt))
		return
	}
	n.op(x86.AVCVTPS2PD, h, n.vr(r))
}

// Binary sets r = r OP t in f64 lanes as plan.BinaryF64 (binaryLanes);
// t is clobbered.
func (f f64Epilogue) Binary(k ops.Kind, r, t int) {
	if !f.n.binaryLanes(&f64Lanes, k, r, t) {
		f.n.Fail(status.Errorf(status.Unimplemented, "amd64: f64 binary post-op %v is not emitted", k))
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
		n.Fail(status.Errorf(status.Unimplemented, "amd64: f64 post-op %v is not emitted", op.Kind))
	}
}

// powNative sets the f64 lanes of r to r^beta for ops.PowBetas as
// plan.EltwiseF64: beta 0 gives 1 but keeps a NaN, 1 leaves r, 2 is one
// product, the others powF64's steps.
func (n *nativeGen) powNative(beta float32, r int) {
	mk := n.Mark()
	defer n.Release(mk)
	x := n.vr(r)
	switch beta {
	case 1:
	case 2:
		n.op(x86.AVMULPD, x, x, x)
	case 0:
		c := n.Tmp()
		n.constF64(c, 1)
		if n.avx512 {
			n.op(x86.AVCMPPD, imm(0), x, x, kreg(6)) // EQ_OQ: not a NaN
			n.op(x86.AVMOVAPD, n.vr(c), kreg(6), x)
			return
		}
		m := n.Tmp()
		n.op(x86.AVCMPPD, imm(0), x, x, n.vr(m))
		n.op(x86.AVBLENDVPD, n.vr(m), n.vr(c), x, x) // 1 where not a NaN
	default:
		n.powF64(beta, r, n.Tmp())
	}
}

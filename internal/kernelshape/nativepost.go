package kernelshape

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The f64 post-ops of the native kernel: Epilogue, the f32 kernels'
// skeleton, run over an emitter's Finisher whose lanes are f64, as
// plan.EltwiseF64 and plan.BinaryF64 compute them. The binary ops, Abs,
// Clamp, ReLU, LeakyReLU, Square, Sqrt, Round, HardSigmoid, HardSwish and
// Pow (ops.PowBetas) are a few correctly rounded operations in a fixed
// order (or exact: a compare, a select, a sign), so that the machine
// code's results are the interpreter's bit for bit; Exp and Log are
// package vf64's, within vf64.MaxULP float64 ulps of the interpreter's
// package math; Sigmoid, Tanh, Elu, SoftPlus, Mish, GELUTanh and
// GELUErf are package vf64's post-ops built on them (vf64.Emit), within
// vf64.PostOpULP. Binary operands are widened to f64 exactly.

// nativeF64Eltwise are the unary post-ops the f64 epilogue takes.
var nativeF64Eltwise = map[ops.Kind]bool{ops.Abs: true, ops.Clamp: true, ops.ReLU: true, ops.LeakyReLU: true,
	ops.Square: true, ops.Sqrt: true, ops.Round: true, ops.HardSigmoid: true, ops.HardSwish: true, ops.Pow: true,
	ops.Exp: true, ops.Log: true, ops.Sigmoid: true, ops.Tanh: true, ops.Elu: true, ops.SoftPlus: true, ops.Mish: true,
	ops.GELUTanh: true, ops.GELUErf: true}

// nativeF64Binary are the binary post-ops the f64 epilogue takes.
var nativeF64Binary = map[ops.Kind]bool{ops.Add: true, ops.Subtract: true, ops.Multiply: true, ops.Divide: true,
	ops.Maximum: true, ops.Minimum: true}

// NativeF64Operands are the binary operand types the f64 epilogue reads
// (LoadOperand widens each to f64 exactly).
var NativeF64Operands = []dtypes.DataType{dtypes.F64, dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}

// nativeF64PostOps returns the Unimplemented error naming the first
// post-op of postOps the f64 epilogue does not take (its kind, or its
// operand's type), or nil.
func nativeF64PostOps(postOps []plan.PostOp) error {
	for i, op := range postOps {
		if !op.Kind.IsBinary() {
			if !nativeF64Eltwise[op.Kind] {
				return status.Errorf(status.Unimplemented, "native kernel: f64 post-op %d (%v) runs in the interpreter", i, op.Kind)
			}
			continue
		}
		if !nativeF64Binary[op.Kind] {
			return status.Errorf(status.Unimplemented, "native kernel: f64 post-op %d (%v) runs in the interpreter", i, op.Kind)
		}
		if !nativeF64Operand(op.BinDT) {
			return status.Errorf(status.Unimplemented, "native kernel: f64 post-op %d (%v) reads a %v operand, which runs in the interpreter", i, op.Kind, op.BinDT)
		}
	}
	return nil
}

// nativeF64Operand reports whether dt is one of NativeF64Operands.
func nativeF64Operand(dt dtypes.DataType) bool {
	for _, t := range NativeF64Operands {
		if t == dt {
			return true
		}
	}
	return false
}

// NativeF64PostOpKinds are the post-op kinds the f64 epilogue takes, in
// ops' order (for tests that draw them).
func NativeF64PostOpKinds() []ops.Kind {
	var ks []ops.Kind
	for _, k := range ops.Kinds() {
		if nativeF64Eltwise[k] || nativeF64Binary[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

package graph

import (
	"fmt"

	"github.com/gdnn/gdnn/internal/ops"
)

// OpKind is the kind of an op, named as in oneDNN Graph.
type OpKind int

// Op kinds. gdnn compiles the Reduce* ops, the Abs and square pre-ops
// (Op.IsSquare) fused before them and the eltwise/binary ops that may be fused after
// them, and takes 8-bit integer data through a Dequantize before and a
// Quantize after a reduction (see QuantParamsOf); it compiles the
// normalization ops (SoftMax, LogSoftmax, LayerNorm, RMSNorm, GroupNorm)
// with a per-tensor Dequantize before them and a Quantize after them. The other kinds exist so that realistic graphs can be
// described, partitioned and handed back to the caller as unsupported.
const (
	ReduceMean OpKind = iota + 1
	ReduceSum
	ReduceMax
	ReduceMin
	ReduceProd
	ReduceL1
	ReduceL2

	Abs
	Clamp
	Elu
	Exp
	GELU
	HardSigmoid
	HardSwish
	LeakyReLU
	Log
	Mish
	Pow
	Sigmoid
	SoftPlus
	ReLU
	Round
	Sqrt
	Square
	Tanh

	Add
	Multiply
	Maximum
	Minimum
	Divide
	Subtract

	MatMul
	Convolution
	SoftMax
	TypeCast
	Reorder
	StaticTranspose
	StaticReshape
	LayerNorm
	Wildcard
	// End marks a graph output that other ops also read (so no fused
	// partition takes it in). It takes one input, no outputs and no
	// attributes: AddOp refuses any attribute on it, naming it.
	End

	Dequantize
	Quantize

	// The normalization ops besides SoftMax and LayerNorm (listed above
	// with the kinds gdnn once only described): each compiles into a
	// partition of its own.
	LogSoftmax
	RMSNorm
	GroupNorm

	// ArgMax and ArgMin, a gdnn extension (oneDNN Graph has no index
	// reduction): the index of the largest (smallest) element along
	// one axis, with ONNX's meaning (graph/arg.go). Each compiles into
	// a partition of its own, after an Abs where one feeds it.
	ArgMax
	ArgMin
	// The reductions of integer and boolean data only (gdnn extensions,
	// GoMLX's names): the bitwise and, or and xor of integers, and the
	// logical ones (all, any, odd) of the elements' truth (nonzero).
	ReduceBitwiseAnd
	ReduceBitwiseOr
	ReduceBitwiseXor
	ReduceLogicalAnd
	ReduceLogicalOr
	ReduceLogicalXor

	numOpKinds
)

// opKindNames names the kinds that package ops's table does not
// describe; init names the eltwise and binary ones from the table.
var opKindNames = [numOpKinds]string{
	ReduceMean: "ReduceMean", ReduceSum: "ReduceSum", ReduceMax: "ReduceMax", ReduceMin: "ReduceMin",
	ReduceProd: "ReduceProd", ReduceL1: "ReduceL1", ReduceL2: "ReduceL2",
	MatMul: "MatMul", Convolution: "Convolution", SoftMax: "SoftMax", TypeCast: "TypeCast", Reorder: "Reorder",
	StaticTranspose: "StaticTranspose", StaticReshape: "StaticReshape", LayerNorm: "LayerNorm",
	Wildcard: "Wildcard", End: "End", Dequantize: "Dequantize", Quantize: "Quantize",
	LogSoftmax: "LogSoftmax", RMSNorm: "RMSNorm", GroupNorm: "GroupNorm",
	ArgMax: "ArgMax", ArgMin: "ArgMin",
	ReduceBitwiseAnd: "ReduceBitwiseAnd", ReduceBitwiseOr: "ReduceBitwiseOr", ReduceBitwiseXor: "ReduceBitwiseXor",
	ReduceLogicalAnd: "ReduceLogicalAnd", ReduceLogicalOr: "ReduceLogicalOr", ReduceLogicalXor: "ReduceLogicalXor",
}

// postOpKinds maps each eltwise and binary op kind to the table's kind
// (GELU to its default mode's).
var postOpKinds [numOpKinds]ops.Kind

// init takes the names of the eltwise and binary kinds, Abs to Subtract,
// from package ops's table, whose graph ops are in the same order (one
// OpKind per graph op: GELU's modes share one).
func init() {
	k := Abs
	for _, pk := range ops.Kinds() {
		if op := pk.Op(); op.Mode != "" && op.Mode != ops.Modes(op.GraphOp)[0] {
			continue
		}
		opKindNames[k], postOpKinds[k] = pk.Op().GraphOp, pk
		k++
	}
	if k != Subtract+1 {
		panic("graph: the eltwise and binary op kinds are not package ops's graph ops")
	}
}

// String returns oneDNN's name of the op kind ("ReduceMean", "Add", ...).
func (k OpKind) String() string {
	if k > 0 && k < numOpKinds {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Valid reports whether k is a known op kind.
func (k OpKind) Valid() bool { return k > 0 && k < numOpKinds }

// ParseOpKind returns the op kind named s (as String spells it).
func ParseOpKind(s string) (OpKind, error) {
	for k := OpKind(1); k < numOpKinds; k++ {
		if opKindNames[k] == s {
			return k, nil
		}
	}
	return 0, Errorf(InvalidGraphOp, "unknown op kind %q", s)
}

// IsReduction reports whether k is one of the Reduce* ops.
func (k OpKind) IsReduction() bool {
	return k >= ReduceMean && k <= ReduceL2 || k >= ReduceBitwiseAnd && k <= ReduceLogicalXor
}

// IsEltwise reports whether k is a unary eltwise op of the reduction fusion list.
func (k OpKind) IsEltwise() bool { return k >= Abs && k <= Tanh }

// IsNormalization reports whether k is one of the normalization ops:
// SoftMax, LogSoftmax, LayerNorm, RMSNorm or GroupNorm.
func (k OpKind) IsNormalization() bool {
	switch k {
	case SoftMax, LogSoftmax, LayerNorm, RMSNorm, GroupNorm:
		return true
	}
	return false
}

// IsBinary reports whether k is a binary op of the reduction fusion list.
func (k OpKind) IsBinary() bool { return k >= Add && k <= Subtract }

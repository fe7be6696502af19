package plan

import (
	"slices"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// Exact reductions: integer and boolean data reduced in integer
// arithmetic, with no rounding anywhere. A sum and a product wrap around
// in two's complement at the dst's width, as numpy and XLA compute them
// (ONNX Runtime 1.30 saturates instead: see the README); max and min are exact; the mean is ONNX Runtime's (the
// sum in float64, divided by the count, truncated toward zero and
// saturated to an integer dst, or rounded once to an f32 or f64 dst); the
// bitwise reductions combine the bits, the logical ones the truth of each
// element (nonzero is true) into a 0 or 1. They take no post-ops and are
// never cut into stages.

// exactKind is one reduction that exact data has, and the data and dst
// types it takes.
type exactKind struct {
	name string
	// booleans: Boolean src is taken (as 0 and 1); integers: integer src.
	booleans, integers bool
	// int8: s8 and u8 src reduce exactly (the bitwise and logical ones;
	// the others reduce 8-bit data in f32, as oneDNN does).
	int8 bool
	// dst returns whether dst is a dst type for src.
	dst func(src, dst dtypes.DataType) bool
}

func sameType(src, dst dtypes.DataType) bool { return dst == src }

func meanDst(src, dst dtypes.DataType) bool {
	return dst == src || dst == dtypes.F32 || dst == dtypes.F64
}

func truthDst(_, dst dtypes.DataType) bool { return dst == dtypes.Boolean || dst == dtypes.U8 }

// exactKinds lists the exact reductions by their parts.
var exactKinds = map[Reduction]exactKind{
	AlgSum.Reduction(0, 0):  {name: "sum", integers: true, dst: sameType},
	AlgMul.Reduction(0, 0):  {name: "product", integers: true, dst: sameType},
	AlgMax.Reduction(0, 0):  {name: "max", integers: true, booleans: true, dst: sameType},
	AlgMin.Reduction(0, 0):  {name: "min", integers: true, booleans: true, dst: sameType},
	AlgMean.Reduction(0, 0): {name: "mean", integers: true, dst: meanDst},
	Copy:                    {name: "copy", integers: true, booleans: true, int8: true, dst: sameType},

	{Combine: CombineAnd, Finalize: FinalizeNone}: {name: "bitwise and", integers: true, int8: true, dst: sameType},
	{Combine: CombineOr, Finalize: FinalizeNone}:  {name: "bitwise or", integers: true, int8: true, dst: sameType},
	{Combine: CombineXor, Finalize: FinalizeNone}: {name: "bitwise xor", integers: true, int8: true, dst: sameType},

	LogicalAnd: {name: "logical and", integers: true, booleans: true, int8: true, dst: truthDst},
	LogicalOr:  {name: "logical or", integers: true, booleans: true, int8: true, dst: truthDst},
	LogicalXor: {name: "logical xor", integers: true, booleans: true, int8: true, dst: truthDst},
}

// The logical reductions: the truth of each element (nonzero), combined.
var (
	LogicalAnd = Reduction{Transform: TransformNonzero, Combine: CombineAnd, Finalize: FinalizeNone}
	LogicalOr  = Reduction{Transform: TransformNonzero, Combine: CombineOr, Finalize: FinalizeNone}
	LogicalXor = Reduction{Transform: TransformNonzero, Combine: CombineXor, Finalize: FinalizeNone}
)

// Bitwise returns the bitwise reduction of combine c (CombineAnd, Or, Xor).
func Bitwise(c Combine) Reduction { return Reduction{Combine: c, Finalize: FinalizeNone} }

// IsBitwise reports whether r combines bits: and, or, xor.
func (r Reduction) IsBitwise() bool {
	return r.Combine == CombineAnd || r.Combine == CombineOr || r.Combine == CombineXor
}

// IsExact reports whether a reduction r of src data runs exactly, in
// integer arithmetic: every reduction of the integers wider than 8 bits
// and of Boolean, and the bitwise and logical reductions of any data
// (float data is then refused by Validate).
func IsExact(src dtypes.DataType, r Reduction) bool {
	if r.Transform == TransformNonzero || r.IsBitwise() {
		return src.IsInteger() || src == dtypes.Boolean
	}
	return src.IsExact()
}

// CheckExact checks the data types of an exact reduction r (IsExact, or
// a bitwise or logical r of any src): a kind exact data has, src data it
// takes, a dst it writes.
func CheckExact(src, dst dtypes.DataType, r Reduction) error {
	if !IsExact(src, r) {
		return status.Errorf(status.InvalidDataType, "plan: %v reduces integer or boolean data, not %v", r, src)
	}
	return checkExact(src, dst, r, 0, 0)
}

// ExactKindsText says which reductions exact data take.
const ExactKindsText = "gdnn reduces integer and boolean data by sum, product, max, min, mean and the bitwise and logical and, or and xor"

// checkExact checks an exact reduction r from src to dst: one of
// exactKinds, for that src and dst, with no post-ops and no stages.
func checkExact(src, dst dtypes.DataType, r Reduction, posts int, stage Stage) error {
	k, ok := exactKinds[r]
	if !ok {
		return status.Errorf(status.Unimplemented, "plan: %v of %v data: %s", r, src, ExactKindsText)
	}
	switch {
	case src == dtypes.Boolean && !k.booleans:
		return status.Errorf(status.InvalidDataType, "plan: a %s of boolean data has no meaning (max, min and the logical reductions take booleans)", k.name)
	case src.IsInt8() && !k.int8, src != dtypes.Boolean && !k.integers:
		return status.Errorf(status.InvalidDataType, "plan: no exact %s of %v data", k.name, src)
	case !k.dst(src, dst):
		return status.Errorf(status.InvalidDataType, "plan: a %s of %v data writes %s, not %v", k.name, src, exactDstText(k, src), dst)
	case posts > 0:
		return status.Errorf(status.Unimplemented, "plan: a %s of %v data takes no post-ops", k.name, src)
	case stage != 0:
		return status.Errorf(status.InvalidArguments, "plan: a %s of %v data is not cut into stages (stage %d)", k.name, src, stage)
	}
	return nil
}

// exactDstText names the dst types kind k writes from src.
func exactDstText(k exactKind, src dtypes.DataType) string {
	var names []string
	for _, t := range []dtypes.DataType{src, dtypes.Boolean, dtypes.U8, dtypes.F32, dtypes.F64} {
		if k.dst(src, t) && !slices.Contains(names, t.String()) {
			names = append(names, t.String())
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

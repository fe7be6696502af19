package kernelshape

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vfn"
)

// Covers declares what an emitter generates code for, and the facts of
// its kernels the runtime schedules by, so that they are stated once,
// beside the code, rather than found out by generating or assumed by the
// runtime.
type Covers struct {
	Arch      string                    // prefixes error messages ("amd64")
	PostOp    func(ops.Kind) bool       // post-op kinds it emits
	Reduction func(plan.Reduction) bool // reductions (with their parameters) it emits
	MaxDepth  int                       // Outer and Reduced loops it nests (each)
	// WholeRowLanes is the widest contiguous Inner row the column
	// kernel sums whole, in its accumulator registers.
	WholeRowLanes int64
	// RowByRow reports whether the emitter sums a stage-1 plan hinted
	// RowByRow a row at a time (and the form pays there), by src data
	// type and reduction, and whether the rows are too wide for one
	// call's partials and so are cut into strips. Nil: never.
	RowByRow func(sdt dtypes.DataType, r plan.Reduction, strips bool) bool
	// DataTypes reports whether the emitter loads src elements of type
	// src and stores dst elements of type dst. Nil: the float types
	// (f32, bf16, f16) only.
	DataTypes func(src, dst dtypes.DataType) bool
	// Operands reports whether the emitter loads binary operands of type
	// t. Nil: the float types only.
	Operands func(t dtypes.DataType) bool
	// Registers is how many general registers the emitter shares
	// between binary operands' pointers and loop counters; 0: enough
	// for any plan. A plan with binary operands that would not fit
	// (RegistersNeeded) is refused, so that the runtime applies its
	// post-ops in a pass of their own and its reduction, with every
	// register for its loops, stays machine code.
	Registers int
	// Native reports whether the emitter's native kernel (native.go)
	// takes a plan of kind k. Nil: no native kernel, f64 and exact data
	// run in the interpreter.
	Native func(k NativeKind) bool
}

// TakesNative reports whether c's native kernel takes pl: a kind
// NativeKindOf accepts and the emitter's Native does.
func (c Covers) TakesNative(pl *plan.Plan) bool {
	if c.Native == nil {
		return false
	}
	k, err := NativeKindOf(pl)
	return err == nil && c.Native(k)
}

// RegistersNeeded bounds how many general registers a kernel for pl
// takes for its binary operands' pointers and its loop counters: one per
// operand, one per Outer and Reduced loop, one for the Inner loop, and
// one more for the loop that cuts a long sum into runs (runs.go).
func RegistersNeeded(pl *plan.Plan) int {
	n := pl.BinaryCount() + len(pl.Outer) + len(pl.Reduced)
	if pl.HasInner {
		n++
	}
	if pl.Reduction.Combine == plan.CombineAdd && MayCut(pl.N) {
		n++
	}
	return n
}

// TakesDataTypes reports whether c emits code for src and dst types.
func (c Covers) TakesDataTypes(src, dst dtypes.DataType) bool {
	if c.DataTypes == nil {
		return src.IsFloat() && dst.IsFloat()
	}
	return c.DataTypes(src, dst)
}

// TakesOperand reports whether c loads binary operands of type t.
func (c Covers) TakesOperand(t dtypes.DataType) bool {
	if c.Operands == nil {
		return t.IsFloat()
	}
	return c.Operands(t)
}

// TakesRowByRow reports whether c sums stage-1 plans of src type sdt and
// reduction r row by row, over whole rows or (strips) strips of them.
func (c Covers) TakesRowByRow(sdt dtypes.DataType, r plan.Reduction, strips bool) bool {
	return c.RowByRow != nil && c.RowByRow(sdt, r, strips)
}

// Check reports why an emitter that covers c cannot take pl: pl.Validate's
// error, or an error satisfying errors.Is(err, graph.Unimplemented) for an
// alg, data type pair or the first post-op kind c does not cover, for
// binary operands beside loops that need more than c.Registers general
// registers, or for more than c.MaxDepth Outer or Reduced loops (each).
// An Unimplemented plan runs in the interpreter instead, or, refused only
// for its post-ops, as its reduction and a post-op pass. Error messages
// start with the arch and a colon.
func Check(pl *plan.Plan, c Covers) error {
	if err := pl.Validate(); err != nil {
		return err
	}
	if !c.TakesDataTypes(pl.SrcDT, pl.DstDT) {
		return status.Errorf(status.Unimplemented, "%s: %v to %v has no JIT code", c.Arch, pl.SrcDT, pl.DstDT)
	}
	if pl.ShiftedLogSumExp() {
		return status.Errorf(status.Unimplemented, "%s: a log-sum-exp runs as phases (a max, then exp and sum), not one kernel", c.Arch)
	}
	if !c.Reduction(pl.Reduction) {
		return status.Errorf(status.Unimplemented, "%s: reduction %v has no JIT code", c.Arch, pl.Reduction)
	}
	for i, op := range pl.PostOps {
		if !c.PostOp(op.Kind) {
			return status.Errorf(status.Unimplemented, "%s: post-op %d (%v) has no JIT code", c.Arch, i, op.Kind)
		}
		if op.Kind.IsBinary() && !c.TakesOperand(op.BinDT) {
			return status.Errorf(status.Unimplemented, "%s: post-op %d (%v) reads a %v operand, which has no JIT code", c.Arch, i, op.Kind, op.BinDT)
		}
	}
	if n := RegistersNeeded(pl); c.Registers > 0 && pl.BinaryCount() > 0 && n > c.Registers {
		return status.Errorf(status.Unimplemented, "%s: %d binary operands and %d outer and %d reduced loops need %d general registers, %d are free",
			c.Arch, pl.BinaryCount(), len(pl.Outer), len(pl.Reduced), n, c.Registers)
	}
	if len(pl.Outer) > c.MaxDepth || len(pl.Reduced) > c.MaxDepth {
		return status.Errorf(status.Unimplemented, "%s: %d outer and %d reduced loops exceed the supported depth %d",
			c.Arch, len(pl.Outer), len(pl.Reduced), c.MaxDepth)
	}
	return nil
}

// VectorReduction reports whether reduction r has vector code on every
// emitter: every float combine; no transform, |x|, x*x or exp (|x|^p for other
// p needs pow); finalizes whose root is of p 1 (none) or 2 (a square
// root), and log. Exp and log make an unshifted log-sum-exp (Check
// refuses a shifted one, which the runtime runs as phases). The bitwise
// and logical reductions of integer data have none in f32 lanes: they are
// exact, the native kernel's (native.go) or the interpreter's.
func VectorReduction(r plan.Reduction) bool {
	if r.Transform == plan.TransformPow || r.Transform == plan.TransformNonzero || r.IsBitwise() {
		return false
	}
	switch r.Finalize {
	case plan.FinalizeRootAddEps, plan.FinalizeRootMaxEps:
		return r.P == 1 || r.P == 2
	}
	return true
}

// VectorPostOp reports whether post-op kind k has vector code on every
// emitter: the kinds each lowers with its own instructions, and those
// with a package vfn program, which each lowers from the one program.
func VectorPostOp(k ops.Kind) bool {
	switch k {
	case ops.Abs, ops.Clamp, ops.HardSigmoid, ops.HardSwish, ops.LeakyReLU, ops.ReLU,
		ops.Round, ops.Sqrt, ops.Square, ops.Exp, ops.Log, ops.Pow,
		ops.Add, ops.Multiply, ops.Maximum, ops.Minimum, ops.Divide, ops.Subtract:
		return true
	}
	return vfn.Has(k)
}

// F32Lanes reports whether a plan with src type src and dst type dst
// computes in f32 lanes, as every emitter's kernels but the native one
// (native.go) do: every pair a plan takes but f64 (plan.IsWide), whose
// plans compute in float64, in the native kernel or the interpreter.
func F32Lanes(src, dst dtypes.DataType) bool {
	return plan.IsSrcType(src) && plan.IsDstType(dst) && !plan.IsWide(src) && !plan.IsWide(dst)
}

// F32Operand reports whether a binary operand of type t is read into f32
// lanes: every operand type a plan takes but f64.
func F32Operand(t dtypes.DataType) bool { return plan.IsOperandType(t) && !plan.IsWide(t) }

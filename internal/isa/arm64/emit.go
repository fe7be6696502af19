package arm64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// maxDepth bounds the Outer and the Reduced loops of a plan (each).
// Canonical plans merge contiguous loops, so real problems need two or
// three; running out of general registers is reported too.
const maxDepth = 5

// Covers is what the generator emits code for: its column kernel sums
// rows of 64 lanes whole; it has no row-by-row form. It loads every src
// type a plan takes (floats, s8, u8) and stores every dst type (floats,
// s8, u8, s32), in any pair, and binary operands of every type a plan
// takes (floats, s8, u8, s32); not f64 (kernelshape.F32Lanes). These
// are the kernels in f32 lanes: plans of f64 and exact data are the
// native kernel's (native.go), which Emit sends them to first and which
// checks them itself (kernelshape.CheckNative); Native is the kinds it
// takes.
var Covers = kernelshape.Covers{Arch: "arm64", PostOp: kernelshape.VectorPostOp, Reduction: kernelshape.VectorReduction, MaxDepth: maxDepth,
	WholeRowLanes: 64, DataTypes: dataTypes, Operands: kernelshape.F32Operand,
	Native: func(k kernelshape.NativeKind) bool { return nativeTakes(k) == nil }}

// dataTypes reports whether the generator loads src and stores dst.
func dataTypes(src, dst dtypes.DataType) bool { return kernelshape.F32Lanes(src, dst) }

// Emit returns AArch64 machine code for pl, following the kernel ABI of
// internal/plan/abi.go: the argument block in R0; R0-R17 and R19-R26 and all
// vector registers may be clobbered; RSP, R18, R28, R29 and R30 are
// kept; no stack; RET to the link register. A plan the generator does
// not cover (a post-op kind it does not emit, a loop nest too deep for
// the registers) gives an error satisfying errors.Is(err,
// graph.Unimplemented) that names what is missing; the runtime then uses
// the interpreter. Plans of f64 or exact data (plan.IsWide,
// plan.IsExact) get the native kernel (emitNative), or an Unimplemented
// error for what it does not take. Code.Totals: call the code with a
// LongArgs block.
func Emit(pl *plan.Plan) (plan.Code, error) {
	if pl != nil && kernelshape.IsNative(pl) {
		return emitNative(pl)
	}
	return kernelshape.Emit(pl, Covers, func() kernelshape.Built {
		g := newGen(pl)
		kernelshape.Generate(pl, g)
		return g
	})
}

// Prologue loads the argument block: src, the binary operands, Count
// (into cnt, when the plan has Outer loops) and dst, and points rArgs at
// the totals (see reserveTotals). Hoisted vector constants are inserted
// after it as the body asks for them.
func (g *gen) Prologue(cnt int16) {
	g.op(arm64.AMOVD, mem(rArgs, plan.ArgSrc), reg(rSrc))
	for i := 0; i < g.NBin; i++ {
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgBins+8*int64(i)), reg(g.binReg[i]))
	}
	if cnt != 0 {
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgCount), reg(cnt))
	}
	if g.stage != 0 {
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgStage), reg(g.stage))
	}
	g.op(arm64.AMOVD, mem(rArgs, plan.ArgDst), reg(rDst))
	g.reserveTotals()
	g.pro = g.Add(&obj.Prog{As: obj.ANOP})
}

// Return leaves the kernel.
func (g *gen) Return() { g.ret() }

// ceilDiv is a/b rounded up, for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// maxDepth bounds the Outer and the Reduced loops of a plan (each).
// Canonical plans merge contiguous loops, so real problems need two or
// three; the general registers (14, of which 2+binary count are pointers)
// are the hard limit, and running out of them is reported too.
const maxDepth = 5

// pointerAndCounterRegisters is how many general registers binary
// operands' pointers and loop counters share: all 16 but SP, BP, the src
// and dst pointers and the scratch register AX (see newGen).
const pointerAndCounterRegisters = 11

// Covers returns what the generator emits code for under options o. The
// column kernel sums rows of nacc vectors whole (16 zmm: 256 lanes; 8
// ymm: 64 lanes). Every kind with vector code but log-sum-exp is reduced
// row by row on AVX2, and on AVX-512 for 16-bit src (see rowbyrow.go and
// jit's rowByRow: on Intel cores f32 AVX-512 column blocks read 1 KiB of
// each row per visit and gain nothing from it), and for f32 src too on
// Zen cores (Options.Zen), where two threads read such rows faster one at
// a time (docs/PERFORMANCE-log.md, "Zen 4: f32 row by row"). Zen cores
// take log-sum-exp's unshifted sums of exp so too (rowByRowKind). The
// native kernel's kinds (Covers.Native) are those the ISA has the
// instructions for (nativeTakes).
func Covers(o Options) kernelshape.Covers {
	c := kernelshape.Covers{Arch: "amd64", PostOp: kernelshape.VectorPostOp, Reduction: kernelshape.VectorReduction, MaxDepth: maxDepth,
		WholeRowLanes: 64, DataTypes: takesDataTypes, Operands: kernelshape.F32Operand, Registers: pointerAndCounterRegisters}
	if o.AVX512 {
		c.WholeRowLanes = 256
	}
	c.Native = func(k kernelshape.NativeKind) bool { return nativeTakes(k, o.AVX512) == nil }
	t := o.Target()
	c.RowByRow = func(sdt dtypes.DataType, r plan.Reduction, strips bool) bool {
		if plan.IsWide(sdt) || plan.IsExact(sdt, r) {
			return takesNativeRowByRow(t, sdt, r, strips)
		}
		return takesRowByRow(t, sdt, r, strips)
	}
	return c
}

// Emit returns x86-64 machine code for pl, following the kernel ABI of
// internal/plan/abi.go (Code.Totals: call it with a LongArgs block). A plan
// the generator does not cover (a post-op kind it does not emit, a loop
// nest too deep for the registers, a stride too large for a 32-bit
// displacement) gives an error satisfying
// errors.Is(err, graph.Unimplemented) that names what is missing; the
// runtime then uses the interpreter. Plans over f64 and exact data
// (integers, booleans, the bitwise and logical reductions) go to the
// native kernel (native.go), which computes in lanes of their own type.
func Emit(pl *plan.Plan, o Options) (plan.Code, error) {
	return EmitHinted(pl, kernelconf.Hints{}, o)
}

// EmitHinted is Emit with the runtime's hints h of pl's place in its
// problem (read from DRAM, a stage-1 plan to reduce row by row), which
// Choose weighs with the plan.
func EmitHinted(pl *plan.Plan, h kernelconf.Hints, o Options) (plan.Code, error) {
	if kernelshape.IsNative(pl) {
		return emitNative(pl, h, o)
	}
	return kernelshape.Emit(pl, Covers(o), func() kernelshape.Built {
		c := Choose(pl, h, o.Target())
		if c.NaNFree {
			if g := emitSpeculating(pl, c); g != nil {
				return g
			}
		}
		g := newGenConf(newAsm(), pl, c)
		kernelshape.Generate(pl, g)
		return g
	})
}

// Prologue loads the argument block: src, the binary operands, Count
// (into cnt, when the plan has Outer loops), the totals' address (see
// reserveTotals) and last dst, which replaces the block pointer in DI.
func (g *gen) Prologue(cnt int16) {
	if g.nanFree {
		g.nanFreePrologue()
	}
	g.op(x86.AMOVQ, mem(rDI, plan.ArgSrc), reg(rSrc))
	for i := 0; i < g.NBin; i++ {
		g.op(x86.AMOVQ, mem(rDI, plan.ArgBins+8*int64(i)), reg(g.binReg[i]))
	}
	if cnt != 0 {
		g.op(x86.AMOVQ, mem(rDI, plan.ArgCount), reg(cnt))
	}
	if g.stage != 0 {
		g.op(x86.AMOVQ, mem(rDI, plan.ArgStage), reg(g.stage))
	}
	g.reserveTotals()
	g.op(x86.AMOVQ, mem(rDI, plan.ArgDst), reg(rDst))
	g.pro = g.Add(&obj.Prog{As: obj.ANOP})
}

// Return leaves the kernel (NaN-free code: unless a NaN was met, see
// speculate.go). VZEROUPPER avoids the AVX-SSE transition
// penalty in the Go code that runs next.
func (g *gen) Return() {
	if g.nanFree && g.pro != nil {
		g.nanFreeReturn()
	}
	if g.stream.used {
		// Non-temporal stores are weakly ordered: the caller reads dst
		// (or hands it to another thread) after the call returns.
		g.op(x86.ASFENCE)
	}
	g.op(x86.AVZEROUPPER)
	g.op(obj.ARET)
}

// ceilDiv is a/b rounded up, for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

package amd64

import (
	"math"

	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// gen holds the state of one kernel being generated, grouped by what
// it is about: the vector unit (fixed by the target), what Choose decided,
// the plan's facts, the registers and pointers, the running totals,
// what is hoisted into the prologue, and NaN speculation.
type gen struct {
	*asm
	unit
	conf Conf // what Choose decided for the plan: the shapes lower it
	planFacts
	dequant *kernelshape.Dequant // a fused normalization's Dequantize (LoadSrc)
	regState
	totalState
	hoisted
	speculation
	rowStores
	stream streamStores

	kernelshape.FirstErr // the first generation error
}

// unit is the vector unit the code is for (the vector width is the only
// thing most of the code looks at).
type unit struct {
	avx512 bool
	bf16   bool
	V      int   // f32 lanes per vector: 16 (zmm) or 8 (ymm)
	nacc   int   // accumulator registers are vector registers 0..nacc-1
	stage  int16 // the stage's address (kernelshape.NormColumnStager), 0: none
}

// planFacts are the plan's, as the shapes read them.
type planFacts struct {
	pl  *plan.Plan
	red plan.Reduction // how src elements are transformed and combined (no transform when src holds partials)
	add bool           // the combine is a sum
	kernelshape.Types
}

// regState is the register assignment and the pointer bookkeeping.
type regState struct {
	tmpLo, tmpHi, tmpNext int  // temporaries are tmpLo..tmpHi-1, stack-allocated
	tmpPeak               int  // one past the highest temporary taken so far
	tmpShort              bool // a Tmp found none left

	binReg [plan.MaxBinary]int16

	// ptrs holds the pointer increments not yet emitted; memory
	// operands fold them into their displacement (see m).
	ptrs *kernelshape.Pointers

	gprFree []int16 // counters not in use

	sumExp sumExpPlace // where the exp for sums' constants are (see sumExpConst)

	absMask int // a temporary holding 0x7FFFFFFF while > 0 (see holdAbsMask)

	testedLoops bool        // loops test their counter at the top of every iteration (see EnterLoop)
	loopExits   []*obj.Prog // per open Loop, innermost last: where a tested loop leaves, nil for others
}

// totalState is where the running totals are (see runs.go).
type totalState struct {
	tot        int16 // running totals pointer (see reserveTotals), 0: none
	totArgs    int   // vector register holding the argument block's address when tot has no register, 0: none
	totRegs    []int // the running totals' registers, nil: in memory
	cut        bool  // some sum is cut into runs
	usesTotals bool  // some running totals are in memory: call with LongArgs
}

// hoisted is what the body has put into the prologue.
type hoisted struct {
	masks []maskSlot // hoisted AVX2 tail masks (see vmask)
	kpats []kpat     // hoisted opmask bit patterns (see kbits)
	pro   *obj.Prog  // prologue insertion point for hoisted masks
	kNext int        // next free opmask register for hoisting
	kLast int        // last opmask register hoisting may take
	held  []heldSlot // constants held from the prologue on (see HeldConst)
	// holdNone makes HeldConst build each constant where it is used:
	// a kernel that runs short of temporaries with some held.
	holdNone bool
	// norm is set in a fused normalization kernel, whose map converts
	// every element it stores: its bf16 stores hold their constants
	// (constIn).
	norm bool
}

// heldSlot is a vector register that holds, for the whole kernel, the
// 32-bit pattern key in every lane, or (key above 32 bits) a vector of
// its own (see hold).
type heldSlot struct {
	key uint64
	reg int
}

// speculation is the state of NaN-free code: it assumes that no NaN
// reaches a max or min (see speculate.go); exact is where the exact code
// starts, jumped to when the assumption failed.
type speculation struct {
	nanFree bool
	exact   *obj.Prog
	pending bool // NaN-free code: a src vector in rPending (AVX2: yPending) awaits its NaN check
	watch   bool // NaN-free AVX-512 code: whole src vectors are added into rWatch (Conf.Watch)
	f64     bool // NaN-free native code (nativespec.go): the pending vector and rWatch hold f64 lanes
}

// maskSlot is an AVX2 tail mask for n lanes hoisted into the prologue.
type maskSlot struct {
	n   int
	reg obj.Addr
}

// kpat is an opmask bit pattern hoisted into the prologue.
type kpat struct {
	bits uint32
	reg  obj.Addr
}

// Pointer registers. DI carries the argument block on entry and becomes
// the dst pointer once the other fields are loaded; AX is scratch for
// constants and large increments.
const (
	rSrc     = rSI
	rDst     = rDI
	rScratch = rAX
)

// UsesTotals reports whether the kernel is called with LongArgs.
func (g *gen) UsesTotals() bool { return g.usesTotals }

// newGen prepares the generator for pl under options o, with no hints.
func newGen(pl *plan.Plan, o Options) *gen {
	return newGenConf(newAsm(), pl, Choose(pl, kernelconf.Hints{}, o.Target()))
}

// newGenConf prepares a generator that lowers configuration c of pl and
// appends to a.
func newGenConf(a *asm, pl *plan.Plan, c Conf) *gen {
	g := &gen{asm: a, unit: unit{avx512: c.f.avx512, bf16: c.Target.ISA == kernelconf.AVX512BF16}, conf: c, planFacts: planFacts{pl: pl}}
	if g.avx512 {
		g.V, g.nacc, g.tmpLo, g.tmpHi = 16, 16, 16, 32
		g.kNext, g.kLast = 1, 5
	} else {
		// Y14 and Y15 hold hoisted tail masks.
		g.V, g.nacc, g.tmpLo, g.tmpHi = 8, 8, 8, 14
	}
	g.tmpNext = g.tmpLo
	g.red = pl.Reduction
	if pl.Stage&plan.SkipTransform != 0 {
		g.red.Transform = plan.TransformNone
	}
	g.add = g.red.Combine == plan.CombineAdd
	g.Types = kernelshape.TypesOf(pl)
	// Binary operand pointers take R8-R11, then BX and CX; counters come
	// from whatever is not a pointer or scratch, the unused operand
	// registers first.
	bins := [plan.MaxBinary]int16{x86.REG_R8, x86.REG_R9, x86.REG_R10, x86.REG_R11, rBX, rCX}
	copy(g.binReg[:g.NBin], bins[:g.NBin])
	g.gprFree = []int16{x86.REG_R15, x86.REG_R14, x86.REG_R13, x86.REG_R12, rDX}
	for i := plan.MaxBinary - 1; i >= g.NBin; i-- {
		g.gprFree = append(g.gprFree, bins[i])
	}
	g.ptrs = kernelshape.NewPointers(rSrc, rDst, g.binReg[:g.NBin])
	return g
}

// Vector register operands. vr is the full width (zmm or ymm), hr the
// half width that holds V 16-bit values (ymm or xmm), xr the xmm.
func (g *gen) vr(i int) obj.Addr {
	if g.avx512 {
		return reg(x86.REG_Z0 + int16(i))
	}
	return reg(x86.REG_Y0 + int16(i))
}

func (g *gen) hr(i int) obj.Addr {
	if g.avx512 {
		return reg(x86.REG_Y0 + int16(i))
	}
	return reg(x86.REG_X0 + int16(i))
}

func (g *gen) xr(i int) obj.Addr { return reg(x86.REG_X0 + int16(i)) }

// Tmp allocates a temporary vector register; Mark/Release free them in
// stack order.
func (g *gen) Tmp() int {
	if g.tmpNext >= g.tmpHi {
		g.tmpShort = true
		g.Fail(status.Errorf(status.Unimplemented, "amd64: kernel needs more than %d temporary vector registers", g.tmpHi-g.tmpLo))
		return g.tmpLo
	}
	g.tmpNext++
	g.tmpPeak = max(g.tmpPeak, g.tmpNext)
	return g.tmpNext - 1
}

func (g *gen) Mark() int     { return g.tmpNext }
func (g *gen) Release(m int) { g.tmpNext = m }

// Counter takes a general register for a loop counter.
func (g *gen) Counter() int16 {
	n := len(g.gprFree)
	if n == 0 {
		g.Fail(status.Errorf(status.Unimplemented,
			"amd64: loop nest of %d outer and %d reduced loops needs more counters than the general registers left beside %d pointers",
			len(g.pl.Outer), len(g.pl.Reduced), 2+g.NBin))
		return rBX
	}
	r := g.gprFree[n-1]
	g.gprFree = g.gprFree[:n-1]
	return r
}

func (g *gen) FreeCounter(r int16) { g.gprFree = append(g.gprFree, r) }

// fits32 reports whether v fits a sign-extended 32-bit field.
func fits32(v int64) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// m returns the memory operand off(r) with r's pending increment folded
// in. A displacement past 32 bits flushes r first.
func (g *gen) m(r int16, off int64) obj.Addr {
	if !fits32(g.ptrs.Pending(r) + off) {
		if d := g.ptrs.Take(r); d != 0 {
			g.addImm(r, d)
		}
		if !fits32(off) {
			g.Fail(status.Errorf(status.Unimplemented, "amd64: displacement %d does not fit 32 bits", off))
		}
	}
	return mem(r, g.ptrs.Pending(r)+off)
}

// addImm emits r += d.
func (g *gen) addImm(r int16, d int64) {
	if fits32(d) {
		g.op(x86.AADDQ, imm(d), reg(r))
		return
	}
	g.op(x86.AMOVQ, imm(d), reg(rScratch))
	g.op(x86.AADDQ, reg(rScratch), reg(r))
}

// Flush emits every pending pointer increment.
func (g *gen) Flush() { g.ptrs.Flush(g.addImm) }

// label places l after flushing pending increments.
func (g *gen) label(l *obj.Prog) {
	g.Flush()
	g.Place(l)
}

// The loops' primitives (kernelshape.Counters): kernelshape.Loop and
// CountLoop emit the loops.

// Pointers are the kernel's pointers and their pending moves.
func (g *gen) Pointers() *kernelshape.Pointers { return g.ptrs }

// PlaceLabel places l.
func (g *gen) PlaceLabel(l *obj.Prog) { g.Place(l) }

// EnterLoop sets c to n and places top. With g.testedLoops each
// iteration also tests the counter at its top (leaving for the label
// LeaveLoop places after the loop) and jumps back unconditionally at its
// end, as oneDNN's reduction loops do: two instructions more per
// iteration, which keep fewer of a paced row sweep's loads in the
// reorder window (see Conf.Paced).
func (g *gen) EnterLoop(c int16, n int64, top *obj.Prog) {
	g.op(x86.AMOVQ, imm(n), reg(c))
	g.label(top)
	var done *obj.Prog
	if g.testedLoops {
		done = g.NewLabel()
		g.op(x86.ATESTQ, reg(c), reg(c))
		g.Jump(x86.AJEQ, done)
	}
	g.loopExits = append(g.loopExits, done)
}

// LeaveLoop ends an iteration of the loop EnterLoop began.
func (g *gen) LeaveLoop(c int16, top *obj.Prog) {
	done := g.loopExits[len(g.loopExits)-1]
	g.loopExits = g.loopExits[:len(g.loopExits)-1]
	if done == nil {
		g.Repeat(c, top)
		return
	}
	g.Flush()
	g.op(x86.ADECQ, reg(c))
	g.Jump(obj.AJMP, top)
	g.Place(done)
}

// SkipUnlessPositive jumps to done when c <= 0.
func (g *gen) SkipUnlessPositive(c int16, done *obj.Prog) {
	g.op(x86.ATESTQ, reg(c), reg(c))
	g.Jump(x86.AJLE, done)
}

// Repeat counts c down and jumps to top while it is not 0.
func (g *gen) Repeat(c int16, top *obj.Prog) {
	g.Flush()
	g.op(x86.ADECQ, reg(c))
	g.Jump(x86.AJNE, top)
}

// The group loops' primitives (kernelshape.GroupCounter).

func (g *gen) BranchBelow(c int16, n int64, l *obj.Prog) {
	g.op(x86.ACMPQ, reg(c), imm(n))
	g.Jump(x86.AJLT, l)
}

func (g *gen) BranchAtLeast(c int16, n int64, l *obj.Prog) {
	g.op(x86.ACMPQ, reg(c), imm(n))
	g.Jump(x86.AJGE, l)
}

func (g *gen) BranchIfZero(c int16, l *obj.Prog) {
	g.op(x86.ATESTQ, reg(c), reg(c))
	g.Jump(x86.AJEQ, l)
}

func (g *gen) SubImm(c int16, n int64) { g.op(x86.ASUBQ, imm(n), reg(c)) }

// StepBack multiplies by an immediate: every step must fit 32 bits
// (CanStepBack).
func (g *gen) StepBack(p int16, step int64, c int16) {
	g.op(x86.AIMUL3Q, imm(step), reg(c), reg(rScratch))
	g.op(x86.AADDQ, reg(rScratch), reg(p))
}

func (g *gen) CanStepBack(s kernelshape.Steps) bool {
	ok := true
	g.ptrs.Each(s, func(_ int16, d int64) { ok = ok && fits32(d) })
	return ok
}

func (g *gen) DstOperand() bool { return g.pl.HasDstOperand() }

func (g *gen) Goto(l *obj.Prog) { g.Jump(obj.AJMP, l) }

package arm64

import (
	"slices"

	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Pointer bookkeeping and loops: increments are kept pending and folded
// into offsets, loops are counted down in general registers.

// Flush emits every pending pointer increment.
func (g *gen) Flush() { g.ptrs.Flush(g.addImm) }

// label places l after flushing pending increments.
func (g *gen) label(l *obj.Prog) {
	g.Flush()
	g.PlaceLabel(l)
}

// The loops' primitives (kernelshape.Counters): kernelshape.Loop and
// CountLoop emit the loops.

// Pointers are the kernel's pointers and their pending moves.
func (g *gen) Pointers() *kernelshape.Pointers { return g.ptrs }

// loopHead is where a Loop began: the insertion point before its top
// for step registers, and how many counters had been handed out.
type loopHead struct {
	pre    *obj.Prog
	logged int
}

// EnterLoop sets c to n and places top, keeping the point before it
// where LeaveLoop may set step registers.
func (g *gen) EnterLoop(c int16, n int64, top *obj.Prog) {
	g.movImm(c, n)
	pre := g.Add(&obj.Prog{As: obj.ANOP})
	g.label(top)
	g.loopHeads = append(g.loopHeads, loopHead{pre, len(g.gprLog)})
}

// LeaveLoop ends an iteration of the loop EnterLoop began. A pointer
// step that takes two ADDs is set in a register once, before the loop,
// and added with one. The register must be live through the body, so
// none the body used will do.
func (g *gen) LeaveLoop(c int16, top *obj.Prog) {
	h := &g.loopHeads[len(g.loopHeads)-1]
	inBody := slices.Clone(g.gprLog[h.logged:])
	var stepRegs []int16
	for _, r := range g.ptrs.Regs() {
		d := g.ptrs.Pending(r)
		mag := max(d, -d)
		if mag < 4096 || mag&0xfff == 0 && mag < 1<<24 {
			continue
		}
		sr, ok := g.counterAvoiding(inBody)
		if !ok {
			continue
		}
		g.InsertAfter(&h.pre, func() { g.movImm(sr, d) })
		g.op3(arm64.AADD, reg(sr), r, reg(r))
		g.ptrs.Take(r)
		g.moved(r)
		stepRegs = append(stepRegs, sr)
	}
	g.loopHeads = g.loopHeads[:len(g.loopHeads)-1]
	g.Repeat(c, top)
	for _, sr := range stepRegs {
		g.FreeCounter(sr)
	}
}

// SkipUnlessPositive branches to done when c <= 0: TST sets N and Z
// from c and clears V, so LE means c <= 0.
func (g *gen) SkipUnlessPositive(c int16, done *obj.Prog) {
	g.Add(&obj.Prog{As: arm64.ATST, From: reg(c), Reg: c})
	g.Jump(arm64.ABLE, done)
}

// Repeat counts c down and branches to top while it is not 0.
func (g *gen) Repeat(c int16, top *obj.Prog) {
	g.Flush()
	g.op3(arm64.ASUBS, imm(1), c, reg(c))
	g.Jump(arm64.ABNE, top)
}

// cmpImm compares r with a small positive constant (the assembler
// encodes CMP $0 against the wrong register, so 0 is not allowed).
func (g *gen) cmpImm(r int16, v int64) {
	if v <= 0 || v >= 4096 {
		g.Fail(status.Errorf(status.RuntimeError, "arm64: compare with %d", v))
	}
	g.Add(&obj.Prog{As: arm64.ACMP, From: imm(v), Reg: r})
}

// The group loops' primitives (kernelshape.GroupCounter).

func (g *gen) BranchBelow(c int16, n int64, l *obj.Prog) {
	g.cmpImm(c, n)
	g.Jump(arm64.ABLT, l)
}

func (g *gen) BranchAtLeast(c int16, n int64, l *obj.Prog) {
	g.cmpImm(c, n)
	g.Jump(arm64.ABGE, l)
}

func (g *gen) BranchIfZero(c int16, l *obj.Prog) { g.jumpReg(arm64.ACBZ, c, l) }

func (g *gen) SubImm(c int16, n int64) { g.op3(arm64.ASUB, imm(n), c, reg(c)) }

func (g *gen) StepBack(p int16, step int64, c int16) {
	g.movImm(rTmp, step)
	g.op3(arm64.AMUL, reg(rTmp), c, reg(rTmp))
	g.op3(arm64.AADD, reg(rTmp), p, reg(p))
	g.moved(p)
}

// CanStepBack is always true: StepBack takes any step through a register.
func (g *gen) CanStepBack(kernelshape.Steps) bool { return true }

func (g *gen) DstOperand() bool { return g.pl.HasDstOperand() }

func (g *gen) Goto(l *obj.Prog) { g.Jump(arm64.AB, l) }

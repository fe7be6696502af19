package arm64

import (
	"slices"

	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Pointer bookkeeping and loops: increments are kept pending and folded
// into offsets, loops are counted down in general registers.

// flush emits every pending pointer increment.
func (g *gen) flush() { g.ptrs.Flush(g.addImm) }

// label places l after flushing pending increments.
func (g *gen) label(l *obj.Prog) {
	g.flush()
	g.place(l)
}

// StepsOf converts a plan loop's element strides to byte steps.
func (g *gen) StepsOf(l *plan.Loop) kernelshape.Steps {
	return kernelshape.StepsOf(l, g.ssz, g.dsz, g.bsz[:g.nbin])
}

// Loop emits body n times (n known when the code is generated), moving
// the pointers by s after each iteration and back by n*s at the end (the
// rewind stays pending, so it merges into whatever move follows).
func (g *gen) Loop(n int64, s kernelshape.Steps, body func()) {
	switch {
	case n <= 0:
		return
	case n == 1:
		body()
		return
	}
	c := g.Counter()
	g.flush()
	g.movImm(c, n)
	pre := g.Add(&obj.Prog{As: obj.ANOP})
	top := g.NewLabel()
	g.label(top)
	logged := len(g.gprLog)
	body()
	g.ptrs.Advance(s, 1)
	// A pointer step that takes two ADDs is set in a register once,
	// before the loop, and added with one. The register must be live
	// through the body, so none the body used will do.
	inBody := slices.Clone(g.gprLog[logged:])
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
		g.InsertAfter(&pre, func() { g.movImm(sr, d) })
		g.op3(arm64.AADD, reg(sr), r, reg(r))
		g.ptrs.Take(r)
		g.moved(r)
		stepRegs = append(stepRegs, sr)
	}
	g.flush()
	g.op3(arm64.ASUBS, imm(1), c, reg(c))
	g.Jump(arm64.ABNE, top)
	for _, sr := range stepRegs {
		g.freeCounter(sr)
	}
	g.freeCounter(c)
	g.ptrs.Advance(s, -n)
}

// CountLoop emits body Args.Count times (the outermost Outer loop), the
// counter having been loaded into c by the prologue. Nothing runs for a
// count <= 0. The pointers are not rewound: the kernel ends after it.
func (g *gen) CountLoop(c int16, s kernelshape.Steps, body func()) {
	g.flush()
	done := g.NewLabel()
	// TST sets N and Z from c and clears V, so LE means c <= 0.
	g.Add(&obj.Prog{As: arm64.ATST, From: reg(c), Reg: c})
	g.Jump(arm64.ABLE, done)
	top := g.NewLabel()
	g.label(top)
	body()
	g.ptrs.Advance(s, 1)
	g.flush()
	g.op3(arm64.ASUBS, imm(1), c, reg(c))
	g.Jump(arm64.ABNE, top)
	g.place(done)
}

// cmpImm compares r with a small positive constant (the assembler
// encodes CMP $0 against the wrong register, so 0 is not allowed).
func (g *gen) cmpImm(r int16, v int64) {
	if v <= 0 || v >= 4096 {
		g.fail(status.Errorf(status.RuntimeError, "arm64: compare with %d", v))
	}
	g.Add(&obj.Prog{As: arm64.ACMP, From: imm(v), Reg: r})
}

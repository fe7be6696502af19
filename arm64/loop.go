package arm64

import (
	"slices"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Pointer bookkeeping and loops: increments are kept pending and folded
// into offsets, loops are counted down in general registers.

// bump moves pointer r by d bytes (lazily).
func (g *gen) bump(r int16, d int64) { g.pend[r] += d }

// flushReg emits r's pending increment.
func (g *gen) flushReg(r int16) {
	d := g.pend[r]
	if d == 0 {
		return
	}
	g.pend[r] = 0
	g.addImm(r, d)
}

// flush emits every pending increment, in a fixed register order so that
// the code is deterministic.
func (g *gen) flush() {
	for _, r := range g.ptrRegs() {
		g.flushReg(r)
	}
}

// ptrRegs lists the pointer registers: src, dst and the binary operands.
func (g *gen) ptrRegs() []int16 {
	rs := []int16{rSrc, rDst}
	return append(rs, g.binReg[:g.nbin]...)
}

// label places l after flushing pending increments.
func (g *gen) label(l *obj.Prog) {
	g.flush()
	g.place(l)
}

// steps is how far one iteration of a loop moves each pointer, in bytes.
type steps struct {
	src, dst int64
	bin      [plan.MaxBinary]int64
}

// stepsOf converts a plan loop's element strides to byte steps.
func (g *gen) stepsOf(l *plan.Loop) steps {
	s := steps{src: l.SrcStride * g.ssz, dst: l.DstStride * g.dsz}
	for i := 0; i < g.nbin && i < len(l.BinStrides); i++ {
		s.bin[i] = l.BinStrides[i] * g.bsz[i]
	}
	return s
}

// scaled returns s times k.
func (s steps) scaled(k int64) steps {
	out := steps{src: s.src * k, dst: s.dst * k}
	for i := range s.bin {
		out.bin[i] = s.bin[i] * k
	}
	return out
}

// advance bumps every pointer by k iterations of s.
func (g *gen) advance(s steps, k int64) {
	g.bump(rSrc, s.src*k)
	g.bump(rDst, s.dst*k)
	for i := 0; i < g.nbin; i++ {
		g.bump(g.binReg[i], s.bin[i]*k)
	}
}

// loop emits body n times (n known when the code is generated), moving
// the pointers by s after each iteration and back by n*s at the end (the
// rewind stays pending, so it merges into whatever move follows).
func (g *gen) loop(n int64, s steps, body func()) {
	switch {
	case n <= 0:
		return
	case n == 1:
		body()
		return
	}
	c := g.counter()
	g.flush()
	g.movImm(c, n)
	pre := g.add(&obj.Prog{As: obj.ANOP})
	top := g.newLabel()
	g.label(top)
	logged := len(g.gprLog)
	body()
	g.advance(s, 1)
	// A pointer step that takes two ADDs is set in a register once,
	// before the loop, and added with one. The register must be live
	// through the body, so none the body used will do.
	inBody := slices.Clone(g.gprLog[logged:])
	var stepRegs []int16
	for _, r := range g.ptrRegs() {
		d := g.pend[r]
		mag := max(d, -d)
		if mag < 4096 || mag&0xfff == 0 && mag < 1<<24 {
			continue
		}
		sr, ok := g.counterAvoiding(inBody)
		if !ok {
			continue
		}
		g.insertAfter(&pre, func() { g.movImm(sr, d) })
		g.op3(arm64.AADD, reg(sr), r, reg(r))
		g.pend[r] = 0
		g.moved(r)
		stepRegs = append(stepRegs, sr)
	}
	g.flush()
	g.op3(arm64.ASUBS, imm(1), c, reg(c))
	g.jump(arm64.ABNE, top)
	for _, sr := range stepRegs {
		g.freeCounter(sr)
	}
	g.freeCounter(c)
	g.advance(s, -n)
}

// countLoop emits body Args.Count times (the outermost Outer loop), the
// counter having been loaded into c by the prologue. Nothing runs for a
// count <= 0. The pointers are not rewound: the kernel ends after it.
func (g *gen) countLoop(c int16, s steps, body func()) {
	g.flush()
	done := g.newLabel()
	// TST sets N and Z from c and clears V, so LE means c <= 0.
	g.add(&obj.Prog{As: arm64.ATST, From: reg(c), Reg: c})
	g.jump(arm64.ABLE, done)
	top := g.newLabel()
	g.label(top)
	body()
	g.advance(s, 1)
	g.flush()
	g.op3(arm64.ASUBS, imm(1), c, reg(c))
	g.jump(arm64.ABNE, top)
	g.place(done)
}

// cmpImm compares r with a small positive constant (the assembler
// encodes CMP $0 against the wrong register, so 0 is not allowed).
func (g *gen) cmpImm(r int16, v int64) {
	if v <= 0 || v >= 4096 {
		g.fail(graph.Errorf(graph.RuntimeError, "arm64: compare with %d", v))
	}
	g.add(&obj.Prog{As: arm64.ACMP, From: imm(v), Reg: r})
}

package arm64

import (
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// maxDepth bounds the Outer and the Reduced loops of a plan (each).
// Canonical plans merge contiguous loops, so real problems need two or
// three; running out of general registers is reported too.
const maxDepth = 5

// Emit returns AArch64 machine code for pl, following the kernel ABI of
// jit/plan/abi.go: the argument block in R0; R0-R17 and R19-R26 and all
// vector registers may be clobbered; RSP, R18, R28, R29 and R30 are
// kept; no stack; RET to the link register. A plan the generator does
// not cover (a post-op kind it does not emit, a loop nest too deep for
// the registers) gives an error satisfying errors.Is(err,
// graph.Unimplemented) that names what is missing; the runtime then uses
// the interpreter.
func Emit(pl *plan.Plan) ([]byte, error) {
	if err := pl.Validate(); err != nil {
		return nil, err
	}
	for i, op := range pl.PostOps {
		if !supportedKind(op.Kind) {
			return nil, graph.Errorf(graph.Unimplemented, "arm64: post-op %d (%v) has no JIT code", i, op.Kind)
		}
	}
	if len(pl.Outer) > maxDepth || len(pl.Reduced) > maxDepth {
		return nil, graph.Errorf(graph.Unimplemented, "arm64: %d outer and %d reduced loops exceed the supported depth %d",
			len(pl.Outer), len(pl.Reduced), maxDepth)
	}
	g := newGen(pl)
	g.body()
	if g.err != nil {
		return nil, g.err
	}
	return g.assemble()
}

// body emits the whole kernel: prologue, the chosen shape, return.
func (g *gen) body() {
	pl := g.pl
	if !g.hasWork() {
		g.ret()
		return
	}
	var cnt int16
	if len(pl.Outer) > 0 {
		cnt = g.counter()
	}
	g.prologue(cnt)

	red := pl.Reduced
	zeroSum := false
	for _, l := range red {
		if l.Size == 0 {
			// Nothing is summed: every mean is 0/Div.
			zeroSum, red = true, nil
			break
		}
	}
	k := nest{loops: pl.Outer, count: len(pl.Outer) > 0, cnt: cnt}
	if pl.HasInner && pl.Inner.SrcStride == 1 {
		g.nest(k, 0, func() { g.column(red, zeroSum) })
	} else {
		if pl.HasInner {
			// A strided Inner is just one more kept loop for the row
			// and element shapes, innermost so its outputs group.
			k.loops = append(append([]plan.Loop(nil), pl.Outer...), pl.Inner)
		}
		g.row(k, red, zeroSum)
	}
	g.ret()
}

// hasWork reports whether any output is written: no kept loop of size 0.
func (g *gen) hasWork() bool {
	for _, l := range g.pl.Outer {
		if l.Size == 0 {
			return false
		}
	}
	return !g.pl.HasInner || g.pl.Inner.Size > 0
}

// prologue loads the argument block: src, the binary operands, Count
// (into cnt, when the plan has Outer loops) and dst. Hoisted vector
// constants are inserted after it as the body asks for them.
func (g *gen) prologue(cnt int16) {
	g.op(arm64.AMOVD, mem(rArgs, plan.ArgSrc), reg(rSrc))
	for i := 0; i < g.nbin; i++ {
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgBins+8*int64(i)), reg(g.binReg[i]))
	}
	if cnt != 0 {
		g.op(arm64.AMOVD, mem(rArgs, plan.ArgCount), reg(cnt))
	}
	g.op(arm64.AMOVD, mem(rArgs, plan.ArgDst), reg(rDst))
	g.pro = g.add(&obj.Prog{As: obj.ANOP})
}

// nest describes the kept loops wrapped around a kernel body: outermost
// first; when count is set the first one runs Args.Count times (counter
// register cnt) instead of its size.
type nest struct {
	loops []plan.Loop
	count bool
	cnt   int16
}

// nest emits k.loops[level:] around body.
func (g *gen) nest(k nest, level int, body func()) {
	if level == len(k.loops) {
		body()
		return
	}
	s := g.stepsOf(&k.loops[level])
	inner := func() { g.nest(k, level+1, body) }
	if level == 0 && k.count {
		g.countLoop(k.cnt, s, inner)
		return
	}
	g.loop(k.loops[level].Size, s, inner)
}

// reducedNest emits the reduced loops around body (src moves only).
func (g *gen) reducedNest(red []plan.Loop, body func()) {
	if len(red) == 0 {
		body()
		return
	}
	g.loop(red[0].Size, steps{src: red[0].SrcStride * g.ssz}, func() { g.reducedNest(red[1:], body) })
}

// ceilDiv is a/b rounded up, for a >= 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

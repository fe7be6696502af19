package arm64

import (
	"slices"

	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// lanes (V in comments) is the number of f32 lanes in a NEON register.
// A "vector" of any data type is V elements: a Q register of f32, or
// four 16-bit values (half a Q register, or a D register) or four bytes
// (an S register) widened into a Q register of f32.
const lanes = 4

// Vector register assignment: accumulators, temporaries (allocated in
// stack order) and hoisted constants (set once in the prologue).
const (
	nacc    = 16 // v0..v15
	tmpLo   = 16 // v16..v25
	tmpHi   = 26
	constLo = 26 // v26..v31
	constHi = 32
)

// General registers. R0 carries the argument block on entry and after
// the prologue points at the running totals, if the kernel keeps any.
// R16 and R17 are scratch for constants and addresses; R18 (platform),
// R28 (g), R29 (frame pointer) and R30 (LR) are never touched, and R27
// is left to the assembler (its REGTMP).
var (
	rArgs  = xr(0)
	rSrc   = xr(1)
	rDst   = xr(2)
	binRgs = [plan.MaxBinary]int16{xr(3), xr(4), xr(5), xr(6), xr(7), xr(8)}
	rTmp   = xr(16)
	rAddr  = xr(17)
)

// gen holds the state of one kernel being generated, grouped as amd64's
// is: what Choose decided, the plan's facts, the registers and pointers,
// the running totals and what is hoisted into the prologue.
type gen struct {
	*asm
	conf Conf // what Choose decided for the plan: the shapes lower it
	planFacts
	dequant *kernelshape.Dequant // a fused normalization's Dequantize (LoadSrc)
	regState
	totalState
	hoisted

	kernelshape.FirstErr // the first generation error
}

// planFacts are the plan's, as the shapes read them.
type planFacts struct {
	pl *plan.Plan
	kernelshape.Types
}

// regState is the register assignment and the pointer bookkeeping.
type regState struct {
	binReg [plan.MaxBinary]int16

	// ptrs holds the pointer increments not yet emitted. Memory
	// accesses fold them into their offset (post-increment loads add
	// to them, see ld1Post).
	ptrs *kernelshape.Pointers

	gprFree  []int16 // loop counters not in use
	stage    int16   // the stage's address (kernelshape.NormColumnStager), 0: none
	gprLog   []int16 // every counter handed out, in order
	tmpNext  int     // next free temporary vector register
	tmpFloor int     // the first temporary: tmpLo, or above it (WidenNorm)

	loopHeads []loopHead // per open Loop, innermost last

	addrCache
}

// addrCache is what rAddr holds: when addrOK, pointer register addrBase
// plus addrOff bytes (physical), so that runs of accesses at offsets the
// instructions cannot encode from the pointer (rows that are not 16-byte
// aligned, far rows) share one address computation. Anything that moves
// addrBase, and every label, forgets it.
type addrCache struct {
	addrOK   bool
	addrBase int16
	addrOff  int64
}

// totalState is where the running totals are (see runs.go).
type totalState struct {
	totals     bool // rArgs points at LongArgs.Totals (see reserveTotals)
	usesTotals bool // some sum is cut into runs: call with LongArgs
}

// hoisted is what the body has put into the prologue.
type hoisted struct {
	consts []constSlot // hoisted vector constants
	pro    *obj.Prog   // prologue insertion point for hoisted constants
}

// constSlot is a vector constant hoisted into the prologue: the 64-bit
// pattern every 64 bits of its register hold (a 32-bit constant twice).
type constSlot struct {
	bits uint64
	reg  int
}

// UsesTotals reports whether the kernel is called with LongArgs.
func (g *gen) UsesTotals() bool { return g.usesTotals }

// newGen prepares the generator for pl.
func newGen(pl *plan.Plan) *gen {
	g := &gen{asm: newAsm(), conf: Choose(pl), planFacts: planFacts{pl: pl, Types: kernelshape.TypesOf(pl)}}
	g.tmpNext, g.tmpFloor = tmpLo, tmpLo
	copy(g.binReg[:g.NBin], binRgs[:g.NBin])
	for i := 26; i >= 19; i-- {
		g.gprFree = append(g.gprFree, xr(i))
	}
	for i := 15; i >= 9; i-- {
		g.gprFree = append(g.gprFree, xr(i))
	}
	for i := plan.MaxBinary - 1; i >= g.NBin; i-- {
		g.gprFree = append(g.gprFree, binRgs[i])
	}
	g.ptrs = kernelshape.NewPointers(rSrc, rDst, g.binReg[:g.NBin])
	return g
}

// withPlan makes g, a generator made for a plan of the same loops and no
// post-ops, generate for pl: its types, and its binary operands' pointer
// registers taken from the free ones.
func (g *gen) withPlan(pl *plan.Plan) {
	g.pl = pl
	g.Types = kernelshape.TypesOf(pl)
	copy(g.binReg[:g.NBin], binRgs[:g.NBin])
	free := g.gprFree[:0]
	for _, r := range g.gprFree {
		if !slices.Contains(g.binReg[:g.NBin], r) {
			free = append(free, r)
		}
	}
	g.gprFree = free
	g.ptrs = kernelshape.NewPointers(rSrc, rDst, g.binReg[:g.NBin])
}

// Tmp allocates a temporary vector register; Mark/Release free them in
// stack order.
func (g *gen) Tmp() int {
	if g.tmpNext >= tmpHi {
		g.Fail(status.Errorf(status.Unimplemented, "arm64: kernel needs more than %d temporary vector registers", tmpHi-g.tmpFloor))
		return g.tmpFloor
	}
	g.tmpNext++
	return g.tmpNext - 1
}

// tmps allocates n consecutive temporaries (LD1 register lists need
// consecutive registers) and returns the first.
func (g *gen) tmps(n int) int {
	first := g.Tmp()
	for i := 1; i < n; i++ {
		g.Tmp()
	}
	return first
}

func (g *gen) Mark() int     { return g.tmpNext }
func (g *gen) Release(m int) { g.tmpNext = m }

// Counter takes a general register for a loop counter.
func (g *gen) Counter() int16 {
	n := len(g.gprFree)
	if n == 0 {
		used := slices.Compact(slices.Sorted(slices.Values(g.gprLog)))
		g.Fail(status.Errorf(status.Unimplemented, "arm64: loop nest needs more than the %d general registers free for counters",
			len(used)))
		return xr(7)
	}
	r := g.gprFree[n-1]
	g.gprFree = g.gprFree[:n-1]
	g.gprLog = append(g.gprLog, r)
	return r
}

// counterAvoiding takes a free general register that is not in avoid,
// if there is one.
func (g *gen) counterAvoiding(avoid []int16) (int16, bool) {
	for i := len(g.gprFree) - 1; i >= 0; i-- {
		r := g.gprFree[i]
		if !slices.Contains(avoid, r) {
			g.gprFree = slices.Delete(g.gprFree, i, i+1)
			g.gprLog = append(g.gprLog, r)
			return r, true
		}
	}
	return 0, false
}

func (g *gen) FreeCounter(r int16) { g.gprFree = append(g.gprFree, r) }

// movImm sets general register r to v with MOVZ or MOVN and MOVKs, one
// instruction per 16-bit chunk that differs from the background (the
// assembler would put such constants in a literal pool).
func (g *gen) movImm(r int16, v int64) {
	u := uint64(v)
	zeros, ones := 0, 0
	for s := 0; s < 64; s += 16 {
		switch (u >> s) & 0xffff {
		case 0:
			zeros++
		case 0xffff:
			ones++
		}
	}
	inverted := ones > zeros
	background := uint64(0)
	if inverted {
		background = 0xffff
	}
	first := true
	for s := 0; s < 64; s += 16 {
		c := (u >> s) & 0xffff
		if c == background && !(first && s == 48) {
			continue
		}
		as, op, field := arm64.AMOVK, uint32(opMOVK), c
		switch {
		case first && inverted:
			as, op, field = arm64.AMOVN, opMOVN, ^c&0xffff
		case first:
			as, op = arm64.AMOVZ, opMOVZ
		}
		if s == 48 && field >= 0x8000 {
			g.word(movWide(op, int(r-arm64.REG_R0), field, s))
		} else {
			g.op(as, imm(int64(field<<s)), reg(r))
		}
		first = false
	}
}

// addImm emits r += d.
func (g *gen) addImm(r int16, d int64) {
	g.addTo(r, r, d)
	g.moved(r)
}

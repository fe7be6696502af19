package arm64

import (
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vfn"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// signBit is the f32 sign bit, OrSign's mask.
const signBit = 0x80000000

// binOps are the instructions of the two-operand steps.
var binOps = map[vfn.Op]uint32{vfn.Add: opFADD, vfn.Sub: opFSUB, vfn.Mul: opFMUL, vfn.Div: opFDIV,
	vfn.Min: opFMIN, vfn.Max: opFMAX}

// programFor returns the package vfn program of a unary post-op (the
// dispatch in Eltwise): vfn.For, which tests replace to have arbitrary
// programs lowered under a kind that has one (TestRandomPrograms).
var programFor = vfn.For

// program sets every lane of r to p's function of r (package vfn's
// straight-line programs: Sigmoid, Tanh, Elu, SoftPlus, Mish, both
// GELUs), each step one or a few NEON instructions on 4S vectors,
// rounded as vfn.Model rounds it; a NaN lane keeps its bits, as
// plan.Eltwise does.
//
// Registers: x stays in r until the end. Every other value gets a
// temporary from a pool, given back after the value's last use
// (Program.LastUse) and reused; an exp or a log works in place in its
// source's register where the source dies there (else in a copy), with
// scratch from the same pool. The pool only grows (from the
// temporaries' stack); what else a step needs (a constant built where it
// is read, OrSign's mask) is taken above it and freed within the step.
// A constant lives in its hoisted register if it has (or can get) one,
// else it is built wherever it is read. Running out of temporaries fails the kernel cleanly
// (tmp's fail), though no program does in any kernel shape
// (TestVFNRegisters).
func (g *gen) program(p *vfn.Program, r int) {
	mk := g.Mark()
	defer g.Release(mk)
	a := &alloc{g: g, p: p, last: p.LastUse(), reg: make([]int, len(p.Steps)+1), owned: make([]bool, len(p.Steps)+1)}
	a.reg[vfn.X] = r
	for i, s := range p.Steps {
		a.step(i, s)
	}
	// NaN lanes (x != x) keep x, bits and all: r takes the result where
	// x == x.
	res := a.reg[p.Result()]
	m := a.get(nil)
	g.fop(opFCMEQ, m, r, r)
	g.vop(arm64.AVBIT, arr16B, r, res, m)
}

// alloc is program's register assignment.
type alloc struct {
	g     *gen
	p     *vfn.Program
	last  []int  // LastUse
	reg   []int  // each value's register; -1: a constant built where read
	owned []bool // reg is a pool register (a constant's hoisted one is not)
	free  []int  // pool registers not in use
}

// get returns a pool register that holds none of the values in avoid:
// a free one, or a new temporary.
func (a *alloc) get(avoid []vfn.Val) int {
	for i := len(a.free) - 1; i >= 0; i-- {
		f := a.free[i]
		if !a.holds(f, avoid) {
			a.free = append(a.free[:i], a.free[i+1:]...)
			return f
		}
	}
	return a.g.Tmp()
}

// scratch returns a pool register for a step's scratch, not d: the
// step gives it back to a.free.
func (a *alloc) scratch(d int) int {
	for i := len(a.free) - 1; i >= 0; i-- {
		if f := a.free[i]; f != d && !a.live(f) {
			a.free = append(a.free[:i], a.free[i+1:]...)
			return f
		}
	}
	return a.g.Tmp()
}

// live reports whether register f holds a value still to be read.
func (a *alloc) live(f int) bool {
	for v, r := range a.reg {
		if r == f && a.owned[v] {
			return true
		}
	}
	return false
}

// holds reports whether register f holds one of the values vs (or did:
// a value given back at this step may still be read by it).
func (a *alloc) holds(f int, vs []vfn.Val) bool {
	for _, v := range vs {
		if a.reg[v] == f {
			return true
		}
	}
	return false
}

// dies gives back the registers of the values among vs whose last use is
// step i (once each).
func (a *alloc) dies(i int, vs ...vfn.Val) {
	for j, v := range vs {
		if a.last[v] != i || !a.owned[v] || containsVal(vs[:j], v) {
			continue
		}
		a.owned[v] = false // given back
		a.free = append(a.free, a.reg[v])
	}
}

func containsVal(vs []vfn.Val, v vfn.Val) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

// src returns a register holding value v for reading within the current
// step: its own, or, for a constant with no register, scratch set to it
// (freed by the step's release).
func (a *alloc) src(v vfn.Val) int {
	if a.reg[v] >= 0 {
		return a.reg[v]
	}
	t := a.g.Tmp()
	a.g.setConst(t, a.p.Steps[v-1].Bits)
	return t
}

// into sets pool register d to value v.
func (a *alloc) into(d int, v vfn.Val) {
	if a.reg[v] < 0 {
		a.g.setConst(d, a.p.Steps[v-1].Bits)
		return
	}
	if a.reg[v] != d {
		a.g.vmov(d, a.reg[v])
	}
}

// inPlace returns a pool register holding value v that the step may
// overwrite: v's own if v dies at step i, else a copy.
func (a *alloc) inPlace(i int, v vfn.Val) int {
	if a.owned[v] && a.last[v] == i {
		a.owned[v] = false // the result takes it over
		return a.reg[v]
	}
	d := a.get(nil)
	a.into(d, v)
	return d
}

// step emits step i, which defines value i+1.
func (a *alloc) step(i int, s vfn.Step) {
	g := a.g
	v := vfn.Val(i + 1)
	a.owned[v] = true
	switch s.Op {
	case vfn.Const:
		if g.isHoisted(s.Bits) || constLo+len(g.consts) < constHi {
			a.reg[v], a.owned[v] = g.vconst(s.Bits), false
		} else {
			a.reg[v], a.owned[v] = -1, false
		}
	case vfn.Add, vfn.Sub, vfn.Mul, vfn.Div, vfn.Min, vfn.Max:
		// One instruction reads both operands before it writes: the
		// result may take a dying operand's register.
		op := binOps[s.Op]
		a.dies(i, s.A, s.B)
		d := a.get(nil)
		mk := g.Mark()
		g.fop(op, d, a.src(s.A), a.src(s.B))
		g.Release(mk)
		a.reg[v] = d
	case vfn.Abs, vfn.Neg:
		op := uint32(opFABS)
		if s.Op == vfn.Neg {
			op = opFNEG
		}
		a.dies(i, s.A)
		d := a.get(nil)
		mk := g.Mark()
		g.word(rr(op, d, a.src(s.A)))
		g.Release(mk)
		a.reg[v] = d
	case vfn.OrSign:
		// d = A | (B & sign): B's sign bit into scratch first, so that
		// the result may take either operand's register.
		a.dies(i, s.A, s.B)
		d := a.get(nil)
		mk := g.Mark()
		t := g.Tmp()
		g.withConst(signBit, func(c int) { g.vop(arm64.AVAND, arr16B, t, a.src(s.B), c) })
		g.vop(arm64.AVORR, arr16B, d, a.src(s.A), t)
		g.Release(mk)
		a.reg[v] = d
	case vfn.FMA:
		// FMLA accumulates A*B into a copy of C (or C's own register if
		// it dies here), rounding once. A and B are read after the copy
		// is written, so the result must not take their registers.
		var d int
		if a.owned[s.C] && a.last[s.C] == i && s.C != s.A && s.C != s.B {
			d = a.inPlace(i, s.C)
		} else {
			d = a.get([]vfn.Val{s.A, s.B})
			a.into(d, s.C)
		}
		mk := g.Mark()
		g.vop(arm64.AVFMLA, arr4S, d, a.src(s.A), a.src(s.B))
		g.Release(mk)
		a.dies(i, s.A, s.B, s.C)
		a.reg[v] = d
	case vfn.Poly:
		// Horner's rule alternates two registers, reading A throughout.
		p := a.get([]vfn.Val{s.A})
		q := a.get([]vfn.Val{s.A})
		mk := g.Mark()
		p, q = g.horner(s.Coef, a.src(s.A), p, q)
		g.Release(mk)
		a.free = append(a.free, q)
		a.dies(i, s.A)
		a.reg[v] = p
	case vfn.SelLT, vfn.SelLE:
		// The mask, A < B (FCMGT B, A) or A <= B (FCMGE B, A), false
		// where either is a NaN, then BSL picks C where it is set and D
		// elsewhere. C and D are read after the mask is written.
		op := uint32(opFCMGT)
		if s.Op == vfn.SelLE {
			op = opFCMGE
		}
		a.dies(i, s.A, s.B)
		d := a.get([]vfn.Val{s.C, s.D})
		mk := g.Mark()
		g.fop(op, d, a.src(s.B), a.src(s.A))
		g.Release(mk)
		mk = g.Mark()
		g.vop(arm64.AVBSL, arr16B, d, a.src(s.C), a.src(s.D))
		g.Release(mk)
		a.dies(i, s.A, s.B, s.C, s.D)
		a.reg[v] = d
	case vfn.Exp:
		// NaN lanes may be garbage here: the exp without its fix-up.
		// Its scratch comes from the pool (free registers first).
		d := a.inPlace(i, s.A)
		n, p, q := a.scratch(d), a.scratch(d), a.scratch(d)
		g.expWith(d, -1, n, p, q)
		a.free = append(a.free, q, p, n)
		a.reg[v] = d
	default:
		g.Fail(status.Errorf(status.Unimplemented, "arm64: vfn op %d is not emitted", s.Op))
		a.reg[v] = a.get(nil)
	}
	if a.last[v] < 0 && a.owned[v] {
		a.dies(a.last[v], v)
	}
}

package amd64

import (
	"encoding/binary"
	"sync"

	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vfn"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// programFor returns the package vfn program of a unary post-op (the
// dispatch in Eltwise): vfn.For, which tests replace to have arbitrary
// programs lowered under a kind that has one (TestRandomPrograms).
var programFor = vfn.For

// program applies the post-op whose package vfn program is p to r, step
// by step. Each value takes a temporary until its last use (vfn's
// LastUse); a result takes the register of an operand that dies there
// where the step's form allows; constants are read from the program's
// constant table as memory operands wherever the instruction takes one
// (operands of commutative steps and compares swapped to make room), and
// loaded into a temporary for the step elsewhere; the exp leaves NaNs to
// the end. That keeps every program within programTemps temporaries
// beside r (TestProgramTemps), which AVX2 kernels have. A NaN x comes out as it went in. r is the
// input, and holds the result at the end.
func (g *gen) program(p *vfn.Program, r int) {
	mk := g.Mark()
	defer g.Release(mk)
	tab, row := programConsts(p)
	last := p.LastUse()
	at := make([]int, len(p.Steps)+1) // each value's register; -1 for a constant
	at[vfn.X] = r
	var free []int
	take := func() int {
		if n := len(free); n > 0 {
			t := free[n-1]
			free = free[:n-1]
			return t
		}
		return g.Tmp()
	}
	for i, s := range p.Steps {
		if s.Op == vfn.Const {
			at[i+1] = -1
			continue
		}
		st := stepForm{op: s.Op, coef: s.Coef, vals: s.Operands()}
		isConst := func(j int) bool { return at[st.vals[j]] < 0 }
		st.canonical(isConst, g.avx512)

		// Operands: registers, table rows, or rows loaded for the step;
		// dying are the registers free after it.
		st.args = make([]obj.Addr, len(st.vals))
		st.regs = make([]int, len(st.vals))
		var dying []int
		loaded := false
		for j, v := range st.vals {
			if at[v] >= 0 {
				st.regs[j], st.args[j] = at[v], g.vr(at[v])
				if v != vfn.X && last[v] == i && !contains(dying, at[v]) {
					dying = append(dying, at[v])
				}
				continue
			}
			if !loaded {
				g.loadTable(tab)
				loaded = true
			}
			st.regs[j], st.args[j] = -1, tableConst(row[v])
			if !st.memOK(j, isConst, g.avx512) {
				t := take()
				g.op(x86.AVMOVAPS, tableConst(row[v]), g.vr(t))
				st.regs[j], st.args[j] = t, g.vr(t)
				dying = append(dying, t)
			}
		}
		// The result takes the lowest dying register the form can
		// write, else a new one; the rest are freed, and the stack of
		// temporaries shrinks where its top is free, so that the exp's
		// own temporaries come next.
		dst := -1
		for j, reg := range st.regs {
			if contains(dying, reg) && (j == 0 || !inPlace(st.op)) && (dst < 0 || reg < dst) {
				dst = reg
			}
		}
		if dst < 0 {
			dst = take()
		}
		g.step(&st, dst)
		for _, d := range dying {
			if d != dst && !contains(free, d) {
				free = append(free, d)
			}
		}
		for shrunk := true; shrunk; {
			shrunk = false
			for k, f := range free {
				if f == g.tmpNext-1 {
					free = append(free[:k], free[k+1:]...)
					g.Release(f)
					shrunk = true
					break
				}
			}
		}
		at[i+1] = dst
	}
	res := at[p.Result()]
	g.keepNaN(g.vr(res), g.vr(r), g.vr(take()))
	g.op(x86.AVMOVAPS, g.vr(res), g.vr(r))
}

// programTemps is the most temporaries a program takes beside its input.
const programTemps = 4

// stepForm is one step as it is emitted: its operands possibly swapped
// (commutative operands, a compare's sides, a blend's sources) so that
// constants sit where a memory operand may.
type stepForm struct {
	op   vfn.Op
	coef []uint32
	vals []vfn.Val
	// A compare's operands are swapped (rev: test b > a) or its sources
	// (neg: select by the negated test).
	rev, neg bool
	args     []obj.Addr
	regs     []int // each operand's register, -1 for a memory operand
}

// canonical swaps operands so that a constant is the one a memory
// operand can be: the second of a commutative pair or of a compare, and
// AVX2 blend's first source.
func (st *stepForm) canonical(isConst func(j int) bool, avx512 bool) {
	swap := func(i, j int) { st.vals[i], st.vals[j] = st.vals[j], st.vals[i] }
	switch st.op {
	case vfn.Add, vfn.Mul, vfn.Min, vfn.Max, vfn.FMA:
		if isConst(0) && !isConst(1) {
			swap(0, 1)
		}
	case vfn.SelLT, vfn.SelLE:
		if isConst(0) && !isConst(1) {
			swap(0, 1)
			st.rev = true
		}
		if !avx512 && isConst(3) && !isConst(2) {
			swap(2, 3)
			st.neg = true
		}
	}
}

// memOK reports whether operand j may be a memory operand: the second
// source of an arithmetic step, an FMA's second factor where its addend
// is a register, a compare's second side, and the selected values (on
// AVX2 only the first: VBLENDVPS's memory source).
func (st *stepForm) memOK(j int, isConst func(j int) bool, avx512 bool) bool {
	switch st.op {
	case vfn.Add, vfn.Sub, vfn.Mul, vfn.Div, vfn.Min, vfn.Max:
		return j == 1
	case vfn.FMA:
		return j == 1 && !isConst(2)
	case vfn.SelLT, vfn.SelLE:
		return j == 1 || j == 2 || (j == 3 && avx512)
	}
	return false
}

// predicate returns the VCMPPS immediate of a select's test and of its
// negation: LT_OS and LE_OS are false where either side is a NaN,
// GT_OS and GE_OS the same with the sides swapped, the N*_US forms
// their negations.
func (st *stepForm) predicate() (pred, inv int64) {
	pred, inv = 1, 5 // LT_OS, NLT_US
	switch {
	case st.op == vfn.SelLT && st.rev:
		pred, inv = 14, 10 // GT_OS, NGT_US
	case st.op == vfn.SelLE && st.rev:
		pred, inv = 13, 9 // GE_OS, NGE_US
	case st.op == vfn.SelLE:
		pred, inv = 2, 6 // LE_OS, NLE_US
	}
	if st.neg {
		pred, inv = inv, pred
	}
	return pred, inv
}

// inPlace reports whether op's form writes its result over its first
// operand only.
func inPlace(op vfn.Op) bool {
	return op == vfn.Exp || op == vfn.Poly || op == vfn.Abs || op == vfn.Neg
}

func contains(rs []int, r int) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// binOps are the instructions of the two-operand steps (d = a OP b).
var binOps = map[vfn.Op]obj.As{vfn.Add: x86.AVADDPS, vfn.Sub: x86.AVSUBPS, vfn.Mul: x86.AVMULPS,
	vfn.Div: x86.AVDIVPS, vfn.Min: x86.AVMINPS, vfn.Max: x86.AVMAXPS}

// step emits one step into dst (which may be one of its operands' registers:
// every form below reads its sources before it writes dst, or writes dst
// only where dst is the operand it updates).
func (g *gen) step(st *stepForm, dst int) {
	d := g.vr(dst)
	x := st.args
	if as, ok := binOps[st.op]; ok {
		g.op(as, x[1], x[0], d)
		return
	}
	switch st.op {
	case vfn.FMA:
		switch dst {
		case st.regs[2]:
			g.op(x86.AVFMADD231PS, x[1], x[0], d) // d = a*b + d
		case st.regs[1]:
			g.op(x86.AVFMADD213PS, x[2], x[0], d) // d = a*d + c
		default:
			if dst != st.regs[0] {
				g.op(x86.AVMOVAPS, x[0], d)
			}
			g.op(x86.AVFMADD132PS, x[1], x[2], d) // d = d*b + c
		}
	case vfn.Abs:
		g.loadTable(signMasks)
		g.op(g.pand(), tableConst(absMask), x[0], d)
	case vfn.Neg:
		g.loadTable(signMasks)
		g.op(g.pxor(), tableConst(signBit), x[0], d)
	case vfn.OrSign:
		mk := g.Mark()
		t := g.vr(g.Tmp())
		g.loadTable(signMasks)
		g.op(g.pand(), tableConst(signBit), x[1], t)
		g.op(g.por(), t, x[0], d)
		g.Release(mk)
	case vfn.Poly:
		g.loadTable(cachedTable(st.coef))
		if dst != st.regs[0] {
			g.horner(tableConst, len(st.coef)-1, x[0], d)
			return
		}
		mk := g.Mark()
		p := g.vr(g.Tmp())
		g.horner(tableConst, len(st.coef)-1, d, p)
		g.op(x86.AVMOVAPS, p, d)
		g.Release(mk)
	case vfn.SelLT, vfn.SelLE:
		g.sel(st, dst)
	case vfn.Exp:
		if dst != st.regs[0] {
			g.op(x86.AVMOVAPS, x[0], d)
		}
		g.expCore(dst)
	default:
		g.Fail(status.Errorf(status.Unimplemented, "amd64: program step %d is not emitted", st.op))
	}
}

// sel emits a select: dst = a < b (or <=) ? c : e, by the compare and
// sources canonical chose.
func (g *gen) sel(st *stepForm, dst int) {
	pred, inv := st.predicate()
	x, d := st.args, g.vr(dst)
	if g.avx512 {
		// Merge the other source under the mask into whichever of
		// them dst already is; dst may also be a or b (their compare is
		// done by then).
		switch dst {
		case st.regs[2]:
			g.op(x86.AVCMPPS, imm(inv), x[1], x[0], kreg(6))
			g.op(x86.AVMOVAPS, x[3], kreg(6), d)
		case st.regs[3]:
			g.op(x86.AVCMPPS, imm(pred), x[1], x[0], kreg(6))
			g.op(x86.AVMOVAPS, x[2], kreg(6), d)
		default:
			g.op(x86.AVCMPPS, imm(pred), x[1], x[0], kreg(6))
			g.op(x86.AVMOVAPS, x[3], d)
			g.op(x86.AVMOVAPS, x[2], kreg(6), d)
		}
		return
	}
	mk := g.Mark()
	m := g.vr(g.Tmp())
	g.op(x86.AVCMPPS, imm(pred), x[1], x[0], m)
	g.op(x86.AVBLENDVPS, m, x[2], x[3], d) // d = m ? c : e
	g.Release(mk)
}

// signMasks is the table of the sign-bit masks (absMask, signBit) that
// Abs, Neg and OrSign read as memory operands.
var signMasks = newConstTable([]uint32{0x7fffffff, 0x80000000})

const (
	absMask = iota
	signBit
)

// pxor is the bitwise XOR of the width in use.
func (g *gen) pxor() obj.As {
	if g.avx512 {
		return x86.AVPXORD
	}
	return x86.AVPXOR
}

// constTables holds constant tables by content: the polynomials of
// package vfn (package variables) and each program's constants (which
// include a post-op's parameters). Kernels read them for as long as the
// process lives, so they are never freed; there is one per distinct
// content.
var constTables sync.Map // string (the bits) -> []uint32

// cachedTable returns the constant table of bits.
func cachedTable(bits []uint32) []uint32 {
	key := make([]byte, 4*len(bits))
	for i, b := range bits {
		binary.LittleEndian.PutUint32(key[4*i:], b)
	}
	if t, ok := constTables.Load(string(key)); ok {
		return t.([]uint32)
	}
	t, _ := constTables.LoadOrStore(string(key), newConstTable(bits))
	return t.([]uint32)
}

// programConsts returns the table of p's constants and, for each value
// of p that is a constant, its row.
func programConsts(p *vfn.Program) (tab []uint32, row map[vfn.Val]int) {
	row = map[vfn.Val]int{}
	var bits []uint32
	for i, s := range p.Steps {
		if s.Op == vfn.Const {
			row[vfn.Val(i+1)] = len(bits)
			bits = append(bits, s.Bits)
		}
	}
	if len(bits) == 0 {
		return nil, row
	}
	return cachedTable(bits), row
}

package amd64

import (
	"fmt"
	"sync"

	"github.com/gdnn/gdnn/graph"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
	"github.com/twitchyliquid64/golang-asm/objabi"
)

// The assembler is golang-asm (Go's own cmd/internal/obj). Its stock
// Builder prints diagnostics and silently drops bytes for operand
// combinations it cannot encode, so gdnn builds its own obj.Link context
// and turns every diagnostic and every relocation into an error: an
// emitted kernel either has exactly the instructions asked for or is not
// emitted at all.

// initOnce guards the x86 backend's Init: its first call fills global
// encoding tables and must not race with another first call.
var initOnce sync.Once

// asm collects one kernel's instructions as a linked Prog list.
type asm struct {
	ctxt        *obj.Link
	first, last *obj.Prog
	diags       []string
	progs       int
	// cursor, when set, makes add insert after it instead of appending;
	// the prologue uses it to hoist constants found while emitting the body.
	cursor *obj.Prog
}

// newAsm returns an empty instruction list with its own assembler context.
func newAsm() *asm {
	ctxt := obj.Linknew(&x86.Linkamd64)
	ctxt.Headtype = objabi.Hlinux
	// IsAsm turns off the jump padding that the compiler would add and
	// the other "Go code" rewrites; this is hand-written assembly.
	ctxt.IsAsm = true
	a := &asm{ctxt: ctxt}
	ctxt.DiagFunc = func(format string, args ...interface{}) {
		a.diags = append(a.diags, fmt.Sprintf(format, args...))
	}
	initOnce.Do(func() { x86.Linkamd64.Init(ctxt) })
	// The first Prog heads the list; an ANOP encodes to nothing.
	a.add(&obj.Prog{As: obj.ANOP})
	return a
}

// add appends p to the list.
func (a *asm) add(p *obj.Prog) *obj.Prog {
	p.Ctxt = a.ctxt
	a.progs++
	if c := a.cursor; c != nil {
		p.Link = c.Link
		c.Link = p
		if a.last == c {
			a.last = p
		}
		a.cursor = p
		return p
	}
	if a.first == nil {
		a.first = p
	} else {
		a.last.Link = p
	}
	a.last = p
	return p
}

// insertAfter runs emit with every new instruction inserted after *at,
// and moves *at to the last instruction inserted.
func (a *asm) insertAfter(at **obj.Prog, emit func()) {
	saved := a.cursor
	a.cursor = *at
	emit()
	*at = a.cursor
	a.cursor = saved
}

// op appends instruction as with operands in Go assembler order: sources
// first, destination last. With one operand it is a destination for the
// instructions the backend marks as unary-destination, a source otherwise.
// Operands between the first and the last go to RestArgs (for AVX-512
// that is where an opmask sits, just before the destination).
func (a *asm) op(as obj.As, args ...obj.Addr) *obj.Prog {
	p := &obj.Prog{As: as}
	switch len(args) {
	case 0:
	case 1:
		if x86.Linkamd64.UnaryDst[as] {
			p.To = args[0]
		} else {
			p.From = args[0]
		}
	default:
		p.From = args[0]
		p.To = args[len(args)-1]
		if len(args) > 2 {
			p.RestArgs = append([]obj.Addr(nil), args[1:len(args)-1]...)
		}
	}
	return a.add(p)
}

// opz is op with AVX-512 zeroing-masking (the .Z suffix).
func (a *asm) opz(as obj.As, args ...obj.Addr) *obj.Prog {
	p := a.op(as, args...)
	if err := x86.ParseSuffix(p, "Z"); err != nil {
		a.diags = append(a.diags, err.Error())
	}
	return p
}

// label returns a new label Prog (not yet placed).
func (a *asm) newLabel() *obj.Prog { return &obj.Prog{As: obj.ANOP} }

// place appends a label made by newLabel.
func (a *asm) place(l *obj.Prog) { a.add(l) }

// jump appends a jump (or conditional jump) to label l.
func (a *asm) jump(as obj.As, l *obj.Prog) {
	p := a.add(&obj.Prog{As: as})
	p.To.Type = obj.TYPE_BRANCH
	p.To.SetTarget(l)
}

// raw appends literal bytes, for instructions the assembler lacks.
func (a *asm) raw(b ...byte) {
	for _, c := range b {
		a.op(x86.ABYTE, imm(int64(c)))
	}
}

// assemble encodes the list. Any diagnostic, and any relocation (a
// kernel must be position independent and self-contained), is an error.
func (a *asm) assemble() ([]byte, error) {
	if len(a.diags) == 0 {
		sym := &obj.LSym{Func: &obj.FuncInfo{Text: a.first}}
		x86.Linkamd64.Assemble(a.ctxt, sym, a.ctxt.NewProg)
		if len(a.diags) == 0 {
			for _, r := range sym.R {
				if r.Siz > 0 {
					return nil, graph.Errorf(graph.RuntimeError,
						"amd64: kernel needs a relocation of %d bytes at offset %d", r.Siz, r.Off)
				}
			}
			return sym.P, nil
		}
	}
	n := len(a.diags)
	if n > 3 {
		a.diags = a.diags[:3]
	}
	return nil, graph.Errorf(graph.RuntimeError, "amd64: assembler reported %d problem(s): %v", n, a.diags)
}

// Operand constructors.

// reg is a register operand.
func reg(r int16) obj.Addr { return obj.Addr{Type: obj.TYPE_REG, Reg: r} }

// imm is an immediate operand.
func imm(v int64) obj.Addr { return obj.Addr{Type: obj.TYPE_CONST, Offset: v} }

// mem is the memory operand off(base).
func mem(base int16, off int64) obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Reg: base, Offset: off}
}

// memIdx is the memory operand off(base)(index*scale).
func memIdx(base, index int16, scale int16, off int64) obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Reg: base, Index: index, Scale: scale, Offset: off}
}

// General-purpose registers by their Go names.
const (
	rAX = x86.REG_AX
	rBX = x86.REG_BX
	rCX = x86.REG_CX
	rDX = x86.REG_DX
	rSI = x86.REG_SI
	rDI = x86.REG_DI
	rR8 = x86.REG_R8
)

// kreg returns opmask register K<i>.
func kreg(i int) obj.Addr { return reg(x86.REG_K0 + int16(i)) }

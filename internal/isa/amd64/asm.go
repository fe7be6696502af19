package amd64

import (
	"github.com/gdnn/gdnn/internal/asmkit"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The assembler is golang-asm through asmkit: an emitted kernel either has
// exactly the instructions asked for or is not emitted at all. This file
// adds the x86 operand layout, AVX-512 zeroing-masking and raw bytes.

// asm collects one kernel's instructions.
type asm struct {
	*asmkit.List
}

// newAsm returns an empty instruction list with its own assembler context.
func newAsm() *asm {
	a := &asm{asmkit.New(&x86.Linkamd64, "amd64")}
	// The first Prog heads the list; an ANOP encodes to nothing.
	a.Add(&obj.Prog{As: obj.ANOP})
	return a
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
	return a.Add(p)
}

// opz is op with AVX-512 zeroing-masking (the .Z suffix).
func (a *asm) opz(as obj.As, args ...obj.Addr) *obj.Prog {
	p := a.op(as, args...)
	if err := x86.ParseSuffix(p, "Z"); err != nil {
		a.Diag("%v", err)
	}
	return p
}

// raw appends literal bytes, for instructions the assembler lacks.
func (a *asm) raw(b ...byte) {
	for _, c := range b {
		a.op(x86.ABYTE, imm(int64(c)))
	}
}

// Text encodes the list.
func (a *asm) Text() ([]byte, error) {
	sym, err := a.Assemble()
	if err != nil {
		return nil, err
	}
	return sym.P, nil
}

// Operand constructors: a register, an immediate, the memory operand
// off(base).
var (
	reg = asmkit.Reg
	imm = asmkit.Imm
	mem = asmkit.Mem
)

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

package arm64

import (
	"github.com/gdnn/gdnn/internal/asmkit"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The assembler is golang-asm through asmkit: an emitted kernel either has
// exactly the instructions asked for or is not emitted at all. This file
// adds the arm64 operand layout, raw instruction words (for what the Go
// 1.15 assembler does not spell, see enc.go), the TEXT header the backend
// expects and the check that no literal pool was emitted.

// asm collects one kernel's instructions.
type asm struct {
	*asmkit.List
}

// newAsm returns an empty instruction list with its own assembler context.
func newAsm() *asm {
	a := &asm{asmkit.New(&arm64.Linkarm64, "arm64")}
	// The backend takes the first Prog as the function's TEXT header and
	// never encodes it. A frame size of 0 with no frame pointer: the
	// kernel is a leaf that touches neither the stack nor LR.
	a.Add(&obj.Prog{As: obj.ATEXT, To: obj.Addr{Type: obj.TYPE_TEXTSIZE, Offset: 0}})
	return a
}

// op appends instruction as in Go assembler operand order: op(as, from,
// to) or op3(as, from, reg, to) with the middle operand in p.Reg.
func (a *asm) op(as obj.As, from, to obj.Addr) *obj.Prog {
	return a.Add(&obj.Prog{As: as, From: from, To: to})
}

// op3 appends a three-operand instruction: to = reg OP from.
func (a *asm) op3(as obj.As, from obj.Addr, reg int16, to obj.Addr) *obj.Prog {
	return a.Add(&obj.Prog{As: as, From: from, Reg: reg, To: to})
}

// word appends one raw instruction word.
func (a *asm) word(w uint32) {
	a.Add(&obj.Prog{As: arm64.AWORD, To: obj.Addr{Type: obj.TYPE_CONST, Offset: int64(w)}})
}

// jumpReg appends a compare-and-branch (CBZ, CBNZ) on register r to l.
func (a *asm) jumpReg(as obj.As, r int16, l *obj.Prog) {
	p := a.Add(&obj.Prog{As: as, From: reg(r)})
	p.To.Type = obj.TYPE_BRANCH
	p.To.SetTarget(l)
}

// ret appends RET (to the link register).
func (a *asm) ret() *obj.Prog {
	return a.Add(&obj.Prog{As: obj.ARET, To: reg(arm64.REGLINK)})
}

// Text encodes the list. Besides asmkit's checks, any literal pool
// (data the assembler would place after the code, for constants and
// offsets it cannot encode in the instruction) is an error. The backend
// pads the code to 16 bytes with zero words; they are cut off.
func (a *asm) Text() ([]byte, error) {
	sym, err := a.Assemble()
	if err != nil {
		return nil, err
	}
	last := a.Last()
	end := last.Pc + 4
	// The pool would be linked in after the RET.
	if last.As != obj.ARET || last.Link != nil || sym.Size != (end+15)&^15 || int64(len(sym.P)) < end {
		return nil, status.Errorf(status.RuntimeError,
			"arm64: kernel of %d bytes does not end at its RET (offset %d): a literal pool was emitted", sym.Size, end)
	}
	return sym.P[:end:end], nil
}

// Operand constructors: a register, an immediate, the memory operand
// off(base).
var (
	reg = asmkit.Reg
	imm = asmkit.Imm
	mem = asmkit.Mem
)

// Arrangements of a vector register, as golang-asm numbers them.
const (
	arr8B  = arm64.ARNG_8B
	arr16B = arm64.ARNG_16B
	arr4H  = arm64.ARNG_4H
	arr8H  = arm64.ARNG_8H
	arr2S  = arm64.ARNG_2S
	arr4S  = arm64.ARNG_4S
	arr2D  = arm64.ARNG_2D
)

// varng is vector register v<i> with arrangement arr (V3.S4 in Go syntax).
func varng(i int, arr int16) obj.Addr {
	return reg(arm64.REG_ARNG + int16(i&31) + (arr&15)<<5)
}

// velem is element idx of vector register v<i> (V3.S[1]); elemArr is
// arm64.ARNG_S, ARNG_H, ARNG_D or ARNG_B.
func velem(i int, elemArr int16, idx int) obj.Addr {
	a := reg(arm64.REG_ELEM + int16(i&31) + (elemArr&15)<<5)
	a.Index = int16(idx)
	return a
}

// vlist is the register list {v<first>..v<first+n-1>} with arrangement
// arr, 1 <= n <= 4, for LD1/ST1.
func vlist(first, n int, arr int16) obj.Addr {
	var q, size int64
	switch arr {
	case arr8B:
	case arr16B:
		q = 1
	case arr4H:
		size = 1
	case arr8H:
		q, size = 1, 1
	case arr2S:
		size = 2
	case arr4S:
		q, size = 1, 2
	case arr2D:
		q, size = 1, 3
	}
	off := int64(first & 31)
	off |= [...]int64{0, 0x7, 0xa, 0x6, 0x2}[n] << 12
	off |= q<<30 | size<<10
	off |= 1 << 60 // marks an arm64 register list
	return obj.Addr{Type: obj.TYPE_REGLIST, Offset: off}
}

// General-purpose registers by number.
func xr(i int) int16 { return arm64.REG_R0 + int16(i) }

package asmkit

import "github.com/twitchyliquid64/golang-asm/obj"

// Operands that every instruction set spells the same way.

// Reg is the register operand r.
func Reg(r int16) obj.Addr { return obj.Addr{Type: obj.TYPE_REG, Reg: r} }

// Imm is the immediate operand v.
func Imm(v int64) obj.Addr { return obj.Addr{Type: obj.TYPE_CONST, Offset: v} }

// Mem is the memory operand off(base).
func Mem(base int16, off int64) obj.Addr {
	return obj.Addr{Type: obj.TYPE_MEM, Reg: base, Offset: off}
}

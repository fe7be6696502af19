#include "textflag.h"

// func flushICacheRange(addr unsafe.Pointer, n, dline, iline uintptr)
//
// The architected sequence for self-modifying code (Arm ARM B2.4.4):
// clean each data-cache line to the point of unification, DSB ISH,
// invalidate each instruction-cache line, DSB ISH, ISB. dline and iline
// are the smallest data and instruction cache line sizes in bytes
// (powers of two, cacheLines): the loops stride exactly one line, as a
// stride larger than a real line would skip lines. The system
// instructions are emitted as WORDs because the Go assembler does not
// spell all of them.
TEXT ·flushICacheRange(SB), NOSPLIT, $0-32
	MOVD addr+0(FP), R0
	MOVD n+8(FP), R1
	MOVD dline+16(FP), R4
	MOVD iline+24(FP), R8
	ADD  R0, R1, R1        // R1 = end

	// Data cache: clean by VA to PoU.
	SUB  $1, R4, R6
	BIC  R6, R0, R7        // R7 = start rounded down to a line
dloop:
	WORD $0xd50b7b27       // DC CVAU, R7
	ADD  R4, R7, R7
	CMP  R1, R7
	BLO  dloop
	WORD $0xd5033b9f       // DSB ISH

	// Instruction cache: invalidate by VA to PoU.
	SUB  $1, R8, R6
	BIC  R6, R0, R7
iloop:
	WORD $0xd50b7527       // IC IVAU, R7
	ADD  R8, R7, R7
	CMP  R1, R7
	BLO  iloop
	WORD $0xd5033b9f       // DSB ISH
	WORD $0xd5033fdf       // ISB
	RET

#include "textflag.h"

// func flushICacheRange(addr unsafe.Pointer, n uintptr)
//
// The architected sequence for self-modifying code (Arm ARM B2.4.4):
// clean each data-cache line to the point of unification, DSB ISH,
// invalidate each instruction-cache line, DSB ISH, ISB. Line sizes come
// from CTR_EL0 (DminLine bits 19:16, IminLine bits 3:0, log2 of 4-byte
// words), which Linux lets user space read (trapping and emulating it on
// parts with errata), so the loop strides exactly one line of the
// smallest size the system has; a guessed stride larger than a real line
// would skip lines. The system instructions are emitted as WORDs because
// the Go assembler does not spell all of them.
TEXT ·flushICacheRange(SB), NOSPLIT, $0-16
	MOVD addr+0(FP), R0
	MOVD n+8(FP), R1
	ADD  R0, R1, R1        // R1 = end
	WORD $0xd53b0023       // MRS CTR_EL0, R3

	// Data cache: clean by VA to PoU.
	UBFX $16, R3, $4, R4   // DminLine
	MOVD $4, R5
	LSL  R4, R5, R4        // R4 = line bytes
	SUB  $1, R4, R6
	BIC  R6, R0, R7        // R7 = start rounded down to a line
dloop:
	WORD $0xd50b7b27       // DC CVAU, R7
	ADD  R4, R7, R7
	CMP  R1, R7
	BLO  dloop
	WORD $0xd5033b9f       // DSB ISH

	// Instruction cache: invalidate by VA to PoU.
	AND  $15, R3, R8       // IminLine
	MOVD $4, R5
	LSL  R8, R5, R8        // R8 = line bytes
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

#include "textflag.h"

// Bulk conversions between f32 and bf16/f16 (see bulk_arm64.go).
// func name(dst, src unsafe.Pointer, n int): n > 0, a multiple of 8.
// The Go assembler does not spell FCVTL, FCVTN, SHLL (#16) or CMHI: they
// are WORDs, each with its assembly in the comment.

TEXT ·f16ToF32NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
loop:
	VLD1.P 16(R1), [V0.H8]
	WORD   $0x0E217801 // FCVTL  V1.4S, V0.4H
	WORD   $0x4E217802 // FCVTL2 V2.4S, V0.8H
	VST1.P [V1.S4, V2.S4], 32(R0)
	SUBS   $8, R2, R2
	BNE    loop
	RET

TEXT ·f32ToF16NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
loop:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	WORD   $0x0E216802 // FCVTN  V2.4H, V0.4S
	WORD   $0x4E216822 // FCVTN2 V2.8H, V1.4S
	VST1.P [V2.H8], 16(R0)
	SUBS   $8, R2, R2
	BNE    loop
	RET

TEXT ·bf16ToF32NEON(SB), NOSPLIT, $0-24
	MOVD dst+0(FP), R0
	MOVD src+8(FP), R1
	MOVD n+16(FP), R2
loop:
	VLD1.P 16(R1), [V0.H8]
	WORD   $0x2E613801 // SHLL  V1.4S, V0.4H, #16
	WORD   $0x6E613802 // SHLL2 V2.4S, V0.8H, #16
	VST1.P [V1.S4, V2.S4], 32(R0)
	SUBS   $8, R2, R2
	BNE    loop
	RET

// f32ToBF16NEON rounds as F32ToBF16: u + 0x7fff + (u>>16)&1, or for a NaN
// (|u| > 0x7f800000) u | 0x00400000 (the quiet bit); UZP2 then keeps the
// high halves. V8 = 1, V9 = 0x7fff, V10 = 0x7fffffff, V11 = 0x7f800000,
// V12 = 0x00400000.
TEXT ·f32ToBF16NEON(SB), NOSPLIT, $0-24
	MOVD  dst+0(FP), R0
	MOVD  src+8(FP), R1
	MOVD  n+16(FP), R2
	MOVW  $1, R3
	VDUP  R3, V8.S4
	MOVW  $0x7fff, R3
	VDUP  R3, V9.S4
	MOVW  $0x7fffffff, R3
	VDUP  R3, V10.S4
	MOVW  $0x7f800000, R3
	VDUP  R3, V11.S4
	MOVW  $0x00400000, R3
	VDUP  R3, V12.S4
loop:
	VLD1.P 32(R1), [V0.S4, V1.S4]
	VUSHR  $16, V0.S4, V3.S4
	VAND   V8.B16, V3.B16, V3.B16
	VADD   V9.S4, V3.S4, V3.S4
	VADD   V3.S4, V0.S4, V3.S4
	VAND   V10.B16, V0.B16, V4.B16
	WORD   $0x6EAB3484             // CMHI V4.4S, V4.4S, V11.4S
	VORR   V12.B16, V0.B16, V5.B16
	VBIT   V4.B16, V5.B16, V3.B16
	VUSHR  $16, V1.S4, V6.S4
	VAND   V8.B16, V6.B16, V6.B16
	VADD   V9.S4, V6.S4, V6.S4
	VADD   V6.S4, V1.S4, V6.S4
	VAND   V10.B16, V1.B16, V4.B16
	WORD   $0x6EAB3484             // CMHI V4.4S, V4.4S, V11.4S
	VORR   V12.B16, V1.B16, V5.B16
	VBIT   V4.B16, V5.B16, V6.B16
	VUZP2  V6.H8, V3.H8, V7.H8
	VST1.P [V7.H8], 16(R0)
	SUBS   $8, R2, R2
	BNE    loop
	RET

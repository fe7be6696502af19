#include "textflag.h"

// Bulk conversions between f32 and bf16/f16 (see bulk_amd64.go).
// func name(dst, src unsafe.Pointer, n int): n > 0, a multiple of the
// block (16 for AVX2, 32 for AVX-512).

// AVX2: 16 elements a step.
TEXT ·f16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JNZ       loop
	VZEROUPPER
	RET

TEXT ·f32ToF16AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VCVTPS2PH $0, Y0, (DI)
	VCVTPS2PH $0, Y1, 16(DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	JNZ       loop
	VZEROUPPER
	RET

TEXT ·bf16ToF32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VPMOVZXWD (SI), Y0
	VPMOVZXWD 16(SI), Y1
	VPSLLD    $16, Y0, Y0
	VPSLLD    $16, Y1, Y1
	VMOVDQU   Y0, (DI)
	VMOVDQU   Y1, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JNZ       loop
	VZEROUPPER
	RET

// BF16ROUND8 rounds the eight f32 in Y0 to bf16 in the high halves of
// Y0's dwords, as F32ToBF16: u + 0x7fff + (u>>16)&1, or for a NaN
// (|u| > 0x7f800000) u | 0x00400000, the quiet bit. Y8 = 1, Y9 = 0x7fff,
// Y10 = 0x7fffffff, Y11 = 0x7f800000, Y12 = 0x00400000; clobbers Y1-Y3.
#define BF16ROUND8 \
	VPSRLD    $16, Y0, Y1      \
	VPAND     Y8, Y1, Y1       \
	VPADDD    Y9, Y1, Y1       \
	VPAND     Y10, Y0, Y2      \
	VPCMPGTD  Y11, Y2, Y2      \
	VPOR      Y12, Y0, Y3      \
	VPADDD    Y1, Y0, Y0       \
	VPBLENDVB Y2, Y3, Y0, Y0

TEXT ·f32ToBF16AVX2(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $1, AX
	MOVQ         AX, X8
	VPBROADCASTD X8, Y8
	MOVL         $0x7fff, AX
	MOVQ         AX, X9
	VPBROADCASTD X9, Y9
	MOVL         $0x7fffffff, AX
	MOVQ         AX, X10
	VPBROADCASTD X10, Y10
	MOVL         $0x7f800000, AX
	MOVQ         AX, X11
	VPBROADCASTD X11, Y11
	MOVL         $0x00400000, AX
	MOVQ         AX, X12
	VPBROADCASTD X12, Y12
loop:
	VMOVDQU (SI), Y0
	BF16ROUND8
	VPSRLD  $16, Y0, Y4
	VMOVDQU 32(SI), Y0
	BF16ROUND8
	VPSRLD  $16, Y0, Y5
	// Pack per 128-bit lane (no saturation: every dword is below
	// 0x10000), then put the quarters back in order.
	VPACKUSDW Y5, Y4, Y4
	VPERMQ    $0xd8, Y4, Y4
	VMOVDQU   Y4, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	JNZ       loop
	VZEROUPPER
	RET

// AVX-512 (F and BW): 32 elements a step.
TEXT ·f16ToF32AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VCVTPH2PS (SI), Z0
	VCVTPH2PS 32(SI), Z1
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z1, 64(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JNZ       loop
	VZEROUPPER
	RET

TEXT ·f32ToF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	VCVTPS2PH $0, Z0, (DI)
	VCVTPS2PH $0, Z1, 32(DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	JNZ       loop
	VZEROUPPER
	RET

TEXT ·bf16ToF32AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
loop:
	VPMOVZXWD (SI), Z0
	VPMOVZXWD 32(SI), Z1
	VPSLLD    $16, Z0, Z0
	VPSLLD    $16, Z1, Z1
	VMOVDQU32 Z0, (DI)
	VMOVDQU32 Z1, 64(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JNZ       loop
	VZEROUPPER
	RET

// BF16ROUND16 is BF16ROUND8 on the sixteen f32 in Z0, NaN lanes picked
// by an opmask (K1); Z8-Z12 hold the constants.
#define BF16ROUND16 \
	VPSRLD   $16, Z0, Z1       \
	VPANDD   Z8, Z1, Z1        \
	VPADDD   Z9, Z1, Z1        \
	VPANDD   Z10, Z0, Z2       \
	VPCMPGTD Z11, Z2, K1       \
	VPADDD   Z1, Z0, Z1        \
	VPORD    Z12, Z0, K1, Z1   \
	VPSRLD   $16, Z1, Z0

TEXT ·f32ToBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	MOVL         $1, AX
	VPBROADCASTD AX, Z8
	MOVL         $0x7fff, AX
	VPBROADCASTD AX, Z9
	MOVL         $0x7fffffff, AX
	VPBROADCASTD AX, Z10
	MOVL         $0x7f800000, AX
	VPBROADCASTD AX, Z11
	MOVL         $0x00400000, AX
	VPBROADCASTD AX, Z12
loop:
	VMOVDQU32 (SI), Z0
	BF16ROUND16
	VPMOVDW   Z0, (DI)
	VMOVDQU32 64(SI), Z0
	BF16ROUND16
	VPMOVDW   Z0, 32(DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	JNZ       loop
	VZEROUPPER
	RET

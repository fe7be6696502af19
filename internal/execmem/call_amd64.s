#include "textflag.h"

// func call(code, args unsafe.Pointer)
//
// The kernel gets args in DI. It may clobber every general register except
// SP and BP; R14 (g) and X15 are restored by the ABIInternal->ABI0 wrapper
// the compiler puts around this ABI0 function, so they may be clobbered too.
//
// The same on every OS, Windows included: ABI0 is Go's own convention,
// and the Windows x64 convention (its callee-saved X6-X15, shadow space)
// applies only to calls into DLLs, which neither side makes here.
TEXT ·call(SB), NOSPLIT, $0-16
	MOVQ code+0(FP), AX
	MOVQ args+8(FP), DI
	CALL AX
	RET

#include "textflag.h"

// func call(code, args unsafe.Pointer)
//
// The kernel gets args in R0 and returns with RET (to LR). It may clobber
// R0-R17, R19-R27 and all V registers; it keeps RSP, R18 (platform), R28
// (g, which nothing restores) and R29 (frame pointer). Because this
// function calls, the assembler gives it a small frame that saves LR.
//
// The same on every OS: ABI0 is Go's own convention, not the platform's.
// R18 is the platform register on macOS (and Windows), which the OS may
// change at any time; neither this trampoline nor any kernel touches it
// (internal/isa/arm64's TestNoPlatformRegister checks every kernel).
TEXT ·call(SB), NOSPLIT, $0-16
	MOVD code+0(FP), R1
	MOVD args+8(FP), R0
	CALL (R1)
	RET

#include "textflag.h"
#include "funcdata.h"

// Windows delivers a fault in kernel code to vectored exception handlers
// and then, as the Go runtime handles only faults at Go PCs, ends the
// process; Linux and macOS deliver it as a signal that the runtime turns
// into a panic the jit runtime recovers. vehHandler makes Windows match:
// it recognises a fault of a kernel that ·call called and resumes the
// thread at jitFault, which panics on the goroutine like a Go fault.

// vehHandler is a vectored exception handler, called by Windows with
// the x64 convention (not by Go): CX = *EXCEPTION_POINTERS, result in
// AX. It touches only volatile registers and no stack. A kernel uses no
// stack, so when it faults the top of the stack is the return address
// of ·call's CALL; anything else is not a kernel's fault and goes on to
// the next handler (EXCEPTION_CONTINUE_SEARCH).
TEXT ·vehHandler(SB), NOSPLIT|NOFRAME, $0
	MOVQ 8(CX), DX         // EXCEPTION_POINTERS.ContextRecord
	MOVQ 0x98(DX), AX      // CONTEXT.Rsp
	MOVQ (AX), AX          // the return address on top of the stack
	LEAQ ·call(SB), R8
	SUBQ R8, AX
	CMPQ AX, $64           // inside ·call (a few instructions)?
	JAE  pass
	MOVQ 0(CX), R9         // EXCEPTION_POINTERS.ExceptionRecord
	MOVL 0(R9), R10        // ExceptionCode
	MOVQ R10, 0x78(DX)     // CONTEXT.Rax = code
	XORQ R11, R11
	MOVL 0x18(R9), R8      // NumberParameters
	CMPL R8, $2
	JB   noaddr
	MOVQ 0x28(R9), R11     // ExceptionInformation[1]: the address accessed
noaddr:
	MOVQ R11, 0x90(DX)     // CONTEXT.Rbx = address
	LEAQ ·jitFault(SB), R8
	MOVQ R8, 0xf8(DX)      // CONTEXT.Rip = jitFault
	MOVL $-1, AX           // EXCEPTION_CONTINUE_EXECUTION
	RET
pass:
	XORL AX, AX            // EXCEPTION_CONTINUE_SEARCH
	RET

// vehHandlerAddr holds vehHandler's address for AddVectoredExceptionHandler.
GLOBL ·vehHandlerAddr(SB), RODATA, $8
DATA ·vehHandlerAddr+0(SB)/8, $·vehHandler(SB)

// func jitFault()
//
// Where vehHandler resumes a thread whose kernel faulted, with the stack
// as the kernel left it: as if ·call had called jitFault. AX holds the
// exception code and BX the address, which kernelFault puts in its
// panic.
TEXT ·jitFault(SB), NOSPLIT, $16-0
	NO_LOCAL_POINTERS
	MOVQ AX, 0(SP)
	MOVQ BX, 8(SP)
	CALL ·kernelFault(SB)
	RET

//go:build darwin && (amd64 || arm64)

#include "textflag.h"

// A jump to libSystem's csops, called through the runtime's syscall6
// (policy_darwin.go); the same source assembles for amd64 and arm64.
TEXT libc_csops_trampoline<>(SB), NOSPLIT, $0-0
	JMP libc_csops(SB)

GLOBL ·libc_csops_trampoline_addr(SB), RODATA, $8
DATA ·libc_csops_trampoline_addr(SB)/8, $libc_csops_trampoline<>(SB)

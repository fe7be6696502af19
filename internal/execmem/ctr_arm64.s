//go:build !darwin

#include "textflag.h"

// func readCTR() uint64
//
// CTR_EL0, the cache type register. Linux lets user space read it
// (trapping and emulating the read on parts with errata, and reporting
// the system-wide minimum line sizes where cores differ); macOS does not
// (lines_darwin_arm64.go), hence the build constraint.
TEXT ·readCTR(SB), NOSPLIT, $0-8
	WORD $0xd53b0020       // MRS CTR_EL0, R0
	MOVD R0, ret+0(FP)
	RET

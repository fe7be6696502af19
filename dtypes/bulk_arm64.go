package dtypes

import "unsafe"

// The arm64 vector conversions (bulk_arm64.s), eight elements a step.
// f16 goes through the FPU's FCVTL and FCVTN (round to nearest even from
// FPCR, which Go leaves at its default: no flush to zero, no default NaN,
// so NaN payloads survive, made quiet). bf16 widens with SHLL #16 and
// narrows with the scalar's integer rounding. NEON (ASIMD) is part of
// every arm64 CPU, so there is nothing to detect.

//go:noescape
func bf16ToF32NEON(dst, src unsafe.Pointer, n int)

//go:noescape
func f32ToBF16NEON(dst, src unsafe.Pointer, n int)

//go:noescape
func f16ToF32NEON(dst, src unsafe.Pointer, n int)

//go:noescape
func f32ToF16NEON(dst, src unsafe.Pointer, n int)

// bulkPaths are the vector conversions this CPU runs, best first.
var bulkPaths = []bulkKernels{{name: "neon", block: 8,
	bf16ToF32: bf16ToF32NEON, f32ToBF16: f32ToBF16NEON, f16ToF32: f16ToF32NEON, f32ToF16: f32ToF16NEON}}

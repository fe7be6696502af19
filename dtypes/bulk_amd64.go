package dtypes

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The amd64 vector conversions (bulk_amd64.s). f16 goes through the FPU's
// own conversions, VCVTPH2PS and VCVTPS2PH with round to nearest even:
// exact widening, the scalar's rounding, overflow to Inf, NaN made quiet
// with its upper payload kept, subnormals converted (Go never sets
// MXCSR's DAZ or FTZ). bf16 widens by a zero-extend and a shift, and
// narrows with the scalar's integer rounding on eight or sixteen lanes
// (AVX512_BF16's VCVTNEPS2BF16 would flush subnormals to zero).

//go:noescape
func bf16ToF32AVX2(dst, src unsafe.Pointer, n int)

//go:noescape
func f32ToBF16AVX2(dst, src unsafe.Pointer, n int)

//go:noescape
func f16ToF32AVX2(dst, src unsafe.Pointer, n int)

//go:noescape
func f32ToF16AVX2(dst, src unsafe.Pointer, n int)

//go:noescape
func bf16ToF32AVX512(dst, src unsafe.Pointer, n int)

//go:noescape
func f32ToBF16AVX512(dst, src unsafe.Pointer, n int)

//go:noescape
func f16ToF32AVX512(dst, src unsafe.Pointer, n int)

//go:noescape
func f32ToF16AVX512(dst, src unsafe.Pointer, n int)

// bulkPaths are the vector conversions this CPU runs, best first.
var bulkPaths = func() []bulkKernels {
	var p []bulkKernels
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
		p = append(p, bulkKernels{name: "avx512", block: 32,
			bf16ToF32: bf16ToF32AVX512, f32ToBF16: f32ToBF16AVX512, f16ToF32: f16ToF32AVX512, f32ToF16: f32ToF16AVX512})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasF16C {
		p = append(p, bulkKernels{name: "avx2", block: 16,
			bf16ToF32: bf16ToF32AVX2, f32ToBF16: f32ToBF16AVX2, f16ToF32: f16ToF32AVX2, f32ToF16: f32ToF16AVX2})
	}
	return p
}()

package dtypes

import "unsafe"

// bulkKernel converts n elements (a whole number of blocks) from src to
// dst with vector code.
type bulkKernel func(dst, src unsafe.Pointer, n int)

// bulkKernels is one instruction set's vector conversions; a nil kernel
// leaves that conversion to pure Go.
type bulkKernels struct {
	name                                     string
	block                                    int // elements per kernel step, a power of two
	bf16ToF32, f32ToBF16, f16ToF32, f32ToF16 bulkKernel
}

// bulkPath is the vector code in use: the best of bulkPaths (those the
// CPU runs, best first), or none.
var bulkPath = func() bulkKernels {
	if len(bulkPaths) > 0 {
		return bulkPaths[0]
	}
	return bulkKernels{name: "go", block: 1}
}()

// The bulk conversions run vector code where the CPU has it (bulkPath, in
// bulk_amd64.go and bulk_arm64.go, chosen once from golang.org/x/sys/cpu)
// on whole blocks of elements, and the pure-Go loops below on the rest and
// on every other machine. Both give the scalar conversions' bits.
//
// The pure-Go loops: Go does not vectorise, so these loops do the next
// best things: they read and write f32 values as uint32 bit patterns (no
// moves between the float and integer registers), take four elements per
// iteration from windows the compiler knows the length of (bounds are
// checked once per four elements, not per element), and for f16 test all
// four at once for the common case (normal numbers in and out) and convert
// those with a few integer operations, leaving zeros, subnormals, Inf and
// NaN to the scalar code.
// The bf16 loops are simple enough as they are: their per-element NaN test
// is a branch the predictor never misses on tensor data, so the f16
// loops' four-element grouping, or 64-bit words, have nothing to save
// there (docs/PERFORMANCE-log.md, "dtypes: the pure-Go bulk
// conversions").

// bitsOf views float32 values as their bit patterns: the same memory.
func bitsOf(f []float32) []uint32 {
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(f))), len(f))
}

// BF16ToF32Slice widens bf16 values of src into dst, as many as the shorter
// of the two holds, and returns that count.
func BF16ToF32Slice(dst []float32, src []uint16) int {
	n := min(len(dst), len(src))
	done := 0
	if k := bulkPath.bf16ToF32; k != nil && n >= bulkPath.block {
		done = n &^ (bulkPath.block - 1)
		k(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), done)
	}
	bf16ToF32Go(dst[done:n], src[done:n])
	return n
}

// bf16ToF32Go converts all of src into dst (of the same length) in pure Go.
func bf16ToF32Go(dst []float32, src []uint16) {
	n := len(src)
	d, s := dst[:n], src[:n]
	for i, b := range s {
		d[i] = BF16ToF32(b)
	}
}

// F32ToBF16Slice rounds values of src into dst as bf16, as many as the
// shorter of the two holds, and returns that count.
func F32ToBF16Slice(dst []uint16, src []float32) int {
	n := min(len(dst), len(src))
	done := 0
	if k := bulkPath.f32ToBF16; k != nil && n >= bulkPath.block {
		done = n &^ (bulkPath.block - 1)
		k(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), done)
	}
	f32ToBF16Go(dst[done:n], src[done:n])
	return n
}

// f32ToBF16Go converts all of src into dst (of the same length) in pure Go.
func f32ToBF16Go(dst []uint16, src []float32) {
	n := len(src)
	d, s := dst[:n], src[:n]
	for i, f := range s {
		d[i] = F32ToBF16(f)
	}
}

// F16ToF32Slice widens f16 values of src into dst, as many as the shorter
// of the two holds, and returns that count.
func F16ToF32Slice(dst []float32, src []uint16) int {
	n := min(len(dst), len(src))
	done := 0
	if k := bulkPath.f16ToF32; k != nil && n >= bulkPath.block {
		done = n &^ (bulkPath.block - 1)
		k(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), done)
	}
	f16ToF32Go(dst[done:n], src[done:n])
	return n
}

// f16ToF32Go converts all of src into dst (of the same length) in pure Go.
func f16ToF32Go(dst []float32, src []uint16) {
	n := len(src)
	d, s := bitsOf(dst[:n]), src[:n]
	i := 0
	for ; i <= n-4; i += 4 {
		d4, s4 := d[i:i+4:i+4], s[i:i+4:i+4]
		// x is the magnitude less the smallest normal: all four are
		// normal when the largest x is below the Inf/NaN exponent's.
		x0 := uint32(s4[0]&0x7fff) - 0x0400
		x1 := uint32(s4[1]&0x7fff) - 0x0400
		x2 := uint32(s4[2]&0x7fff) - 0x0400
		x3 := uint32(s4[3]&0x7fff) - 0x0400
		if max(x0, x1, x2, x3) < 0x7c00-0x0400 {
			// The exponent moves from bias 15 to bias 127, as in
			// f16ToF32Bits; x+0x0400 is the magnitude.
			d4[0] = uint32(s4[0]&0x8000)<<16 | (x0<<13 + 113<<23)
			d4[1] = uint32(s4[1]&0x8000)<<16 | (x1<<13 + 113<<23)
			d4[2] = uint32(s4[2]&0x8000)<<16 | (x2<<13 + 113<<23)
			d4[3] = uint32(s4[3]&0x8000)<<16 | (x3<<13 + 113<<23)
		} else {
			for j, h := range s4 {
				d4[j] = f16ToF32Bits(h)
			}
		}
	}
	for ; i < n; i++ {
		d[i] = f16ToF32Bits(s[i])
	}
}

// F32ToF16Slice rounds values of src into dst as f16, as many as the
// shorter of the two holds, and returns that count.
func F32ToF16Slice(dst []uint16, src []float32) int {
	n := min(len(dst), len(src))
	done := 0
	if k := bulkPath.f32ToF16; k != nil && n >= bulkPath.block {
		done = n &^ (bulkPath.block - 1)
		k(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[0]), done)
	}
	f32ToF16Go(dst[done:n], src[done:n])
	return n
}

// f32ToF16Go converts all of src into dst (of the same length) in pure Go.
func f32ToF16Go(dst []uint16, src []float32) {
	n := len(src)
	d, s := dst[:n], bitsOf(src[:n])
	i := 0
	for ; i <= n-4; i += 4 {
		d4, s4 := d[i:i+4:i+4], s[i:i+4:i+4]
		// x is the magnitude less 2^-14: all four are in f16's normal
		// range (before rounding) when the largest x is below 2^16's.
		x0 := s4[0]&0x7fffffff - 0x38800000
		x1 := s4[1]&0x7fffffff - 0x38800000
		x2 := s4[2]&0x7fffffff - 0x38800000
		x3 := s4[3]&0x7fffffff - 0x38800000
		if max(x0, x1, x2, x3) < 0x47800000-0x38800000 {
			// Round to nearest even as f32ToF16Bits does, on x: adding
			// 2^-14 back and moving the exponent to bias 15 is adding
			// 1<<23, 0x0400 after the shift.
			d4[0] = uint16(s4[0]>>16)&0x8000 | uint16((x0+0x0fff+(x0>>13)&1)>>13+0x0400)
			d4[1] = uint16(s4[1]>>16)&0x8000 | uint16((x1+0x0fff+(x1>>13)&1)>>13+0x0400)
			d4[2] = uint16(s4[2]>>16)&0x8000 | uint16((x2+0x0fff+(x2>>13)&1)>>13+0x0400)
			d4[3] = uint16(s4[3]>>16)&0x8000 | uint16((x3+0x0fff+(x3>>13)&1)>>13+0x0400)
		} else {
			for j, u := range s4 {
				d4[j] = f32ToF16Bits(u)
			}
		}
	}
	for ; i < n; i++ {
		d[i] = f32ToF16Bits(s[i])
	}
}

package jit

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
)

// TestDequantConstantsHeld: a fused Dequantize's scale and zero point
// are set once per call (kernelshape.Dequantize, HeldConst), not at each
// load: the kernel of a softmax row of 768 s8 elements, which loads src
// in both sweeps of many vectors, builds the scale's bit pattern once, on
// AVX-512 and AVX2 (a MOVL of the immediate) and NEON (a MOVZ of its low
// half). The code is emitted, not run, so every ISA is checked here.
func TestDequantConstantsHeld(t *testing.T) {
	const scale = float32(0.0371)
	bits := math.Float32bits(scale)
	c := interleaveCase{kind: kernelshape.NormSoftmax, n: 768, rows: []int64{4}, src: dtypes.S8, dst: dtypes.F32}
	pl, _ := c.plan(t)
	n := &kernelshape.Norm{Kind: c.kind, Plan: pl, Dequant: &kernelshape.Dequant{Scale: scale, Zero: 5}}
	for _, isa := range []ISA{AVX512, AVX2, NEON} {
		code := normCode(t, n, isa)
		count := 0
		if isa == NEON {
			// MOVZ Wd/Xd, #(bits & 0xFFFF) (hw 0): the low half first.
			for i := 0; i+4 <= len(code); i += 4 {
				w := binary.LittleEndian.Uint32(code[i:])
				if (w>>23)&0xFF == 0xA5 && (w>>21)&3 == 0 && (w>>5)&0xFFFF == bits&0xFFFF {
					count++
				}
			}
		} else {
			var pat [4]byte
			binary.LittleEndian.PutUint32(pat[:], bits)
			for i := 0; i+4 <= len(code); i++ {
				if [4]byte(code[i:i+4]) == pat {
					count++
				}
			}
		}
		if count != 1 {
			t.Errorf("%v: the scale's bit pattern is built %d times in the kernel, want once", isa, count)
		}
	}
}

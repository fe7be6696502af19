package amd64

import (
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
)

// TestBF16StoreConstantsHeld checks that a fused LayerNorm into bf16
// without AVX512_BF16 (AVX2, AVX-512) builds its rounding's constants
// 0x7fff and 1 at most once, in the prologue, where it holds them, and
// else reads them from memory (roundConst), never building them at each
// store of its map (three in the code here, or on AVX2 a pair and one).
// The results are the other tests' (the constants' values are the same).
func TestBF16StoreConstantsHeld(t *testing.T) {
	for _, o := range []Options{{}, {AVX512: true}} {
		// Rows of three vectors: the map's stores are three in the code
		// (a chunk of two, then one).
		v := int64(8)
		if o.AVX512 {
			v = 16
		}
		n := &kernelshape.Norm{Kind: kernelshape.NormLayer, Plan: normRowsPlan(t, dtypes.F32, dtypes.BF16, 8, 3*v), Epsilon: 1e-5}
		code, err := EmitNorm(n, o)
		if err != nil {
			t.Fatal(err)
		}
		ins := disassemble(t, code.Text)
		for _, c := range []string{"$0x7fff,", "$0x1,"} {
			built := 0
			for _, in := range ins {
				if strings.HasPrefix(in, "mov ") && strings.Contains(in, c) {
					built++
				}
			}
			if built > 1 {
				t.Errorf("avx512=%v: constant %s built %d times, want at most once", o.AVX512, strings.TrimSuffix(c, ","), built)
			}
		}
	}
}

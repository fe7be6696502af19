package amd64

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNormStatInstructions checks, with an independent decoder, how a
// bf16 LayerNorm row of 4096 elements with gamma and beta is taken: the
// statistics sweeps in pair loads (VPSLLD and VPANDD from memory on
// AVX-512, a load, VPSLLD and VPAND on AVX2) where a Zen core's AVX-512
// keeps its VPERMW loads; the squares and the scale and shift in FMAs;
// the row's divisions and root on one lane (VDIVSS, VSQRTSS), none on
// whole vectors.
func TestNormStatInstructions(t *testing.T) {
	gammaBeta := []plan.PostOp{{Kind: ops.Multiply, BinDT: dtypes.F32}, {Kind: ops.Add, BinDT: dtypes.F32}}
	for _, o := range []Options{{AVX512: true, BF16: true}, {AVX512: true}, {AVX512: true, Zen: true}, {}} {
		name := fmt.Sprintf("avx512 %v, bf16 %v, zen %v", o.AVX512, o.BF16, o.Zen)
		n := &kernelshape.Norm{Kind: kernelshape.NormLayer, Plan: normRowsPlan(t, dtypes.BF16, dtypes.BF16, 8, 4096, gammaBeta...), Epsilon: 1e-5}
		code, err := EmitNorm(n, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ins []string
		for _, in := range disassemble(t, code.Text) {
			ins = append(ins, strings.Join(strings.Fields(in), " "))
		}
		text := strings.Join(ins, "\n")
		has := func(s string) bool { return strings.Contains(text, s) }
		pairs := has("vpslld $0x10,(%rsi),%zmm") && has("vpandd (%rsi),%zmm")
		if !o.AVX512 {
			pairs = has("vpslld $0x10,%ymm") && has("vpand %ymm")
		}
		if zen := o.AVX512 && o.Zen; pairs == zen || zen && !has("vpermw") {
			t.Errorf("%s: pair loads %v, VPERMW %v", name, pairs, has("vpermw"))
		}
		for _, want := range []string{"vfmadd231ps", "vfmadd213ps", "vdivss", "vsqrtss", "vbroadcastss"} {
			if !has(want) {
				t.Errorf("%s: no %s", name, want)
			}
		}
		for _, not := range []string{"vdivps", "vsqrtps"} {
			if has(not) {
				t.Errorf("%s: %s on whole vectors", name, not)
			}
		}
	}
}

package amd64

import (
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// normRowsPlan is the plan of a normalization over rows of n elements,
// rows of them, dense, src sdt and dst ddt.
func normRowsPlan(t *testing.T, sdt, ddt dtypes.DataType, rows, n int64) *plan.Plan {
	t.Helper()
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: sdt, DstDT: ddt,
		Dims: []int64{rows, n}, Reduce: []bool{false, true}, SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}})
	if err != nil {
		t.Fatal(err)
	}
	pl.Reduced[0].DstStride = 1
	return pl
}

// TestNormLogRowsPacked checks that AVX-512 takes f32 log-softmax rows
// that fit its registers in groups whose sums' logs are one (four
// VINSERTF32X4 into a register, one log, four VSHUFF32X4 out of it: the
// kernelshape.NormRowPacker primitives), and that softmax, a bf16
// log-softmax, and AVX2 (whose group does not fit its registers) pack
// nothing. The results are TestNormKernelInterleavedRows's (package jit).
func TestNormLogRowsPacked(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	for _, c := range []struct {
		name   string
		kind   kernelshape.NormKind
		dt     dtypes.DataType
		n      int64
		o      Options
		packed bool
	}{
		{"f32 log-softmax of 128, avx512", kernelshape.NormLogSoftmax, f32, 128, Options{AVX512: true}, true},
		{"f32 log-softmax of 13, avx512", kernelshape.NormLogSoftmax, f32, 13, Options{AVX512: true}, true},
		{"f32 log-softmax of 161, avx512 (not held)", kernelshape.NormLogSoftmax, f32, 161, Options{AVX512: true}, false},
		{"f32 softmax of 128, avx512", kernelshape.NormSoftmax, f32, 128, Options{AVX512: true}, false},
		{"bf16 log-softmax of 128, avx512", kernelshape.NormLogSoftmax, bf16, 128, Options{AVX512: true}, false},
		{"f32 log-softmax of 16, avx2", kernelshape.NormLogSoftmax, f32, 16, Options{}, false},
	} {
		code, err := EmitNorm(&kernelshape.Norm{Kind: c.kind, Plan: normRowsPlan(t, c.dt, c.dt, 8, c.n)}, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var ins, outs, logs int
		for _, in := range disassemble(t, code.Text) {
			switch {
			case strings.HasPrefix(in, "vinsertf32x4"):
				ins++
			case strings.HasPrefix(in, "vshuff32x4 $0x0,") || strings.HasPrefix(in, "vshuff32x4 $0x55,") ||
				strings.HasPrefix(in, "vshuff32x4 $0xaa,") || strings.HasPrefix(in, "vshuff32x4 $0xff,"):
				outs++
			case strings.HasPrefix(in, "vgetmantps"):
				logs++
			}
		}
		// The group's one log and the one-row kernel's (the odd rows').
		if packed := ins == 4 && outs == 4 && logs == 2; packed != c.packed || !c.packed && (ins != 0 || outs != 0) {
			t.Errorf("%s: %d inserts, %d block shuffles, %d logs; packed %v", c.name, ins, outs, logs, c.packed)
		}
	}
}

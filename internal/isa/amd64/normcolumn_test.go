package amd64

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNormColumnsStage checks that the column softmax kernel loads the
// stage's address (plan.NormArgs.Stage) where a tile's rows fit the
// stage, and not where they do not or for a norm
// (kernelshape.NormColumnStager), and that its Code says so (Staged), on
// AVX-512 and AVX2.
func TestNormColumnsStage(t *testing.T) {
	for _, o := range []Options{{AVX512: true}, {}} {
		for _, c := range []struct {
			C      int64
			staged bool
		}{{21, true}, {32, true}, {1000, false}} {
			pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
				Dims: []int64{2, c.C, 4096}, Reduce: []bool{false, true, false},
				SrcStrides: []int64{c.C * 4096, 4096, 1}, DstStrides: []int64{c.C * 4096, 4096, 1}})
			if err != nil {
				t.Fatal(err)
			}
			pl.Reduced[0].DstStride = 4096
			for _, k := range []kernelshape.NormKind{kernelshape.NormSoftmax, kernelshape.NormLogSoftmax, kernelshape.NormLayer, kernelshape.NormL2} {
				// Only softmax stages; the norms read src again.
				staged := c.staged && (k == kernelshape.NormSoftmax || k == kernelshape.NormLogSoftmax)
				code, err := EmitNorm(&kernelshape.Norm{Kind: k, Plan: pl, StreamDst: true}, o)
				if err != nil {
					t.Fatal(err)
				}
				loads := 0
				want := fmt.Sprintf("0x%x(%%rdi),%%r", plan.ArgStage)
				for _, in := range disassemble(t, code.Text) {
					if strings.HasPrefix(in, "mov ") && strings.Contains(in, want) {
						loads++
					}
				}
				if (loads == 1) != staged || loads > 1 || code.Staged != staged {
					t.Errorf("avx512 %v, kind %v, %d channels: %d loads of the stage's address, Code.Staged %v, want staged %v",
						o.AVX512, k, c.C, loads, code.Staged, staged)
				}
			}
		}
	}
}

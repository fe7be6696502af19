package arm64

import (
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNormLogRowsPacked checks that NEON takes f32 log-softmax rows
// that fit its registers in groups whose sums' logs are one (four INS
// into the lanes of v0, one log, four DUP out of them: the
// kernelshape.NormRowPacker primitives), that log-softmax rows not held
// and taken two at a time share one log the same way (two of each), and
// that softmax and a bf16 log-softmax of held rows pack nothing. The
// results are TestNormKernelInterleavedRows's (package jit, under qemu).
func TestNormLogRowsPacked(t *testing.T) {
	for _, c := range []struct {
		kind  kernelshape.NormKind
		dt    dtypes.DataType
		n     int64
		packs int // rows whose sums one log takes (0: none packed)
	}{
		{kernelshape.NormLogSoftmax, dtypes.F32, 16, 4},
		{kernelshape.NormLogSoftmax, dtypes.F32, 40, 4},
		{kernelshape.NormLogSoftmax, dtypes.F32, 41, 2}, // not held
		{kernelshape.NormLogSoftmax, dtypes.BF16, 41, 2},
		{kernelshape.NormSoftmax, dtypes.F32, 16, 0},
		{kernelshape.NormSoftmax, dtypes.F32, 41, 0},
		{kernelshape.NormLogSoftmax, dtypes.BF16, 16, 0},
	} {
		pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: c.dt, DstDT: c.dt,
			Dims: []int64{8, c.n}, Reduce: []bool{false, true}, SrcStrides: []int64{c.n, 1}, DstStrides: []int64{c.n, 1}})
		if err != nil {
			t.Fatal(err)
		}
		pl.Reduced[0].DstStride = 1
		code, err := EmitNorm(&kernelshape.Norm{Kind: c.kind, Plan: pl})
		if err != nil {
			t.Fatalf("%v %v %d: %v", c.kind, c.dt, c.n, err)
		}
		var ins, outs int
		for _, in := range disassemble(t, code.Text) {
			switch {
			case strings.HasPrefix(in.text, "mov v0.s[") && strings.HasSuffix(in.text, ".s[0]"):
				ins++
			case strings.HasPrefix(in.text, "dup v") && strings.Contains(in.text, ", v0.s["):
				outs++
			}
		}
		if ins != c.packs || outs != c.packs {
			t.Errorf("%v %v rows of %d: %d inserts into v0, %d duplicates of its lanes; want %d of each", c.kind, c.dt, c.n, ins, outs, c.packs)
		}
	}
}

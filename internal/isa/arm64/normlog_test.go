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
// kernelshape.NormRowPacker primitives), and that softmax and a bf16
// log-softmax pack nothing. The results are
// TestNormKernelInterleavedRows's (package jit, under qemu).
func TestNormLogRowsPacked(t *testing.T) {
	for _, c := range []struct {
		kind   kernelshape.NormKind
		dt     dtypes.DataType
		n      int64
		packed bool
	}{
		{kernelshape.NormLogSoftmax, dtypes.F32, 16, true},
		{kernelshape.NormLogSoftmax, dtypes.F32, 40, true},
		{kernelshape.NormLogSoftmax, dtypes.F32, 41, false}, // not held
		{kernelshape.NormSoftmax, dtypes.F32, 16, false},
		{kernelshape.NormLogSoftmax, dtypes.BF16, 16, false},
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
		if packed := ins == 4 && outs == 4; packed != c.packed || !c.packed && (ins != 0 || outs != 0) {
			t.Errorf("%v %v rows of %d: %d inserts into v0, %d duplicates of its lanes; packed %v", c.kind, c.dt, c.n, ins, outs, c.packed)
		}
	}
}

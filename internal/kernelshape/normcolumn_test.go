package kernelshape

import (
	"errors"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// TestCheckColumns: NormColumns takes every normalization kind (a norm
// with a run-time epsilon) over one
// normalized loop with an Inner loop contiguous in src and dst, every
// operand contiguous or broadcast along it; anything else is refused.
func TestCheckColumns(t *testing.T) {
	// [2, C=5, 17]: Outer 2, the channels, Inner 17.
	good := func() *plan.Plan {
		return &plan.Plan{SrcDT: dtypes.F32, DstDT: dtypes.F32,
			PostOps: []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.ReLU}},
			Outer:   []plan.Loop{{Size: 2, SrcStride: 85, DstStride: 85, BinStrides: []int64{17}}},
			Reduced: []plan.Loop{{Size: 5, SrcStride: 17, DstStride: 17, BinStrides: []int64{0}}},
			Inner:   plan.Loop{Size: 17, SrcStride: 1, DstStride: 1, BinStrides: []int64{1}}, HasInner: true}
	}
	if err := (&Norm{Kind: NormSoftmax, Plan: good()}).CheckColumns(); err != nil {
		t.Fatalf("softmax over columns refused: %v", err)
	}
	if err := (&Norm{Kind: NormLogSoftmax, Plan: good(), InfAsZero: true}).CheckColumns(); err != nil {
		t.Fatalf("log-softmax over columns refused: %v", err)
	}
	for _, k := range []NormKind{NormL2, NormL1, NormRMS, NormLayer} {
		if err := (&Norm{Kind: k, Plan: good(), Epsilon: 1e-12, EpsArg: true, EpsAdded: true}).CheckColumns(); err != nil {
			t.Fatalf("norm %d over columns refused: %v", k, err)
		}
	}
	cases := []struct {
		name string
		n    func() *Norm
		code status.Status
	}{
		{"no kind", func() *Norm { return &Norm{Plan: good()} }, status.InvalidArguments},
		{"an unknown kind", func() *Norm { return &Norm{Kind: NormL1 + 1, Plan: good()} }, status.InvalidArguments},
		{"L2 norm of a residual sum", func() *Norm { return &Norm{Kind: NormL2, Plan: good(), Residual: 2} }, status.InvalidArguments},
		{"run-time eps", func() *Norm { return &Norm{Kind: NormSoftmax, Plan: good(), EpsArg: true} }, status.InvalidArguments},
		{"no Inner", func() *Norm {
			pl := good()
			pl.HasInner = false
			return &Norm{Kind: NormSoftmax, Plan: pl}
		}, status.InvalidArguments},
		{"strided Inner in dst", func() *Norm {
			pl := good()
			pl.Inner.DstStride = 2
			return &Norm{Kind: NormSoftmax, Plan: pl}
		}, status.InvalidArguments},
		{"two normalized loops", func() *Norm {
			pl := good()
			pl.Reduced = append(pl.Reduced, pl.Reduced[0])
			return &Norm{Kind: NormSoftmax, Plan: pl}
		}, status.InvalidArguments},
		{"an operand strided along Inner", func() *Norm {
			pl := good()
			pl.Inner.BinStrides = []int64{3}
			return &Norm{Kind: NormSoftmax, Plan: pl}
		}, status.InvalidArguments},
	}
	for _, c := range cases {
		err := c.n().CheckColumns()
		if !errors.Is(err, c.code) {
			t.Errorf("%s: %v, want %v", c.name, err, c.code)
		}
	}
}

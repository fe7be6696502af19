package kernelshape

import (
	"errors"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// TestCheckDequant: a fused Dequantize goes with an s8 or u8 src (and
// such a src with it), a finite scale and no residual sum.
func TestCheckDequant(t *testing.T) {
	pl := func(src dtypes.DataType, post ...plan.PostOp) *plan.Plan {
		return &plan.Plan{SrcDT: src, DstDT: dtypes.F32, PostOps: post,
			Outer:   []plan.Loop{{Size: 2, SrcStride: 8, DstStride: 8, BinStrides: []int64{8, 8}}},
			Reduced: []plan.Loop{{Size: 8, SrcStride: 1, DstStride: 1, BinStrides: []int64{1, 1}}}}
	}
	dq := &Dequant{Scale: 0.5, Zero: 3}
	for _, dt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		if err := (&Norm{Kind: NormSoftmax, Plan: pl(dt), Dequant: dq}).Check(); err != nil {
			t.Fatalf("%v src with a Dequantize refused: %v", dt, err)
		}
	}
	adds := []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.Add, BinDT: dtypes.F32}}
	bad := []struct {
		name string
		n    *Norm
	}{
		{"s8 src, no dequantize", &Norm{Kind: NormSoftmax, Plan: pl(dtypes.S8)}},
		{"f32 src", &Norm{Kind: NormSoftmax, Plan: pl(dtypes.F32), Dequant: dq}},
		{"NaN scale", &Norm{Kind: NormSoftmax, Plan: pl(dtypes.U8), Dequant: &Dequant{Scale: float32(math.NaN())}}},
		{"infinite scale", &Norm{Kind: NormSoftmax, Plan: pl(dtypes.U8), Dequant: &Dequant{Scale: float32(math.Inf(-1))}}},
		{"residual sum", &Norm{Kind: NormLayer, Plan: pl(dtypes.S8, adds...), Residual: 2, Dequant: dq}},
	}
	for _, c := range bad {
		err := c.n.Check()
		var e *status.Error
		if !errors.As(err, &e) || e.Status != status.InvalidArguments {
			t.Errorf("%s: Check gives %v, want an InvalidArguments error", c.name, err)
		}
	}
}

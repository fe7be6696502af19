package normprog

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// A Dequantize fused before a normalization (Desc.Dequant) makes src s8
// or u8, each element x normalized as (x - Zero) * Scale. The fused
// kernels map each vector as they load it (kernelshape.Dequantize), so
// the integers are read from memory once and no f32 copy is written. As
// passes, each chunk's first pass writes the chunk's dequantized copy to
// scratch (a copy of src with post-ops Add -Zero, Multiply Scale: the
// same f32 operations in the same order as the kernels', so the same
// bits), and the passes after it read that copy from cache, as they read
// a residual sum's.

// validateDequant checks d.Dequant against d: an s8 or u8 src has one,
// which needs such a src, a finite scale and no residual sum.
func validateDequant(d *Desc) error {
	dq := d.Dequant
	switch {
	case dq == nil && d.SrcDT.IsInt8():
		return status.Errorf(status.Unimplemented, "normprog: %s of %v data without a fused Dequantize, want f32, bf16 or f16", d.Kind, d.SrcDT)
	case dq == nil:
		return nil
	case !d.SrcDT.IsInt8():
		return status.Errorf(status.InvalidArguments, "normprog: %s: a fused Dequantize reads s8 or u8, not %v", d.Kind, d.SrcDT)
	case d.Residual != nil:
		return status.Errorf(status.Unimplemented, "normprog: %s: a fused Dequantize before a residual sum", d.Kind)
	}
	if s := float64(dq.Scale); math.IsNaN(s) || math.IsInf(s, 0) {
		return status.Errorf(status.InvalidArguments, "normprog: %s: dequantize scale %v, want a finite value", d.Kind, dq.Scale)
	}
	return nil
}

// addDequant adds, with a fused Dequantize, the pass that writes the
// chunk's dequantized copy into a new scratch (dense strides allStr),
// and returns what the passes after it read as src: that copy, or src
// itself where there is no Dequantize.
func (p *Program) addDequant(dims, allStr []int64, scratch func() ref, add func(*plan.Problem, ref, ref, ...ref) error) (ref, dtypes.DataType, []int64, error) {
	d := &p.d
	if d.Dequant == nil {
		return ref{rSrc, 0}, d.SrcDT, d.SrcStrides, nil
	}
	zero := make([]int64, len(dims))
	var post []plan.PostOp
	var bins []ref
	if d.Dequant.Zero != 0 {
		post = append(post, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: zero})
		bins = append(bins, ref{rDqZero, 0})
	}
	post = append(post, plan.PostOp{Kind: ops.Multiply, BinDT: dtypes.F32, BinStrides: zero})
	bins = append(bins, ref{rDqScale, 0})
	x := scratch()
	err := add(&plan.Problem{Reduction: plan.Copy, SrcDT: d.SrcDT, DstDT: dtypes.F32, Dims: dims, SrcStrides: d.SrcStrides,
		Reduce: make([]bool, len(dims)), DstStrides: allStr, PostOps: post}, ref{rSrc, 0}, x, bins...)
	return x, dtypes.F32, allStr, err
}

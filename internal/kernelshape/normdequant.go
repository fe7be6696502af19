package kernelshape

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/status"
)

// Dequant is a Dequantize fused before a normalization (oneDNN Graph's
// int8 softmax, layernorm and groupnorm patterns): src is s8 or u8
// data, per tensor, and each element x is loaded as (x - Zero) * Scale
// in f32, which the statistics and the map then take as x. x converts
// to f32 exactly; so does Zero, and x - Zero is exact, where |Zero| is
// at most 2^24 - 255 (any zero point in s8's or u8's range, and far
// past it): there the one rounding is the scale's multiply, as in
// oneDNN's reference. A zero point of larger magnitude (an s32 may hold
// one) is rounded to f32 first and x - Zero rounds again, in the fused
// kernels and the passes alike.
type Dequant struct {
	Scale float32
	Zero  int32
}

// checkDequant reports why n's Dequant does not fit it: it needs an s8
// or u8 src, which needs it; no residual sum (formed in float types);
// a finite scale.
func (n *Norm) checkDequant() error {
	int8Src := n.Plan.SrcDT.IsInt8()
	switch {
	case n.Dequant == nil && int8Src:
		return status.Errorf(status.InvalidArguments, "fused normalization: an %v src needs a fused Dequantize", n.Plan.SrcDT)
	case n.Dequant == nil:
		return nil
	case !int8Src:
		return status.Errorf(status.InvalidArguments, "fused normalization: a fused Dequantize reads s8 or u8, not %v", n.Plan.SrcDT)
	case n.Residual != 0:
		return status.Errorf(status.InvalidArguments, "fused normalization: a residual sum and a fused Dequantize do not combine")
	}
	s := float64(n.Dequant.Scale)
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return status.Errorf(status.InvalidArguments, "fused normalization: dequantize scale %v, want a finite value", n.Dequant.Scale)
	}
	return nil
}

// Dequantize maps the f32 lanes of r, integers an emitter's LoadSrc has
// just converted, to (x - dq.Zero) * dq.Scale: an Add of -Zero (left
// out for 0) and a Multiply, as the passes' post-ops of the same
// Dequantize compute them, so both give the same bits. Emitters call it
// from LoadSrc where the kernel has a Dequant. Every element of a row
// takes the same two constants, so they are held constants (HeldConst):
// set once per call, not at each load.
func Dequantize(e NormEmitter, dq *Dequant, r int) {
	mk := e.Mark()
	if dq.Zero != 0 {
		e.Arith(ops.Add, r, e.HeldConst(-float32(dq.Zero)))
	}
	e.Arith(ops.Multiply, r, e.HeldConst(dq.Scale))
	e.Release(mk)
}

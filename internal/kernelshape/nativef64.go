package kernelshape

import (
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The f64 transforms and finalizes of the native kernel: |x| and x*x
// applied to each loaded vector before the combine (ReduceL1, ReduceL2,
// ReduceSumSquare, norm_lp with p 1 and 2, the fused Abs and Square
// pre-ops), and the Lp norms' finalizes before the store: the eps (a max
// or an add), then the square root for p 2 (the root of p 1 is the value
// itself). Which steps run, and in what order, is decided here once; the
// emitters supply the steps (NativeF64Transformer, NativeF64Finalizer) and call
// NativeTransformF64 where they hold a loaded vector and
// NativeFinalizeF64 where they hold a result, all in f64 lanes, before
// an f32 dst's one rounding.

// NativeTransform is what is done to each f64 element before it is
// combined.
type NativeTransform uint8

// The transforms.
const (
	NativeNoTransform NativeTransform = iota
	NativeAbs                         // |x|
	NativeSquare                      // x*x
)

// NativeEps is how an f64 result takes the plan's eps.
type NativeEps uint8

// The eps steps.
const (
	NativeNoEps  NativeEps = iota
	NativeMaxEps           // max(eps, acc), NaN kept
	NativeAddEps           // eps + acc
)

// NativeF64Transformer is what an instruction set supplies for the f64
// transforms: each sets every f64 lane of register r.
type NativeF64Transformer interface {
	F64Abs(r int)    // |r|
	F64Square(r int) // r*r
}

// NativeF64Finalizer is what an instruction set supplies for the f64 Lp
// finalizes: each sets every f64 lane of register r.
type NativeF64Finalizer interface {
	// F64MaxEps sets r to max(eps, r), NaN where r is NaN. r is never
	// -0 (a combine of |x| or x*x: nativeF64Parts), so no order of the
	// zeros is needed.
	F64MaxEps(r int)
	F64AddEps(r int) // eps + r
	F64Sqrt(r int)   // the square root of r (NaN below -0)
}

// NativeTransformF64 applies k's transform to the loaded vector r.
func NativeTransformF64(e NativeF64Transformer, k NativeKind, r int) {
	switch k.Transform {
	case NativeAbs:
		e.F64Abs(r)
	case NativeSquare:
		e.F64Square(r)
	}
}

// FinalizesF64 reports whether k's results take an eps or a root
// (NativeFinalizeF64 emits something).
func (k NativeKind) FinalizesF64() bool { return k.Eps != NativeNoEps || k.Sqrt }

// NativeFinalizeF64 applies k's Lp finalize to the result r: the eps,
// then the root, as plan.Reduction.FinalizeF64 does.
func NativeFinalizeF64(e NativeF64Finalizer, k NativeKind, r int) {
	switch k.Eps {
	case NativeMaxEps:
		e.F64MaxEps(r)
	case NativeAddEps:
		e.F64AddEps(r)
	}
	if k.Sqrt {
		e.F64Sqrt(r)
	}
}

// nativeF64Parts sets k's transform and finalize from r's (transform
// and finalize are r's, or none where the plan's stage skips them), or
// returns the Unimplemented error of a part the native kernel does not
// take: |x|^p for p other than 1 and 2, exp, a root other than 1 and 2,
// log, and an Lp finalize of data not transformed by |x| or x*x (whose
// combine could be -0, where max(eps, acc) must order the zeros).
func nativeF64Parts(r plan.Reduction, transform plan.Transform, finalize plan.Finalize, k *NativeKind) error {
	switch transform {
	case plan.TransformNone:
	case plan.TransformAbs:
		k.Transform = NativeAbs
	case plan.TransformSquare:
		k.Transform = NativeSquare
	default:
		return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (its transform) runs in the interpreter", r)
	}
	switch finalize {
	case plan.FinalizeNone:
	case plan.FinalizeMean:
		k.Mean = true
	case plan.FinalizeRootMaxEps, plan.FinalizeRootAddEps, plan.FinalizeMaxEps, plan.FinalizeAddEps:
		if r.Transform != plan.TransformAbs && r.Transform != plan.TransformSquare {
			return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (an Lp finalize of data not transformed by |x| or x*x) runs in the interpreter", r)
		}
		root := finalize == plan.FinalizeRootMaxEps || finalize == plan.FinalizeRootAddEps
		if root && r.P != 1 && r.P != 2 {
			return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (its root p=%v) runs in the interpreter", r, r.P)
		}
		k.Sqrt = root && r.P == 2
		k.Eps = NativeAddEps
		if finalize == plan.FinalizeRootMaxEps || finalize == plan.FinalizeMaxEps {
			k.Eps = NativeMaxEps
		}
		k.EpsValue = float64(r.Eps)
	default:
		return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (its finalize) runs in the interpreter", r)
	}
	return nil
}

package kernelshape

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The f64 transforms and finalizes of the native kernel: |x|, x*x and
// |x|^p applied to each loaded vector before the combine (ReduceL1,
// ReduceL2, ReduceSumSquare, norm_lp of any p, the fused Abs and Square
// pre-ops), and the Lp norms' finalizes before the store: the eps (a max
// or an add), then the root: the square root for p 2, none for p 1 (the
// value itself), the p-th root for any other p. Which steps run, and in
// what order, is decided here once; the emitters supply the steps
// (NativeF64Transformer, NativeF64Finalizer) and call NativeTransformF64
// where they hold a loaded vector and NativeFinalizeF64 where they hold a
// result, all in f64 lanes, before an f32 dst's one rounding.
//
// |x|^p and the p-th root y^(1/p) of p other than 1 and 2 are
// exp(p*log|x|) and exp(log(y)/p) (a product by the f64 1/p), with
// package vf64's Exp and Log, where the interpreter has math.Pow: both
// give 0 for 0 (exp(-Inf)), +Inf for +Inf, NaN for NaN and 1 for 1, and
// the finite results are within about 2 + |p*log|x|| ulps of math.Pow's
// (an error of log's value, scaled by p, is exp's relative error). A
// root of a negative value is NaN where math.Pow gives the power of an
// integral 1/p: nativeF64Parts refuses the one plan where that value can
// occur (an eps + acc of negative eps with 1/p integral).

// NativeTransform is what is done to each f64 element before it is
// combined.
type NativeTransform uint8

// The transforms.
const (
	NativeNoTransform NativeTransform = iota
	NativeAbs                         // |x|
	NativeSquare                      // x*x
	NativePow                         // |x|^p, as exp(p*log|x|) (NativeKind.P)
	NativeExpShift                    // exp(x - shift): a log-sum-exp's sum pass (NativeKind.LSE)
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
	NativeF64Powers
	NativeF64Shifter
	F64Abs(r int)    // |r|
	F64Square(r int) // r*r
}

// NativeF64Shifter is what an instruction set supplies for a
// log-sum-exp's shift (NativeLSE): each sets every f64 lane of register
// r, with the shift slot NativeLSE.NativeLSEUse chose.
type NativeF64Shifter interface {
	F64SubShift(r int) // r - shift
	F64AddShift(r int) // r + shift
}

// NativeF64Powers are the steps of |x|^p and of the p-th root: each sets
// every f64 lane of register r.
type NativeF64Powers interface {
	F64Exp(r int)            // e^r, package vf64's Exp
	F64Log(r int)            // log(r), package vf64's Log
	F64Mul(r int, c float64) // r*c
}

// NativeF64Finalizer is what an instruction set supplies for the f64 Lp
// finalizes: each sets every f64 lane of register r.
type NativeF64Finalizer interface {
	NativeF64Powers
	NativeF64Shifter
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
	case NativePow:
		e.F64Abs(r)
		e.F64Log(r)
		e.F64Mul(r, k.P)
		e.F64Exp(r)
	case NativeExpShift:
		e.F64SubShift(r)
		e.F64Exp(r)
	}
}

// FinalizesF64 reports whether k's results take an eps or a root
// (NativeFinalizeF64 emits something).
func (k NativeKind) FinalizesF64() bool { return k.Eps != NativeNoEps || k.Sqrt || k.Root || k.LSE }

// NativeFinalizeF64 applies k's Lp finalize to the result r: the eps,
// then the root, as plan.Reduction.FinalizeF64 does; a log-sum-exp's
// log(r) + shift.
func NativeFinalizeF64(e NativeF64Finalizer, k NativeKind, r int) {
	if k.LSE {
		e.F64Log(r)
		e.F64AddShift(r)
		return
	}
	switch k.Eps {
	case NativeMaxEps:
		e.F64MaxEps(r)
	case NativeAddEps:
		e.F64AddEps(r)
	}
	switch {
	case k.Sqrt:
		e.F64Sqrt(r)
	case k.Root:
		e.F64Log(r)
		e.F64Mul(r, k.RootInv)
		e.F64Exp(r)
	}
}

// nativeF64Parts sets k's transform and finalize from r's (transform
// and finalize are r's, or none where the plan's stage skips them), or
// returns the Unimplemented error of a part the native kernel does not
// take: a log-sum-exp in stages (its passes are one kernel's), an Lp finalize of data not
// transformed by |x|, x*x or |x|^p (whose combine could be -0, where
// max(eps, acc) must order the zeros), and the root of eps + acc with
// eps negative and 1/p an integer other than 1 and 2 (whose value below
// 0 math.Pow raises to the power 1/p, where exp(log(y)/p) is NaN).
func nativeF64Parts(r plan.Reduction, stage plan.Stage, transform plan.Transform, finalize plan.Finalize, k *NativeKind) error {
	if r.IsLogSumExp() {
		if stage != 0 {
			return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data in stages (stage %d) runs in the interpreter", r, stage)
		}
		k.LSE, k.Transform = true, NativeExpShift
		return nil
	}
	switch transform {
	case plan.TransformNone:
	case plan.TransformAbs:
		k.Transform = NativeAbs
	case plan.TransformSquare:
		k.Transform = NativeSquare
	case plan.TransformPow:
		k.Transform, k.P = NativePow, float64(r.P)
	default:
		return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (its transform) runs in the interpreter", r)
	}
	switch finalize {
	case plan.FinalizeNone:
	case plan.FinalizeMean:
		k.Mean = true
	case plan.FinalizeRootMaxEps, plan.FinalizeRootAddEps, plan.FinalizeMaxEps, plan.FinalizeAddEps:
		if r.Transform != plan.TransformAbs && r.Transform != plan.TransformSquare && r.Transform != plan.TransformPow {
			return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (an Lp finalize of data not transformed by |x|, x*x or |x|^p) runs in the interpreter", r)
		}
		root := finalize == plan.FinalizeRootMaxEps || finalize == plan.FinalizeRootAddEps
		inv := 1 / float64(r.P)
		if root && r.P != 1 && r.P != 2 && finalize == plan.FinalizeRootAddEps && r.Eps < 0 && inv == math.Trunc(inv) {
			return status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (the root p=%v of eps + acc below 0) runs in the interpreter", r, r.P)
		}
		k.Sqrt = root && r.P == 2
		if root && r.P != 1 && r.P != 2 {
			k.Root, k.RootInv = true, inv
		}
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

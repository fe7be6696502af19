package interp

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
)

// kernel names the typed loops that combine a plan's elements, chosen
// once per Run from its plan.Reduction, so that no loop asks per element
// what to compute. The common reductions have loops of their own over
// widened f32 elements; every other combination (the Pow transform, a
// transform before a product, max or min, the unshifted log-sum-exp's
// exp) is kWide: each run is transformed into float64 first, then
// combined by the combine's loop over float64.
type kernel uint8

const (
	kSum       kernel = iota // + x
	kSumAbs                  // + |x|
	kSumSquare               // + x*x
	kProd                    // * x
	kMax                     // max x (f32 accumulators: exact)
	kMin                     // min x
	kCopy                    // plan.CombineFirst: the one element
	kWide                    // transform into float64, then combine
	kExpShift                // + exp(x - shift): the shifted log-sum-exp's second pass
)

// kernelOf returns the kernel of r.
func kernelOf(r plan.Reduction) kernel {
	if r.Combine == plan.CombineFirst {
		return kCopy
	}
	if r.Transform == plan.TransformNone {
		switch r.Combine {
		case plan.CombineAdd:
			return kSum
		case plan.CombineMul:
			return kProd
		case plan.CombineMax:
			return kMax
		case plan.CombineMin:
			return kMin
		}
	}
	if r.Combine == plan.CombineAdd {
		switch r.Transform {
		case plan.TransformAbs:
			return kSumAbs
		case plan.TransformSquare:
			return kSumSquare
		}
	}
	return kWide
}

// eights reports whether k has loops that take eight rows at a time.
func (k kernel) eights() bool { return k <= kMin }

// identity is what k's accumulators start from; kWide's is its
// reduction's.
func (k kernel) identity(r *plan.Reduction) float64 {
	switch k {
	case kProd:
		return 1
	case kMax:
		return math.Inf(-1)
	case kMin:
		return math.Inf(1)
	case kWide:
		return float64(r.Identity())
	}
	return 0
}

// transform writes r's transform of every element of x into w (as long
// as x), in float64 as plan.Reduction.TransformF64 computes it, and
// returns w.
func transform(r *plan.Reduction, x []float32, w []float64) []float64 {
	w = w[:len(x)]
	switch r.Transform {
	case plan.TransformAbs:
		for i, v := range x {
			w[i] = math.Abs(float64(v))
		}
	case plan.TransformSquare:
		for i, v := range x {
			d := float64(v)
			w[i] = d * d
		}
	case plan.TransformPow:
		p := float64(r.P)
		for i, v := range x {
			w[i] = math.Pow(math.Abs(float64(v)), p)
		}
	case plan.TransformExp:
		for i, v := range x {
			w[i] = math.Exp(float64(v))
		}
	default:
		for i, v := range x {
			w[i] = float64(v)
		}
	}
	return w
}

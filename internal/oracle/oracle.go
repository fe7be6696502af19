// Package oracle is the float64 reference that gdnn's backends are tested
// against: it computes a plan.Problem index by index, walking the
// problem's own dims and strides (not its canonical plan, so that a
// canonicalisation bug shows up too), with the float64 semantics of
// plan.Reduction. It is plain and slow on purpose, and imported by tests
// only.
package oracle

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// Output is one output of a problem before its post-ops.
type Output struct {
	Dst   int64   // dst element offset
	Bins  []int64 // element offset in each binary operand, in post-op order
	Acc   float64 // the combined value: identity, then every transformed element, in float64
	Value float64 // the reduction's result: Acc finalized in float64
	// Mag bounds the magnitude of what was combined: the sum of the
	// transformed elements' magnitudes for sums, their largest for the
	// other combines. Tolerances of f32 sums scale with it.
	Mag float64
	// PowErr is, for a TransformPow sum, the sum of each transformed
	// element's magnitude times 2^-52*|p*log|x||: the error of |x|^p
	// taken as exp(p*log|x|), whose log errs by about 2^-52 of its value
	// (scaled by p, an error relative to the power).
	PowErr float64
	N      int64 // elements reduced into this output
}

// Reduce computes every output of p from src (little-endian elements of
// p.SrcDT), in dst index order (the kept dims' odometer, last dim
// fastest). The dims p reduces have size 1 in dst.
func Reduce(p *plan.Problem, src []byte) []Output {
	rank := len(p.Dims)
	kept, red, n, empty := dimsOf(p)
	if empty {
		return nil
	}
	var binStrides [][]int64
	for _, op := range p.PostOps {
		if op.Kind.IsBinary() {
			binStrides = append(binStrides, op.BinStrides)
		}
	}
	r := p.Reduction
	// An f64 src's sums are exact (exactSum), rounded once: a float64
	// sum would be no better than the code under test.
	wide := plan.IsWide(p.SrcDT)
	var outs []Output
	idx := make([]int64, rank)
	for {
		o := Output{N: n, Bins: make([]int64, len(binStrides))}
		for _, d := range kept {
			o.Dst += idx[d] * p.DstStrides[d]
			for j, s := range binStrides {
				o.Bins[j] += idx[d] * s[d]
			}
		}
		// each calls f with every element reduced into this output.
		each := func(f func(x float64)) {
			if n == 0 {
				return
			}
			ridx := make([]int64, rank)
			copy(ridx, idx)
			for {
				off := int64(0)
				for d := range rank {
					off += ridx[d] * p.SrcStrides[d]
				}
				f(Get(p.SrcDT, src, off))
				if !step(ridx, p.Dims, red) {
					return
				}
			}
		}
		if r.IsLogSumExp() {
			// Two passes, as plan.LogSumExp says (max is NaN when
			// any element is, and so is then the result).
			m := math.Inf(-1)
			each(func(x float64) { m = max(m, x) })
			shift, s := plan.LSEShift(m), 0.0
			if wide {
				shift = math.Max(-math.MaxFloat64, math.Min(math.MaxFloat64, m))
			}
			var ex exactSum
			each(func(x float64) {
				e := math.Exp(x - shift)
				s += e
				if wide {
					ex.add(e)
				}
				o.Mag += e
			})
			if wide {
				s = ex.value(s)
			}
			o.Acc, o.Value = s, shift+plan.LogF64(s)
			outs = append(outs, o)
			if !step(idx, p.Dims, kept) {
				return outs
			}
			continue
		}
		acc := float64(r.Identity())
		var ex exactSum
		each(func(e float64) {
			x := r.TransformF64(e)
			acc = r.CombineF64(acc, x)
			if wide && r.Combine == plan.CombineAdd {
				ex.add(x)
			}
			if r.Combine == plan.CombineAdd {
				o.Mag += math.Abs(x)
				if r.Transform == plan.TransformPow && x != 0 && !math.IsInf(x, 0) {
					o.PowErr += x * math.Ldexp(math.Abs(float64(r.P)*plan.LogF64(math.Abs(e))), -52)
				}
			} else {
				o.Mag = math.Max(o.Mag, math.Abs(x))
			}
		})
		if wide && r.Combine == plan.CombineAdd {
			acc = ex.value(acc)
		}
		o.Acc, o.Value = acc, r.FinalizeF64(acc, n)
		outs = append(outs, o)
		if !step(idx, p.Dims, kept) {
			return outs
		}
	}
}

// dimsOf splits p's dims into the kept and the reduced ones and counts
// the elements n of each output; empty says a kept dim is 0 (no outputs).
func dimsOf(p *plan.Problem) (kept, red []int, n int64, empty bool) {
	n = 1
	for d, size := range p.Dims {
		if p.Reduce[d] {
			red = append(red, d)
			n *= size
		} else {
			kept = append(kept, d)
			empty = empty || size == 0
		}
	}
	return kept, red, n, empty
}

// step advances the odometer idx over the dims listed in which (last
// fastest) and reports false after the last index.
func step(idx, dims []int64, which []int) bool {
	for k := len(which) - 1; k >= 0; k-- {
		d := which[k]
		if idx[d]++; idx[d] < dims[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

// Get reads element i of data type dt from b, widened exactly: an s32
// directly, as f32 cannot hold every s32, the others by dtypes.LoadF32.
func Get(dt dtypes.DataType, b []byte, i int64) float64 {
	if plan.IsWide(dt) {
		return plan.LoadF64(dt, b, i)
	}
	if dt == dtypes.S32 {
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return float64(dtypes.LoadF32(dt, b, i))
}

// Put writes v as element i of data type dt in b, rounded to f32 and then
// to dt by dtypes.StoreF32 (gdnn's rounding of results: to nearest even;
// integers saturate); an f64 dt takes v as it is.
func Put(dt dtypes.DataType, b []byte, i int64, v float64) {
	if plan.IsWide(dt) {
		plan.StoreF64(dt, b, i, v)
		return
	}
	dtypes.StoreF32(dt, b, i, float32(v))
}

// FinalizeF32 is r's finalize as the JIT kernels compute it: in f32, on
// the combined value rounded to f32 (a true f32 division by n for the
// mean, an f32 add or NaN-propagating max of eps, a correctly rounded f32
// square root). Where the combined value is exact in f32 (as the
// emitters' tests arrange), kernels must match it to the bit.
func FinalizeF32(r plan.Reduction, acc float32, n int64) float32 {
	eps := r.Eps
	switch r.Finalize {
	case plan.FinalizeMean:
		return acc / float32(n)
	case plan.FinalizeAddEps, plan.FinalizeRootAddEps:
		acc += eps
	case plan.FinalizeMaxEps, plan.FinalizeRootMaxEps:
		acc = float32(math.Max(float64(eps), float64(acc)))
	}
	if (r.Finalize == plan.FinalizeRootAddEps || r.Finalize == plan.FinalizeRootMaxEps) && r.P == 2 {
		acc = float32(math.Sqrt(float64(acc)))
	}
	return acc
}

// Reductions are the reductions the backends' tests draw from: every
// oneDNN alg (Lp norms at p 1, 2 and 3, with and without eps), fused
// pre-ops (|x| before a max, x*x before a mean) and log-sum-exp. Emitter
// tests keep those with vector code (kernelshape.VectorReduction).
func Reductions() []plan.Reduction {
	return []plan.Reduction{
		plan.AlgSum.Reduction(0, 0),
		plan.AlgMul.Reduction(0, 0),
		plan.AlgMax.Reduction(0, 0),
		plan.AlgMin.Reduction(0, 0),
		plan.AlgNormLpMax.Reduction(2, 0.25),
		plan.AlgNormLpSum.Reduction(1, 0.5),
		plan.AlgNormLpSum.Reduction(2, 0),
		plan.AlgNormLpSum.Reduction(3, 0),
		plan.AlgNormLpPowerPMax.Reduction(1, 3),
		plan.AlgNormLpPowerPSum.Reduction(2, 0.5),
		{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
		{Transform: plan.TransformSquare}, // mean of squares
		plan.LogSumExp,
	}
}

// exactSum adds float64 values exactly (a big.Float wide enough for any
// sum of finite float64 values of up to 2^40 terms); value rounds the sum
// once to float64. A non-finite term makes the float64 sum f of the same
// terms the answer (Inf or NaN, as IEEE says).
type exactSum struct {
	sum     *big.Float
	special bool
}

// exactPrec covers float64's exponents (2^-1074 to 2^1024) and 2^40 terms.
const exactPrec = 1074 + 1024 + 64

func (e *exactSum) add(x float64) {
	if math.IsInf(x, 0) || x != x {
		e.special = true
		return
	}
	if e.sum == nil {
		e.sum = new(big.Float).SetPrec(exactPrec)
	}
	e.sum.Add(e.sum, new(big.Float).SetFloat64(x))
}

// value is the exact sum rounded to nearest even, or f where a term was
// not finite or there were none. An exact 0 is +0, as the sums' +0 start
// makes it.
func (e *exactSum) value(f float64) float64 {
	if e.special || e.sum == nil {
		return f
	}
	v, _ := e.sum.Float64()
	return v
}

// WideTol bounds the error of an f64 sum of o's elements (o.Mag the sum
// of their magnitudes) summed in two levels, as gdnn's interpreter does:
// runs of at most 1024 elements (along a row, in eight chains; across a
// row of outputs, one chain per output over 1024 reduced indices), then
// the runs' sums in one chain. Each addition errs by at most 2^-53 of a
// partial sum, which is at most o.Mag, and an element goes through at
// most 1024 + N/1024 + 8 additions. An intermediate rounding to f32
// (2^-24) exceeds it by about 2^18 for sums shorter than 2^28.
func WideTol(o Output) float64 {
	return math.Ldexp(o.Mag, -53) * (1032 + float64(o.N)/1024)
}

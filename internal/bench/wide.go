package bench

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/shape"
)

// f64 data (a gdnn extension) is reduced in float64 from end to end, so
// its reference is tighter than f32's: sums are compensated (Neumaier's,
// within a rounding or two of the exact sum for the fills' data) and each
// output is allowed what gdnn's two-level float64 sum may err, 2^-53 of
// the sum of magnitudes per addition a value goes through (at most
// 1024 + N/1024 + 8 of them: runs of 1024 elements or reduced indices,
// then the runs' sums), not f32's 2^-24; products 2^-53 per factor; max and min
// exactly; log-sum-exp with the same bound on its sum of exps. The post-op
// chain is carried in float64 (chainOutputs, wide) and the result is
// compared with benchdnn's rule at f64's epsilon, 2^-52 (4e-6 after the
// transcendental post-ops, whose oneDNN formulas differ from gdnn's in the
// last bits).

// u64 is float64's unit roundoff.
const u64 = 1.0 / (1 << 53)

// wideSum is a compensated (Neumaier) sum.
type wideSum struct{ s, c float64 }

func (w *wideSum) add(x float64) {
	t := w.s + x
	if math.Abs(w.s) >= math.Abs(x) {
		w.c += (w.s - t) + x
	} else {
		w.c += (x - t) + w.s
	}
	w.s = t
}

// value is the sum; a non-finite one as float64 adds it.
func (w *wideSum) value() float64 {
	if math.IsInf(w.s, 0) || w.s != w.s {
		return w.s
	}
	return w.s + w.c
}

// wideSumBound bounds gdnn's two-level float64 sum of n terms whose
// magnitudes sum to mag.
func wideSumBound(n int64, mag float64) float64 {
	return u64 * mag * (1032 + float64(n)/1024)
}

// wideReference is reductionReference for f64 src.
func wideReference(b *built, ddt dtypes.DataType) (ref, allow []float64) {
	k := b.fill.kind
	dims, strides := b.srcLT.Dims, b.srcLT.Strides
	_, oview, n, outs := reductionViews(dims, b.reduced)
	ref, errs := make([]float64, outs), make([]float64, outs)
	sums, mag := make([]wideSum, outs), make([]float64, outs)
	shift := make([]float64, outs)
	for i := range ref {
		ref[i], shift[i] = k.identity(), math.Inf(-1)
	}
	if k.lse {
		forEachIndex(dims, [][]int64{strides, oview}, func(_ int64, offs []int64) {
			shift[offs[1]] = max(shift[offs[1]], b.src.get(offs[0]))
		})
		for o, m := range shift {
			shift[o] = math.Max(-math.MaxFloat64, math.Min(math.MaxFloat64, m))
		}
	}
	forEachIndex(dims, [][]int64{strides, oview}, func(_ int64, offs []int64) {
		x, o := b.src.get(offs[0]), offs[1]
		switch {
		case k.lse:
			e := math.Exp(x - shift[o])
			sums[o].add(e)
			mag[o] += e
		case k.combine == combineSum:
			v := k.preOp(x)
			sums[o].add(v)
			mag[o] += math.Abs(v)
		default:
			ref[o] = k.combineF64(ref[o], k.preOp(x))
			if math.Abs(x) != 1 {
				mag[o]++
			}
		}
	})
	for o := range ref {
		switch {
		case k.lse:
			s := sums[o].value()
			ref[o] = shift[o] + math.Log(s)
			errs[o] = wideSumBound(n, mag[o])/s + 4*u64*math.Abs(ref[o])
		case k.combine == combineSum:
			ref[o] = sums[o].value()
			errs[o] = wideSumBound(n, mag[o])
			if k.pre == "square" {
				errs[o] += u64 * mag[o]
			}
			if k.mean {
				ref[o] /= float64(n)
				errs[o] = errs[o]/float64(n) + u64*math.Abs(ref[o])
			}
		case k.combine == combineMul:
			errs[o] = 2 * u64 * (mag[o] + 1) * math.Abs(ref[o])
		}
		if math.IsInf(ref[o], 0) || ref[o] != ref[o] || math.IsInf(errs[o], 0) {
			errs[o] = 0
		}
	}
	dstDims := shape.ReduceDims(dims, b.reduced, true)
	chainOutputs(ref, dstDims, b.chain, false, true, errs)
	trh, floor := threshold(ddt, b.chain)
	allow = make([]float64, len(ref))
	for i, v := range ref {
		allow[i] = trh*max(math.Abs(v), floor) + errs[i] + epsilon(ddt)/2*max(math.Abs(v), minNormal(ddt))
	}
	return ref, allow
}

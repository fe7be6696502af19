package bench

import (
	"fmt"
	"math"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/plan"
)

// combineOp is how a reduction combines its elements.
type combineOp uint8

// The combines. The zero value is the sum.
const (
	combineSum combineOp = iota
	combineMul
	combineMax
	combineMin
)

// kind is what a reduction computes, as gdnnbench's reference sees it: an
// optional per-element pre-op, a combine and, for the mean, a division by
// N. What benchdnn's Lp norms do after the combine (eps, the root) and
// ReduceL2's root are ops of the reference chain (refPostOp), as they are
// graph ops in the partitions gdnnbench builds. The zero value is the sum.
type kind struct {
	name    string // benchdnn's alg name (perf lines)
	pre     string // "", "abs" or "square": applied to each src element first
	combine combineOp
	mean    bool // the sum is divided by N
	// norm: one of benchdnn's Lp norms, whose threshold is 5 epsilons of
	// the dst type (benchdnn's setup_cmp: inexact pow/root).
	norm bool
	// lse: log-sum-exp (Exp -> ReduceSum -> Log in a graph), whose
	// reference is refLogSumExp; pre is "exp".
	lse bool
}

// logSumExpKind is log-sum-exp as the graph driver reads it.
var logSumExpKind = kind{name: "logsumexp", pre: "exp", lse: true}

var meanKind = kind{name: "mean", mean: true}

// identity is the value a reduction of nothing combines to: 0 for sums,
// 1 for products, -Inf for max and +Inf for min (gdnn's semantics; a
// reduced axis of size 0 gives it).
func (k kind) identity() float64 {
	switch k.combine {
	case combineMul:
		return 1
	case combineMax:
		return math.Inf(-1)
	case combineMin:
		return math.Inf(1)
	}
	return 0
}

// pre applies k's pre-op to x.
func (k kind) preOp(x float64) float64 {
	if k.pre == "" {
		return x
	}
	return refEltwise(k.pre, 0, 0, x)
}

// combineF64 combines accumulator a with element x. Max and min propagate
// NaN, as gdnn's do.
func (k kind) combineF64(a, x float64) float64 {
	switch k.combine {
	case combineMul:
		return a * x
	case combineMax:
		if math.IsNaN(a) || math.IsNaN(x) {
			return math.NaN()
		}
		return math.Max(a, x)
	case combineMin:
		if math.IsNaN(a) || math.IsNaN(x) {
			return math.NaN()
		}
		return math.Min(a, x)
	}
	return a + x
}

// algPlan is how gdnnbench builds one of benchdnn's reduction algs from
// gdnn graph ops: an optional pre-op, the reduction op, an optional eps
// op (a binary op with a scalar f32 operand holding eps) and an optional
// square root, then the user's post-ops.
type algPlan struct {
	kind kind
	pre  graph.OpKind // Abs or Square before the reduction; 0 for none
	op   graph.OpKind // the reduction
	eps  string       // "max" or "add": the binary op that applies eps; "" for none
	root bool         // a Sqrt after the eps op
}

// planAlg maps benchdnn's --alg (with --p and --eps) to gdnn ops, following
// benchdnn's reference (ref_reduction.cpp): the Lp norms accumulate
// |x|^p, then norm_lp_max takes root_p(max(acc, eps)), norm_lp_sum
// root_p(acc + eps), norm_lp_power_p_max max(acc, eps) and
// norm_lp_power_p_sum acc + eps. |x|^1 is Abs, |x|^2 Square, the 1st root
// is nothing and the 2nd Sqrt; other p have no gdnn op and are
// UNIMPLEMENTED. As in benchdnn, a norm with p below 1 is an invalid case
// (SKIPPED). A non-empty result state means the problem stops there.
func planAlg(alg string, p, eps float32) (algPlan, result) {
	simple := map[string]algPlan{
		"sum":  {kind: kind{name: "sum"}, op: graph.ReduceSum},
		"mul":  {kind: kind{name: "mul", combine: combineMul}, op: graph.ReduceProd},
		"max":  {kind: kind{name: "max", combine: combineMax}, op: graph.ReduceMax},
		"min":  {kind: kind{name: "min", combine: combineMin}, op: graph.ReduceMin},
		"mean": {kind: meanKind, op: graph.ReduceMean},
		// amax (newer benchdnn): max |x|.
		"amax": {kind: kind{name: "amax", pre: "abs", combine: combineMax}, pre: graph.Abs, op: graph.ReduceMax},
	}
	if ap, ok := simple[alg]; ok {
		return ap, result{}
	}
	norms := map[string]struct {
		eps  string
		root bool
	}{
		"norm_lp_max":         {"max", true},
		"norm_lp_sum":         {"add", true},
		"norm_lp_power_p_max": {"max", false},
		"norm_lp_power_p_sum": {"add", false},
	}
	n, ok := norms[alg]
	if !ok {
		return algPlan{}, result{state: "UNIMPLEMENTED", reason: fmt.Sprintf("gdnnbench does not know --alg=%s", alg)}
	}
	if !(p >= 1) {
		return algPlan{}, result{state: "SKIPPED", reason: fmt.Sprintf("invalid case: --alg=%s needs --p of at least 1, got %s", alg, fmtFloat(p))}
	}
	if math.IsNaN(float64(eps)) || math.IsInf(float64(eps), 0) {
		return algPlan{}, result{state: "UNIMPLEMENTED", reason: fmt.Sprintf("--alg=%s with --eps=%s: gdnn takes a finite eps", alg, fmtFloat(eps))}
	}
	ap := algPlan{kind: kind{name: alg, norm: true}, op: graph.ReduceSum, eps: n.eps}
	switch p {
	case 1:
		ap.pre, ap.kind.pre = graph.Abs, "abs"
	case 2:
		ap.pre, ap.kind.pre = graph.Square, "square"
		ap.root = n.root
	default:
		return algPlan{}, result{state: "UNIMPLEMENTED", reason: fmt.Sprintf("--alg=%s with --p=%s: gdnn computes |x|^p for p=1 and p=2 only (Abs, Square)", alg, fmtFloat(p))}
	}
	return ap, result{}
}

// finalOps returns the graph ops ap puts between the reduction and the
// user's post-ops: the eps op (a binary op whose operand is the scalar
// eps) and the root.
func (ap algPlan) finalOps() []graphPostOp {
	var ops []graphPostOp
	switch ap.eps {
	case "max":
		ops = append(ops, graphPostOp{kind: graph.Maximum, bin: "max", attrs: map[string]any{"auto_broadcast": "numpy"}})
	case "add":
		ops = append(ops, graphPostOp{kind: graph.Add, bin: "add", attrs: map[string]any{"auto_broadcast": "numpy"}})
	}
	if ap.root {
		ops = append(ops, graphPostOp{kind: graph.Sqrt, elt: "sqrt", attrs: map[string]any{}})
	}
	return ops
}

// kindOfOp returns the kind of a gdnn reduction op kind, whether the op
// takes a square root after it (ReduceL2), and whether k is a reduction.
func kindOfOp(k graph.OpKind) (kind, bool, bool) {
	switch k {
	case graph.ReduceSum:
		return kind{name: "sum"}, false, true
	case graph.ReduceProd:
		return kind{name: "mul", combine: combineMul}, false, true
	case graph.ReduceMax:
		return kind{name: "max", combine: combineMax}, false, true
	case graph.ReduceMin:
		return kind{name: "min", combine: combineMin}, false, true
	case graph.ReduceMean:
		return meanKind, false, true
	case graph.ReduceL1:
		return kind{name: "norm_lp_power_p_sum", pre: "abs", norm: true}, false, true
	case graph.ReduceL2:
		return kind{name: "norm_lp_sum", pre: "square", norm: true}, true, true
	}
	return kind{}, false, false
}

// refReduce reduces src (read through its strides, widened exactly) in
// float64 as k says. Per output, in dense row-major order over the
// keep-dims dst: acc, the combined value (before the mean's division),
// and mag, what the random fill's error bound reads: for sums the sum of
// the magnitudes of the pre-op's results, for products the number of
// factors other than +-1. n is the number of elements per output.
func refReduce(src buffer, dims, strides []int64, reduced []bool, k kind) (acc, mag []float64, n int64) {
	_, oview, n, outs := reductionViews(dims, reduced)
	acc, mag = make([]float64, outs), make([]float64, outs)
	id := k.identity()
	for i := range acc {
		acc[i] = id
	}
	forEachIndex(dims, [][]int64{strides, oview}, func(_ int64, offs []int64) {
		v := k.preOp(src.get(offs[0]))
		o := offs[1]
		acc[o] = k.combineF64(acc[o], v)
		switch k.combine {
		case combineSum:
			mag[o] += math.Abs(v)
		case combineMul:
			if math.Abs(v) != 1 {
				mag[o]++
			}
		}
	})
	return acc, mag, n
}

// gamma is the classic bound on the relative error of m f32 roundings:
// m*u/(1-m*u), u = 2^-24. From m*u = 1/2 on it is (1+u)^m - 1, the bound
// that one stands in for (and exceeds), which stays finite where m*u/(1-m*u)
// does not: an infinite bound would accept any result.
func gamma(m float64) float64 {
	l := m * math32u
	if l >= 0.5 {
		return math.Expm1(m * math.Log1p(math32u))
	}
	return l / (1 - l)
}

// reduceValues turns refReduce's results into the reduction's values and,
// for the random fill (errs non-nil), a bound on the error of gdnn's f32
// computation of each. With the exact fill every sum and product is exact
// in f32 (fillSrc's promise) and the mean is one f32 division.
func reduceValues(k kind, acc, mag []float64, n int64, exact bool) (vals, errs []float64) {
	vals = make([]float64, len(acc))
	if !exact {
		errs = make([]float64, len(acc))
	}
	for i, a := range acc {
		vals[i] = a
		if k.mean {
			if exact {
				vals[i] = float64(float32(a) / float32(n))
			} else {
				vals[i] = a / float64(n)
			}
		}
		if exact {
			continue
		}
		switch k.combine {
		case combineSum:
			e := sumBound(n, mag[i])
			if k.pre == "square" {
				e += math32u * mag[i] // each square rounds once
			}
			if k.mean {
				e = e/float64(n) + math32u*abs(vals[i])
			}
			errs[i] = e
		case combineMul:
			// A product rounds only where two partial products that are
			// not powers of two meet: fewer times than it has such factors.
			errs[i] = gamma(mag[i]+1) * abs(a)
		}
	}
	return vals, errs
}

// refLogSumExp computes log-sum-exp over the reduced dims of src in
// float64, m + log(sum(exp(x - m))) with m each output's largest element
// clamped to the finite f32 range as gdnn's is (plan.LSEShift), in dense
// row-major order over the keep-dims dst, with a bound on the error of
// gdnn's f32 computation of each finite result. A NaN gives NaN, a +Inf
// +Inf, and an output whose elements are all -Inf (or none) -Inf.
//
// gdnn computes either log(sum(exp(x))) with its exp for sums, each term
// within (4 + 1.25|x|) f32 ulps, or the shifted form, whose x - m rounds
// to within |x - m| ulps and whose exp is within an ulp; then an f32 sum
// of positive terms and a log within an ulp. With X the largest |x| of
// the output (so |x - m| <= 2X), both stay within
// (8 + 2.5X) u + gamma(accChain(n)) relative in the sum, plus a few
// roundings of the result and of the log of the shifted sum.
func refLogSumExp(src buffer, dims, strides []int64, reduced []bool) (vals, errs []float64) {
	_, oview, n, outs := reductionViews(dims, reduced)
	shift, big, sum := make([]float64, outs), make([]float64, outs), make([]float64, outs)
	for i := range shift {
		shift[i] = math.Inf(-1)
	}
	forEachIndex(dims, [][]int64{strides, oview}, func(_ int64, offs []int64) {
		x, o := src.get(offs[0]), offs[1]
		shift[o] = max(shift[o], x) // NaN if any x is
		big[o] = max(big[o], abs(x))
	})
	for o, m := range shift {
		shift[o] = plan.LSEShift(m) // gdnn's shift: -Inf rows give -Inf, a +Inf +Inf
	}
	forEachIndex(dims, [][]int64{strides, oview}, func(_ int64, offs []int64) {
		sum[offs[1]] += math.Exp(src.get(offs[0]) - shift[offs[1]])
	})
	vals, errs = make([]float64, outs), make([]float64, outs)
	for o, m := range shift {
		logS := math.Log(sum[o])
		vals[o] = m + logS
		if !math.IsInf(vals[o], 0) && !math.IsNaN(vals[o]) {
			rel := (8+2.5*big[o])*math32u + gamma(accChain(n))
			errs[o] = 1.01*rel + 4*math32u*(abs(vals[o])+abs(logS))
		}
	}
	return vals, errs
}

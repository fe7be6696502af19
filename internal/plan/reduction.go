package plan

import (
	"fmt"
	"math"
	"strconv"

	"github.com/gdnn/gdnn/internal/status"
)

// Reduction says what a reduction computes, in the four parts of oneDNN's
// reference (init_acc, accumulate, finalize): a per-element Transform, a
// Combine (whose neutral element the accumulators start from) and a
// Finalize applied to the combined value before the post-ops. Emitters
// and the interpreter read these parts; none has a code path per op.
//
// The zero value is the mean, gdnn's first reduction: no transform, add,
// divide by the plan's Div. The oneDNN algs, ONNX's Reduce* ops and the
// fused pre-ops (Abs -> ReduceMax, Square -> ReduceSum) are all
// combinations of the parts; Alg.Reduction spells oneDNN's.
type Reduction struct {
	Transform Transform
	Combine   Combine
	Finalize  Finalize
	P         float32 // TransformPow's power and the finalize's root (Lp norms)
	Eps       float32 // the finalize's eps (Lp norms)
}

// Transform is what is done to each src element before it is combined.
type Transform uint8

// The transforms.
const (
	TransformNone    Transform = iota
	TransformAbs               // |x|
	TransformSquare            // x*x
	TransformPow               // |x|^P (P other than 1 and 2: see Alg.Reduction)
	TransformExp               // exp(x - max): log-sum-exp only (see LogSumExp)
	TransformNonzero           // 1 where x != 0, else 0: the logical reductions' truth (exact data only)
	transformCount
)

// Combine is how an accumulator takes in an element.
type Combine uint8

// The combines. Max and Min give NaN when either side is NaN and order -0
// below +0, so no result depends on the order of the elements.
// CombineFirst keeps the one element of a plan that reduces nothing (the
// post-op pass over results computed earlier).
const (
	CombineAdd Combine = iota
	CombineMul
	CombineMax
	CombineMin
	CombineFirst
	// The bitwise combines of integer data (exact data only): ReduceBitwiseAnd,
	// Or and Xor, and after TransformNonzero the logical ReduceLogicalAnd,
	// Or and Xor.
	CombineAnd
	CombineOr
	CombineXor
	combineCount
)

// Finalize is what turns a combined value into the reduction's result.
type Finalize uint8

// The finalizes. The Lp forms read P (the root) and Eps.
const (
	FinalizeMean       Finalize = iota // acc / Div, a true division
	FinalizeNone                       // acc
	FinalizeRootMaxEps                 // root_P(max(eps, acc))
	FinalizeRootAddEps                 // root_P(eps + acc)
	FinalizeMaxEps                     // max(eps, acc)
	FinalizeAddEps                     // eps + acc
	FinalizeLog                        // max + log(acc): log-sum-exp only (see LogSumExp)
	finalizeCount
)

// Stage says which parts of its reduction a plan applies, when the
// runtime splits one reduction into several plans (two stages, post-op
// pass). The zero value is a whole reduction.
type Stage uint8

// Stage flags.
const (
	// SkipTransform: src holds partial results of an earlier stage,
	// already transformed: they are only combined.
	SkipTransform Stage = 1 << iota
	// SkipFinalize: dst takes partial results for a later stage: no
	// finalize, no post-ops, f32 dst.
	SkipFinalize
	// Unshifted: a log-sum-exp takes its parts as they stand, exp(x) of
	// each element and the log of their sum, with no shift by the
	// largest element: one pass over src, and stages like a sum's. Its
	// result is as accurate as the shifted one only while no exp
	// overflows and the sum stays well within the normal numbers
	// (UnshiftedExact), so the runtime checks each one and recomputes the
	// others shifted (jit's lse.go).
	Unshifted
)

// Alg is one of oneDNN's reduction algs (benchdnn's --alg).
type Alg uint8

// oneDNN's nine reduction algs.
const (
	AlgSum             Alg = iota // sum
	AlgMul                        // product
	AlgMax                        // max
	AlgMin                        // min
	AlgMean                       // sum / N
	AlgNormLpMax                  // root_p(max(eps, sum |x|^p))
	AlgNormLpSum                  // root_p(eps + sum |x|^p)
	AlgNormLpPowerPMax            // max(eps, sum |x|^p)
	AlgNormLpPowerPSum            // eps + sum |x|^p
	algCount
)

// algNames are benchdnn's --alg spellings.
var algNames = [...]string{
	AlgSum:             "sum",
	AlgMul:             "mul",
	AlgMax:             "max",
	AlgMin:             "min",
	AlgMean:            "mean",
	AlgNormLpMax:       "norm_lp_max",
	AlgNormLpSum:       "norm_lp_sum",
	AlgNormLpPowerPMax: "norm_lp_power_p_max",
	AlgNormLpPowerPSum: "norm_lp_power_p_sum",
}

// String returns benchdnn's name for a ("sum", "norm_lp_max", ...).
func (a Alg) String() string {
	if a >= algCount {
		return fmt.Sprintf("Alg(%d)", int(a))
	}
	return algNames[a]
}

// ParseAlg returns the alg benchdnn spells name.
func ParseAlg(name string) (Alg, bool) {
	for a := AlgSum; a < algCount; a++ {
		if algNames[a] == name {
			return a, true
		}
	}
	return 0, false
}

// graphReductions are the graph's Reduce* ops (oneDNN Graph's, and
// gdnn's bitwise and logical extensions), by op kind name, as the
// kernels compute them: the one table the graph's schemas, the
// partitioner and gdnnbench's graph driver read.
var graphReductions = map[string]Reduction{
	"ReduceMean": AlgMean.Reduction(0, 0), "ReduceSum": AlgSum.Reduction(0, 0), "ReduceProd": AlgMul.Reduction(0, 0),
	"ReduceMax": AlgMax.Reduction(0, 0), "ReduceMin": AlgMin.Reduction(0, 0),
	// ReduceL1 is a sum of |x|, with no Lp finalize to run.
	"ReduceL1":         {Transform: TransformAbs, Combine: CombineAdd, Finalize: FinalizeNone},
	"ReduceL2":         AlgNormLpSum.Reduction(2, 0),
	"ReduceBitwiseAnd": Bitwise(CombineAnd), "ReduceBitwiseOr": Bitwise(CombineOr), "ReduceBitwiseXor": Bitwise(CombineXor),
	"ReduceLogicalAnd": LogicalAnd, "ReduceLogicalOr": LogicalOr, "ReduceLogicalXor": LogicalXor,
}

// OfGraphOp returns the reduction the graph op kind named kind
// ("ReduceSum", ...) computes, or false if it is no reduction.
func OfGraphOp(kind string) (Reduction, bool) {
	r, ok := graphReductions[kind]
	return r, ok
}

// IsLp reports whether a is one of the Lp norms (which read p and eps).
func (a Alg) IsLp() bool { return a >= AlgNormLpMax && a <= AlgNormLpPowerPSum }

// Reduction returns the parts of alg a; p and eps matter to the Lp norms
// only. |x|^p is spelled TransformAbs for p 1 and TransformSquare for p 2,
// which the emitters have vector code for.
func (a Alg) Reduction(p, eps float32) Reduction {
	switch a {
	case AlgSum:
		return Reduction{Finalize: FinalizeNone}
	case AlgMul:
		return Reduction{Combine: CombineMul, Finalize: FinalizeNone}
	case AlgMax:
		return Reduction{Combine: CombineMax, Finalize: FinalizeNone}
	case AlgMin:
		return Reduction{Combine: CombineMin, Finalize: FinalizeNone}
	case AlgMean:
		return Reduction{}
	}
	r := Reduction{Transform: TransformPow, P: p, Eps: eps}
	switch p {
	case 1:
		r.Transform = TransformAbs
	case 2:
		r.Transform = TransformSquare
	}
	switch a {
	case AlgNormLpMax:
		r.Finalize = FinalizeRootMaxEps
	case AlgNormLpSum:
		r.Finalize = FinalizeRootAddEps
	case AlgNormLpPowerPMax:
		r.Finalize = FinalizeMaxEps
	default:
		r.Finalize = FinalizeAddEps
	}
	return r
}

// OfOne returns the reduction that gives r's result over one element
// with no f32 overflow or underflow on the way: the L2 norm of x with no
// eps to add (or a floor of at most 0) is |x|, where f32's x*x would be
// +Inf past 1.8e19, subnormal (fewer bits) below 1.1e-19 and 0 below
// 2.6e-23 before the square root. The log-sum-exp of x is its shifted
// form's log(exp(x - x)) + x = +0 + x exactly, a sum of one (-0 gives +0),
// where an exp and a log in f32 could be an ulp off. Other reductions
// come back as they are.
func (r Reduction) OfOne() Reduction {
	if r.IsLogSumExp() {
		return AlgSum.Reduction(0, 0)
	}
	if r.Transform != TransformSquare || r.Combine != CombineAdd || r.P != 2 {
		return r
	}
	if r.Finalize == FinalizeRootAddEps && r.Eps == 0 || r.Finalize == FinalizeRootMaxEps && r.Eps <= 0 {
		return Reduction{Transform: TransformAbs, Finalize: FinalizeNone}
	}
	return r
}

// Copy is the Reduction of a plan that reduces nothing: dst = src (then
// the post-ops).
var Copy = Reduction{Combine: CombineFirst, Finalize: FinalizeNone}

// LogSumExp is log(sum(exp(x))) over the reduced elements, computed
// stably: with m the largest element (clamped to the finite f32 range),
// m + log(sum(exp(x - m))). Every term is at most 1 and the largest is 1,
// so nothing overflows: a row of 1000s gives 1000 + log(n). An empty
// reduction gives -Inf, as does a row of -Inf; NaN wins. It needs the
// maximum before the sum, so it is never split into stages; the JIT
// runtime runs it as a max, an exp pass and a sum (see jit's lse.go), and
// the interpreter in two passes per output.
var LogSumExp = Reduction{Transform: TransformExp, Finalize: FinalizeLog}

// IsLogSumExp reports whether r is LogSumExp.
func (r Reduction) IsLogSumExp() bool { return r == LogSumExp }

// ShiftedLogSumExp reports whether pl is a log-sum-exp to be computed
// whole, each output shifted by its largest element, rather than an
// Unshifted pass.
func (pl *Plan) ShiftedLogSumExp() bool { return pl.IsLogSumExp() && pl.Stage&Unshifted == 0 }

// UnshiftedFloor is the least result of an Unshifted log-sum-exp of n > 0
// elements that is as accurate as the shifted one: log(n*2^-95). A sum s
// at least n*2^-95 has a largest term of at least s/n, a normal number,
// and the terms the exp for sums takes below its range (each at most
// e^-87 < 2^-125, or 0: package vexp's SumLoBits), at most n*2^-125 in
// all, are below 2^-30 of s.
func UnshiftedFloor(n int64) float32 {
	return float32(math.Log(float64(max(n, 1))) - 95*math.Ln2)
}

// UnshiftedExact reports whether v, an Unshifted log-sum-exp's result in
// f32, is as accurate as the shifted one (within the error of the f32
// sum and of the exp for sums, vexp.SumError), given floor
// (UnshiftedFloor of its n): a NaN (some element was NaN: the result is NaN either way), or a
// finite value at least floor. +Inf (some exp or the sum overflowed),
// -Inf and smaller values (the sum underflowed) need the shift.
func UnshiftedExact(v, floor float32) bool {
	return v != v || v >= floor && v <= math.MaxFloat32
}

// IsMean reports whether r is the mean (the zero Reduction).
func (r Reduction) IsMean() bool { return r == Reduction{} }

// readsP and readsEps report whether r uses P and Eps.
func (r Reduction) readsP() bool {
	return r.Transform == TransformPow || r.Finalize == FinalizeRootMaxEps || r.Finalize == FinalizeRootAddEps
}

func (r Reduction) readsEps() bool {
	return r.Finalize >= FinalizeRootMaxEps && r.Finalize <= FinalizeAddEps
}

// Identity is the value an accumulator starts from: the combine's neutral
// element, and so the result of reducing nothing (before the finalize).
// Sums start at +0, so a sum is never -0. It is the float data's; exact
// data's identities are the interpreter's (the bitwise combines have none
// in f32).
func (r Reduction) Identity() float32 {
	switch r.Combine {
	case CombineMul:
		return 1
	case CombineMax:
		return float32(math.Inf(-1))
	case CombineMin:
		return float32(math.Inf(1))
	}
	return 0
}

// Validate checks every part and, where they are read, p and eps.
func (r Reduction) Validate() error {
	if r.Transform >= transformCount || r.Combine >= combineCount || r.Finalize >= finalizeCount {
		return status.Errorf(status.InvalidArguments, "plan: unknown reduction parts (transform %d, combine %d, finalize %d)",
			int(r.Transform), int(r.Combine), int(r.Finalize))
	}
	if r.Combine == CombineFirst && (r.Transform != TransformNone || r.Finalize != FinalizeNone) {
		return status.Errorf(status.InvalidArguments, "plan: a copy has no transform and no finalize")
	}
	if (r.Transform == TransformExp || r.Finalize == FinalizeLog) && !r.IsLogSumExp() {
		return status.Errorf(status.InvalidArguments, "plan: exp and log make a log-sum-exp only as a whole (%v)", r)
	}
	if r.Finalize == FinalizeMean && r.Combine != CombineAdd {
		return status.Errorf(status.InvalidArguments, "plan: a mean divides a sum, not a %s", combineNames[r.Combine])
	}
	if p := float64(r.P); r.readsP() && (math.IsNaN(p) || math.IsInf(p, 0) || p <= 0) {
		return status.Errorf(status.InvalidArguments, "plan: reduction %v needs a finite p > 0, got %v", r, r.P)
	}
	if e := float64(r.Eps); r.readsEps() && (math.IsNaN(e) || math.IsInf(e, 0)) {
		return status.Errorf(status.InvalidArguments, "plan: reduction %v needs a finite eps, got %v", r, r.Eps)
	}
	return nil
}

// The float64 semantics of every part: the interpreter computes with
// these, and tests use them as the reference. Emitters match them in f32.

// TransformF64 applies r's per-element transform to x.
func (r Reduction) TransformF64(x float64) float64 {
	switch r.Transform {
	case TransformAbs:
		return math.Abs(x)
	case TransformSquare:
		return x * x
	case TransformPow:
		return PowF64(math.Abs(x), float64(r.P))
	case TransformExp:
		return math.Exp(x) // the shift is the caller's: see LogSumExp
	}
	return x
}

// CombineF64 combines accumulator a with the (transformed) element x.
func (r Reduction) CombineF64(a, x float64) float64 {
	switch r.Combine {
	case CombineMul:
		return a * x
	case CombineMax:
		switch {
		case a != a:
			return a
		case x > a, x != x:
			return x
		case x < a:
			return a
		case x == 0 && !math.Signbit(x):
			return x // +0 above -0
		}
		return a
	case CombineMin:
		switch {
		case a != a:
			return a
		case x < a, x != x:
			return x
		case x > a:
			return a
		case x == 0 && math.Signbit(x):
			return x // -0 below +0
		}
		return a
	case CombineFirst:
		return x
	}
	return a + x
}

// FinalizeF64 turns the combined value acc into r's result; div is the
// plan's Div (the mean divides by it: 0 gives NaN). Stages that skip the
// finalize do not call it.
func (r Reduction) FinalizeF64(acc float64, div int64) float64 {
	eps := float64(r.Eps)
	switch r.Finalize {
	case FinalizeMean:
		return acc / float64(div)
	case FinalizeRootMaxEps:
		return r.root(math.Max(eps, acc))
	case FinalizeRootAddEps:
		return r.root(eps + acc)
	case FinalizeMaxEps:
		return math.Max(eps, acc)
	case FinalizeAddEps:
		return eps + acc
	case FinalizeLog:
		return LogF64(acc) // the shift is the caller's: see LogSumExp
	}
	return acc
}

// LSEShift returns the shift log-sum-exp subtracts before exp and adds
// after log, from the largest element m: m clamped to the finite f32
// range, so that a row of -Inf (or an empty one) is exp(-Inf) = 0 terms
// giving log(0) = -Inf, and a row with +Inf gives +Inf, never Inf - Inf.
// NaN stays NaN.
func LSEShift(m float64) float64 {
	const big = math.MaxFloat32
	return math.Max(-big, math.Min(big, m))
}

// root is the P-th root.
func (r Reduction) root(x float64) float64 {
	switch r.P {
	case 1:
		return x
	case 2:
		return math.Sqrt(x)
	}
	return PowF64(x, 1/float64(r.P))
}

var (
	transformNames = [...]string{"", "abs", "square", "pow", "exp", "nonzero"}
	combineNames   = [...]string{"sum", "mul", "max", "min", "copy", "and", "or", "xor"}
	finalizeNames  = [...]string{"mean", "", "root_max_eps", "root_add_eps", "max_eps", "add_eps", "log"}
)

// String describes r for people and plan keys: "mean", "sum", "max",
// "abs>max", "square>sum>root_add_eps(p=2,eps=0)"; the mean's parts are
// left out, and p and eps appear where they are read.
func (r Reduction) String() string {
	if r.Transform >= transformCount || r.Combine >= combineCount || r.Finalize >= finalizeCount {
		return fmt.Sprintf("Reduction(%d,%d,%d)", int(r.Transform), int(r.Combine), int(r.Finalize))
	}
	if r.IsMean() {
		return "mean"
	}
	s := combineNames[r.Combine]
	if t := transformNames[r.Transform]; t != "" {
		s = t + ">" + s
	}
	if f := finalizeNames[r.Finalize]; f != "" {
		s += ">" + f
	}
	var args []byte
	if r.readsP() {
		args = strconv.AppendFloat(append(args, "p="...), float64(r.P), 'g', -1, 32)
	}
	if r.readsEps() {
		if len(args) > 0 {
			args = append(args, ',')
		}
		args = strconv.AppendFloat(append(args, "eps="...), float64(r.Eps), 'g', -1, 32)
	}
	if len(args) > 0 {
		s += "(" + string(args) + ")"
	}
	return s
}

package partition

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/shape"
)

// This file holds the fuzz targets of the public compile-and-execute API
// and the checker they share with the hostile-input and soak tests: an
// independent float64 reference that, instead of a single value, bounds
// each output by an interval wide enough for every legal f32 evaluation
// order and narrow enough to catch a dropped element, a misplaced stride
// or a wrong post-op.

// fop is one fused post-op of a test problem, described as the graph op
// the test adds (so the reference never sees the library's own post-op
// descriptions).
type fop struct {
	kind        graph.OpKind
	alpha, beta float32 // the op's f32 attributes (see addFop)
	mode        string  // GELU only
	operand     *buffer // binary ops: the second operand, broadcast numpy style
	operandLeft bool    // the operand is the op's first input (commutative ops only)
}

// fusedKinds lists every post-op the fused kernel takes.
var fusedKinds = []graph.OpKind{
	graph.Abs, graph.Clamp, graph.Elu, graph.Exp, graph.GELU, graph.HardSigmoid, graph.HardSwish,
	graph.LeakyReLU, graph.Log, graph.Mish, graph.Pow, graph.Sigmoid, graph.SoftPlus, graph.ReLU, graph.Round,
	graph.Sqrt, graph.Square, graph.Tanh,
	graph.Add, graph.Multiply, graph.Maximum, graph.Minimum, graph.Divide, graph.Subtract,
}

// redKind is the reduction of a test problem as the graph spells it: the
// Reduce* op and the Abs or Square pre-op fused before it (0: none). The
// zero value is a plain ReduceMean.
type redKind struct {
	red, pre graph.OpKind
}

// op returns the reduction op kind (ReduceMean for the zero value).
func (k redKind) op() graph.OpKind {
	if k.red == 0 {
		return graph.ReduceMean
	}
	return k.red
}

func (k redKind) String() string {
	if k.pre != 0 {
		return k.pre.String() + "->" + k.op().String()
	}
	return k.op().String()
}

// genKinds are the reductions the generators draw from: every Reduce*
// op, and every pre-op fusion.
var genKinds = []redKind{
	{}, {red: graph.ReduceSum}, {red: graph.ReduceMax}, {red: graph.ReduceMin}, {red: graph.ReduceProd},
	{red: graph.ReduceL1}, {red: graph.ReduceL2},
	{graph.ReduceSum, graph.Square}, {graph.ReduceMean, graph.Square},
	{graph.ReduceSum, graph.Abs}, {graph.ReduceMax, graph.Abs}, {graph.ReduceMin, graph.Abs}, {graph.ReduceMean, graph.Abs},
}

// addFop adds op id reading cur (and, for a binary op, operand) and
// writing tensor outID of data type dt, and returns that output.
func addFop(g *graph.Graph, id uint64, cur graph.LogicalTensor, f fop, operand graph.LogicalTensor, outID uint64, dt dtypes.DataType) (graph.LogicalTensor, error) {
	out := graph.NewLogicalTensorAny(outID, dt, nil)
	op := graph.NewOp(id, f.kind, "")
	if f.kind.IsBinary() {
		if f.operandLeft {
			op.AddInput(operand).AddInput(cur)
		} else {
			op.AddInput(cur).AddInput(operand)
		}
	} else {
		op.AddInput(cur)
	}
	op.AddOutput(out)
	switch f.kind {
	case graph.Clamp:
		op.SetAttr("min", f.alpha).SetAttr("max", f.beta)
	case graph.Elu, graph.LeakyReLU:
		op.SetAttr("alpha", f.alpha)
	case graph.HardSigmoid:
		op.SetAttr("alpha", f.alpha).SetAttr("beta", f.beta)
	case graph.SoftPlus, graph.Pow:
		op.SetAttr("beta", f.beta)
	case graph.GELU:
		op.SetAttr("mode", f.mode)
	}
	return out, g.AddOp(op)
}

// refSoftplus is log(1+e^y), stable at both ends.
func refSoftplus(y float64) float64 {
	if y > 30 {
		return y + math.Log1p(math.Exp(-y))
	}
	return math.Log1p(math.Exp(y))
}

// refApply is the float64 reference of one post-op: gdnn's documented
// semantics (NaN propagates through every op; limits instead of ∞·0 at
// ±Inf for GELU, Mish and HardSwish; Clamp compares max-then-min).
func refApply(f *fop, x, b float64) float64 {
	if math.IsNaN(x) || (f.kind.IsBinary() && math.IsNaN(b)) {
		return math.NaN()
	}
	a, be := float64(f.alpha), float64(f.beta)
	switch f.kind {
	case graph.Abs:
		return math.Abs(x)
	case graph.Clamp:
		if x < a {
			x = a
		}
		if x > be {
			x = be
		}
		return x
	case graph.Elu:
		if x > 0 {
			return x
		}
		return a * math.Expm1(x)
	case graph.Exp:
		return math.Exp(x)
	case graph.GELU:
		if math.IsInf(x, -1) {
			return 0
		}
		if math.IsInf(x, 1) {
			return x
		}
		if f.mode == "gelu_tanh" {
			u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
			return x / (1 + math.Exp(-2*u))
		}
		return 0.5 * x * math.Erfc(-x/math.Sqrt2)
	case graph.HardSigmoid:
		return math.Max(0, math.Min(1, a*x+be))
	case graph.HardSwish:
		v := x/6 + 0.5
		if v <= 0 {
			return 0
		}
		if v >= 1 {
			return x
		}
		return x * v
	case graph.LeakyReLU:
		if x >= 0 {
			return x
		}
		return a * x
	case graph.Log:
		return math.Log(x)
	case graph.Mish:
		if math.IsInf(x, -1) {
			return 0
		}
		return x * math.Tanh(refSoftplus(x))
	case graph.Pow:
		return math.Pow(x, be)
	case graph.Sigmoid:
		return 1 / (1 + math.Exp(-x))
	case graph.SoftPlus:
		return refSoftplus(be*x) / be
	case graph.ReLU:
		return math.Max(x, 0)
	case graph.Round:
		return math.RoundToEven(x)
	case graph.Sqrt:
		return math.Sqrt(x)
	case graph.Square:
		return x * x
	case graph.Tanh:
		return math.Tanh(x)
	case graph.Add:
		return x + b
	case graph.Multiply:
		return x * b
	case graph.Maximum:
		return math.Max(x, b)
	case graph.Minimum:
		return math.Min(x, b)
	case graph.Divide:
		return x / b
	case graph.Subtract:
		return x - b
	}
	panic("refApply: kind " + f.kind.String())
}

// NaN expectations of an interval.
const (
	nanNo   = iota // the result must not be NaN
	nanOK          // NaN is one of the legal results
	nanMust        // the result must be NaN
)

// refRange is the set of legal results for one output: [lo, hi], and
// whether NaN is excluded, allowed or required.
type refRange struct {
	lo, hi float64
	nan    int
	wide   bool // the chain computes in float64 (f64 src): no f32 rounding between post-ops
}

// Tolerances of the reference, stated once:
//   - the mean: an f32 sum of N terms in any blocked or pairwise order is
//     within (4*ceil(log2(N+1)) + 8) * 2^-24 * sum|x| of the exact sum,
//     plus 2 ulps for the division and the final f32 rounding;
//   - each post-op: 8 f32 ulps relative (gdnn rounds every post-op result
//     to f32 once), plus 2^-140 absolute for subnormal results;
//   - a sum whose terms' magnitudes reach the f32 range may overflow in an
//     f32 accumulator: then any value or NaN is legal for that output.
const (
	eps32    = 1.0 / (1 << 24)
	postRel  = 8 * eps32
	postAbs  = 0x1p-140
	maxF32ok = math.MaxFloat32 * (1 - 1.0/256)
)

// widen grows the finite ends of r by rel of their magnitude plus abs
// (an infinite end is exact: it stays).
func widen(r refRange, rel, abs float64) refRange {
	if !math.IsInf(r.lo, 0) {
		r.lo -= math.Abs(r.lo)*rel + abs
	}
	if !math.IsInf(r.hi, 0) {
		r.hi += math.Abs(r.hi)*rel + abs
	}
	return r
}

// criticalPoints are where a post-op turns: Abs, Square, LeakyReLU and
// Elu with a negative parameter at 0, GELU near -0.7518, Mish near
// -1.1924, HardSwish at -1.5. An interval that straddles one is sampled
// there too, so its image covers the extremum.
var criticalPoints = []float64{0, -0.7517915246935645, -1.1923729, -1.5}

// applyRange pushes an interval through a post-op by evaluating it at the
// ends, the middle and any critical point inside (between those points
// every post-op is monotonic; after a Round that straddles a tie the
// interval's ends are exactly the two legal results). The unconstrained
// interval of an overflowed sum stays unconstrained.
func applyRange(r refRange, f *fop, b float64) refRange {
	if r.nan == nanMust || (math.IsInf(r.lo, -1) && math.IsInf(r.hi, 1)) {
		return r // no constraint stays no constraint
	}
	if f.kind == graph.Pow && f.beta == -1 && r.lo <= 0 && r.hi >= 0 {
		// 1/x over an interval holding a zero (of either sign) reaches
		// both infinities: no constraint.
		return refRange{lo: math.Inf(-1), hi: math.Inf(1), nan: r.nan, wide: r.wide}
	}
	samples := []float64{r.lo, r.hi}
	if mid := r.lo/2 + r.hi/2; !math.IsInf(mid, 0) && !math.IsNaN(mid) {
		samples = append(samples, mid)
	}
	for _, c := range criticalPoints {
		if r.lo < c && c < r.hi {
			samples = append(samples, c)
		}
	}
	out := refRange{lo: math.Inf(1), hi: math.Inf(-1), nan: r.nan, wide: r.wide}
	finite := 0
	for _, s := range samples {
		// gdnn evaluates post-ops in f32: an intermediate past the f32
		// range is infinite for the ops that follow.
		v := refApply(f, s, b)
		if !r.wide {
			v = float64(float32(v))
		}
		if math.IsNaN(v) {
			out.nan = max(out.nan, nanOK)
			continue
		}
		finite++
		out.lo, out.hi = math.Min(out.lo, v), math.Max(out.hi, v)
	}
	if finite == 0 {
		return refRange{nan: nanMust}
	}
	return widen(out, postRel, postAbs)
}

// roundTo rounds a float64 to the value gdnn stores for dt (via f32, RNE).
func roundTo(dt dtypes.DataType, v float64) float64 {
	if dt == dtypes.F64 {
		return v
	}
	f := float32(v)
	switch dt {
	case dtypes.BF16:
		return float64(dtypes.BF16ToF32(dtypes.F32ToBF16(f)))
	case dtypes.F16:
		return float64(dtypes.F16ToF32(dtypes.F32ToF16(f)))
	}
	return float64(f)
}

// accepts reports whether got is a legal result for r stored as dt.
func (r refRange) accepts(dt dtypes.DataType, got float64) bool {
	if math.IsNaN(got) {
		return r.nan != nanNo
	}
	if r.nan == nanMust {
		return false
	}
	return roundTo(dt, r.lo) <= got && got <= roundTo(dt, r.hi)
}

func (r refRange) String() string {
	switch r.nan {
	case nanMust:
		return "NaN"
	case nanOK:
		return fmt.Sprintf("[%g, %g] or NaN", r.lo, r.hi)
	}
	return fmt.Sprintf("[%g, %g]", r.lo, r.hi)
}

// refAcc gathers what the reference needs of one output's elements, after
// the transform (see transformRef).
type refAcc struct {
	n                   int64
	sum, sumAbs         float64 // finite terms
	max, min            float64 // of all terms (NaN aside)
	nan, posInf, negInf bool
	zero                bool
	prod                float64 // finite terms
	bigLog2, smallLog2  float64 // log2 of the product of the finite terms above 1 and of the nonzero ones below 1
	neg                 bool    // the product of the signs is negative
	rounded             bool    // the terms are rounded to f32 (x*x)
}

func (a *refAcc) add(v float64) {
	if a.n == 0 {
		a.max, a.min, a.prod = math.Inf(-1), math.Inf(1), 1
	}
	a.n++
	switch {
	case math.IsNaN(v):
		a.nan = true
		return
	case math.IsInf(v, 1):
		a.posInf = true
	case math.IsInf(v, -1):
		a.negInf = true
	default:
		a.sum += v
		a.sumAbs += math.Abs(v)
		a.prod *= v
		switch l := math.Log2(math.Abs(v)); {
		case v == 0:
			a.zero = true
		case l > 0:
			a.bigLog2 += l
		default:
			a.smallLog2 += l
		}
	}
	a.max, a.min = math.Max(a.max, v), math.Min(a.min, v)
	if math.Signbit(v) {
		a.neg = !a.neg
	}
}

// transformRef is the reference's per-element transform of kind k.
func transformRef(k redKind, v float64) float64 {
	switch {
	case k.pre == graph.Abs || k.red == graph.ReduceL1:
		return math.Abs(v)
	case k.pre == graph.Square || k.red == graph.ReduceL2:
		// x*x rounded to f32, where it fits: past the f32 range the JIT's
		// square is Inf and the interpreter's (float64) finite, so the
		// reference keeps the float64 square, whose size leaves a sum
		// unconstrained (and whose max still stores as Inf).
		if f := float32(v * v); !math.IsInf(float64(f), 0) {
			return float64(f)
		}
		return v * v
	}
	return v
}

// sumRange bounds an f32 sum of a's terms (divided by their count for a
// mean): an f32 sum of N terms in any blocked or pairwise order is within
// (4*ceil(log2(N+1)) + 8) * 2^-24 * sum|x| of the exact sum, plus 2 ulps
// for the division and the final rounding, one more rounding of each
// term where terms are x*x, and a subnormal floor per term.
func sumRange(a refAcc, mean bool) refRange {
	switch {
	case a.n == 0 && mean:
		return refRange{nan: nanMust}
	case a.n == 0:
		return refRange{}
	case a.nan || (a.posInf && a.negInf):
		return refRange{nan: nanMust}
	case a.sumAbs > maxF32ok:
		return refRange{lo: math.Inf(-1), hi: math.Inf(1), nan: nanOK}
	case a.posInf:
		return refRange{lo: math.Inf(1), hi: math.Inf(1)}
	case a.negInf:
		return refRange{lo: math.Inf(-1), hi: math.Inf(-1)}
	}
	div := 1.0
	if mean {
		div = float64(a.n)
	}
	m := a.sum / div
	gamma := (4*math.Ceil(math.Log2(float64(a.n)+1)) + 8) * eps32
	if a.rounded {
		gamma += eps32
	}
	err := gamma*a.sumAbs/div + 2*eps32*math.Abs(m) + float64(a.n+1)*0x1p-149
	return refRange{lo: m - err, hi: m + err}
}

// prodRange bounds an f32 product in any order: where no partial product
// can leave the normal f32 range, (n+2) roundings of relative error;
// where one may overflow or underflow, anything (an Inf or a 0 midway
// can even meet its opposite: NaN).
func prodRange(a refAcc) refRange {
	switch {
	case a.n == 0:
		return refRange{lo: 1, hi: 1}
	case a.nan || (a.zero && (a.posInf || a.negInf)):
		return refRange{nan: nanMust}
	case a.bigLog2 > 120 || a.smallLog2 < -120:
		return refRange{lo: math.Inf(-1), hi: math.Inf(1), nan: nanOK}
	case a.posInf || a.negInf:
		inf := math.Inf(1)
		if a.neg {
			inf = math.Inf(-1)
		}
		return refRange{lo: inf, hi: inf}
	case a.zero:
		return refRange{}
	}
	err := float64(a.n+2) * eps32 * math.Abs(a.prod)
	return refRange{lo: a.prod - err, hi: a.prod + err}
}

// reduceRange is the legal result of kind k over one output's terms,
// before the post-ops.
func reduceRange(k redKind, a refAcc) refRange {
	switch k.op() {
	case graph.ReduceMean:
		return sumRange(a, true)
	case graph.ReduceSum, graph.ReduceL1:
		return sumRange(a, false)
	case graph.ReduceL2:
		r := sumRange(a, false)
		if r.nan == nanMust {
			return r
		}
		r.lo, r.hi = math.Sqrt(math.Max(r.lo, 0)), math.Sqrt(math.Max(r.hi, 0))
		return widen(r, 2*eps32, 0)
	case graph.ReduceProd:
		return prodRange(a)
	case graph.ReduceMax, graph.ReduceMin:
		switch {
		case a.nan:
			return refRange{nan: nanMust}
		case a.n == 0 && k.op() == graph.ReduceMax:
			return refRange{lo: math.Inf(-1), hi: math.Inf(-1)}
		case a.n == 0:
			return refRange{lo: math.Inf(1), hi: math.Inf(1)}
		case k.op() == graph.ReduceMax:
			return refRange{lo: a.max, hi: a.max}
		}
		return refRange{lo: a.min, hi: a.min}
	}
	panic("reduceRange: " + k.String())
}

// kindRanges computes the legal result of every output of a problem of
// reduction k (in row-major order of the output dims) and the output dims.
func kindRanges(k redKind, src buffer, reduce []bool, keep bool, ops []fop) ([]refRange, []int64) {
	dims := src.lt.Dims
	kept := make([]int64, len(dims))
	nOut := int64(1)
	for i, d := range dims {
		kept[i] = d
		if reduce[i] {
			kept[i] = 1
		}
		nOut *= kept[i]
	}
	accs := make([]refAcc, nOut)
	for i := range accs {
		accs[i].rounded = k.pre == graph.Square || k.red == graph.ReduceL2
	}
	keptStrides := graph.DenseStrides(kept)
	forEachIndex(dims, func(idx []int64) {
		o := int64(0)
		for i, x := range idx {
			if !reduce[i] {
				o += x * keptStrides[i]
			}
		}
		accs[o].add(transformRef(k, load(src.lt.DataType, src.bytes, offset(idx, src.lt.Strides))))
	})
	outDims := shape.ReduceDims(dims, reduce, keep)
	res := make([]refRange, 0, nOut)
	i := 0
	forEachIndex(outDims, func(oidx []int64) {
		r := reduceRange(k, accs[i])
		r.wide = src.lt.DataType == dtypes.F64
		i++
		for k := range ops {
			f := &ops[k]
			b := 0.0
			if f.operand != nil {
				ob := f.operand.lt
				off := len(outDims) - len(ob.Dims)
				bi := make([]int64, len(ob.Dims))
				for j := range bi {
					if ob.Dims[j] != 1 {
						bi[j] = oidx[off+j]
					}
				}
				b = load(ob.DataType, f.operand.bytes, offset(bi, ob.Strides))
			}
			r = applyRange(r, f, b)
		}
		res = append(res, r)
	})
	return res, outDims
}

// verifyOutput checks every element of a ReduceMean's dst against the
// reference and returns a description of the first mismatches ("" when
// all agree).
func verifyOutput(src buffer, reduce []bool, keep bool, ops []fop, dst buffer) string {
	return verifyKind(redKind{}, src, reduce, keep, ops, dst)
}

// verifyKind is verifyOutput for a reduction of kind k.
func verifyKind(k redKind, src buffer, reduce []bool, keep bool, ops []fop, dst buffer) string {
	want, outDims := kindRanges(k, src, reduce, keep, ops)
	if !slices.Equal(outDims, dst.lt.Dims) {
		return fmt.Sprintf("output dims %s, the reduction gives %s", graph.DimsString(dst.lt.Dims), graph.DimsString(outDims))
	}
	var b strings.Builder
	bad, i := 0, 0
	forEachIndex(dst.lt.Dims, func(idx []int64) {
		got := load(dst.lt.DataType, dst.bytes, offset(idx, dst.lt.Strides))
		if !want[i].accepts(dst.lt.DataType, got) {
			if bad < 4 {
				fmt.Fprintf(&b, "dst%v = %g, want %s; ", idx, got, want[i])
			}
			bad++
		}
		i++
	})
	if bad > 0 {
		return fmt.Sprintf("%d of %d outputs wrong: %s", bad, i, b.String())
	}
	return ""
}

// checkGraphError fails unless err is a *graph.Error with a known status
// and a message.
func checkGraphError(t testing.TB, err error) *graph.Error {
	t.Helper()
	var e *graph.Error
	if !errors.As(err, &e) || e.Msg == "" {
		t.Fatalf("error %v (%T) is not a *graph.Error with a message", err, err)
	}
	switch e.Status {
	case graph.InvalidArguments, graph.Unimplemented, graph.InvalidGraph, graph.InvalidGraphOp,
		graph.InvalidShape, graph.InvalidDataType, graph.OutOfMemory, graph.RuntimeError:
	default:
		t.Fatalf("error %v has unknown status %d", err, int(e.Status))
	}
	return e
}

// fuzzBytes reads decisions from fuzz input; past its end every read is 0,
// so short inputs still describe a (simple) case.
type fuzzBytes struct {
	b []byte
	i int
}

func (f *fuzzBytes) u8() int {
	if f.i >= len(f.b) {
		return 0
	}
	f.i++
	return int(f.b[f.i-1])
}

// intn returns a value in [0, n) for n <= 65536.
func (f *fuzzBytes) intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := f.u8()
	if n > 256 {
		v = v<<8 | f.u8()
	}
	return v % n
}

// specials are values that part vector code from the reference when the
// code is careless: NaN, infinities, signed zeros, f32 overflow, f16
// overflow, subnormals, rounding ties.
var specials = []float64{
	math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 3e38, -3e38,
	1e-40, -1e-40, 65504, 70000, -70000, 0.5, 2.5, -1.5,
}

// valueGen returns a generator of test data: uniform in [-2, 2], with
// special values mixed in at a rate chosen by the fuzz input (none, 1/64,
// 1/8 or 1/2).
func valueGen(r *rand.Rand, rate int) func() float64 {
	every := []int{0, 64, 8, 2}[rate%4]
	return func() float64 {
		if every > 0 && r.IntN(every) == 0 {
			return specials[r.IntN(len(specials))]
		}
		return -2 + 4*r.Float64()
	}
}

// fillBuffer allocates a buffer for lt (its span, or more) and fills the
// addressed elements from gen; gaps between them hold a poison value.
func fillBuffer(lt graph.LogicalTensor, gen func() float64) buffer {
	return newBuffer(lt, gen)
}

// genProblem is a random fused reduction problem described through the
// graph API: the reduction and its pre-op, src, axes, keep_dims, data
// types and a post-op chain.
type genProblem struct {
	kind redKind
	// squareAs writes a Square pre-op another way: as a Pow with beta 2
	// or a Multiply of src by itself (0: as a Square).
	squareAs graph.OpKind
	src      graph.LogicalTensor
	dstDT    dtypes.DataType
	axes     []int64
	reduce   []bool
	keep     bool
	ops      []fop
	operands []graph.LogicalTensor
}

var genDims = []int64{1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 33, 64, 100, 0}

// genFromBytes builds a problem from fuzz bytes: rank 0 to 4, small dims
// (at most 1<<16 elements), dense, permuted, padded or broadcast (stride
// 0) src layouts, any axes (some negative), up to three post-ops and,
// last (so that short inputs stay means), the reduction kind.
func genFromBytes(fb *fuzzBytes, r *rand.Rand) genProblem {
	rank := fb.intn(5)
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = genDims[fb.intn(len(genDims))]
	}
	for n := prodDims(dims); n > 1<<16; n = prodDims(dims) {
		i := slices.Index(dims, slices.Max(dims))
		dims[i] /= 4
	}
	strides := graph.DenseStrides(dims)
	switch fb.intn(4) {
	case 1: // a permutation of the dense strides (NHWC-like)
		perm := r.Perm(rank)
		st := make([]int64, rank)
		acc := int64(1)
		for k := rank - 1; k >= 0; k-- {
			st[perm[k]] = acc
			acc *= max(dims[perm[k]], 1)
		}
		strides = st
	case 2: // padded: every dim's pitch rounded up past its inner extent
		acc := int64(1)
		for k := rank - 1; k >= 0; k-- {
			strides[k] = acc
			acc = acc*max(dims[k], 1) + int64(fb.intn(3))
		}
	case 3: // a broadcast view of one dim
		if rank > 0 {
			strides[fb.intn(rank)] = 0
		}
	}
	pairs := [][2]dtypes.DataType{
		{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.BF16, dtypes.F32},
		{dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
		{dtypes.F64, dtypes.F64}, {dtypes.F64, dtypes.F32},
	}
	pair := pairs[fb.intn(len(pairs))]
	p := genProblem{src: graph.NewLogicalTensorStrided(0, pair[0], dims, strides), dstDT: kerneltest.OutputDT(pair[1]), keep: fb.intn(2) == 1}
	p.reduce = make([]bool, rank)
	for i := range rank {
		if fb.intn(2) == 1 {
			p.reduce[i] = true
			a := int64(i)
			if fb.intn(2) == 1 {
				a -= int64(rank)
			}
			p.axes = append(p.axes, a)
		}
	}
	outDims := shape.ReduceDims(dims, p.reduce, p.keep)
	params := []float32{0, 1, -1, 0.5, 2, -0.1, 3}
	for range fb.intn(4) {
		f := fop{kind: fusedKinds[fb.intn(len(fusedKinds))]}
		f.alpha, f.beta = params[fb.intn(len(params))], params[fb.intn(len(params))]
		if f.kind == graph.SoftPlus && f.beta == 0 {
			f.beta = 1 // AddOp refuses beta 0
		}
		if f.kind == graph.Pow && !ops.IsPowBeta(f.beta) {
			f.beta = ops.PowBetas[fb.intn(len(ops.PowBetas))] // others stay unfused
		}
		if f.kind == graph.Clamp && f.alpha > f.beta {
			f.alpha, f.beta = f.beta, f.alpha // AddOp refuses min > max
		}
		f.mode = []string{"gelu_erf", "gelu_tanh"}[fb.intn(2)]
		if f.kind.IsBinary() {
			od := make([]int64, len(outDims))
			for i := range od {
				od[i] = 1
			}
			switch fb.intn(3) {
			case 1: // full
				copy(od, outDims)
			case 2: // one dim (per-channel)
				if len(od) > 0 {
					k := fb.intn(len(od))
					od[k] = outDims[k]
				}
			}
			if len(od) > 0 && fb.intn(2) == 1 {
				od = od[1:] // a lower rank operand broadcasts from the right
			}
			bdt := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[fb.intn(3)]
			lt := graph.NewLogicalTensor(uint64(100+len(p.operands)), bdt, od)
			p.operands = append(p.operands, lt)
			f.operandLeft = fb.intn(2) == 1 && f.kind != graph.Subtract && f.kind != graph.Divide
		}
		p.ops = append(p.ops, f)
	}
	p.kind = genKinds[fb.intn(len(genKinds))]
	if p.kind.pre == graph.Square {
		p.squareAs = []graph.OpKind{0, graph.Pow, graph.Multiply}[fb.intn(3)]
	}
	return p
}

func prodDims(d []int64) int64 {
	n := int64(1)
	for _, v := range d {
		n *= v
	}
	return n
}

// build returns the problem's graph and the id of its last output.
func (p *genProblem) build() (*graph.Graph, uint64, error) {
	g := graph.New()
	src := p.src
	if p.kind.pre != 0 {
		pre := graph.NewLogicalTensorAny(3, p.src.DataType, nil)
		op := graph.NewOp(3, p.kind.pre, "pre").AddInput(p.src).AddOutput(pre)
		switch p.squareAs {
		case graph.Pow:
			if p.kind.pre != graph.Square {
				return nil, 0, fmt.Errorf("squareAs %s with pre-op %s", p.squareAs, p.kind.pre)
			}
			op = graph.NewOp(3, graph.Pow, "pre").AddInput(p.src).AddOutput(pre).SetAttr("beta", float32(2))
		case graph.Multiply:
			if p.kind.pre != graph.Square {
				return nil, 0, fmt.Errorf("squareAs %s with pre-op %s", p.squareAs, p.kind.pre)
			}
			op = graph.NewOp(3, graph.Multiply, "pre").AddInput(p.src).AddInput(p.src).AddOutput(pre)
		}
		if err := g.AddOp(op); err != nil {
			return nil, 0, err
		}
		src = pre
	}
	cur := graph.NewLogicalTensorAny(1, p.dstDT, nil)
	if err := g.AddOp(graph.NewOp(1, p.kind.op(), "red").AddInput(src).AddOutput(cur).
		SetAttr("axes", p.axes).SetAttr("keep_dims", p.keep)); err != nil {
		return nil, 0, err
	}
	k := 0
	for i := range p.ops {
		var operand graph.LogicalTensor
		if p.ops[i].kind.IsBinary() {
			operand = p.operands[k]
			k++
		}
		var err error
		if cur, err = addFop(g, uint64(10+i), cur, p.ops[i], operand, uint64(10+i), p.dstDT); err != nil {
			return nil, 0, err
		}
	}
	return g, cur.ID, g.Finalize()
}

// runProblem compiles the problem under the current ISA cap, executes it
// on the given data and returns the output and the implementation.
func (p *genProblem) run(src buffer, operands []buffer) (buffer, string, error) {
	g, last, err := p.build()
	if err != nil {
		return buffer{}, "", err
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		return buffer{}, "", err
	}
	nOps := 1 + len(p.ops)
	if p.kind.pre != 0 {
		nOps++
	}
	if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != nOps {
		return buffer{}, "", fmt.Errorf("want one fused partition of %d ops, got %v", nOps, parts)
	}
	ins := []graph.LogicalTensor{p.src}
	ts := []Tensor{{lt: src.lt, buf: src.bytes}}
	for _, o := range operands {
		ins = append(ins, o.lt)
		ts = append(ts, Tensor{lt: o.lt, buf: o.bytes})
	}
	c, err := parts[0].Compile(ins, []graph.LogicalTensor{graph.NewLogicalTensorAny(last, p.dstDT, nil)})
	if err != nil {
		return buffer{}, "", err
	}
	out, err := c.QueryLogicalTensor(last)
	if err != nil {
		return buffer{}, "", err
	}
	dst := newBuffer(out, func() float64 { return 12345 })
	dt, err := NewTensor(out, dst.bytes)
	if err != nil {
		return buffer{}, "", err
	}
	if err := c.Execute(ts, []Tensor{dt}); err != nil {
		return buffer{}, "", err
	}
	return dst, c.Impl(), nil
}

// fops returns the post-ops with their operand buffers attached.
func (p *genProblem) fops(operands []buffer) []fop {
	ops := slices.Clone(p.ops)
	k := 0
	for i := range ops {
		if ops[i].kind.IsBinary() {
			ops[i].operand = &operands[k]
			k++
		}
	}
	return ops
}

// FuzzJITvsInterp runs a random problem through the public API under
// every ISA cap this machine has (jit.None is the interpreter) and
// demands that each result is within the reference's interval, and that
// the JIT and the interpreter agree on which outputs are NaN wherever the
// reference decides it. Two legal results can differ by at most the
// interval's width: that is the stated tolerance between backends.
func FuzzJITvsInterp(f *testing.F) {
	f.Add([]byte{2, 3, 4, 0, 0, 1, 0, 1, 1}, uint64(1))
	f.Add([]byte{4, 11, 12, 5, 7, 1, 2, 1, 0, 1, 1, 1, 0, 0, 1, 3, 17, 2, 3, 1, 4, 18, 1, 0, 2}, uint64(2))
	f.Add([]byte{3, 8, 9, 10, 2, 3, 1, 1, 0, 0, 1, 1, 0, 2, 22, 1, 1, 1, 0, 1, 13}, uint64(3))
	f.Add([]byte{1, 12, 0, 4, 1, 0, 1, 0, 3, 21, 0, 1, 2, 0, 0, 19, 3, 1}, uint64(4))
	f.Add([]byte{4, 1, 13, 4, 3, 3, 2, 1, 1, 0, 0, 1, 1, 1, 2, 0, 3, 4, 5, 6}, uint64(5))
	f.Add([]byte{0, 0, 0, 1, 1, 2, 9, 2, 1}, uint64(6))
	// Seeds whose last byte picks each reduction kind.
	for i := range genKinds {
		f.Add([]byte{2, 5, 7, 1, 1, 0, 1, 0, 1, 0, byte(i)}, uint64(100+i))
		f.Add([]byte{3, 9, 4, 6, 2, 1, 1, 0, 1, 1, 0, 1, 1, 2, 3, 6, 12, 1, 0, 0, byte(i)}, uint64(200+i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		fb := &fuzzBytes{b: data}
		r := rand.New(rand.NewPCG(seed, 0x9e3779b9))
		p := genFromBytes(fb, r)
		checkJITvsInterp(t, p, r, fb.u8())
	})
}

// checkJITvsInterp runs problem p on data from r (special values at the
// given rate) under every ISA cap (see FuzzJITvsInterp).
func checkJITvsInterp(t *testing.T, p genProblem, r *rand.Rand, rate int) {
	t.Helper()
	gen := valueGen(r, rate)
	src := fillBuffer(p.src, gen)
	var operands []buffer
	for _, o := range p.operands {
		operands = append(operands, fillBuffer(o, gen))
	}
	ops := p.fops(operands)

	prevCap, _ := SetCompiledPartitionCacheCapacity(0)
	defer SetCompiledPartitionCacheCapacity(prevCap)
	var results []buffer
	var impls []string
	for _, isa := range isaCaps() {
		prev := jit.SetMaxISA(isa)
		dst, impl, err := p.run(src, operands)
		jit.SetMaxISA(prev)
		if err != nil {
			t.Fatalf("cap %s: %s (square as %s) %s %v axes %v keep %v ops %d: %v", isa, p.kind, p.squareAs, p.src, p.dstDT, p.axes, p.keep, len(p.ops), err)
		}
		if msg := verifyKind(p.kind, src, p.reduce, p.keep, ops, dst); msg != "" {
			t.Fatalf("cap %s (%s): %s (square as %s) %s axes %v keep %v -> %s: %s", isa, impl, p.kind, p.squareAs, p.src, p.axes, p.keep, p.dstDT, msg)
		}
		results, impls = append(results, dst), append(impls, impl)
	}
	want, _ := kindRanges(p.kind, src, p.reduce, p.keep, ops)
	for k := 1; k < len(results); k++ {
		i := 0
		forEachIndex(results[0].lt.Dims, func(idx []int64) {
			a := load(p.dstDT, results[0].bytes, offset(idx, results[0].lt.Strides))
			b := load(p.dstDT, results[k].bytes, offset(idx, results[k].lt.Strides))
			if want[i].nan != nanOK && math.IsNaN(a) != math.IsNaN(b) {
				t.Fatalf("%s dst%v: %s gives %g, %s gives %g", p.kind, idx, impls[0], a, impls[k], b)
			}
			i++
		})
	}
}

// execFixture is one compiled partition FuzzExecute attacks.
type execFixture struct {
	name     string
	kind     redKind
	c        *CompiledPartition
	src      graph.LogicalTensor
	operands []graph.LogicalTensor
	axes     *graph.LogicalTensor // the axes input port, if any
	out      graph.LogicalTensor  // the compiled output (dims unknown with an axes tensor)
	reduce   []bool               // with attribute axes
	keep     bool
	ops      []fop // operand buffers attached per run
}

// execFixtures compiles the partitions FuzzExecute uses: plain f32,
// bf16 NHWC with a per-channel bias and ReLU, f16 in and f32 out with a
// scalar scale and Sqrt, padded rows with a full strided operand and a
// padded output, a rank-0 identity, an empty reduction, axes from a
// run-time tensor, and the other reductions and pre-ops: Abs -> ReduceMax
// on bf16 NHWC, ReduceL2 over padded rows with a bias, Square ->
// ReduceSum to f32 with Sqrt, an empty ReduceProd, ReduceMin and
// ReduceL1 of f16, and Abs -> ReduceMax with run-time axes.
func execFixtures(t testing.TB) []*execFixture {
	t.Helper()
	var fx []*execFixture
	kind := redKind{}
	mk := func(name string, src graph.LogicalTensor, dstDT dtypes.DataType, axes []int64, keep bool,
		ops []fop, operands []graph.LogicalTensor, out graph.LogicalTensor) {
		p := genProblem{kind: kind, src: src, dstDT: dstDT, axes: axes, keep: keep, ops: ops, operands: operands}
		g, last, err := p.build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		parts, err := Get(g, Fusion)
		if err != nil || len(parts) != 1 {
			t.Fatalf("%s: %v %v", name, parts, err)
		}
		out.ID = last
		c, err := parts[0].Compile(append([]graph.LogicalTensor{src}, operands...), []graph.LogicalTensor{out})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o, _ := c.QueryLogicalTensor(last)
		reduce, _ := shape.NormalizeAxes(c.recipe.redOp, c.recipe.redOp.Inputs[0].ID, axes, len(src.Dims))
		fx = append(fx, &execFixture{name: name, kind: kind, c: c, src: src, operands: operands, out: o, reduce: reduce, keep: keep, ops: ops})
	}
	anyOut := graph.NewLogicalTensorAny(0, dtypes.F32, nil)
	mk("f32 plain", graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 5, 7}), dtypes.F32, []int64{1}, false, nil, nil, anyOut)
	bias := graph.NewLogicalTensor(100, dtypes.BF16, []int64{1, 4, 1, 1})
	mk("bf16 nhwc bias relu", graph.NewLogicalTensorStrided(0, dtypes.BF16, []int64{2, 4, 3, 5}, []int64{60, 1, 20, 4}),
		dtypes.BF16, []int64{2, 3}, true, []fop{{kind: graph.Add, operandLeft: true}, {kind: graph.ReLU}},
		[]graph.LogicalTensor{bias}, graph.NewLogicalTensorAny(0, dtypes.BF16, nil))
	scale := graph.NewLogicalTensor(100, dtypes.F32, []int64{1})
	mk("f16 to f32 scale sqrt", graph.NewLogicalTensor(0, dtypes.F16, []int64{6, 33}), dtypes.F32, []int64{0}, false,
		[]fop{{kind: graph.Multiply}, {kind: graph.Sqrt}}, []graph.LogicalTensor{scale}, anyOut)
	den := graph.NewLogicalTensorStrided(100, dtypes.F16, []int64{5, 1}, []int64{3, 1})
	mk("padded rows divide clamp", graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{5, 9}, []int64{16, 1}), dtypes.F32,
		[]int64{-1}, true, []fop{{kind: graph.Divide}, {kind: graph.Clamp, alpha: -1, beta: 1}},
		[]graph.LogicalTensor{den}, graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{5, 1}, []int64{3, 1}))
	mk("scalar identity", graph.NewLogicalTensor(0, dtypes.F32, []int64{}), dtypes.F32, nil, false, nil, nil, anyOut)
	mk("empty reduction", graph.NewLogicalTensor(0, dtypes.BF16, []int64{4, 0}), dtypes.F32, []int64{1}, true, nil, nil, anyOut)

	// Axes from a variable s32 tensor: the output dims are known only at
	// execute time.
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6, 5})
	axesLT := graph.NewLogicalTensor(2, dtypes.S32, []int64{1})
	g := graph.New()
	if err := g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(src).AddInput(axesLT).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("keep_dims", true)); err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parts[0].Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	if err != nil {
		t.Fatal(err)
	}
	o, _ := c.QueryLogicalTensor(1)
	fx = append(fx, &execFixture{name: "axes tensor", c: c, src: src, axes: &axesLT, out: o, keep: true})

	// The other reductions, appended so that the corpus's fixture
	// numbers above keep their meaning.
	kind = redKind{graph.ReduceMax, graph.Abs}
	mk("bf16 nhwc abs max", graph.NewLogicalTensorStrided(0, dtypes.BF16, []int64{2, 4, 3, 5}, []int64{60, 1, 20, 4}),
		dtypes.BF16, []int64{2, 3}, true, nil, nil, graph.NewLogicalTensorAny(0, dtypes.BF16, nil))
	kind = redKind{red: graph.ReduceL2}
	bias = graph.NewLogicalTensor(100, dtypes.F32, []int64{5, 1})
	mk("l2 padded rows bias", graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{5, 9}, []int64{16, 1}), dtypes.F32,
		[]int64{-1}, true, []fop{{kind: graph.Add}}, []graph.LogicalTensor{bias}, anyOut)
	kind = redKind{graph.ReduceSum, graph.Square}
	mk("f16 sum of squares sqrt", graph.NewLogicalTensor(0, dtypes.F16, []int64{6, 33}), dtypes.F32, []int64{1}, false,
		[]fop{{kind: graph.Sqrt}}, nil, anyOut)
	kind = redKind{red: graph.ReduceProd}
	mk("empty prod", graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 0}), dtypes.F32, []int64{1}, true, nil, nil, anyOut)
	kind = redKind{red: graph.ReduceMin}
	mk("f16 min", graph.NewLogicalTensor(0, dtypes.F16, []int64{3, 17}), dtypes.F16, []int64{0}, false, nil, nil,
		graph.NewLogicalTensorAny(0, dtypes.F16, nil))
	kind = redKind{red: graph.ReduceL1}
	mk("bf16 l1 to f32", graph.NewLogicalTensor(0, dtypes.BF16, []int64{7, 3, 5}), dtypes.F32, []int64{0, 2}, false, nil, nil, anyOut)

	// Abs -> ReduceMax with run-time axes: the axes port follows the
	// pre-op's src.
	g = graph.New()
	absOut := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
	if err := g.AddOp(graph.NewOp(3, graph.Abs, "").AddInput(src).AddOutput(absOut)); err != nil {
		t.Fatal(err)
	}
	if err := g.AddOp(graph.NewOp(1, graph.ReduceMax, "").AddInput(absOut).AddInput(axesLT).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("keep_dims", true)); err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	if parts, err = Get(g, Fusion); err != nil || len(parts) != 1 {
		t.Fatalf("abs max axes tensor: %v %v", parts, err)
	}
	c, err = parts[0].Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	if err != nil {
		t.Fatal(err)
	}
	o, _ = c.QueryLogicalTensor(1)
	fx = append(fx, &execFixture{name: "abs max axes tensor", kind: redKind{graph.ReduceMax, graph.Abs}, c: c, src: src,
		axes: &axesLT, out: o, keep: true})
	return fx
}

// slot is one tensor handed to Execute, with the buffer it came from.
type slot struct {
	lt  graph.LogicalTensor
	buf []byte
}

// mutation kinds FuzzExecute applies to a tensor (index = kind).
var mutationNames = []string{"short", "nil", "wrong id", "wrong dtype", "wrong dims", "wrong strides",
	"omitted", "duplicated", "no strides", "longer"}

// anyOfArguments, or-ed into a status mutate returns, says that
// InvalidArguments is as legal an answer as that status.
const anyOfArguments graph.Status = 1 << 16

// mutate applies mutation m to s and returns the status Execute must
// report (-1: the mutated tensor is still valid). changed is false when
// the mutation does not apply to this tensor.
func mutate(m int, s *slot, outputUnknownDims bool) (status graph.Status, changed bool) {
	need, err := spanBytes(s.lt)
	if err != nil {
		need = int64(len(s.buf))
	}
	switch mutationNames[m] {
	case "short":
		if need == 0 {
			return -1, false
		}
		s.buf = s.buf[:need-1]
		return graph.InvalidArguments, true
	case "nil":
		s.buf = nil
		return graph.InvalidArguments, true
	case "wrong id":
		s.lt.ID += 1000
		return graph.InvalidArguments, true
	case "wrong dtype":
		if s.lt.DataType == dtypes.F32 {
			s.lt.DataType = dtypes.BF16
		} else {
			s.lt.DataType = dtypes.F32
		}
		return graph.InvalidDataType, true
	case "wrong dims":
		if len(s.lt.Dims) == 0 {
			s.lt.Dims, s.lt.Strides = []int64{1}, []int64{1}
		} else {
			s.lt.Dims = slices.Clone(s.lt.Dims)
			s.lt.Dims[0]++
			s.lt.Strides = graph.DenseStrides(s.lt.Dims)
		}
		if outputUnknownDims {
			// The tensor's own dims are its description until the
			// run-time axes are read: its buffer is then too short
			// for them, which Execute may report first.
			return graph.InvalidShape | anyOfArguments, true
		}
		return graph.InvalidShape, true
	case "wrong strides":
		if outputUnknownDims {
			return -1, false // the tensor's own strides are its layout
		}
		for i, d := range s.lt.Dims {
			if d > 1 {
				s.lt.Strides = slices.Clone(s.lt.Strides)
				s.lt.Strides[i]++
				return graph.InvalidShape, true
			}
		}
		return -1, false
	case "no strides":
		// Read as dense row-major, as Compile reads it: still valid
		// where the compiled layout is dense (or, for an output whose
		// dims wait for run-time axes, is the tensor's own), else a
		// strides mismatch.
		dense := slices.Equal(s.lt.Strides, graph.DenseStrides(s.lt.Dims))
		s.lt.Strides, s.lt.Layout = nil, graph.LayoutAny
		if outputUnknownDims || dense {
			return -1, !outputUnknownDims
		}
		return graph.InvalidShape, true
	}
	return -1, false // omitted, duplicated and longer are applied by the caller
}

// FuzzExecute executes valid compiled partitions on hostile tensors:
// wrong lengths, nil buffers, wrong ids, data types, dims and strides,
// missing or repeated tensors, outputs aliasing inputs, invalid run-time
// axes, and data full of NaN, infinities and values that overflow.
// Every call must either return the error the mutation calls for (exactly
// that status when it is the only one) and leave the output buffer
// untouched, or succeed with every output inside the float64 reference's
// interval, the inputs unchanged and no byte outside the output's
// elements (gaps, bytes before and after it) written.
func FuzzExecute(f *testing.F) {
	f.Add(uint8(0), []byte{}, uint64(1))
	f.Add(uint8(1), []byte{0, 0, 0, 0, 3}, uint64(2))
	f.Add(uint8(2), []byte{0, 0, 0, 0, 2}, uint64(3))
	f.Add(uint8(3), []byte{0, 0, 0, 0, 1, 1}, uint64(4))
	f.Add(uint8(4), []byte{0, 0, 0, 0}, uint64(5))
	f.Add(uint8(5), []byte{0, 0, 0}, uint64(6))
	f.Add(uint8(6), []byte{0, 0, 0, 0, 0, 5}, uint64(7))
	f.Add(uint8(6), []byte{0, 0, 0, 0, 0, 7}, uint64(8))
	for m := range mutationNames {
		f.Add(uint8(m), []byte{byte(20 + m), 0, 0, 0, 0, 2}, uint64(10+m))
		f.Add(uint8(m+1), []byte{0, 0, byte(20 + m), 0, 0, 2}, uint64(30+m))
	}
	f.Add(uint8(0), []byte{0, 0, 0, 1}, uint64(9))
	f.Add(uint8(1), []byte{0, 0, 0, 0, 2}, uint64(9))
	f.Add(uint8(6), []byte{0, 0, 0, 0, 0, 0, 3}, uint64(9))
	for sel := 7; sel < 14; sel++ {
		f.Add(uint8(sel), []byte{0, 0, 0, 0, 0, 2}, uint64(50+sel))
		f.Add(uint8(sel), []byte{1, 0, 0, 0, 0, 1}, uint64(60+sel))
		f.Add(uint8(sel), []byte{3, 0, 0, 1, 0, 0, 0, 0}, uint64(70+sel))
	}
	fixtures := execFixtures(f)
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, seed uint64) {
		fx := fixtures[int(sel)%len(fixtures)]
		fb := &fuzzBytes{b: data}
		r := rand.New(rand.NewPCG(seed, 77))
		gen := valueGen(r, fb.u8()%4)

		// Inputs in port order, and the output.
		src := fillBuffer(fx.src, gen)
		ins := []slot{{fx.src, src.bytes}}
		var operands []buffer
		for _, o := range fx.operands {
			b := fillBuffer(o, gen)
			operands = append(operands, b)
			ins = append(ins, slot{o, b.bytes})
		}
		expect := map[graph.Status]bool{}
		mutations := 0
		reduce, out := fx.reduce, fx.out
		if fx.axes != nil {
			choices := []int64{-3, -2, -1, 0, 1, 2, 3, -4, 1 << 30, -1 << 31}
			axis := choices[fb.intn(len(choices))]
			if axis < -3 || axis > 2 {
				expect[graph.InvalidArguments] = true
				mutations++
				reduce = []bool{false, true, false} // the output below is then arbitrary
			} else {
				reduce = make([]bool, 3)
				reduce[(axis+3)%3] = true
			}
			out = graph.NewLogicalTensor(out.ID, dtypes.F32, shape.ReduceDims(fx.src.Dims, reduce, true))
			ab := make([]byte, 4)
			ab[0], ab[1], ab[2], ab[3] = byte(axis), byte(axis>>8), byte(axis>>16), byte(axis>>24)
			ins = append(ins, slot{*fx.axes, ab})
		}

		// The output lives in a slab with guard bytes before and after it,
		// in its own allocation, inside the src buffer (overlapping: an
		// error), after the src in the same allocation (valid) or over an
		// operand (an error).
		need, err := spanBytes(out)
		if err != nil {
			t.Fatal(err)
		}
		head, tail := int64(8+fb.intn(56)), int64(8+fb.intn(56))
		var slab []byte
		var dstOff int64
		aliased := -1 // the input the output overlaps, if any
		switch fb.intn(6) {
		case 1:
			if len(src.bytes) > 0 && need > 0 {
				slab, dstOff = src.bytes, int64(fb.intn(len(src.bytes)))
				if dstOff+need > int64(len(slab)) {
					grown := make([]byte, dstOff+need+tail)
					copy(grown, src.bytes)
					src.bytes, ins[0].buf, slab = grown[:len(src.bytes)], grown[:len(src.bytes)], grown
				}
				expect[graph.InvalidArguments] = true
				mutations++
				aliased = 0
				break
			}
			fallthrough
		case 2:
			slab = make([]byte, int64(len(src.bytes))+head+need+tail)
			copy(slab, src.bytes)
			src.bytes = slab[:len(src.bytes):len(src.bytes)]
			ins[0].buf = src.bytes
			dstOff = int64(len(src.bytes)) + head
		case 3:
			if len(operands) > 0 && len(operands[0].bytes) > 0 && need > 0 {
				ob := operands[0].bytes
				grown := make([]byte, int64(len(ob))+need)
				copy(grown, ob)
				operands[0].bytes, ins[1].buf = grown[:len(ob)], grown[:len(ob)]
				slab, dstOff = grown, int64(len(ob))-1
				expect[graph.InvalidArguments] = true
				mutations++
				aliased = 1
				break
			}
			fallthrough
		default:
			slab = make([]byte, head+need+tail)
			dstOff = head
		}
		for i := range slab[dstOff:min(dstOff+need+tail, int64(len(slab)))] {
			slab[dstOff+int64(i)] = byte(0xA5 ^ i)
		}
		outSlot := slot{out, slab[dstOff : dstOff+need]}

		// Mutations: each tensor is left alone (most often) or broken.
		all := append(slices.Clone(ins), outSlot)
		var given []slot
		for i := range all {
			s := all[i]
			m := fb.intn(3 * len(mutationNames))
			if m >= len(mutationNames) {
				given = append(given, s)
				continue
			}
			switch mutationNames[m] {
			case "omitted":
				expect[graph.InvalidArguments] = true
				mutations++
				continue
			case "duplicated":
				given = append(given, s, s)
				expect[graph.InvalidArguments] = true
				mutations++
				continue
			case "longer":
				if i == len(all)-1 && dstOff+need+tail <= int64(len(slab)) {
					s.buf = slab[dstOff : dstOff+need+tail]
				} else if i < len(all)-1 && i != aliased {
					s.buf = append(slices.Clone(s.buf), 1, 2, 3, 4, 5, 6, 7, 8)
					all[i].buf = s.buf
				}
				given = append(given, s)
				continue
			}
			st, changed := mutate(m, &s, fx.axes != nil && i == len(all)-1)
			if changed && st >= 0 {
				if st&anyOfArguments != 0 {
					expect[graph.InvalidArguments] = true
					st &^= anyOfArguments
				}
				expect[st] = true
				mutations++
			}
			given = append(given, s)
		}
		var inT, outT []Tensor
		for _, s := range given {
			if s.lt.ID == out.ID || s.lt.ID == out.ID+1000 {
				outT = append(outT, Tensor(s))
			} else {
				inT = append(inT, Tensor(s))
			}
		}

		before := slices.Clone(slab)
		var inBefore [][]byte
		for _, s := range all[:len(all)-1] {
			inBefore = append(inBefore, slices.Clone(s.buf))
		}
		err = fx.c.Execute(inT, outT)

		for i, s := range all[:len(all)-1] {
			if !slices.Equal(s.buf, inBefore[i]) && !(dstOff < int64(len(slab)) && jit.Overlap(s.buf, slab[dstOff:dstOff+need])) {
				t.Fatalf("%s: Execute wrote input tensor %d", fx.name, s.lt.ID)
			}
		}
		if mutations > 0 {
			if err == nil {
				t.Fatalf("%s: Execute accepted hostile tensors (want %v)", fx.name, expect)
			}
			e := checkGraphError(t, err)
			if mutations == 1 && !expect[e.Status] {
				t.Fatalf("%s: err %v, want status %v", fx.name, err, expect)
			}
			if !slices.Equal(slab, before) {
				t.Fatalf("%s: a rejected Execute (%v) wrote memory", fx.name, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: valid tensors rejected: %v", fx.name, err)
		}
		// Bytes outside the output's elements are untouched.
		mask := make([]bool, len(slab))
		size := int64(out.DataType.Size())
		forEachIndex(out.Dims, func(idx []int64) {
			o := dstOff + offset(idx, out.Strides)*size
			for b := o; b < o+size; b++ {
				mask[b] = true
			}
		})
		for i := range slab {
			if !mask[i] && slab[i] != before[i] {
				t.Fatalf("%s: Execute wrote byte %d outside the output's elements", fx.name, int64(i)-dstOff)
			}
		}
		ops := slices.Clone(fx.ops)
		k := 0
		for i := range ops {
			if ops[i].kind.IsBinary() {
				ops[i].operand = &operands[k]
				k++
			}
		}
		dst := buffer{out, slab[dstOff : dstOff+need]}
		if msg := verifyKind(fx.kind, src, reduce, fx.keep, ops, dst); msg != "" {
			t.Fatalf("%s (%s): %s", fx.name, fx.c.Impl(), msg)
		}
	})
}

// newRand returns the deterministic generator of one test case.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 77)) }

package kerneltest

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vf64"
)

// Bounds is the set of values an output may take: [Lo, Hi] (NaN: only
// NaN), and NaN too where MayNaN.
type Bounds struct {
	Lo, Hi float64
	Mid    float64 // the oracle's own value carried through the same steps
	MayNaN bool
}

// WideBounds returns, for each output of p (an f64 src problem), keyed
// by its dst element, the values its dst element may take: the oracle's
// exact result (exact sums, oracle.WideTol) widened by that tolerance
// carried through the finalize and the post-ops in float64 (each
// evaluated at both ends of the interval and its midpoint, plus 2^-40 of
// its value for the post-ops' own rounding where the interval is not a
// single value), then rounded to the dst type.
func WideBounds(p *plan.Problem, src []byte, bins [][]byte) map[int64]Bounds {
	out := map[int64]Bounds{}
	var binDT []dtypes.DataType
	for _, op := range p.PostOps {
		if op.Kind.IsBinary() {
			binDT = append(binDT, op.BinDT)
		}
	}
	r := p.Reduction
	for _, o := range oracle.Reduce(p, src) {
		b := accBounds(r, o)
		if !r.IsLogSumExp() {
			b = b.through(func(x float64) float64 { return r.FinalizeF64(x, o.N) })
			if n := powRootULP(r, b.Mid); n > 0 {
				if math.IsInf(b.Lo, 1) {
					// The root's error may leave a result that
					// overflows just below MaxFloat64.
					b.Lo = math.MaxFloat64
				}
				b = b.widen(n)
			}
		}
		bi := 0
		for _, op := range p.PostOps {
			var f func(float64) float64
			if op.Kind.IsBinary() {
				y := oracle.Get(binDT[bi], bins[bi], o.Bins[bi])
				k := op.Kind
				f = func(x float64) float64 { return plan.BinaryF64(k, x, y) }
				bi++
			} else {
				f = func(x float64) float64 { return plan.EltwiseF64(op.Kind, op.Alpha, op.Beta, x) }
			}
			b = b.through(f)
			if tol := vf64.Tolerance(op.Kind); tol > 0 {
				// The machine code's exp and log, and the post-ops
				// built on them, are within tol of package math's,
				// not its bits.
				b = b.widen(int(tol))
			}
		}
		if p.DstDT != dtypes.F64 {
			b.Lo, b.Hi, b.Mid = float64(float32(b.Lo)), float64(float32(b.Hi)), float64(float32(b.Mid))
		}
		out[o.Dst] = b
	}
	return out
}

// powRootULP is the ulps the native kernels' p-th root of p other than
// 1 and 2, exp(log(y)/p), may be from math.Pow's at the result y^(1/p)
// = v: log's and exp's own, and log's error of |log y| scaled by 1/p,
// that is |log v| (for an overflow, v's last finite value); 0 for the
// other finalizes.
func powRootULP(r plan.Reduction, v float64) int {
	root := r.Finalize == plan.FinalizeRootMaxEps || r.Finalize == plan.FinalizeRootAddEps
	if !root || r.P == 1 || r.P == 2 || v != v || v == 0 || math.IsInf(v, -1) {
		return 0
	}
	v = math.Min(v, math.MaxFloat64)
	return 2*vf64.MaxULP + 2 + int(math.Ceil(2*math.Abs(plan.LogF64(v))))
}

// accBounds is the interval of o's combined value (a log-sum-exp's
// result): exact for max, min and copies, within WideTol for sums, within
// N+1 roundings for products (whose order may differ from the oracle's).
func accBounds(r plan.Reduction, o oracle.Output) Bounds {
	v := o.Acc
	if r.IsLogSumExp() {
		v = o.Value
	}
	var tol float64
	switch {
	case r.IsLogSumExp():
		// The sum's roundings, relative; the native kernels' exp
		// (MaxULP ulps of each term, relative to the sum) and log
		// (MaxULP ulps of log(sum)); the shift's add.
		tol = oracle.WideTol(o)/o.Acc + math.Ldexp(float64(vf64.MaxULP), -52)*(1+math.Abs(math.Log(o.Acc))) +
			math.Ldexp(math.Abs(v), -50)
	case r.Combine == plan.CombineAdd:
		tol = oracle.WideTol(o)
		if r.Transform == plan.TransformPow {
			// The native kernels' exp(p*log|x|): twice log's error
			// of 2^-52 of p*log|x| (oracle.PowErr) and exp's and
			// log's own ulps of each term.
			tol += 2*o.PowErr + math.Ldexp(o.Mag, -52)*float64(2*vf64.MaxULP+2)
		}
	case r.Combine == plan.CombineMul:
		tol = math.Abs(v) * math.Ldexp(float64(o.N+1), -52)
	}
	if math.IsInf(v, 0) || v != v || math.IsInf(tol, 0) || tol != tol {
		tol = 0
	}
	return Bounds{Lo: v - tol, Hi: v + tol, Mid: v}
}

// through carries b through f: f at both ends, at the midpoint and at
// the oracle's own value,
// widened by 2^-40 of the largest finite end for f's own rounding unless b is a
// single value (which every backend computes with f itself). NaN at
// some of the points but not all makes NaN acceptable besides the
// others; an equal infinity at all three stays itself.
func (b Bounds) through(f func(float64) float64) Bounds {
	if b.Lo != b.Lo {
		return b
	}
	var ys []float64
	nan := false
	for _, x := range [...]float64{b.Lo, b.Hi, b.Lo/2 + b.Hi/2, b.Mid} {
		if y := f(x); y == y {
			ys = append(ys, y)
		} else {
			nan = true
		}
	}
	if len(ys) == 0 {
		return Bounds{Lo: math.NaN(), Hi: math.NaN(), Mid: math.NaN(), MayNaN: true}
	}
	out := Bounds{Lo: ys[0], Hi: ys[0], Mid: f(b.Mid), MayNaN: b.MayNaN || nan}
	for _, y := range ys {
		out.Lo, out.Hi = math.Min(out.Lo, y), math.Max(out.Hi, y)
	}
	if b.Lo == b.Hi && !b.MayNaN || math.IsInf(out.Lo, 0) && out.Lo == out.Hi {
		return out
	}
	// An infinite end stays as it is, and does not widen the other.
	big := 0.0
	for _, y := range [...]float64{out.Lo, out.Hi} {
		if !math.IsInf(y, 0) {
			big = math.Max(big, math.Abs(y))
		}
	}
	m := math.Ldexp(big, -40) + math.SmallestNonzeroFloat64
	out.Lo, out.Hi = out.Lo-m, out.Hi+m
	return out
}

// widen widens b's finite ends by n float64 ulps each (as n steps of
// math.Nextafter, but at once: a long widening, thousands of ulps for
// the roots of large logs, is a large share of a wide test's time).
func (b Bounds) widen(n int) Bounds {
	b.Lo, b.Hi = stepULPs(b.Lo, -int64(n)), stepULPs(b.Hi, int64(n))
	return b
}

// stepULPs is v moved n float64 steps up (n < 0: down) in the order of
// the values, ±0 one step, stopping at ±Inf; NaN and ±Inf stay.
func stepULPs(v float64, n int64) float64 {
	if v != v || math.IsInf(v, 0) {
		return v
	}
	const inf = int64(0x7ff0000000000000)
	o := int64(math.Float64bits(v))
	if o < 0 {
		o = -(o & math.MaxInt64)
	}
	o = min(max(o+n, -inf), inf)
	if o < 0 {
		return math.Float64frombits(uint64(-o) | 1<<63)
	}
	return math.Float64frombits(uint64(o))
}

// CheckWide compares got, p's dst, with WideBounds: every output within
// its bounds, and every other dst byte still the sentinel.
func CheckWide(t testing.TB, what string, p *plan.Problem, src, got []byte, bins [][]byte, sentinel byte) {
	t.Helper()
	CheckWideBounds(t, what, p, WideBounds(p, src, bins), got, sentinel)
}

// WideMismatch is CheckWide's comparison: "" when got matches, else the
// first mismatch.
func WideMismatch(p *plan.Problem, src, got []byte, bins [][]byte, sentinel byte) string {
	return WideMismatchBounds(p, WideBounds(p, src, bins), got, sentinel)
}

// CheckWideBounds is CheckWide against want, WideBounds of p: a test
// that runs one problem many times (each ISA, each placement) computes
// them once.
func CheckWideBounds(t testing.TB, what string, p *plan.Problem, want map[int64]Bounds, got []byte, sentinel byte) {
	t.Helper()
	if msg := WideMismatchBounds(p, want, got, sentinel); msg != "" {
		t.Errorf("%s: %v %v->%v dims %v strides %v reduce %v post-ops %+v: %s", what, p.Reduction, p.SrcDT, p.DstDT, p.Dims, p.SrcStrides, p.Reduce, p.PostOps, msg)
	}
}

// WideMismatchBounds is WideMismatch against want, WideBounds of p.
func WideMismatchBounds(p *plan.Problem, want map[int64]Bounds, got []byte, sentinel byte) string {
	sz := int64(p.DstDT.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		b, ok := want[i]
		if !ok {
			for k := i * sz; k < (i+1)*sz; k++ {
				if got[k] != sentinel {
					return fmt.Sprintf("dst element %d is no output but was written", i)
				}
			}
			continue
		}
		v := oracle.Get(p.DstDT, got, i)
		switch {
		case v != v:
			if !b.MayNaN && b.Lo == b.Lo {
				return fmt.Sprintf("dst element %d is NaN, want [%v, %v]", i, b.Lo, b.Hi)
			}
		case b.Lo != b.Lo || v < b.Lo || v > b.Hi:
			return fmt.Sprintf("dst element %d is %v, want [%v, %v] (NaN allowed: %v)", i, v, b.Lo, b.Hi, b.MayNaN)
		}
	}
	return ""
}

// WideDraw is the distribution of WideProblem: ranks up to 5, dims up to
// 9 (a tenth of them 0 or long, to 3000), plain or permuted src and dst
// layouts, f64 or f32 dst, and any post-op kind.
var WideDraw = ProblemDraw{
	Rank: func(r *rand.Rand) int { return r.Intn(6) },
	Dim: func(r *rand.Rand) int64 {
		switch r.Intn(20) {
		case 0:
			return 0
		case 1:
			return 1000 + r.Int63n(2000)
		}
		return 1 + r.Int63n(9)
	},
	Pair: func(r *rand.Rand) [2]dtypes.DataType {
		return [...][2]dtypes.DataType{{dtypes.F64, dtypes.F64}, {dtypes.F64, dtypes.F64}, {dtypes.F64, dtypes.F32}}[r.Intn(3)]
	},
	SrcStrides: func(r *rand.Rand, dims []int64) []int64 { return randomLayout(r, dims) },
	DstStrides: func(r *rand.Rand, dims []int64) []int64 { return randomLayout(r, dims) },
	Kinds:      ops.Kinds(),
	Params: func(r *rand.Rand, op *plan.PostOp) {
		op.Alpha = float32(r.Intn(9)-4) / 8
		op.Beta = float32(r.Intn(9)-4) / 8
		switch op.Kind {
		case ops.Clamp:
			op.Beta = op.Alpha + float32(r.Intn(12))/4
		case ops.SoftPlus:
			op.Beta = float32(1 + r.Intn(3))
		case ops.Pow:
			op.Beta = ops.PowBetas[r.Intn(len(ops.PowBetas))]
		}
	},
	Layout: randomLayout,
}

// randomLayout lays dims out densely, in order or in a random order.
func randomLayout(r *rand.Rand, dims []int64) []int64 {
	order := r.Perm(len(dims))
	if r.Intn(2) == 0 {
		for i := range order {
			order[i] = i
		}
	}
	st := make([]int64, len(dims))
	s := int64(1)
	for k := len(order) - 1; k >= 0; k-- {
		st[order[k]] = s
		s *= max(dims[order[k]], 1)
	}
	return st
}

// WideProblem draws a problem over f64 src by WideDraw, with one of
// oracle.Reductions and half of its binary operands f64 (the rest of
// OperandTypes).
func WideProblem(r *rand.Rand, maxElems int64) *plan.Problem {
	p := RandomProblem(r, maxElems, WideDraw)
	rs := oracle.Reductions()
	p.Reduction = rs[r.Intn(len(rs))]
	for i := range p.PostOps {
		if p.PostOps[i].Kind.IsBinary() && r.Intn(2) == 0 {
			p.PostOps[i].BinDT = dtypes.F64
		}
	}
	return p
}

// FillWide fills b, elements of dt (f64, or any operand type), with
// normally distributed values of magnitudes 2^-20 to 2^20 that f32 cannot
// hold (integers for integer types); with specials, one element in 64 is
// NaN, +Inf or -Inf, and zeros are -0 half of the time.
func FillWide(r *rand.Rand, dt dtypes.DataType, b []byte, specials bool) {
	if dt != dtypes.F64 {
		switch {
		case dt == dtypes.S32:
			FillS32(r, b)
			return
		case dt.IsInt8():
			FillInts(r, dt, b, -100, 100)
			return
		}
		FillGrid(r, dt, b, 8, 8, specials, 64)
		return
	}
	for i := int64(0); i < int64(len(b)/8); i++ {
		v := math.Ldexp(r.NormFloat64(), r.Intn(41)-20)
		switch {
		case r.Intn(50) == 0:
			v = math.Copysign(0, float64(r.Intn(2)*2-1))
		case specials && r.Intn(64) == 0:
			v = [...]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.Intn(3)]
		}
		plan.StoreF64(dt, b, i, v)
	}
}

// FillWideWide fills f64 src b with values across the f64 range, for
// the |x|^p of the Lp norms: magnitudes from 2^-250 to 2^1023 with
// either sign, one element in 4 a subnormal instead (2^-1074 to the least
// normal: package math's Pow and Log are not accurate there, and the
// oracle and the interpreter take them through plan.PowF64 and
// plan.LogF64, which are), and one element in 8 a special: a signed
// zero, 1, -1, the least normal, the least subnormal, the largest finite
// value, or, with specials, NaN, +Inf or -Inf.
func FillWideWide(r *rand.Rand, b []byte, specials bool) {
	for i := int64(0); i < int64(len(b)/8); i++ {
		v := math.Ldexp(0.5+r.Float64()/2, r.Intn(1274)-249)
		if r.Intn(4) == 0 {
			v = math.Ldexp(0.5+r.Float64()/2, r.Intn(52)-1073)
		}
		if r.Intn(2) == 0 {
			v = -v
		}
		if r.Intn(8) == 0 {
			sp := []float64{0, math.Copysign(0, -1), 1, -1, 0x1p-1022, 0x1p-1074, math.MaxFloat64}
			if specials {
				sp = append(sp, math.NaN(), math.Inf(1), math.Inf(-1))
			}
			v = sp[r.Intn(len(sp))]
		}
		plan.StoreF64(dtypes.F64, b, i, v)
	}
}

// SubnormalSrc returns n f64 elements, subnormals of either sign from
// 2^-1074 to the least normal, the least subnormal among them.
func SubnormalSrc(r *rand.Rand, n int64) []byte {
	src := make([]byte, 8*n)
	for i := range n {
		v := math.Ldexp(0.5+r.Float64()/2, -1022-r.Intn(52))
		if i == 0 {
			v = 0x1p-1074
		}
		if r.Intn(2) == 0 {
			v = -v
		}
		plan.StoreF64(dtypes.F64, src, i, v)
	}
	return src
}

// SubnormalPowMismatch compares dst, n f64 outputs each |x|^(a/b) of one
// element x of src, with the exact value (PowWithin, math/big): "" when
// each is within tol(x) steps of it, else the first mismatch.
func SubnormalPowMismatch(src, dst []byte, n int64, a, b int, tol func(x float64) int) string {
	for i := range n {
		x, got := plan.LoadF64(dtypes.F64, src, i), plan.LoadF64(dtypes.F64, dst, i)
		if !PowWithin(got, math.Abs(x), a, b, tol(x)) {
			return fmt.Sprintf("|%v|^(%d/%d) = %v, not within %d steps of the exact value", x, a, b, got, tol(x))
		}
	}
	return ""
}

// NativePowTol is the steps the native kernels' |x|^p, exp(p*log|x|),
// may be from the exact value: twice |p*log|x|| (log's error scaled by
// p, and exp's of its argument's rounding) and exp's and log's own ulps.
func NativePowTol(x, p float64) int {
	return 2*vf64.MaxULP + 2 + int(math.Ceil(2*math.Abs(p*BigLog(math.Abs(x)))))
}

// CheckWideEmitted draws an f64 problem from r and checks that emit,
// an emitter's Emit, gives code (its native kernel's) only for a plan
// the native kernel takes (takes, kernelshape.NativeKindOf's error: its
// post-ops those of the f64 epilogue) and refuses the others as
// Unimplemented (the emitters' own tests check the native kernels'
// results), and that the interpreter's result matches the oracle
// (CheckWide).
func CheckWideEmitted(t testing.TB, r *rand.Rand, emit, takes func(*plan.Plan) error) {
	t.Helper()
	p := WideProblem(r, 4000)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	err = emit(pl)
	if why := takes(pl); err != nil && !errors.Is(err, status.Unimplemented) || err == nil && why != nil {
		t.Fatalf("%v: emitting an f64 plan gave %v, want Unimplemented unless the native kernel takes it (it says %v)", pl, err, why)
	}
	src, dst, bins := Buffers(t, p, 0xa5,
		func(dt dtypes.DataType, b []byte) { FillWide(r, dt, b, true) },
		func(dt dtypes.DataType, b []byte) { FillWide(r, dt, b, false) })
	if err := interp.Run(pl, src, dst, bins); err != nil {
		t.Fatal(err)
	}
	CheckWide(t, "interp", p, src, dst, bins, 0xa5)
}

// WideNativeProblem draws a problem over f64 src as WideProblem does,
// its post-ops of kinds (the native kernel's f64 epilogue's,
// kernelshape.NativeF64PostOpKinds) and its reduction one of reds.
func WideNativeProblem(r *rand.Rand, maxElems int64, reds []plan.Reduction, kinds []ops.Kind) *plan.Problem {
	d := WideDraw
	d.Kinds = kinds
	p := RandomProblem(r, maxElems, d)
	p.Reduction = reds[r.Intn(len(reds))]
	for i := range p.PostOps {
		if p.PostOps[i].Kind.IsBinary() && r.Intn(2) == 0 {
			p.PostOps[i].BinDT = dtypes.F64
		}
	}
	return p
}

// FillWideGrid fills f64 src b with multiples of 1/8 in [-8, 8] (half
// of the zeros -0; with specials one element in 64 NaN, +Inf or -Inf):
// their sums, means and sums of squares are exact in any order, so that
// a kernel's results (post-ops included) can be compared with the
// interpreter's bit for bit.
func FillWideGrid(r *rand.Rand, b []byte, specials bool) {
	for i := int64(0); i < int64(len(b)/8); i++ {
		v := float64(r.Intn(129)-64) / 8
		switch {
		case v == 0 && r.Intn(2) == 0:
			v = math.Copysign(0, -1)
		case specials && r.Intn(64) == 0:
			v = [...]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.Intn(3)]
		}
		plan.StoreF64(dtypes.F64, b, i, v)
	}
}

// SameWide reports the first element of got, a dst of type dt, that is
// not want's bit for bit (any NaN matching any NaN), or "".
func SameWide(dt dtypes.DataType, got, want []byte) string {
	sz := int64(dt.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		a, b := got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz]
		if string(a) == string(b) {
			continue
		}
		x, y := oracle.Get(dt, got, i), oracle.Get(dt, want, i)
		if x != x && y != y {
			continue
		}
		return fmt.Sprintf("dst element %d is %v (% x), want %v (% x)", i, x, a, y, b)
	}
	return ""
}

// WideInterpMismatch compares got, p's dst from machine code, with want,
// the interpreter's: bit for bit (SameWide) where no post-op is near
// rather than exact (vf64.Tolerance: Exp, Log and the post-ops built on
// them, whose machine code is within that of the interpreter's package
// math); within the tolerance where the last post-op is the only one of
// them (an f32 dst within one f32 ulp, what rounding two such values
// gives); and not at all where another op follows one, which could
// magnify the difference without bound (a Subtract of a close operand,
// an Exp of a large value): CheckWide's
// interval bounds, which carry the ulps through the later ops, hold those
// outputs.
func WideInterpMismatch(p *plan.Problem, got, want []byte) string {
	at, count := -1, 0
	for i, op := range p.PostOps {
		if vf64.Tolerance(op.Kind) > 0 {
			at, count = i, count+1
		}
	}
	switch {
	case count == 0:
		return SameWide(p.DstDT, got, want)
	case count > 1 || at < len(p.PostOps)-1:
		return ""
	}
	dt := p.DstDT
	sz := int64(dt.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		x, y := oracle.Get(dt, got, i), oracle.Get(dt, want, i)
		d, tol := vf64.ULPs(x, y), vf64.Tolerance(p.PostOps[at].Kind)
		if dt != dtypes.F64 && d != 0 && d != math.MaxInt64 {
			d, tol = vexp.ULPs(float32(x), float32(y)), 1
		}
		if d > tol {
			return fmt.Sprintf("dst element %d is %v, want %v (%d ulps apart, %d allowed)", i, x, y, d, tol)
		}
	}
	return ""
}

// WideTransformed are f64 reductions of the elements' |x| and x*x with
// no Lp finalize: the fused Abs and Square pre-ops' (abs>max,
// square>sum, ...), for the native kernels' tests.
var WideTransformed = []plan.Reduction{
	{Transform: plan.TransformAbs, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformSquare, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformAbs, Combine: plan.CombineMin, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformSquare, Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
	{Transform: plan.TransformSquare}, // the mean of the squares
	{Transform: plan.TransformAbs, Combine: plan.CombineMul, Finalize: plan.FinalizeNone},
}

// WideLp are f64 Lp norms of p 1 and 2 (ReduceL1, ReduceL2, norm_lp and
// norm_lp_power_p) with eps 0, positive eps that clamp or shift small
// results, and negative ones (an L2 of eps + acc below 0 is NaN), for the
// native kernels' tests.
var WideLp = []plan.Reduction{
	plan.AlgNormLpSum.Reduction(1, 0),
	plan.AlgNormLpSum.Reduction(2, 0),
	plan.AlgNormLpMax.Reduction(2, 30),
	plan.AlgNormLpMax.Reduction(1, 7.5),
	plan.AlgNormLpSum.Reduction(2, -6),
	plan.AlgNormLpPowerPSum.Reduction(2, 0.25),
	plan.AlgNormLpPowerPMax.Reduction(2, 40),
	plan.AlgNormLpPowerPSum.Reduction(1, 1.5),
	plan.AlgNormLpPowerPMax.Reduction(1, -1),
}

// WideLpP are f64 Lp norms of p other than 1 and 2, whose |x|^p and
// p-th root the native kernels compute as exp(p*log|x|) and
// exp(log(y)/p), with eps 0, positive and negative (an eps + acc below
// 0 of 1/p not an integer is NaN, as math.Pow has it), for the native
// kernels' tests.
var WideLpP = []plan.Reduction{
	plan.AlgNormLpSum.Reduction(3, 0),
	plan.AlgNormLpMax.Reduction(0.5, 1e-3),
	plan.AlgNormLpSum.Reduction(4, 0.25),
	plan.AlgNormLpSum.Reduction(1.5, -6),
	plan.AlgNormLpMax.Reduction(0.25, 0),
	plan.AlgNormLpPowerPSum.Reduction(3, 0.5),
	plan.AlgNormLpPowerPMax.Reduction(0.5, 40),
	plan.AlgNormLpSum.Reduction(0.5, 0.125),
}

package reduce_test

// Checks of package reduce against the ONNX operator spec
// and against a float64 reference written here, independently of gdnn's
// own oracle packages (internal/interp, the bench references).

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/reduce"
)

var advOps = []reduce.Op{reduce.OpMean, reduce.OpSum, reduce.OpMax, reduce.OpMin, reduce.OpProd,
	reduce.OpL1, reduce.OpL2, reduce.OpSumSquare, reduce.OpLogSum, reduce.OpLogSumExp}

var advONNXNames = map[reduce.Op]string{
	reduce.OpMean: "ReduceMean", reduce.OpSum: "ReduceSum", reduce.OpMax: "ReduceMax", reduce.OpMin: "ReduceMin",
	reduce.OpProd: "ReduceProd", reduce.OpL1: "ReduceL1", reduce.OpL2: "ReduceL2", reduce.OpSumSquare: "ReduceSumSquare",
	reduce.OpLogSum: "ReduceLogSum", reduce.OpLogSumExp: "ReduceLogSumExp",
}

// advISAs are the instruction-set caps every check runs under (the ones
// this CPU lacks fall back to the next, which is still a valid run);
// under the race detector, AVX-512 and the interpreter
// (kerneltest.RaceDetector).
var advISAs = func() []jit.ISA {
	if kerneltest.RaceDetector {
		return []jit.ISA{jit.AVX512, jit.None}
	}
	return []jit.ISA{jit.AVX512, jit.AVX2, jit.None}
}()

// advCatch turns a panic into an error, so that a panic is reported as
// a failure of the case that caused it.
func advCatch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// TestONNXEmptySetValues checks what each ONNX Reduce* op gives over an
// empty set of values (a reduced dim of size 0), at opsets 13 and 18,
// with and without keepdims. ONNX (Operators.md, opset 18, after onnx
// PR #5568): ReduceSum, ReduceL1, ReduceL2 and ReduceSumSquare give 0,
// ReduceProd 1, ReduceMax "minus infinity (if supported by the datatype)
// or the minimum value of the data type", ReduceMin plus infinity or the
// maximum value, ReduceLogSum and ReduceLogSumExp minus infinity;
// ReduceMean is undefined (gdnn: NaN, 0/0, which an integer dst stores
// as 0).
func TestONNXEmptySetValues(t *testing.T) {
	inf := math.Inf(1)
	want := map[reduce.Op]float64{
		reduce.OpMean: math.NaN(), reduce.OpSum: 0, reduce.OpMax: -inf, reduce.OpMin: inf, reduce.OpProd: 1,
		reduce.OpL1: 0, reduce.OpL2: 0, reduce.OpSumSquare: 0, reduce.OpLogSum: -inf, reduce.OpLogSumExp: -inf,
	}
	same := func(got, want float64) bool {
		return got == want || (math.IsNaN(got) && math.IsNaN(want))
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, op := range advOps {
			for _, opset := range []int{13, 18} {
				for _, keep := range []bool{false, true} {
					n, err := reduce.NewONNXNode(advONNXNames[op], opset)
					if err != nil {
						t.Fatal(err)
					}
					n.KeepDims = keep
					var input []int64
					if n.AxesInput() {
						input = []int64{-1}
					} else {
						n.Axes = []int64{-1}
					}
					name := fmt.Sprintf("%v %s-%d keepdims %v", isa, advONNXNames[op], opset, keep)
					dims := []int{3, 0}
					w := want[op]

					f32 := []float32{7, 7, 7, 7}
					if err := advCatch(func() error { return reduce.RunONNX(n, f32, []float32{}, dims, input) }); err != nil {
						t.Errorf("%s f32: %v", name, err)
					} else if !same(float64(f32[0]), w) || !same(float64(f32[2]), w) || f32[3] != 7 {
						t.Errorf("%s f32: dst %v, want 3 x %v then the 7 left alone", name, f32, w)
					}
					for _, dt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
						h := []uint16{7, 7, 7}
						if err := advCatch(func() error {
							return reduce.RunONNX(n, h, []uint16{}, dims, input, reduce.Type(dt))
						}); err != nil {
							t.Errorf("%s %v: %v", name, dt, err)
							continue
						}
						if g := advWiden(dt, h[1]); !same(g, w) {
							t.Errorf("%s %v: dst[1] = %v, want %v", name, dt, g, w)
						}
					}
					// Integer dsts: the infinities become the type's limits.
					s8 := []int8{7, 7, 7}
					u8 := []uint8{7, 7, 7}
					s32 := []int32{7, 7, 7}
					e1 := advCatch(func() error { return reduce.RunONNX(n, s8, []int8{}, dims, input) })
					e2 := advCatch(func() error { return reduce.RunONNX(n, u8, []uint8{}, dims, input) })
					e3 := advCatch(func() error { return reduce.RunONNX(n, s32, []uint8{}, dims, input) })
					if err := errors.Join(e1, e2, e3); err != nil {
						t.Errorf("%s integer: %v", name, err)
						continue
					}
					if g, x := float64(s8[1]), advSat(w, -128, 127); g != x {
						t.Errorf("%s s8: %v, want %v", name, g, x)
					}
					if g, x := float64(u8[1]), advSat(w, 0, 255); g != x {
						t.Errorf("%s u8: %v, want %v", name, g, x)
					}
					if g, x := float64(s32[1]), advSat(w, math.MinInt32, math.MaxInt32); g != x {
						t.Errorf("%s u8 -> s32: %v, want %v", name, g, x)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

func advWiden(dt dtypes.DataType, b uint16) float64 {
	if dt == dtypes.BF16 {
		return float64(dtypes.BF16ToF32(b))
	}
	return float64(dtypes.F16ToF32(b))
}

// advSat is v stored to an integer type: rounded to nearest even,
// saturated, NaN as 0 (gdnn's documented rule for integer dsts).
func advSat(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return math.Max(lo, math.Min(hi, math.RoundToEven(v)))
}

// advCase is one random problem: src dims and strides, axes (some
// negative, in any order), keep_dims and dst strides (per dst dim).
type advCase struct {
	op                  reduce.Op
	dims, axes, ss, dss []int
	keep                bool
}

func (c advCase) String() string {
	return fmt.Sprintf("%v dims %v axes %v keep %v src strides %v dst strides %v", c.op, c.dims, c.axes, c.keep, c.ss, c.dss)
}

func (c advCase) reduced() []bool {
	red := make([]bool, len(c.dims))
	for _, a := range c.axes {
		if a < 0 {
			a += len(c.dims)
		}
		red[a] = true
	}
	return red
}

func (c advCase) dstDims() []int {
	var d []int
	for i, r := range c.reduced() {
		switch {
		case !r:
			d = append(d, c.dims[i])
		case c.keep:
			d = append(d, 1)
		}
	}
	return d
}

// advSpan is the number of elements dims with strides address.
func advSpan(dims, strides []int) int {
	s := 1
	for i, d := range dims {
		if d == 0 {
			return 0
		}
		s += (d - 1) * strides[i]
	}
	return s
}

// advStrides returns strides for dims in a random nesting order with
// random padding: every dim's stride is at least the extent of the ones
// nested in it, so no two indices share an element.
func advStrides(rng *rand.Rand, dims []int) []int {
	st := make([]int, len(dims))
	s := 1
	for _, p := range rng.Perm(len(dims)) {
		st[p] = s
		s *= max(dims[p]+rng.Intn(2), 1)
	}
	return st
}

func advRandomCase(rng *rand.Rand, op reduce.Op) advCase {
	c := advCase{op: op, dims: make([]int, rng.Intn(5)+1)}
	for i := range c.dims {
		switch rng.Intn(8) {
		case 0:
			c.dims[i] = 1
		case 1:
			c.dims[i] = rng.Intn(150) + 1
		case 2:
			c.dims[i] = rng.Intn(2) // empty dims
		default:
			c.dims[i] = rng.Intn(9) + 1
		}
	}
	for tot := 0; ; {
		tot = 1
		for _, d := range c.dims {
			tot *= d
		}
		if tot <= 8000 {
			break
		}
		k := rng.Intn(len(c.dims))
		c.dims[k] = (c.dims[k] + 1) / 2
	}
	for i := range c.dims {
		if rng.Intn(2) == 0 {
			a := i
			if rng.Intn(2) == 0 {
				a -= len(c.dims)
			}
			c.axes = append(c.axes, a)
		}
	}
	rng.Shuffle(len(c.axes), func(i, j int) { c.axes[i], c.axes[j] = c.axes[j], c.axes[i] })
	c.keep = rng.Intn(2) == 0
	c.ss = advStrides(rng, c.dims)
	if rng.Intn(4) == 0 {
		c.ss[rng.Intn(len(c.ss))] = 0 // a broadcast dim
	}
	c.dss = advStrides(rng, c.dstDims())
	return c
}

// advRef computes each output of c over x (src elements as float64, by
// offset) in float64: its value and a bound on the error of an f32
// computation of it, both keyed by the output's dst offset.
//
// The bounds, with u = 2^-24 (half an f32 ulp, relative):
//   - a sum of n terms in any order is within (n-1) u sum|x| of the exact
//     sum (the classic bound for recursive or pairwise summation in f32,
//     which the two-level sums satisfy too); n u sum|x| is used;
//   - the mean adds one rounding of the division: (n+1) u sum|x| / n;
//   - a product of n factors is within about (n-1) u |p| relatively;
//     (n+1) u |p| (with 1% slack for the higher-order terms) is used;
//   - sums of squares add one rounding per square: (n+1) u sum x²;
//     L2's square root halves the relative error and adds one rounding;
//   - LogSum: log(S(1+d)) = log S + d, so the absolute error is the sum's
//     relative error n u sum|x| / |S| plus the log's own rounding;
//   - LogSumExp: the README's bound for the unshifted exp,
//     (4 + 1.25 |x|) u relative per term, plus the f32 sum's n u, plus
//     the log's rounding.
//
// Max and min are exact (bound 0).
func advRef(c advCase, x []float64) (vals, errs map[int]float64) {
	r := len(c.dims)
	red := c.reduced()
	dstr := make([]int, r) // dst stride per src dim
	for i, j := 0, 0; i < r; i++ {
		if red[i] && !c.keep {
			continue
		}
		if !red[i] {
			dstr[i] = c.dss[j]
		}
		j++
	}
	type acc struct {
		n, sum, sabs, sq, prod, mx, mn, mxabs float64
		xs                                    []float64
	}
	accs := map[int]*acc{}
	idx := make([]int, r)
	var walk func(i, so, do int, all bool)
	walk = func(i, so, do int, all bool) {
		if i == r {
			a := accs[do]
			if a == nil {
				a = &acc{prod: 1, mx: math.Inf(-1), mn: math.Inf(1)}
				accs[do] = a
			}
			if !all {
				return // an output of an empty reduction
			}
			v := x[so]
			a.n++
			a.sum += v
			a.sabs += math.Abs(v)
			a.sq += v * v
			a.prod *= v
			a.mx, a.mn = math.Max(a.mx, v), math.Min(a.mn, v)
			a.mxabs = math.Max(a.mxabs, math.Abs(v))
			a.xs = append(a.xs, v)
			return
		}
		if c.dims[i] == 0 && red[i] {
			walk(i+1, so, do, false)
			return
		}
		for idx[i] = 0; idx[i] < c.dims[i]; idx[i]++ {
			walk(i+1, so+idx[i]*c.ss[i], do+idx[i]*dstr[i], all)
		}
	}
	walk(0, 0, 0, true)
	const u = 1.0 / (1 << 24)
	vals, errs = map[int]float64{}, map[int]float64{}
	for off, a := range accs {
		var v, e float64
		n := a.n
		switch c.op {
		case reduce.OpMean:
			v, e = a.sum/n, (n+1)*u*a.sabs/n
		case reduce.OpSum:
			v, e = a.sum, n*u*a.sabs
		case reduce.OpMax:
			v = a.mx
		case reduce.OpMin:
			v = a.mn
		case reduce.OpProd:
			v = a.prod
			e = (n + 1) * 1.01 * u * math.Abs(v)
		case reduce.OpL1:
			v, e = a.sabs, n*u*a.sabs
		case reduce.OpL2:
			v = math.Sqrt(a.sq)
			e = (n + 2) * u * v
		case reduce.OpSumSquare:
			v, e = a.sq, (n+1)*u*a.sq
		case reduce.OpLogSum:
			v = math.Log(a.sum)
			e = n*u*a.sabs/math.Abs(a.sum) + 2*u*math.Abs(v)
		case reduce.OpLogSumExp:
			v = math.Inf(-1)
			if n > 0 {
				m := a.mx
				s := 0.0
				for _, t := range a.xs {
					s += math.Exp(t - m)
				}
				v = m + math.Log(s)
			}
			e = (4+1.25*a.mxabs)*u + (n+2)*u + 2*u*math.Abs(v)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			e = 0
		}
		vals[off], errs[off] = v, e
	}
	return vals, errs
}

// advULP is the spacing of dt's values at |v| (the subnormal spacing
// below the normal range).
func advULP(dt dtypes.DataType, v float64) float64 {
	mant, minExp := 23, -126
	switch dt {
	case dtypes.BF16:
		mant = 7
	case dtypes.F16:
		mant, minExp = 10, -14
	}
	_, e := math.Frexp(math.Abs(v))
	return math.Ldexp(1, max(e-1, minExp)-mant)
}

func advRound(dt dtypes.DataType, v float64) float64 {
	switch dt {
	case dtypes.BF16:
		return float64(dtypes.BF16ToF32(dtypes.F32ToBF16(float32(v))))
	case dtypes.F16:
		return float64(dtypes.F16ToF32(dtypes.F32ToF16(float32(v))))
	}
	return float64(float32(v))
}

// advClose reports whether got, stored in dt, can be the f32 result
// within e of v rounded to dt: |got - v| <= e plus half a dt ulp (the
// final rounding) plus half an f32 ulp (the f32 result's own rounding).
// Infinities, NaN and exact results (e = 0) must match the rounding of v.
func advClose(dt dtypes.DataType, got, v, e float64) bool {
	if math.IsNaN(v) {
		return math.IsNaN(got)
	}
	if rv := advRound(dt, v); got == rv {
		return true
	} else if math.IsInf(v, 0) || math.IsInf(rv, 0) || e == 0 {
		return false
	}
	a := math.Abs(v) + e
	return math.Abs(got-v) <= e+advULP(dt, a)/2+advULP(dtypes.F32, a)/2
}

// advData is src data for op: multiples of 1/32 that bf16 and f16 hold
// exactly; positive for LogSum (whose log needs a positive sum) and near
// 1 for Prod (whose long products would leave the f16 range).
func advData(rng *rand.Rand, op reduce.Op, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		switch op {
		case reduce.OpLogSum:
			x[i] = float64(rng.Intn(64)+16) / 32
		case reduce.OpProd:
			x[i] = float64(rng.Intn(9)+28) / 32 * float64(1-2*rng.Intn(2))
		default:
			x[i] = float64(rng.Intn(256)-128) / 32
		}
	}
	return x
}

// TestAgainstIndependentReference runs random problems (ranks 1-5, empty
// and size-1 dims, negative and unordered axes, keep_dims, permuted and
// padded src and dst strides, broadcast src dims) of every kind in f32,
// bf16 and f16, under every ISA cap, and checks each output against the
// float64 reference above, and that nothing outside the outputs is
// written.
func TestAgainstIndependentReference(t *testing.T) {
	rng := rand.New(rand.NewSource(20261128))
	const guard = 3
	fails := 0
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for it := 0; it < 250 && fails < 10; it++ {
			c := advRandomCase(rng, advOps[rng.Intn(len(advOps))])
			n := advSpan(c.dims, c.ss)
			x := advData(rng, c.op, n)
			vals, errs := advRef(c, x)
			dn := advSpan(c.dstDims(), c.dss) + guard
			opts := []reduce.Option{reduce.KeepDims(c.keep), reduce.SrcStrides(c.ss), reduce.DstStrides(c.dss)}
			for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
				got := make([]float64, dn)
				var err error
				if dt == dtypes.F32 {
					src, dst := make([]float32, n), make([]float32, dn)
					for i := range src {
						src[i] = float32(x[i])
					}
					for i := range dst {
						dst[i] = -12345
					}
					err = advCatch(func() error { return reduce.Reduce(c.op, dst, src, c.dims, c.axes, opts...) })
					for i := range dst {
						got[i] = float64(dst[i])
					}
				} else {
					src, dst := make([]uint16, n), make([]uint16, dn)
					for i := range src {
						if dt == dtypes.BF16 {
							src[i] = dtypes.F32ToBF16(float32(x[i]))
						} else {
							src[i] = dtypes.F32ToF16(float32(x[i]))
						}
					}
					for i := range dst {
						dst[i] = dtypes.F32ToBF16(-12345) // a value no output has in either type
						if dt == dtypes.F16 {
							dst[i] = dtypes.F32ToF16(-12345)
						}
					}
					err = advCatch(func() error {
						return reduce.Reduce(c.op, dst, src, c.dims, c.axes, append(opts, reduce.Type(dt))...)
					})
					for i := range dst {
						got[i] = advWiden(dt, dst[i])
					}
				}
				if err != nil {
					t.Errorf("%v %v %v: %v", isa, dt, c, err)
					fails++
					continue
				}
				for i, g := range got {
					if _, ok := vals[i]; !ok && g != advRound(dt, -12345) {
						t.Errorf("%v %v %v: dst[%d] = %v written, but it is no output", isa, dt, c, i, g)
						fails++
						break
					}
				}
				for off, v := range vals {
					if !advClose(dt, got[off], v, errs[off]) {
						t.Errorf("%v %v %v: dst[%d] = %v, reference %v (error bound %g)", isa, dt, c, off, got[off], v, errs[off])
						fails++
						break
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestIntegerAgainstIndependentReference runs random problems with s8,
// u8 or f32 (integer-valued) src into s8, u8 or s32 dst. The README: an
// integer dst is the result rounded to nearest even and saturated, NaN
// as 0. Sums here stay far below 2^24, so each result must be one of the
// integers the reference's error interval rounds to (exactly the
// reference's rounding where the interval holds no tie).
func TestIntegerAgainstIndependentReference(t *testing.T) {
	rng := rand.New(rand.NewSource(1128))
	fails := 0
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for it := 0; it < 250 && fails < 10; it++ {
			c := advRandomCase(rng, advOps[rng.Intn(len(advOps))])
			n := advSpan(c.dims, c.ss)
			srcKind, dstKind := rng.Intn(3), rng.Intn(3)
			x := make([]float64, n)
			for i := range x {
				switch {
				case c.op == reduce.OpProd:
					x[i] = float64(rng.Intn(5) - 2)
					if srcKind == 1 {
						x[i] = float64(rng.Intn(3))
					}
				case srcKind == 0:
					x[i] = float64(rng.Intn(256) - 128)
				case srcKind == 1:
					x[i] = float64(rng.Intn(256))
				default:
					x[i] = float64(rng.Intn(256)-128) / 4
				}
			}
			vals, errs := advRef(c, x)
			dn := advSpan(c.dstDims(), c.dss) + 2
			opts := []reduce.Option{reduce.KeepDims(c.keep), reduce.SrcStrides(c.ss), reduce.DstStrides(c.dss)}
			got, lo, hi, err := advRunInt(c, x, srcKind, dstKind, dn, opts)
			name := fmt.Sprintf("%v src %d dst %d %v", isa, srcKind, dstKind, c)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				fails++
				continue
			}
			for i, g := range got {
				if _, ok := vals[i]; !ok && g != 99 {
					t.Errorf("%s: dst[%d] = %v written, but it is no output", name, i, g)
					fails++
					break
				}
			}
			for off, v := range vals {
				e := errs[off] + 1e-12*math.Abs(v)
				a, b := advSat(v-e, lo, hi), advSat(v+e, lo, hi)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					a = advSat(v, lo, hi)
					b = a
				}
				if g := got[off]; g < a || g > b {
					t.Errorf("%s: dst[%d] = %v, reference %v (allowed %v to %v)", name, off, g, v, a, b)
					fails++
					break
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// advRunInt runs c on x as s8, u8 or f32 src (srcKind 0, 1, 2) into an
// s8, u8 or s32 dst (dstKind 0, 1, 2) of dn elements preset to 99, and
// returns the dst as float64 and the dst type's range.
func advRunInt(c advCase, x []float64, srcKind, dstKind, dn int, opts []reduce.Option) (got []float64, lo, hi float64, err error) {
	var src any
	switch srcKind {
	case 0:
		src = advConvert[int8](x)
	case 1:
		src = advConvert[uint8](x)
	default:
		src = advConvert[float32](x)
	}
	switch dstKind {
	case 0:
		got, err = advIntoDst[int8](c, src, dn, opts)
		return got, -128, 127, err
	case 1:
		got, err = advIntoDst[uint8](c, src, dn, opts)
		return got, 0, 255, err
	}
	got, err = advIntoDst[int32](c, src, dn, opts)
	return got, math.MinInt32, math.MaxInt32, err
}

// advConvert converts x to a slice of E.
func advConvert[E int8 | uint8 | float32](x []float64) []E {
	s := make([]E, len(x))
	for i := range s {
		s[i] = E(x[i])
	}
	return s
}

// advIntoDst runs c on src (an []int8, []uint8 or []float32) into a dst
// of dn elements of type D preset to 99, and returns the dst as float64.
func advIntoDst[D int8 | uint8 | int32](c advCase, src any, dn int, opts []reduce.Option) ([]float64, error) {
	d := make([]D, dn)
	for i := range d {
		d[i] = 99
	}
	var err error
	switch s := src.(type) {
	case []int8:
		err = advCatch(func() error { return reduce.Reduce(c.op, d, s, c.dims, c.axes, opts...) })
	case []uint8:
		err = advCatch(func() error { return reduce.Reduce(c.op, d, s, c.dims, c.axes, opts...) })
	case []float32:
		err = advCatch(func() error { return reduce.Reduce(c.op, d, s, c.dims, c.axes, opts...) })
	}
	got := make([]float64, len(d))
	for i, v := range d {
		got[i] = float64(v)
	}
	return got, err
}

// TestSpecialValuesAgainstIEEE puts NaN, infinities, signed zeros and
// large values at the start, middle and end of rows long enough for the
// vector loops and their tails, and checks each kind against IEEE
// float64 arithmetic: NaN wins in max and min (README: "NaN propagates
// through ReduceMax and ReduceMin on every instruction set"), max and
// min order -0 below +0, sums of +Inf and -Inf are NaN, log-sum-exp of a
// row with +Inf is +Inf and of an all -Inf row -Inf.
func TestSpecialValuesAgainstIEEE(t *testing.T) {
	nan, inf, nz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	specials := []float64{nan, inf, -inf, 0, nz, 1e30, -1e30, 100, -100}
	bad := 0
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, op := range advOps {
			for _, n := range []int{1, 2, 16, 17, 129} {
				for _, s1 := range specials {
					for _, s2 := range []float64{s1, nan, inf, -inf, nz} {
						for _, pos := range []int{0, n / 2, n - 1} {
							x := make([]float64, n)
							for i := range x {
								x[i] = 0.5 + float64(i%5)/8
								if op == reduce.OpMax || op == reduce.OpMin {
									x[i] = []float64{nz, 0}[i%2]
								}
							}
							x[pos], x[n-1-pos] = s1, s2
							src := make([]float32, n)
							for i := range x {
								src[i] = float32(x[i])
								x[i] = float64(src[i])
							}
							dst := []float32{42}
							err := advCatch(func() error { return reduce.Reduce(op, dst, src, []int{n}, []int{0}) })
							w, e := advSpecialRef(op, x)
							g := float64(dst[0])
							ok := err == nil
							switch {
							case !ok:
							case math.IsNaN(w):
								ok = math.IsNaN(g)
							case op == reduce.OpMax || op == reduce.OpMin:
								ok = g == w && math.Signbit(g) == math.Signbit(w)
							case math.IsInf(w, 0):
								ok = g == w
							case math.IsInf(float64(float32(w)), 0):
								// the final value is past f32: Inf, or (interpreter) the
								// largest finite f32 on the way
								ok = math.IsInf(g, 0) || math.Abs(g) >= math.MaxFloat32
							default:
								ok = math.Abs(g-w) <= e+advULP(dtypes.F32, w)
							}
							// README, Precision: on the JIT x² past the f32 range is +Inf.
							if !ok && isa != jit.None && math.IsInf(g, 1) && (op == reduce.OpL2 || op == reduce.OpSumSquare) {
								ok = true
							}
							if !ok && bad < 20 {
								bad++
								t.Errorf("%v %v of %d elements with %v at %d and %v at %d: got %v (%v), want %v", isa, op, n, s1, pos, s2, n-1-pos, g, err, w)
							}
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// advSpecialRef is op over x in float64 and an absolute error bound for
// finite results (the f32 bounds of advRef, with the log-sum-exp bound
// of the README's unshifted exp).
func advSpecialRef(op reduce.Op, x []float64) (float64, float64) {
	const u = 1.0 / (1 << 24)
	n := float64(len(x))
	s, sa, sq, p := 0.0, 0.0, 0.0, 1.0
	mx, mn, mxabs := math.Inf(-1), math.Inf(1), 0.0
	nan := false
	for _, v := range x {
		s += v
		sa += math.Abs(v)
		sq += v * v
		p *= v
		nan = nan || math.IsNaN(v)
		if v > mx || (v == 0 && mx == 0 && !math.Signbit(v)) {
			mx = v
		}
		if v < mn || (v == 0 && mn == 0 && math.Signbit(v)) {
			mn = v
		}
		if !math.IsInf(v, 0) {
			mxabs = math.Max(mxabs, math.Abs(v))
		}
	}
	switch op {
	case reduce.OpMean:
		return s / n, (n + 1) * u * sa / n
	case reduce.OpSum:
		return s, n * u * sa
	case reduce.OpMax, reduce.OpMin:
		if nan {
			return math.NaN(), 0
		}
		if op == reduce.OpMax {
			return mx, 0
		}
		return mn, 0
	case reduce.OpProd:
		return p, (n + 1) * u * math.Abs(p)
	case reduce.OpL1:
		return sa, n * u * sa
	case reduce.OpL2:
		return math.Sqrt(sq), (n + 2) * u * math.Sqrt(sq)
	case reduce.OpSumSquare:
		return sq, (n + 1) * u * sq
	case reduce.OpLogSum:
		return math.Log(s), n*u*sa/math.Abs(s) + 2*u*math.Abs(math.Log(s))
	}
	// log-sum-exp, shifted by the maximum
	if nan {
		return math.NaN(), 0
	}
	if math.IsInf(mx, 0) {
		return mx, 0
	}
	t := 0.0
	for _, v := range x {
		t += math.Exp(v - mx)
	}
	v := mx + math.Log(t)
	return v, (4+1.25*mxabs)*u + (n+2)*u + 2*u*math.Abs(v)
}

// TestRefusalsBeforeWork checks that calls the package must refuse are
// refused with a status, whatever the shape describes.
func TestRefusalsBeforeWork(t *testing.T) {
	src, dst := make([]float32, 8), make([]float32, 8)
	cases := []struct {
		name   string
		call   func() error
		status graph.Status
	}{
		{"ONNX axis 2^40", func() error {
			n, _ := reduce.NewONNXNode("ReduceMean", 18)
			return reduce.RunONNX(n, dst, src, []int{2, 4}, []int64{1 << 40})
		}, graph.InvalidArguments},
		{"ONNX axis MinInt64", func() error {
			n, _ := reduce.NewONNXNode("ReduceMax", 18)
			return reduce.RunONNX(n, dst, src, []int{2, 4}, []int64{math.MinInt64})
		}, graph.InvalidArguments},
		{"ONNX duplicate axes -1 and 1", func() error {
			n, _ := reduce.NewONNXNode("ReduceSum", 13)
			return reduce.RunONNX(n, dst, src, []int{2, 4}, []int64{-1, 1})
		}, graph.InvalidArguments},
		{"ONNX axes input before opset 18", func() error {
			n, _ := reduce.NewONNXNode("ReduceL2", 13)
			return reduce.RunONNX(n, dst, src, []int{2, 4}, []int64{})
		}, graph.InvalidArguments},
		{"rank 0 with axis 0", func() error { return reduce.Sum(dst, src, []int{}, []int{0}) }, graph.InvalidArguments},
		{"dst stride 0 on a kept dim of 2", func() error {
			return reduce.Sum(dst, src, []int{2, 4}, []int{1}, reduce.DstStrides([]int{0}))
		}, graph.InvalidArguments},
		{"dst strides that interleave", func() error {
			return reduce.Sum(dst, src, []int{2, 4}, nil, reduce.DstStrides([]int{2, 1}))
		}, graph.InvalidArguments},
		{"src strides overflow", func() error {
			return reduce.Sum(dst, src, []int{2, 4}, []int{1}, reduce.SrcStrides([]int{math.MaxInt / 2, math.MaxInt / 2}))
		}, graph.InvalidArguments},
		{"dst is src", func() error { return reduce.Sum(src, src, []int{2, 4}, []int{1}) }, graph.InvalidArguments},
		{"dst inside src", func() error { return reduce.Sum(src[1:], src[:4], []int{4, 1}, []int{1}) }, graph.InvalidArguments},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, c := range cases {
			err := advCatch(c.call)
			if !errors.Is(err, c.status) {
				t.Errorf("%v %s: error %v, want status %v", isa, c.name, err, c.status)
			}
		}
		jit.SetMaxISA(prev)
	}
}

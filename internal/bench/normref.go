package bench

import (
	"fmt"
	"math"

	"github.com/gdnn/gdnn/dtypes"
)

// The normalization drivers' float64 references, fills and comparison,
// after benchdnn's (tests/benchdnn/{softmax,lnorm,gnorm}/*.cpp). Tensors
// here are float64 slices in logical row-major order; loadLogical and
// storeLogical move them to and from buffers in any strided layout.

// refSoftmax computes softmax (log: log-softmax) of x over axis of dims,
// shifted by the row's max as benchdnn's reference is: softmax is
// exp(x-max)/sum(exp(x-max)), log-softmax x-max-log(sum). A row whose max
// is -Inf (all -Inf) gives NaN, or 0 with infAsZero (oneDNN's
// softmax_accurate_inf_as_zero, Graph's mode "inf_as_zero").
func refSoftmax(x []float64, dims []int64, axis int, log, infAsZero bool) []float64 {
	out := make([]float64, len(x))
	axisRows(x, dims, axis, func(_ int64, at func(int64) int64, n int64, mx float64) {
		if math.IsInf(mx, -1) {
			v := math.NaN()
			if infAsZero {
				v = 0
			}
			for k := int64(0); k < n; k++ {
				out[at(k)] = v
			}
			return
		}
		sum := 0.0
		for k := int64(0); k < n; k++ {
			sum += math.Exp(x[at(k)] - mx)
		}
		for k := int64(0); k < n; k++ {
			if log {
				out[at(k)] = x[at(k)] - mx - math.Log(sum)
			} else {
				out[at(k)] = math.Exp(x[at(k)]-mx) / sum
			}
		}
	})
	return out
}

// refSoftmaxStats is SoftMax's stats output over x: per row, max +
// log(sum(exp(x - max))), in the logical order of dims with the axis 1.
// A row of -Inf gives NaN, 0 with infAsZero (as oneDNN's graph gives).
func refSoftmaxStats(x []float64, dims []int64, axis int, infAsZero bool) []float64 {
	outer, _, inner := splitAt(dims, axis)
	out := make([]float64, outer*inner)
	axisRows(x, dims, axis, func(row int64, at func(int64) int64, n int64, mx float64) {
		sum := 0.0
		for k := int64(0); k < n; k++ {
			sum += math.Exp(x[at(k)] - mx)
		}
		v := mx + math.Log(sum)
		if n == 0 || math.IsInf(mx, -1) && infAsZero {
			v = 0
		}
		out[row] = v
	})
	return out
}

// axisRows calls f for each row of x along dim axis of dims: its index
// in the order of dims with the axis 1, where its k-th element is in x,
// its length and its largest element.
func axisRows(x []float64, dims []int64, axis int, f func(row int64, at func(int64) int64, n int64, mx float64)) {
	outer, n, inner := splitAt(dims, axis)
	for o := int64(0); o < outer; o++ {
		for in := int64(0); in < inner; in++ {
			at := func(k int64) int64 { return (o*n+k)*inner + in }
			mx := math.Inf(-1)
			for k := int64(0); k < n; k++ {
				mx = math.Max(mx, x[at(k)])
			}
			f(o*inner+in, at, n, mx)
		}
	}
}

// softmaxStatsTrh is benchdnn's threshold for SoftMax's stats in the
// graph driver: its eltwise log's for f32.
const softmaxStatsTrh = 4e-5

// splitAt returns the sizes before, at and after dim axis of dims.
func splitAt(dims []int64, axis int) (outer, n, inner int64) {
	outer, n, inner = 1, 1, 1
	for i, d := range dims {
		switch {
		case i < axis:
			outer *= d
		case i == axis:
			n = d
		default:
			inner *= d
		}
	}
	return outer, n, inner
}

// refLayerNorm normalizes each of rows rows of l consecutive elements of
// x as benchdnn's layer normalization does: mean = sum(x)/l (0 for RMS
// norm), variance = sum((x-mean)^2)/l, dst = gamma*(x-mean)/sqrt(variance
// + eps) + beta, epsilon inside the square root; gamma and beta (per
// element of a row) are optional (nil).
func refLayerNorm(x []float64, rows, l int64, eps float64, gamma, beta []float64, rms bool) (dst, mean, variance []float64) {
	dst = make([]float64, len(x))
	mean, variance = make([]float64, rows), make([]float64, rows)
	for r := int64(0); r < rows; r++ {
		row := x[r*l : (r+1)*l]
		m, v := meanVar(row, rms)
		mean[r], variance[r] = m, v
		den := math.Sqrt(v + eps)
		for c, xv := range row {
			y := (xv - m) / den
			if gamma != nil {
				y *= gamma[c]
			}
			if beta != nil {
				y += beta[c]
			}
			dst[r*l+int64(c)] = y
		}
	}
	return dst, mean, variance
}

// meanVar returns the mean (0 when zeroMean) and the biased variance
// about it of vals, summed in float64 in two passes.
func meanVar(vals []float64, zeroMean bool) (m, v float64) {
	if len(vals) == 0 {
		return 0, 0
	}
	if !zeroMean {
		for _, x := range vals {
			m += x
		}
		m /= float64(len(vals))
	}
	for _, x := range vals {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(vals))
}

// refGroupNorm normalizes x of logical dims [n, c, spatial...] (channels
// second) per batch and group of c/groups channels over the channels and
// the spatial dims, as benchdnn's group normalization: mean and variance
// per (n, group) (dims [n, groups]), dst = gamma[ch]*(x-mean)/sqrt(
// variance + eps) + beta[ch] with per-channel gamma and beta (nil: absent).
func refGroupNorm(x []float64, n, c, spatial, groups int64, eps float64, gamma, beta []float64) (dst, mean, variance []float64) {
	dst = make([]float64, len(x))
	mean, variance = make([]float64, n*groups), make([]float64, n*groups)
	cg := c / groups
	for b := int64(0); b < n; b++ {
		for g := int64(0); g < groups; g++ {
			lo := (b*c + g*cg) * spatial
			hi := lo + cg*spatial
			m, v := meanVar(x[lo:hi], false)
			mean[b*groups+g], variance[b*groups+g] = m, v
			den := math.Sqrt(v + eps)
			for i := lo; i < hi; i++ {
				ch := (i / spatial) % c
				y := (x[i] - m) / den
				if gamma != nil {
					y *= gamma[ch]
				}
				if beta != nil {
					y += beta[ch]
				}
				dst[i] = y
			}
		}
	}
	return dst, mean, variance
}

// loadLogical reads a tensor of dims through strides into logical order.
func loadLogical(b buffer, dims, strides []int64) []float64 {
	n, _ := numElements(dims)
	out := make([]float64, n)
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) { out[pos] = b.get(offs[0]) })
	return out
}

// storeLogical writes vals (logical order) through strides, rounding to
// the buffer's type.
func storeLogical(b buffer, dims, strides []int64, vals []float64) {
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) { b.set(offs[0], vals[pos]) })
}

// lowestOf is the most negative finite value of dt (benchdnn's lowest_dt).
func lowestOf(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.BF16:
		return -float64(math.Float32frombits(0x7f7f0000))
	case dtypes.F16:
		return -65504
	case dtypes.S8:
		return -128
	case dtypes.U8:
		return 0
	}
	return -math.MaxFloat32
}

// softmaxFill is the softmax drivers' fill: in each row (the elements
// along the axis), a run of 1-2 values of a+2, 2-5 of a+1 and 5-8 of a at
// a random place (fewer where the axis is shorter), every other element
// the lowest value of the src and dst types, whose exp is 0. benchdnn's
// "essence of testing" has two modes, both filled here on every problem
// (benchdnn alternates them per 64 rows, which most shapes never reach):
// negative (a = -88: every value negative, so that a max taken of
// magnitudes, not signed values, shows) and overflow (a = 88: exp(90)
// overflows f32, so an implementation that does not subtract the max
// gives inf or NaN).
func softmaxFill(dims []int64, axis int, negative bool, lowest float64, seed uint64) []float64 {
	return softmaxFillTops(dims, axis, negative, lowest, seed, softmaxTops)
}

// softmaxTops and softmaxTopsInt8 are the ranges of the counts of a+2,
// a+1 and a in a row of softmaxFill: benchdnn's, and its ranges for an
// 8-bit dst (one a+2, one a+1, up to 4 a), whose larger probabilities
// quantize to more than a few levels.
var (
	softmaxTops     = [3][2]int64{{1, 2}, {2, 5}, {5, 8}}
	softmaxTopsInt8 = [3][2]int64{{1, 1}, {1, 1}, {0, 4}}
)

// softmaxFillTops is softmaxFill with the counts' ranges given.
func softmaxFillTops(dims []int64, axis int, negative bool, lowest float64, seed uint64, tops [3][2]int64) []float64 {
	outer, n, inner := splitAt(dims, axis)
	a := 88.0
	if negative {
		a = -88
	}
	top := []float64{a + 2, a + 1, a}
	vals := make([]float64, outer*n*inner)
	row := int64(0)
	for o := int64(0); o < outer; o++ {
		for in := int64(0); in < inner; in++ {
			rnd := func(k, lo, hi int64) int64 {
				return lo + int64(splitmix64(seed^uint64(row)*0x9E3779B97F4A7C15^uint64(k))%uint64(hi-lo+1))
			}
			cnt := []int64{rnd(0, tops[0][0], tops[0][1]), rnd(1, tops[1][0], tops[1][1]), rnd(2, tops[2][0], tops[2][1])}
			sum := cnt[0] + cnt[1] + cnt[2]
			// Trim from the last kind until the run fits the axis, as
			// benchdnn does.
			for i := 2; sum > n && i >= 0; i-- {
				cut := min(cnt[i], sum-n)
				cnt[i] -= cut
				sum -= cut
			}
			start := rnd(3, 0, n-sum)
			kind := 0
			for k := int64(0); k < n; k++ {
				v := lowest
				if k >= start && k < start+sum {
					for cnt[kind] == 0 {
						kind++
					}
					v = top[kind]
					cnt[kind]--
				}
				vals[(o*n+k)*inner+in] = v
			}
			row++
		}
	}
	return vals
}

// int8Fill is statsFill for an s8 or u8 src: rows of l integers whose
// mean and variance are exact, as statsFill's are for the float types
// (whose fractions an 8-bit src would round away). Each row is pairs
// m + d, m - d around an integer mean m, the odd last element m itself,
// all within the type's range.
func int8Fill(rows, l int64, dt dtypes.DataType, seed uint64) []float64 {
	mid, spread := 0.0, 32.0 // s8: m in [-32, 32), d in [0, 96)
	if dt == dtypes.U8 {
		mid = 128
	}
	vals := make([]float64, rows*l)
	for r := range rows {
		m := mid - spread + float64(splitmix64(seed^uint64(r)*0x9E3779B97F4A7C15)%uint64(2*spread))
		for c := int64(0); c+1 < l; c += 2 {
			d := float64(splitmix64(seed^uint64(r*l+c)*0xBF58476D1CE4E5B9) % 96)
			vals[r*l+c], vals[r*l+c+1] = m+d, m-d
		}
		if l%2 == 1 {
			vals[r*l+l-1] = m
		}
	}
	return vals
}

// digitsOf is the precision of dt in bits (benchdnn's digits_dt).
func digitsOf(dt dtypes.DataType) int64 {
	switch dt {
	case dtypes.BF16:
		return 8
	case dtypes.F16:
		return 11
	}
	return 24
}

// flipCoin is benchdnn's deterministic coin: true with probability p.
func flipCoin(seed uint64, p float64) bool {
	const bigPrime, prime = 1000003, 753737
	return float64((seed*prime)%bigPrime) < p*bigPrime
}

// statsFill fills rows of l elements so that each row's mean and
// variance are exact in the src type's precision whatever the order of
// the sums, as benchdnn's lnorm and gnorm fills (cfg_t): pairs of values
// m(1+f) and m(1-f) (f a multiple of 2^-flex) average to the row's mean m
// = 2^(r%7)/4, and their squared deviations, L of them, fit the type's
// digits. Where L is too long for that, f32 data (benchdnn's ALG_0) take
// mean 0 and zeros at a density that keeps the sums exact, and 16-bit
// data (ALG_2) take m ± 1/4 or m ± 1. An odd row ends with m itself.
func statsFill(rows, l int64, dt dtypes.DataType, seed uint64) []float64 {
	const minFlex = 3
	exact := digitsOf(dt)
	logL := int64(0)
	for int64(1)<<logL < l {
		logL++
	}
	free := (exact-logL)/2 - 1
	want := min(6, exact/2)
	alg := 1
	switch {
	case free >= minFlex:
	case want == exact/2:
		alg = 2
	default:
		alg = 0
	}
	flex := want
	if alg == 1 {
		flex = min(exact, free)
	}
	mask := int64(1)<<flex - 1
	density := 1.0
	if alg == 0 {
		density = float64(int64(1)<<(exact-2*flex)) / float64(l)
	}
	vals := make([]float64, rows*l)
	for r := int64(0); r < rows; r++ {
		m := 0.0
		if alg != 0 {
			m = 0.25 * float64(int64(1)<<(r%7))
		}
		bigger := false
		for c := int64(0); c < l; c++ {
			var v float64
			if alg == 2 {
				sign := 1.0
				if c%2 == 1 {
					sign = -1
				} else {
					bigger = splitmix64(seed^uint64(r*l+c))&1 == 1
				}
				shift := sign * 0.25
				v = m + shift
				if bigger {
					v += 3 * shift
				}
			} else {
				k := c + r*239*2 // even at the start of each pair
				if alg == 0 && !flipCoin(uint64(k/2)*257, density) {
					vals[r*l+c] = 0
					continue
				}
				gen := (k / 2 * 1637) & mask
				f := float64(gen) / float64(int64(1)<<flex)
				if k%2 == 1 {
					f = -f
				}
				v = m * (1 + f)
				if alg == 0 {
					v = f
				}
			}
			if c == l-1 && l%2 == 1 {
				v = m
			}
			vals[r*l+c] = v
		}
	}
	return vals
}

// scaleFill and shiftFill are benchdnn's per-channel scale and shift:
// powers of two from 1/8 to 8, and -1, 0, 1 times 2^(c%7)/512, exact in
// every type.
func scaleFill(c int64) []float64 {
	v := make([]float64, c)
	for i := range v {
		v[i] = float64(int64(1)<<(i%7)) / 8
	}
	return v
}

func shiftFill(c int64) []float64 {
	v := make([]float64, c)
	for i := range v {
		v[i] = float64(i%3-1) * float64(int64(1)<<(i%7)) / 512
	}
	return v
}

// normRule is how an output is compared with its reference: benchdnn's
// compare_t (utils/compare.cpp) with a driver's threshold.
type normRule struct {
	trh float64 // relative threshold (absolute where |expected| <= 1e-5)
	// slack: the relative error of gdnn's f32 computation before it
	// rounds to a 16-bit dst, which that rounding may expose as one step
	// of the dst type at a rounding boundary. Where benchdnn's threshold
	// is 0 (softmax into bf16 or f16 under strict accumulation), it
	// compares with its own f32 result rounded the same way; gdnnbench's
	// reference is float64, so any value that the interval ref*(1 ±
	// slack) rounds to is accepted.
	slack float64
	// absF32: softmax's additional check, an absolute difference below
	// f32's epsilon passes (softmax_add_check).
	absF32 bool
	// shift, per logical element (nil: no shift): lnorm's and gnorm's
	// additional check for cancellation in gamma*x + beta, which judges
	// the error against |expected - beta| where that is the larger.
	shift []float64
	// floor: below it |expected| the threshold applies absolutely (a
	// fused op that approximates, as threshold gives it; 0: 1e-5).
	floor float64
	// step: the output is quantized, and one step off passes (a value
	// at a rounding boundary of the quantization).
	step bool
	// errs, per logical element (nil: none): a bound on the error of
	// gdnn's f32 computation of the reference before it is rounded to
	// the output's type; any value that the interval ref ± errs rounds
	// to passes (for an int8 output: either integer of a value near a
	// rounding boundary, which benchdnn accepts near x.5).
	errs []float64
	// alts, by logical element (nil: none): the other outcomes of an
	// output where the fused ops may or may not overflow f32
	// (chainOutput), each a value and a bound as errs's; a result that
	// the rule does not take must match one of them.
	alts map[int64][]outcome
}

const epsF32 = 1.0 / (1 << 23)

// compareNorm compares got (logical dims, read through strides) with
// ref under rule: the reference is rounded to got's type first; then
// exact, tiny (|exp| <= 1e-5 and off by less than f32's epsilon), within
// the relative threshold, within the driver's additional checks, or one
// of the output's other outcomes (rule.alts). NaN must meet NaN and an
// infinity the same infinity.
func compareNorm(got buffer, dims, strides []int64, ref []float64, rule normRule, what string) checkResult {
	var c checkResult
	flt := 0x1p-126
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		c.total++
		g, want := got.get(offs[0]), ref[pos]
		exp := roundTo(got.dt, want)
		diff := math.Abs(g - exp)
		rel := diff / math.Max(math.Abs(exp), flt)
		if math.Abs(exp) <= flt {
			rel = diff
		}
		var ok bool
		switch {
		case math.IsNaN(want) || math.IsNaN(g):
			ok = math.IsNaN(want) && math.IsNaN(g)
		case math.IsInf(exp, 0) || math.IsInf(g, 0):
			ok = g == exp
		case g == exp:
			ok = true
		case math.Abs(exp) <= 1e-5 && diff < epsF32:
			ok = true
		case math.Abs(exp) > 1e-5 && rel <= rule.trh, math.Abs(exp) <= 1e-5 && diff <= rule.trh:
			ok = true
		case math.Abs(exp) <= rule.floor && diff <= rule.trh:
			ok = true
		case rule.step && diff <= 1:
			ok = true
		case rule.absF32 && diff < epsF32:
			ok = true
		case rule.slack > 0 && g >= roundTo(got.dt, want-rule.slack*math.Abs(want)) && g <= roundTo(got.dt, want+rule.slack*math.Abs(want)):
			ok = true
		case rule.errs != nil && g >= roundTo(got.dt, want-rule.errs[pos]) && g <= roundTo(got.dt, want+rule.errs[pos]):
			ok = true
		case rule.shift != nil:
			beta := rule.shift[pos]
			d := math.Abs(exp - beta)
			if d/math.Max(math.Abs(exp), 1e-38) > 1 {
				ok = diff/math.Max(d, flt) <= rule.trh
			}
		}
		for _, a := range rule.alts[pos] {
			ok = ok || matchBound(got.dt, g, a.v, a.e)
		}
		if r := rel / math.Max(rule.trh, 1e-30); r > c.worst && !math.IsNaN(r) {
			c.worst = r
		}
		if !ok {
			if c.errors < maxMismatchLines {
				c.lines = append(c.lines, fmt.Sprintf("[%6d][%s] exp_f64:%14.7g exp:%14.7g got:%14.7g diff:%10.3g rdiff:%10.3g trh:%10.3g",
					pos, what, want, exp, g, diff, rel, rule.trh))
			}
			c.errors++
		}
	})
	return c
}

// matchBound reports whether g, a value of type dt, is one that v with
// an error of at most e rounds to: NaN only for NaN, an infinity only
// where v rounds to it, a finite value only where v rounds to a finite
// value.
func matchBound(dt dtypes.DataType, g, v, e float64) bool {
	exp := roundTo(dt, v)
	switch {
	case math.IsNaN(v) || math.IsNaN(g):
		return math.IsNaN(v) && math.IsNaN(g)
	case math.IsInf(exp, 0) || math.IsInf(g, 0):
		return g == exp
	}
	return g >= roundTo(dt, v-e) && g <= roundTo(dt, v+e)
}

// softmaxRule is benchdnn's softmax threshold (softmax.cpp setup_cmp,
// forward, x86): an f32 dst allows 10 epsilons (log-softmax 50), since
// exp, the sum and the division (log) round a few times; a bf16 or f16
// dst allows nothing beyond the rounding of an f32 result under strict
// accumulation (benchdnn's default; the data's few non-zero terms keep
// the f32 result that close), and one epsilon of the type (log-softmax 5)
// with --attr-acc-mode=relaxed or any.
func softmaxRule(ddt dtypes.DataType, log bool, accMode string) normRule {
	coeff := 1.0
	if log {
		coeff = 5
	}
	rule := normRule{absF32: true, slack: coeff * 10 * epsF32}
	switch {
	case ddt == dtypes.F32:
		rule.trh = coeff * 10 * epsilon(ddt)
	case accMode == "relaxed" || accMode == "any":
		rule.trh = coeff * epsilon(ddt)
	}
	return rule
}

// statsRule is benchdnn's lnorm (5e-7) and gnorm (6e-7) threshold for a
// dst of type dt: base times 2^(24 - digits of dt), the base being a few
// f32 roundings of the normalization y = gamma*(x-mean)/sqrt(var+eps) +
// beta. benchdnn requires the mean and variance outputs exactly, which
// its fill makes possible for an implementation that sums in two passes;
// gdnnbench gives them the f32 dst threshold instead, since gdnn's ops
// may keep running statistics whose last bit depends on the order of
// the updates, which is no error.
func statsRule(dt dtypes.DataType, base float64) normRule {
	return normRule{trh: base * float64(int64(1)<<(24-digitsOf(dt)))}
}

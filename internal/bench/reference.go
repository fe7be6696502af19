package bench

import (
	"math"
	"slices"

	"github.com/gdnn/gdnn/dtypes"
)

// refEltwise is the float64 definition of each fused eltwise op
// (oneDNN's formulas).
func refEltwise(name string, alpha, beta, x float64) float64 {
	switch name {
	case "abs":
		return math.Abs(x)
	case "clip":
		return math.Min(math.Max(x, alpha), beta)
	case "elu":
		if x > 0 {
			return x
		}
		return alpha * math.Expm1(x)
	case "exp":
		return math.Exp(x)
	case "gelu_erf":
		return scaled(x, 0.5*(1+math.Erf(x/math.Sqrt2)))
	case "gelu_tanh":
		return scaled(x, 0.5*(1+math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))))
	case "hardsigmoid":
		return math.Max(0, math.Min(1, alpha*x+beta))
	case "hardswish":
		return scaled(x, math.Max(0, math.Min(1, alpha*x+beta)))
	case "log":
		return math.Log(x)
	case "logistic":
		return 1 / (1 + math.Exp(-x))
	case "mish":
		return scaled(x, math.Tanh(softplus(x, 1)))
	case "pow":
		return alpha * math.Pow(x, beta)
	case "relu":
		if x > 0 {
			return x
		}
		return scaled(x, alpha)
	case "round":
		return math.RoundToEven(x)
	case "soft_relu":
		return softplus(x, alpha)
	case "sqrt":
		return math.Sqrt(x)
	case "square":
		return x * x
	case "tanh":
		return math.Tanh(x)
	}
	return math.NaN()
}

// scaled is x*f, the ops' x times a factor, with the factor's limit
// where x is infinite: a factor of 0 (ReLU's alpha 0, or the GELUs',
// Mish's and HardSwish's factor at -Inf) gives a zero of x's sign, not
// Inf*0 = NaN, as gdnn computes these ops; a NaN x stays NaN.
func scaled(x, f float64) float64 {
	if f == 0 && !math.IsNaN(x) {
		return math.Copysign(0, x)
	}
	return x * f
}

// softplus is log(1 + exp(b*x)) / b without overflow for large b*x.
func softplus(x, b float64) float64 {
	y := b * x
	if y > 30 {
		return x + math.Log1p(math.Exp(-y))/b
	}
	return math.Log1p(math.Exp(y)) / b
}

// refBinary is the float64 definition of each fused binary op.
func refBinary(name string, a, b float64) float64 {
	switch name {
	case "add":
		return a + b
	case "sub":
		return a - b
	case "mul":
		return a * b
	case "div":
		return a / b
	case "max":
		return math.Max(a, b)
	case "min":
		return math.Min(a, b)
	}
	return math.NaN()
}

// approxOps are the post-ops whose gdnn implementation approximates the
// function (polynomials, exp-based formulas) or may reassociate it: they
// are checked with a looser threshold and an absolute floor.
var approxOps = map[string]bool{"elu": true, "exp": true, "gelu_erf": true, "gelu_tanh": true, "log": true,
	"logistic": true, "mish": true, "soft_relu": true, "tanh": true, "hardsigmoid": true, "hardswish": true}

// refPostOp is one post-op of a chain with its operand (binary ops).
type refPostOp struct {
	g       graphPostOp
	operand buffer
	view    []int64 // operand strides over the dst dims, 0 where broadcast
	// swapped: the reduction's chain is the right operand (graph Subtract(x, r)).
	swapped bool
	// sum: the operand is the dst before the run, taken as
	// scale * (dst - zp) in f32, as oneDNN's sum post-op computes it.
	sum       bool
	scale, zp float32
}

// chainOutput applies the post-op chain to mean values laid out densely
// over dstDims. With roundF32 every intermediate is rounded to f32 (the
// model of gdnn's f32 pipeline). When errs is non-nil it holds an error
// bound per value on entry and is updated to bound the error after the
// chain (interval propagation plus one f32 rounding per op).
//
// An op whose result may or may not overflow f32 within its error
// bound splits the value in two: the value it returns is the one where
// gdnn's f32 result stayed finite (within the bound, as any other), and
// the outcomes it returns, by position, hold where it overflowed: ±Inf
// carried exactly through the ops after it. A result matches one of
// them or is wrong.
func chainOutput(vals []float64, dstDims []int64, chain []refPostOp, roundF32 bool, errs []float64) map[int64][]outcome {
	return chainOutputs(vals, dstDims, chain, roundF32, false, errs)
}

// outcome is a value an output may hold besides its reference and the
// error allowed around it (an error bound, or the comparison's
// allowance, as the holder says).
type outcome struct{ v, e float64 }

// chainOutputs is chainOutput, for a chain that computes in float64
// (wide: an f64 src) too: operands are then read exactly, a result
// rounds by 2^-53 of itself and nothing overflows at the f32 range.
func chainOutputs(vals []float64, dstDims []int64, chain []refPostOp, roundF32, wide bool, errs []float64) map[int64][]outcome {
	if len(chain) == 0 {
		return nil
	}
	views := make([][]int64, len(chain))
	for i, p := range chain {
		views[i] = p.view
		if views[i] == nil {
			views[i] = make([]int64, len(dstDims))
		}
	}
	u := 1.0 / (1 << 24)
	overflow := f32Overflow
	if wide {
		u, overflow = 1.0/(1<<53), math.Inf(1)
	}
	var alts map[int64][]outcome
	forEachIndex(dstDims, views, func(pos int64, offs []int64) {
		// step applies op i to x, whose error is bounded by e, and
		// returns the result, its bound and whether the op may or may
		// not have overflowed f32.
		step := func(i int, x, e float64) (y, ye float64, maybe bool) {
			p := chain[i]
			if math.IsInf(x, 0) {
				// An infinity is exact: gdnn's value is the same
				// infinity, whatever bound came with it.
				e = 0
			}
			// unknown: the bound is lost (an infinite one on entry);
			// exact: the value is known (±Inf after a certain overflow,
			// or no error yet), so no interval is propagated.
			unknown := math.IsInf(e, 1)
			exact := e == 0
			if p.g.bin != "" {
				// Read as f32, as gdnn and oneDNN's reference do (an
				// s32 beyond 2^24 rounds).
				operand := p.operand.get(offs[i])
				if !wide {
					operand = float64(float32(operand))
				}
				if p.sum {
					operand = float64(p.scale * (float32(operand) - p.zp))
				}
				apply := func(v float64) float64 {
					if p.swapped {
						return refBinary(p.g.bin, operand, v)
					}
					return refBinary(p.g.bin, v, operand)
				}
				y = apply(x)
				if errs != nil && !unknown && !exact {
					e = math.Max(math.Abs(apply(x-e)-y), math.Abs(apply(x+e)-y))
				}
			} else {
				y = refEltwise(p.g.elt, p.g.alpha, p.g.beta, x)
				if errs != nil && !unknown && !exact {
					// Twice the larger endpoint deviation covers a turning point inside the interval.
					e = 2 * math.Max(math.Abs(refEltwise(p.g.elt, p.g.alpha, p.g.beta, x-e)-y),
						math.Abs(refEltwise(p.g.elt, p.g.alpha, p.g.beta, x+e)-y))
				}
			}
			switch {
			case roundF32:
				y = float64(float32(y))
			case unknown:
				// Unknown since an earlier op: stays unknown.
			case math.IsInf(y, 0) || math.IsNaN(e):
				// ±Inf in float64 is ±Inf in f32; a NaN interval stays
				// NaN, which no result matches.
			case math.Abs(y)-e >= overflow:
				// gdnn's f32 value is past the range whatever the error:
				// ±Inf, exactly, as every later op sees it.
				y, e = math.Copysign(math.Inf(1), y), 0
			case math.Abs(y)+e >= overflow:
				maybe = true
			}
			if errs != nil && !math.IsInf(y, 0) {
				e += u * math.Abs(y)
			}
			return y, e, maybe
		}
		// run applies the ops from i on, and records the outcome of
		// every overflow that may or may not happen on the way.
		var run func(i int, x, e float64) (float64, float64)
		run = func(i int, x, e float64) (float64, float64) {
			for ; i < len(chain); i++ {
				y, ye, maybe := step(i, x, e)
				if maybe {
					o := outcome{}
					o.v, o.e = run(i+1, math.Copysign(math.Inf(1), y), 0)
					if alts == nil {
						alts = map[int64][]outcome{}
					}
					if !slices.Contains(alts[pos], o) {
						alts[pos] = append(alts[pos], o)
					}
				}
				x, e = y, ye
			}
			return x, e
		}
		e := 0.0
		if errs != nil {
			e = errs[pos]
		}
		vals[pos], e = run(0, vals[pos], e)
		if errs != nil {
			errs[pos] = e
		}
	})
	return alts
}

// f32Overflow is the least magnitude float32 rounds to ±Inf: halfway
// between the largest finite f32 and 2^128.
const f32Overflow = 0x1p128 - 0x1p103

// epsilon is benchdnn's per-type threshold: 2^(1-digits).
func epsilon(dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.F64:
		return 1.0 / (1 << 52)
	case dtypes.BF16:
		return 1.0 / (1 << 7)
	case dtypes.F16:
		return 1.0 / (1 << 10)
	}
	return 1.0 / (1 << 23)
}

// minNormal is the smallest normal value of dt: below it the type's
// spacing is absolute (its subnormal step), not relative.
func minNormal(dt dtypes.DataType) float64 {
	if dt == dtypes.F16 {
		return 1.0 / (1 << 14)
	}
	if dt == dtypes.F64 {
		return 0x1p-1022
	}
	return 0x1p-126
}

// threshold returns the relative threshold and the magnitude floor below
// which it applies absolutely, for a dst type and a post-op chain. The
// floor is at least the dst type's smallest normal, where its rounding
// step stops shrinking with the value.
func threshold(ddt dtypes.DataType, chain []refPostOp) (trh, floor float64) {
	trh, floor = epsilon(ddt), minNormal(ddt)
	for _, p := range chain {
		if approxOps[p.g.elt] || p.g.bin == "div" {
			trh = math.Max(trh, 4e-6)
		}
		if approxOps[p.g.elt] {
			floor = 1
		}
	}
	return trh, floor
}

// accChain is the longest chain of dependent f32 additions the error
// bound of the random fill assumes per output of n elements: gdnn
// accumulates in blocks (vector lanes, then ~1 MiB blocks, then block
// partials), so no value passes through more than a block's worth of
// additions plus the additions that combine blocks. 4096 per block is a
// generous stand-in for that structure.
func accChain(n int64) float64 {
	const block = 4096
	if n <= block {
		return float64(n)
	}
	return block + float64((n+block-1)/block) + 16
}

// sumBound is the classic bound on f32 recursive summation: gamma_L
// times the sum of magnitudes (see gamma).
func sumBound(n int64, sumAbs float64) float64 {
	return gamma(accChain(n)) * sumAbs
}

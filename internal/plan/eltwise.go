package plan

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
)

// Post-op arithmetic shared by every backend: the interpreter calls these
// directly and the JIT's results are checked against them.
//
// Every function propagates NaN. Functions involving a transcendental are
// evaluated in float64 and rounded once to float32, so they are within one
// f32 ulp of the exact value; the others are single correctly rounded f32
// operations. Where a textbook formula would give NaN at ±Inf (∞·0) the
// function returns its limit instead: GELU, Mish and HardSwish give -0
// at -Inf.

// Eltwise applies the unary post-op k with parameters alpha, beta to x.
// Parameter use follows PostOp: Clamp(min=alpha, max=beta),
// Elu(alpha), HardSigmoid(alpha, beta), LeakyReLU(alpha), SoftPlus(beta),
// Pow(beta: one of ops.PowBetas, see pow);
// HardSwish is oneDNN Graph's fixed x*max(0, min(1, x/6+1/2)). SoftPlus
// with beta 0 divides by zero (±Inf or NaN) and Clamp with alpha > beta
// gives beta; the graph and reduce APIs refuse both before a plan is made.
// For a binary or unknown k it returns NaN.
func Eltwise(k ops.Kind, alpha, beta, x float32) float32 {
	if x != x {
		return x
	}
	d := float64(x)
	switch k {
	case ops.Abs:
		return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
	case ops.Clamp:
		// Compare-and-replace rather than math.Min/Max so that a NaN x
		// (handled above) and the alpha > beta case behave as oneDNN's
		// clip: max with alpha first, then min with beta.
		if x < alpha {
			x = alpha
		}
		if x > beta {
			x = beta
		}
		return x
	case ops.Elu:
		if x > 0 {
			return x
		}
		return float32(float64(alpha) * math.Expm1(d))
	case ops.Exp:
		return float32(math.Exp(d))
	case ops.GELUErf:
		if math.IsInf(d, 0) {
			return geluInf(x)
		}
		// 1+erf(z) = erfc(-z) keeps full precision in the left tail
		// where 1+erf cancels.
		return float32(0.5 * d * math.Erfc(-d/math.Sqrt2))
	case ops.GELUTanh:
		if math.IsInf(d, 0) {
			return geluInf(x)
		}
		// 0.5x(1+tanh(u)) = x/(1+exp(-2u)), again to avoid cancelling
		// 1+tanh(u) for negative u.
		// The explicit conversion stops a fused multiply-add, so every
		// GOARCH rounds alike.
		u := math.Sqrt(2/math.Pi) * (d + float64(0.044715*d*d*d))
		return float32(d / (1 + math.Exp(-2*u)))
	case ops.HardSigmoid:
		// alpha*x is exact in float64 (two 24-bit significands), so a
		// fused multiply-add gives the same result as separate steps.
		v := float64(alpha)*d + float64(beta)
		return float32(clamp01(v))
	case ops.HardSwish:
		// oneDNN Graph's x * min(max(x+3, 0), 6) / 6: where the factor
		// is 0, x <= -3, and x * 0 is -0 (the limit at -Inf too).
		v := d/6 + 0.5
		switch {
		case v <= 0:
			return float32(math.Copysign(0, -1))
		case v >= 1:
			return x
		}
		return float32(d * v)
	case ops.LeakyReLU:
		if x >= 0 {
			return x
		}
		return float32(float64(alpha) * d)
	case ops.Log:
		return float32(math.Log(d))
	case ops.Pow:
		return pow(beta, d)
	case ops.Mish:
		if math.IsInf(d, -1) {
			return float32(math.Copysign(0, -1))
		}
		return float32(d * math.Tanh(softplus(d)))
	case ops.Sigmoid:
		if d >= 0 {
			return float32(1 / (1 + math.Exp(-d)))
		}
		e := math.Exp(d)
		return float32(e / (1 + e))
	case ops.SoftPlus:
		b := float64(beta)
		return float32(softplus(b*d) / b)
	case ops.ReLU:
		if x > 0 {
			return x
		}
		return 0
	case ops.Round:
		return float32(math.RoundToEven(d))
	case ops.Sqrt:
		// Rounding a float64 square root to float32 is correctly
		// rounded (53 >= 2*24+2), so this matches a native f32 sqrt.
		return float32(math.Sqrt(d))
	case ops.Square:
		return x * x
	case ops.Tanh:
		return float32(math.Tanh(d))
	}
	return float32(math.NaN())
}

// Binary applies the binary post-op k to the result a (the left operand) and
// the operand b. Each is one correctly rounded f32 operation; Maximum and
// Minimum return NaN when either input is NaN, and order +0 above -0.
// For a unary or unknown k it returns NaN.
func Binary(k ops.Kind, a, b float32) float32 {
	switch k {
	case ops.Add:
		return a + b
	case ops.Multiply:
		return a * b
	case ops.Maximum, ops.Minimum:
		// math.Max(x, +Inf) is +Inf even for a NaN x; NaN must win.
		if a != a || b != b {
			return float32(math.NaN())
		}
		if k == ops.Maximum {
			return float32(math.Max(float64(a), float64(b)))
		}
		return float32(math.Min(float64(a), float64(b)))
	case ops.Divide:
		return a / b
	case ops.Subtract:
		return a - b
	}
	return float32(math.NaN())
}

// softplus returns log(1+exp(y)) without overflow for large y and without
// losing the tiny result for very negative y.
func softplus(y float64) float64 {
	if y != y {
		return y
	}
	return math.Max(y, 0) + math.Log1p(math.Exp(-math.Abs(y)))
}

// geluInf is GELU's limit at ±Inf: +Inf, or -0 from below.
func geluInf(x float32) float32 {
	if x > 0 {
		return x
	}
	return float32(math.Copysign(0, -1))
}

// clamp01 clamps v to [0, 1], keeping NaN.
func clamp01(v float64) float64 {
	if v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

// pow is x^beta for the betas of ops.PowBetas, in float64 and rounded once,
// by the steps the kernels take; the zeros and infinities are IEEE pow's
// (Go's math.Pow's): 0 and -0 to the power 0.5 are +0, -Inf to the power
// 0.5 is +Inf and to -0.5 is +0. x^0 is 1 for every x but a NaN, which
// stays itself as in every post-op. Another beta gives NaN.
func pow(beta float32, d float64) float32 { return float32(pow64(beta, d)) }

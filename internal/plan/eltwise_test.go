package plan

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/ops"
)

// ulp32 returns the spacing of float32 values at |x| (the subnormal
// spacing near zero).
func ulp32(x float64) float64 {
	a := math.Abs(x)
	if a < 0x1p-126 {
		return 0x1p-149
	}
	_, e := math.Frexp(a)
	return math.Ldexp(1, e-24)
}

// textbook holds each eltwise formula as written in oneDNN's docs,
// evaluated in float64. It is accurate where the test uses it (see
// eltwiseRange); the far tails are checked with spot values instead.
var textbook = map[ops.Kind]func(a, b, x float64) float64{
	ops.Abs:   func(_, _, x float64) float64 { return math.Abs(x) },
	ops.Clamp: func(a, b, x float64) float64 { return math.Min(math.Max(x, a), b) },
	ops.Elu: func(a, _, x float64) float64 {
		if x > 0 {
			return x
		}
		return a * (math.Exp(x) - 1)
	},
	ops.Exp:     func(_, _, x float64) float64 { return math.Exp(x) },
	ops.GELUErf: func(_, _, x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) },
	ops.GELUTanh: func(_, _, x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	},
	ops.HardSigmoid: func(a, b, x float64) float64 { return math.Max(0, math.Min(1, a*x+b)) },
	ops.HardSwish:   func(_, _, x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) },
	ops.LeakyReLU: func(a, _, x float64) float64 {
		if x >= 0 {
			return x
		}
		return a * x
	},
	ops.Log:      func(_, _, x float64) float64 { return math.Log(x) },
	ops.Mish:     func(_, _, x float64) float64 { return x * math.Tanh(math.Log(1+math.Exp(x))) },
	ops.Sigmoid:  func(_, _, x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	ops.SoftPlus: func(_, b, x float64) float64 { return math.Log(1+math.Exp(b*x)) / b },
	ops.ReLU:     func(_, _, x float64) float64 { return math.Max(x, 0) },
	ops.Round:    func(_, _, x float64) float64 { return math.RoundToEven(x) },
	ops.Sqrt:     func(_, _, x float64) float64 { return math.Sqrt(x) },
	ops.Square:   func(_, _, x float64) float64 { return x * x },
	ops.Tanh:     func(_, _, x float64) float64 { return math.Tanh(x) },
}

// eltwiseRange is where the textbook formula loses no precision: the
// left tails of GELU, Mish and SoftPlus cancel (1+erf, 1+tanh,
// log(1+tiny)) and their right tails overflow exp. For SoftPlus the range
// is of beta*x.
func eltwiseRange(k ops.Kind) (lo, hi float64) {
	switch k {
	case ops.GELUErf, ops.GELUTanh:
		return -4, 30
	case ops.Mish:
		return -15, 30
	case ops.SoftPlus:
		return -5, 30
	case ops.Exp:
		return -80, 80
	}
	return -100, 100
}

func TestEltwiseAgainstFormulas(t *testing.T) {
	params := map[ops.Kind][][2]float32{
		ops.Clamp:       {{-1, 2}, {0, 6}, {3, 1}},
		ops.Elu:         {{1, 0}, {0.5, 0}, {-2, 0}},
		ops.HardSigmoid: {{0.2, 0.5}, {1.0 / 6, 0.5}, {-1, 0.25}},
		ops.LeakyReLU:   {{0.01, 0}, {0.2, 0}, {-3, 0}},
		ops.SoftPlus:    {{0, 1}, {0, 2}, {0, -0.5}},
	}
	for k, f := range textbook {
		ps := params[k]
		if ps == nil {
			ps = [][2]float32{{0, 0}}
		}
		lo, hi := eltwiseRange(k)
		for _, ab := range ps {
			n := 0
			for i := 0; i <= 4000; i++ {
				x := float32(lo + (hi-lo)*float64(i)/4000)
				if k == ops.SoftPlus {
					x /= ab[1] // so that beta*x spans [lo, hi]
				}
				got := Eltwise(k, ab[0], ab[1], x)
				want := f(float64(ab[0]), float64(ab[1]), float64(x))
				if math.IsNaN(want) {
					if !math.IsNaN(float64(got)) {
						t.Errorf("%v(%v, %v)(%v) = %v, want NaN", k, ab[0], ab[1], x, got)
					}
					continue
				}
				// got is a float64 evaluation rounded once to f32 and
				// want is accurate to a few float64 ulps here, so they
				// agree to within 1 f32 ulp.
				tol := ulp32(want)
				if d := math.Abs(float64(got) - want); d > tol || math.IsInf(want, 0) != math.IsInf(float64(got), 0) {
					if n++; n < 5 {
						t.Errorf("%v(%v, %v)(%v) = %v, want %v (diff %g > %g)", k, ab[0], ab[1], x, got, want, d, tol)
					}
				}
			}
		}
	}
}

func TestEltwiseSpecialValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negz := float32(math.Copysign(0, -1))
	tests := []struct {
		k       ops.Kind
		a, b, x float32
		want    float64
	}{
		{ops.Abs, 0, 0, -inf, math.Inf(1)},
		{ops.Abs, 0, 0, negz, 0},
		{ops.Clamp, -1, 2, inf, 2},
		{ops.Clamp, -1, 2, -inf, -1},
		{ops.Elu, 1, 0, -inf, -1},
		{ops.Elu, 1, 0, inf, math.Inf(1)},
		{ops.Exp, 0, 0, -inf, 0},
		{ops.Exp, 0, 0, 89, math.Inf(1)}, // past f32's range
		{ops.Exp, 0, 0, 0, 1},
		{ops.GELUErf, 0, 0, -inf, 0},
		{ops.GELUErf, 0, 0, inf, math.Inf(1)},
		{ops.GELUErf, 0, 0, 0, 0},
		// Left-tail spot values from 100-digit arithmetic, where 1+erf
		// and 1+tanh cancel in float64.
		{ops.GELUErf, 0, 0, -10, -7.619853024160526066e-23},
		{ops.GELUErf, 0, 0, -5, -1.4332578593959695584e-6},
		{ops.GELUTanh, 0, 0, -10, -1.2040923482098059937e-37},
		{ops.GELUTanh, 0, 0, -5, -2.2917961966295060456e-7},
		{ops.GELUTanh, 0, 0, -inf, 0},
		{ops.GELUTanh, 0, 0, inf, math.Inf(1)},
		{ops.HardSigmoid, 0.2, 0.5, -inf, 0},
		{ops.HardSigmoid, 0.2, 0.5, inf, 1},
		{ops.HardSwish, 0, 0, -inf, 0},
		{ops.HardSwish, 0, 0, inf, math.Inf(1)},
		{ops.HardSwish, 0, 0, -3, 0},
		{ops.HardSwish, 0, 0, 3, 3},
		{ops.HardSwish, 0, 0, 1, 1.0 * (1.0/6 + 0.5)},
		{ops.LeakyReLU, 0.1, 0, -inf, math.Inf(-1)},
		{ops.Log, 0, 0, 0, math.Inf(-1)},
		{ops.Log, 0, 0, -1, math.NaN()},
		{ops.Log, 0, 0, inf, math.Inf(1)},
		{ops.Mish, 0, 0, -inf, 0},
		{ops.Mish, 0, 0, inf, math.Inf(1)},
		{ops.Mish, 0, 0, 1, 0.86509838826731034612},
		{ops.Mish, 0, 0, -50, -9.6437492398195889146e-21},
		{ops.Mish, 0, 0, -100, -3.720075976020835963e-42}, // f32 subnormal
		{ops.Sigmoid, 0, 0, -inf, 0},
		{ops.Sigmoid, 0, 0, inf, 1},
		{ops.Sigmoid, 0, 0, 0, 0.5},
		{ops.Sigmoid, 0, 0, -100, 3.720075976020835963e-44},
		{ops.SoftPlus, 0, 1, 100, 100}, // exp(100) would overflow f32
		{ops.SoftPlus, 0, 1, 1e30, 1e30},
		{ops.SoftPlus, 0, 1, -inf, 0},
		{ops.SoftPlus, 0, 1, inf, math.Inf(1)},
		{ops.SoftPlus, 0, 0, 1, math.Inf(1)}, // beta 0 divides by zero, as in oneDNN
		{ops.ReLU, 0, 0, -inf, 0},
		{ops.ReLU, 0, 0, -2, 0},
		{ops.ReLU, 0, 0, 2, 2},
		{ops.Round, 0, 0, 2.5, 2},
		{ops.Round, 0, 0, 3.5, 4},
		{ops.Round, 0, 0, -2.5, -2},
		{ops.Round, 0, 0, -inf, math.Inf(-1)},
		{ops.Sqrt, 0, 0, -1, math.NaN()},
		{ops.Sqrt, 0, 0, inf, math.Inf(1)},
		{ops.Square, 0, 0, -inf, math.Inf(1)},
		{ops.Square, 0, 0, 2e19, math.Inf(1)},
		{ops.Tanh, 0, 0, -inf, -1},
		{ops.Tanh, 0, 0, inf, 1},
		{ops.Abs + 100, 0, 0, 1, math.NaN()}, // unknown kind
		{ops.Add, 0, 0, 1, math.NaN()},       // binary kind is not eltwise
	}
	for _, tc := range tests {
		got := float64(Eltwise(tc.k, tc.a, tc.b, tc.x))
		if math.IsNaN(tc.want) {
			if !math.IsNaN(got) {
				t.Errorf("%v(%v, %v)(%v) = %v, want NaN", tc.k, tc.a, tc.b, tc.x, got)
			}
			continue
		}
		if got != float64(float32(tc.want)) && math.Abs(got-tc.want) > ulp32(tc.want) {
			t.Errorf("%v(%v, %v)(%v) = %v, want %v", tc.k, tc.a, tc.b, tc.x, got, tc.want)
		}
	}
	// NaN propagates through every eltwise kind.
	for k := ops.Abs; k <= ops.Tanh; k++ {
		if got := Eltwise(k, 0.5, 1, nan); !math.IsNaN(float64(got)) {
			t.Errorf("%v(NaN) = %v, want NaN", k, got)
		}
	}
}

func TestBinary(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.1, -3.75, 1e-40, 3e38, -3e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 7, 1.0 / 3}
	ref := map[ops.Kind]func(a, b float64) float64{
		ops.Add:      func(a, b float64) float64 { return a + b },
		ops.Multiply: func(a, b float64) float64 { return a * b },
		ops.Divide:   func(a, b float64) float64 { return a / b },
		ops.Subtract: func(a, b float64) float64 { return a - b },
		ops.Maximum: func(a, b float64) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			if a > b || (a == b && !math.Signbit(a)) {
				return a
			}
			return b
		},
		ops.Minimum: func(a, b float64) float64 {
			if a != a || b != b {
				return math.NaN()
			}
			if a < b || (a == b && math.Signbit(a)) {
				return a
			}
			return b
		},
	}
	for k, f := range ref {
		for _, a := range vals {
			for _, b := range vals {
				// float64 has more than twice f32's precision, so rounding
				// the float64 result to f32 is the correctly rounded f32
				// result of + - * /.
				want := float32(f(float64(a), float64(b)))
				got := Binary(k, a, b)
				if math.IsNaN(float64(want)) {
					if !math.IsNaN(float64(got)) {
						t.Errorf("%v(%v, %v) = %v, want NaN", k, a, b, got)
					}
					continue
				}
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%v(%v, %v) = %v, want %v", k, a, b, got, want)
				}
			}
		}
	}
	if got := Binary(ops.ReLU, 1, 2); !math.IsNaN(float64(got)) {
		t.Errorf("Binary(ReLU) = %v, want NaN", got)
	}
}

// TestPow holds Pow, for every beta of ops.PowBetas, to IEEE pow (Go's
// math.Pow) rounded to f32: the same bits for 0, 1, 2, -1 and 0.5
// (one rounding of an exact or correctly rounded value), within one
// ulp for the others, and the same zeros, infinities and NaNs for all
// (but a NaN x, which stays itself even for beta 0).
func TestPow(t *testing.T) {
	var xs []float32
	for _, b := range []uint32{0, 1, 0x7fffff, 0x800000, 0x3f800000, 0x3f800001, 0x40400000, 0x7f7fffff, 0x7f800000, 0x1fffffff, 0x5f000001} {
		xs = append(xs, math.Float32frombits(b), math.Float32frombits(b|1<<31))
	}
	for b := uint32(0); b < 1<<31; b += 999983 {
		xs = append(xs, math.Float32frombits(b), math.Float32frombits(b|1<<31))
	}
	for _, beta := range ops.PowBetas {
		exact := beta == 0 || beta == 1 || beta == 2 || beta == -1 || beta == 0.5
		for _, x := range xs {
			got := Eltwise(ops.Pow, 0, beta, x)
			want := float32(math.Pow(float64(x), float64(beta)))
			if x != x {
				want = x
			}
			switch {
			case want != want || got != got:
				if (want != want) != (got != got) {
					t.Errorf("Pow %v (%v) = %v, want %v", beta, x, got, want)
				}
			case want == 0 || got == 0 || math.IsInf(float64(want), 0) || math.IsInf(float64(got), 0) || exact:
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("Pow %v (%v) = %v (%#x), want %v (%#x)", beta, x, got, math.Float32bits(got), want, math.Float32bits(want))
				}
			default:
				if d := math.Abs(float64(got) - float64(want)); d > ulp32(float64(want)) {
					t.Errorf("Pow %v (%v) = %v, want %v within an ulp", beta, x, got, want)
				}
			}
		}
	}
	if got := Eltwise(ops.Pow, 0, 1.5, 4); got == got {
		t.Errorf("Pow 1.5 (4) = %v, want NaN (not a beta plans take)", got)
	}
}

// TestEltwiseF64LogSubnormal holds EltwiseF64's log of subnormals to the
// exact value's neighbours: log(2^-1074) and log(2^-1050) are -1074 ln 2
// and -1050 ln 2 (Go's amd64 math.Log gives about -708.4 for both).
func TestEltwiseF64LogSubnormal(t *testing.T) {
	for _, e := range []int{-1074, -1050, -1023} {
		got := EltwiseF64(ops.Log, 0, 0, math.Ldexp(1, e))
		want := float64(e) * math.Ln2
		if math.Abs(got-want) > 4*math.Abs(want)*0x1p-53 {
			t.Errorf("log(2^%d) = %v, want %v", e, got, want)
		}
	}
}

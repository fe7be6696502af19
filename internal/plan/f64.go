package plan

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
)

// f64 plans. A plan whose src is f64 computes in float64 from end to end:
// transform, combine, finalize and post-ops (EltwiseF64, BinaryF64),
// every operand widened exactly to float64, the result rounded once to
// its dst, f64 or f32. No other plan reads or writes f64: an f64 dst or
// operand needs an f64 src, so that no f64 value is ever narrowed to f32
// mid-way and no f32 plan pays for float64 post-ops.

// wideTypes is the table of the data types whose plans compute in
// float64, with the dst types each may be written to.
var wideTypes = map[dtypes.DataType][]dtypes.DataType{
	dtypes.F64: {dtypes.F64, dtypes.F32},
}

// IsWide reports whether plans over src elements of type t compute in
// float64 (t is f64).
func IsWide(t dtypes.DataType) bool { _, ok := wideTypes[t]; return ok }

// WideDst reports whether a plan over a wide src of type src may write dst.
func WideDst(src, dst dtypes.DataType) bool {
	for _, d := range wideTypes[src] {
		if d == dst {
			return true
		}
	}
	return false
}

// PartialType is the data type of the partial results a split reduction
// over src elements of type src writes between its stages: f64 for a
// wide src, whose sums stay float64 through both levels, f32 otherwise.
func PartialType(src dtypes.DataType) dtypes.DataType {
	if IsWide(src) {
		return dtypes.F64
	}
	return dtypes.F32
}

// LoadF64 returns element i of the buffer b of data type dt as float64,
// exactly: f64 as it is, s32 as its integer, the other types through
// dtypes.LoadF32.
func LoadF64(dt dtypes.DataType, b []byte, i int64) float64 {
	if dt == dtypes.S32 {
		return float64(int32(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24))
	}
	if dt == dtypes.F64 {
		return math.Float64frombits(uint64(b[8*i]) | uint64(b[8*i+1])<<8 | uint64(b[8*i+2])<<16 | uint64(b[8*i+3])<<24 |
			uint64(b[8*i+4])<<32 | uint64(b[8*i+5])<<40 | uint64(b[8*i+6])<<48 | uint64(b[8*i+7])<<56)
	}
	return float64(dtypes.LoadF32(dt, b, i))
}

// StoreF64 writes v as element i of the buffer b of data type dt: f64
// keeps v's bits; any other type takes v rounded once to f32 (nearest
// even) and then stored as dtypes.StoreF32 stores it.
func StoreF64(dt dtypes.DataType, b []byte, i int64, v float64) {
	if dt != dtypes.F64 {
		dtypes.StoreF32(dt, b, i, float32(v))
		return
	}
	u := math.Float64bits(v)
	for k := range int64(8) {
		b[8*i+k] = byte(u >> (8 * k))
	}
}

// EltwiseF64 is Eltwise in float64: the same function of x with the same
// parameters, computed in float64 (the transcendental ones with package
// math, within a few float64 ulps of the exact value) and not rounded to
// f32. NaN stays itself; the limits at ±Inf are Eltwise's.
func EltwiseF64(k ops.Kind, alpha, beta float32, x float64) float64 {
	if x != x {
		return x
	}
	a, b := float64(alpha), float64(beta)
	switch k {
	case ops.Abs:
		return math.Abs(x)
	case ops.Clamp:
		if x < a {
			x = a
		}
		if x > b {
			x = b
		}
		return x
	case ops.Elu:
		if x > 0 {
			return x
		}
		return a * math.Expm1(x)
	case ops.Exp:
		return math.Exp(x)
	case ops.GELUErf:
		if math.IsInf(x, 0) {
			return geluInf64(x)
		}
		return 0.5 * x * math.Erfc(-x/math.Sqrt2)
	case ops.GELUTanh:
		if math.IsInf(x, 0) {
			return geluInf64(x)
		}
		u := math.Sqrt(2/math.Pi) * (x + float64(0.044715*x*x*x))
		return x / (1 + math.Exp(-2*u))
	case ops.HardSigmoid:
		return clamp01(float64(a*x) + b)
	case ops.HardSwish:
		v := x/6 + 0.5
		switch {
		case v <= 0:
			return math.Copysign(0, -1)
		case v >= 1:
			return x
		}
		return x * v
	case ops.LeakyReLU:
		if x >= 0 {
			return x
		}
		return a * x
	case ops.Log:
		return LogF64(x)
	case ops.Pow:
		return pow64(beta, x)
	case ops.Mish:
		if math.IsInf(x, -1) {
			return math.Copysign(0, -1)
		}
		return x * math.Tanh(softplus(x))
	case ops.Sigmoid:
		if x >= 0 {
			return 1 / (1 + math.Exp(-x))
		}
		e := math.Exp(x)
		return e / (1 + e)
	case ops.SoftPlus:
		return softplus(b*x) / b
	case ops.ReLU:
		if x > 0 {
			return x
		}
		return 0
	case ops.Round:
		return math.RoundToEven(x)
	case ops.Sqrt:
		return math.Sqrt(x)
	case ops.Square:
		return x * x
	case ops.Tanh:
		return math.Tanh(x)
	}
	return math.NaN()
}

// BinaryF64 is Binary in float64: one correctly rounded float64
// operation; Maximum and Minimum return NaN when either input is NaN and
// order +0 above -0.
func BinaryF64(k ops.Kind, a, b float64) float64 {
	switch k {
	case ops.Add:
		return a + b
	case ops.Multiply:
		return a * b
	case ops.Maximum, ops.Minimum:
		if a != a || b != b {
			return math.NaN()
		}
		if k == ops.Maximum {
			return math.Max(a, b)
		}
		return math.Min(a, b)
	case ops.Divide:
		return a / b
	case ops.Subtract:
		return a - b
	}
	return math.NaN()
}

// LogF64 is math.Log, accurate for a subnormal x too: Go's amd64
// math.Log (assembly) takes a subnormal as if its exponent were the
// least normal's, giving about log(2^-1022) for every one. A subnormal x
// is taken as log(x*2^52) - 52*ln2: x*2^52 is exact and normal, and
// 52*ln2 is taken in two parts (the first times 52 exact, the second's
// product far below an ulp of the result), so the result is within
// about an ulp. A normal x pays one compare: LogF64 inlines, and calls
// math.Log or the subnormal case through one function value. The
// interpreter and the oracle take every log of f64 data through it.
func LogF64(x float64) float64 {
	log := math.Log
	if x < 0x1p-1022 && x > 0 {
		log = logSubnormal
	}
	return log(x)
}

// logSubnormal is LogF64 of a subnormal x; kept out of line so that
// LogF64 stays within the inliner's budget.
//
//go:noinline
func logSubnormal(x float64) float64 {
	return math.FMA(-52, ln2Hi, math.Log(x*0x1p52)) - 52*ln2Lo
}

// PowF64 is math.Pow, accurate for a subnormal base too: Go's Pow takes
// a non-integer power of x through Log(x) (see LogF64). A subnormal x > 0
// to a power y other than an integer and ±0.5 (which Pow takes through
// Frexp and Sqrt, right for subnormals) is (x*2^52)^y * (2^-52)^y, both
// factors Pow of a normal base: within Pow's own error at each, about
// |y*log(x)| ulps in all, as Pow's of a normal base. Where the result is
// finite neither factor overflows (each lies between 1 and the result),
// and where a factor underflows the result is further below. A normal
// base pays one compare: PowF64 inlines as LogF64 does.
func PowF64(x, y float64) float64 {
	pow := math.Pow
	if x < 0x1p-1022 && x > 0 {
		pow = powSubnormal
	}
	return pow(x, y)
}

// powSubnormal is PowF64 of a subnormal x; kept out of line as
// logSubnormal is.
//
//go:noinline
func powSubnormal(x, y float64) float64 {
	if _, f := math.Modf(y); f != 0 && y != 0.5 && y != -0.5 && !math.IsInf(y, 0) {
		return math.Pow(x*0x1p52, y) * math.Pow(0x1p-52, y)
	}
	return math.Pow(x, y)
}

// ln2Hi + ln2Lo is ln 2, ln2Hi with 32 significant bits so that its
// product with a small integer is exact.
const ln2Hi, ln2Lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10

// geluInf64 is GELU's limit at ±Inf: +Inf, or -0 from below.
func geluInf64(x float64) float64 {
	if x > 0 {
		return x
	}
	return math.Copysign(0, -1)
}

// pow64 is x^beta in float64 for the betas of ops.PowBetas (pow's steps,
// not rounded to f32); another beta gives NaN.
func pow64(beta float32, d float64) float64 {
	switch beta {
	case 0:
		return 1
	case 1:
		return d
	case 2:
		return d * d
	case 3:
		return d * d * d
	case -1:
		return 1 / d
	case -2:
		return 1 / (d * d)
	case 0.5, -0.5:
		var s float64
		switch {
		case math.IsInf(d, -1):
			s = math.Inf(1)
		case d != 0:
			s = math.Sqrt(d)
		}
		if beta < 0 {
			s = 1 / s
		}
		return s
	}
	return math.NaN()
}

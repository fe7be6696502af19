package vf64

import (
	"math"
	"math/rand"

	"github.com/gdnn/gdnn/internal/plan"
)

// ULPs is the distance of a from b in float64 ulps (the steps between
// them in the ordered bit patterns; ±0 are the same step): 0 for two
// NaNs or equal values, MaxInt64 where only one is a NaN or an infinity
// meets another value (an overflow is exact).
func ULPs(a, b float64) int64 {
	switch {
	case a != a || b != b:
		if a != a && b != b {
			return 0
		}
		return math.MaxInt64
	case a == b:
		return 0
	case math.IsInf(a, 0) || math.IsInf(b, 0):
		return math.MaxInt64
	}
	d := ordered(a) - ordered(b)
	if d < 0 {
		d = -d
	}
	return d
}

// ordered maps float64 bits onto integers in the same order, one apart
// per step, -0 and +0 both 0.
func ordered(x float64) int64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return -int64(b &^ (1 << 63))
	}
	return int64(b)
}

// OracleExp is math.Exp but where it overflows early: Go's amd64
// assembly gives +Inf for the few x just below log(MaxFloat64), whose e^x
// is finite; there it is e^(x-1/2) * e^(1/2) (x - 1/2 is exact), within
// a few ulps, which ExpNear allows for.
func OracleExp(x float64) float64 {
	if y := math.Exp(x); !math.IsInf(y, 1) || x > ExpOverflow {
		return y
	}
	return math.Exp(x-0.5) * math.Exp(0.5)
}

// ExpOverflow is the largest x whose e^x rounds to a finite float64.
const ExpOverflow = 709.782712893384

// ExpNear reports whether got is within MaxULP of OracleExp(x), or
// within 8 ulps where OracleExp takes its product.
func ExpNear(x, got float64) (int64, bool) {
	d := ULPs(got, OracleExp(x))
	if math.IsInf(math.Exp(x), 1) && x <= ExpOverflow {
		return d, d <= 8
	}
	return d, d <= MaxULP
}

// OracleLog is plan.LogF64: math.Log, but right for subnormal x too,
// where Go's amd64 assembly is not (it gives about log(2^-1022) for all
// of them).
func OracleLog(x float64) float64 { return plan.LogF64(x) }

// LogNear reports whether got is within MaxULP of OracleLog(x), or
// within MaxULP+1 for a subnormal x.
func LogNear(x, got float64) (int64, bool) {
	d := ULPs(got, OracleLog(x))
	if x > 0 && x < 0x1p-1022 {
		return d, d <= MaxULP+1
	}
	return d, d <= MaxULP
}

// Specials are the inputs every test of the exp and the log meets: the
// zeros, the infinities, NaNs (a signalling one too), the ends of the
// exp's range and of the subnormals, the log's split points.
var Specials = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000123),
	1, -1, 2, 0.5, math.Sqrt2, math.Nextafter(math.Sqrt2, 0), math.Sqrt2 / 2,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 0x1p-1022, math.Nextafter(0x1p-1022, 0),
	-math.SmallestNonzeroFloat64, 709.782712893384, 709.7827128933841, 709.79, 710, 711, 1000,
	-708.3964185322641, -708.4, -744.4400719213812, -745.1332191019411, -745.14, -746, -1000,
	1e-300, 1e-20, -1e-20, 0.34657359027997264, -0.34657359027997264, 1 + 0x1p-52, 1 - 0x1p-53}

// Inputs returns Specials and then n values drawn from r: random bit
// patterns of every sign and exponent (half of them), the exp's range
// (a quarter) and values near 1 (a quarter), where the functions' steps
// are most delicate.
func Inputs(r *rand.Rand, n int) []float64 {
	xs := append([]float64(nil), Specials...)
	for i := 0; i < n; i++ {
		var x float64
		switch i % 4 {
		case 0, 1:
			x = math.Float64frombits(r.Uint64())
		case 2:
			x = (r.Float64()*2 - 1) * 750
		default:
			x = 1 + (r.Float64()*2-1)*0x1p-8
		}
		xs = append(xs, x)
	}
	return xs
}

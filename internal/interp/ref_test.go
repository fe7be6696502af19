package interp

import (
	"encoding/binary"
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// This file is the test oracle: a plain float64 evaluation of a Problem
// that walks the Problem's own dims and strides (never the canonical
// plan) and decodes and rounds the 16-bit formats with its own code.

// decode returns element i of buf as float64.
func decode(dt dtypes.DataType, buf []byte, i int64) float64 {
	switch dt {
	case dtypes.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])))
	case dtypes.BF16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(buf[2*i:])) << 16))
	case dtypes.F16:
		return f16Value(binary.LittleEndian.Uint16(buf[2*i:]))
	}
	panic("decode: data type " + dt.String())
}

// f16Value decodes IEEE binary16 bits.
func f16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	switch e {
	case 0:
		return sign * math.Ldexp(m, -24)
	case 31:
		if m == 0 {
			return sign * math.Inf(1)
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1024+m, e-25)
}

// format describes a binary floating-point format for roundTo.
type format struct {
	prec      int     // significand bits, with the implicit one
	minExp    int     // exponent of the smallest normal, as 2^minExp
	maxFinite float64 // largest finite value
}

var formats = map[dtypes.DataType]format{
	dtypes.F32:  {24, -126, math.MaxFloat32},
	dtypes.BF16: {8, -126, 0x1.fep127},
	dtypes.F16:  {11, -14, 65504},
}

// roundTo rounds x to the nearest value of dt, ties to even, with
// overflow to ±Inf and gradual underflow.
func roundTo(x float64, dt dtypes.DataType) float64 {
	f := formats[dt]
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	_, e := math.Frexp(x) // |x| = frac * 2^e, frac in [0.5, 1)
	if e-1 < f.minExp {
		e = f.minExp + 1 // subnormal: fixed spacing
	}
	q := math.Ldexp(1, e-f.prec)
	r := math.RoundToEven(x/q) * q
	if math.Abs(r) > f.maxFinite {
		return math.Copysign(math.Inf(1), x)
	}
	return r
}

// ulpOf is the spacing of dt's values at |x|.
func ulpOf(x float64, dt dtypes.DataType) float64 {
	f := formats[dt]
	_, e := math.Frexp(math.Abs(x))
	if x == 0 || e-1 < f.minExp {
		e = f.minExp + 1
	}
	return math.Ldexp(1, e-f.prec)
}

// to32 rounds a float64 to f32 through roundTo, not through Go's
// conversion, so the oracle shares no rounding code with the package.
func to32(x float64) float64 { return roundTo(x, dtypes.F32) }

// refEltwise evaluates a unary post-op on the f32 value x in float64 and
// rounds the result to f32.
func refEltwise(op plan.PostOp, x float64) float64 {
	a, b := float64(op.Alpha), float64(op.Beta)
	if math.IsNaN(x) {
		return x
	}
	var y float64
	switch op.Kind {
	case ops.Abs:
		y = math.Abs(x)
	case ops.Clamp:
		y = x
		if y < a {
			y = a
		}
		if y > b {
			y = b
		}
	case ops.Elu:
		y = x
		if x <= 0 {
			y = a * math.Expm1(x)
		}
	case ops.Exp:
		y = math.Exp(x)
	case ops.GELUErf:
		switch {
		case math.IsInf(x, 1):
			y = x
		case math.IsInf(x, -1):
			y = math.Copysign(0, -1)
		default:
			// Phi(x) = erfc(-x/sqrt2)/2 stays accurate in the left tail.
			y = x * math.Erfc(-x/math.Sqrt2) / 2
		}
	case ops.GELUTanh:
		switch {
		case math.IsInf(x, 1):
			y = x
		case math.IsInf(x, -1):
			y = math.Copysign(0, -1)
		default:
			u := math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
			y = 0.5 * x * (1 + math.Tanh(u))
			if u < -5 { // 1+tanh(u) = 2e^{2u}/(1+e^{2u}) without cancelling
				e := math.Exp(2 * u)
				y = x * e / (1 + e)
			}
		}
	case ops.HardSigmoid:
		y = math.Max(0, math.Min(1, a*x+b))
	case ops.HardSwish:
		switch {
		case math.IsInf(x, -1):
			y = 0
		case math.IsInf(x, 1):
			y = x
		default:
			y = x * math.Max(0, math.Min(1, x/6+0.5))
		}
	case ops.LeakyReLU:
		y = x
		if x < 0 {
			y = a * x
		}
	case ops.Log:
		y = math.Log(x)
	case ops.Mish:
		switch {
		case math.IsInf(x, -1):
			y = math.Copysign(0, -1)
		case x > 30: // tanh(softplus(x)) is 1 to float64 precision
			y = x
		default:
			y = x * math.Tanh(math.Log1p(math.Exp(x)))
		}
	case ops.Pow:
		y = math.Pow(x, b)
	case ops.Sigmoid:
		y = 1 / (1 + math.Exp(-x))
	case ops.SoftPlus:
		if t := b * x; t > 40 {
			y = x // log(1+e^t) = t to float64 precision
		} else {
			y = math.Log1p(math.Exp(t)) / b
		}
	case ops.ReLU:
		y = math.Max(x, 0)
	case ops.Round:
		y = math.RoundToEven(x)
	case ops.Sqrt:
		y = math.Sqrt(x)
	case ops.Square:
		y = x * x
	case ops.Tanh:
		y = math.Tanh(x)
	default:
		panic("refEltwise: kind " + op.Kind.String())
	}
	return to32(y)
}

// refBinary applies a binary post-op to f32 values; float64 holds the
// exact sum, difference and product of two f32 values, and a correctly
// rounded quotient, so one more rounding gives the f32 result.
func refBinary(k ops.Kind, a, b float64) float64 {
	switch k {
	case ops.Add:
		return to32(a + b)
	case ops.Subtract:
		return to32(a - b)
	case ops.Multiply:
		return to32(a * b)
	case ops.Divide:
		return to32(a / b)
	case ops.Maximum, ops.Minimum:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		if a == b { // +0 is the larger zero
			if (k == ops.Maximum) != math.Signbit(a) {
				return a
			}
			return b
		}
		if (a > b) == (k == ops.Maximum) {
			return a
		}
		return b
	}
	panic("refBinary: kind " + k.String())
}

// exactKinds are post-ops that are one correctly rounded f32 operation, so
// the oracle and the interpreter must agree bit for bit through them.
var exactKinds = map[ops.Kind]bool{
	ops.Abs: true, ops.Clamp: true, ops.LeakyReLU: true, ops.ReLU: true, ops.Round: true,
	ops.Sqrt: true, ops.Square: true,
	ops.Add: true, ops.Multiply: true, ops.Maximum: true, ops.Minimum: true, ops.Divide: true, ops.Subtract: true,
}

// refOut is the oracle's value of one dst element.
type refOut struct {
	off    int64   // dst element index
	val    float64 // expected value, already in the dst type
	sumAbs float64 // sum of |src| over the mean (error bounds)
	n      int64   // elements in the mean
	exact  bool    // no post-op with transcendental math in the chain
}

// reference evaluates p over src and bins. Every output's mean is the
// float64 sum divided by N, rounded to f32, then the post-ops in f32, then
// rounded to the dst type.
func reference(p *plan.Problem, src []byte, bins [][]byte) []refOut {
	rank := len(p.Dims)
	n := int64(1)
	for i, d := range p.Dims {
		if p.Reduce[i] {
			n *= d
		}
	}
	exact := true
	for _, op := range p.PostOps {
		exact = exact && exactKinds[op.Kind]
	}
	var outs []refOut
	kept := make([]int64, rank) // dst index; reduced dims stay 0
	for {
		if anyZeroKept(p) {
			return nil
		}
		// Sums start at +0 as in oneDNN and the JIT: a sum of -0 values is +0.
		sum, sumAbs := 0.0, 0.0
		red := make([]int64, rank)
		for ok := n > 0; ok; ok = nextIndex(red, p.Dims, p.Reduce, true) {
			var off int64
			for i := range rank {
				idx := kept[i]
				if p.Reduce[i] {
					idx = red[i]
				}
				off += idx * p.SrcStrides[i]
			}
			v := decode(p.SrcDT, src, off)
			sum += v
			sumAbs += math.Abs(v)
		}
		m := to32(sum / float64(n))
		bi := 0
		for _, op := range p.PostOps {
			if !op.Kind.IsBinary() {
				m = refEltwise(op, m)
				continue
			}
			var boff int64
			for i := range rank {
				if !p.Reduce[i] {
					boff += kept[i] * op.BinStrides[i]
				}
			}
			m = refBinary(op.Kind, m, decode(op.BinDT, bins[bi], boff))
			bi++
		}
		var doff int64
		for i := range rank {
			if !p.Reduce[i] {
				doff += kept[i] * p.DstStrides[i]
			}
		}
		outs = append(outs, refOut{off: doff, val: roundTo(m, p.DstDT), sumAbs: sumAbs, n: n, exact: exact})
		if !nextIndex(kept, p.Dims, p.Reduce, false) {
			return outs
		}
	}
}

func anyZeroKept(p *plan.Problem) bool {
	for i, d := range p.Dims {
		if !p.Reduce[i] && d == 0 {
			return true
		}
	}
	return false
}

// nextIndex advances idx over the dims whose Reduce flag equals reduced
// (the others stay 0) and reports false after the last index.
func nextIndex(idx, dims []int64, reduce []bool, reduced bool) bool {
	for i := len(idx) - 1; i >= 0; i-- {
		if reduce[i] != reduced {
			continue
		}
		if idx[i]++; idx[i] < dims[i] {
			return true
		}
		idx[i] = 0
	}
	return false
}

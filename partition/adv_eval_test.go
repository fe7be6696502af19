package partition_test

// An independent float64 op-by-op evaluator of gdnn graphs, written for
// adversarial differential testing. It shares no code with gdnn's own
// oracle, reference or interpreter packages: every op is evaluated from
// the oneDNN Graph op definitions in float64, and each op's output is
// rounded to its logical tensor's data type (f32, bf16 and f16 to nearest
// even, s8/u8/s32 to nearest even and saturated, NaN to 0).

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/x448/float16"
)

// advVal is a dense row-major tensor value.
type advVal struct {
	dims []int64
	v    []float64
}

func advNum(d []int64) int64 {
	n := int64(1)
	for _, x := range d {
		n *= x
	}
	return n
}

func advStrides(d []int64) []int64 {
	s := make([]int64, len(d))
	acc := int64(1)
	for i := len(d) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= d[i]
	}
	return s
}

// advRound rounds x to dt the way a tensor of that type stores it.
func advRound(dt dtypes.DataType, x float64) float64 {
	switch dt {
	case dtypes.F32:
		return float64(float32(x))
	case dtypes.BF16:
		f := float32(x)
		if f != f {
			return x
		}
		b := math.Float32bits(f)
		b = (b + 0x7fff + (b>>16)&1) &^ 0xffff
		return float64(math.Float32frombits(b))
	case dtypes.F16:
		return float64(float16.Fromfloat32(float32(x)).Float32())
	case dtypes.S8:
		return advSat(x, -128, 127)
	case dtypes.U8:
		return advSat(x, 0, 255)
	case dtypes.S32:
		return advSat(x, math.MinInt32, math.MaxInt32)
	case dtypes.S64:
		return x
	}
	panic("advRound: " + dt.String())
}

func advSat(x, lo, hi float64) float64 {
	if x != x {
		return 0
	}
	// The kernel rounds its f32 result, so round through f32 first.
	x = math.RoundToEven(float64(float32(x)))
	return math.Max(lo, math.Min(hi, x)) + 0 // an integer has no -0
}

// advReduce reduces src over the marked dims. kind is the reduction op;
// pre is graph.Abs, graph.Square, graph.Exp (log-sum-exp, Log included)
// or 0.
func advReduce(kind, pre graph.OpKind, src advVal, reduce []bool, keep bool) advVal {
	outDims := advKeptDims(src.dims, reduce, keep)
	n := advNum(outDims)
	groups := make([][]float64, n)
	// map each src element to its output index
	rank := len(src.dims)
	idx := make([]int64, rank)
	total := advNum(src.dims)
	for e := int64(0); e < total; e++ {
		// decompose
		r := e
		for i := rank - 1; i >= 0; i-- {
			idx[i] = r % src.dims[i]
			r /= src.dims[i]
		}
		o := int64(0)
		for i := 0; i < rank; i++ {
			if reduce[i] {
				continue
			}
			o = o*src.dims[i] + idx[i]
		}
		x := src.v[e]
		switch pre {
		case graph.Abs:
			x = math.Abs(x)
		case graph.Square:
			x = x * x
		}
		groups[o] = append(groups[o], x)
	}
	out := advVal{dims: outDims, v: make([]float64, n)}
	for o, g := range groups {
		out.v[o] = advCombine(kind, pre, g)
	}
	return out
}

func advCombine(kind, pre graph.OpKind, g []float64) float64 {
	if pre == graph.Exp {
		m := math.Inf(-1)
		nan := false
		for _, x := range g {
			if x != x {
				nan = true
			}
			m = math.Max(m, x)
		}
		if nan {
			return math.NaN()
		}
		if math.IsInf(m, 0) {
			return m
		}
		s := 0.0
		for _, x := range g {
			s += math.Exp(x - m)
		}
		return m + math.Log(s)
	}
	switch kind {
	case graph.ReduceSum, graph.ReduceMean, graph.ReduceL1, graph.ReduceL2:
		s := 0.0
		for _, x := range g {
			switch kind {
			case graph.ReduceL1:
				x = math.Abs(x)
			case graph.ReduceL2:
				x = x * x
			}
			s += x
		}
		switch kind {
		case graph.ReduceMean:
			return s / float64(len(g))
		case graph.ReduceL2:
			return math.Sqrt(s)
		}
		return s
	case graph.ReduceProd:
		p := 1.0
		for _, x := range g {
			p *= x
		}
		return p
	case graph.ReduceMax, graph.ReduceMin:
		m := math.Inf(1)
		if kind == graph.ReduceMax {
			m = math.Inf(-1)
		}
		for _, x := range g {
			if x != x {
				return x
			}
			if kind == graph.ReduceMax {
				m = math.Max(m, x)
			} else {
				m = math.Min(m, x)
			}
		}
		return m
	}
	panic("advCombine " + kind.String())
}

func advF(op *graph.Op, name string) float64 {
	v, _ := op.Float(name)
	return float64(v)
}

// advEltwise is oneDNN Graph's definition of each unary op.
func advEltwise(op *graph.Op, x float64) float64 {
	if x != x {
		return x
	}
	switch op.Kind {
	case graph.Abs:
		return math.Abs(x)
	case graph.Clamp:
		lo, hi := advF(op, "min"), advF(op, "max")
		return math.Min(math.Max(x, lo), hi)
	case graph.Elu:
		if x > 0 {
			return x
		}
		return advF(op, "alpha") * math.Expm1(x)
	case graph.Exp:
		return math.Exp(x)
	case graph.GELU:
		if math.IsInf(x, 1) {
			return x
		}
		if math.IsInf(x, -1) {
			return math.Copysign(0, -1) // the limit, from below
		}
		if mode, _ := op.Str("mode"); mode == "gelu_tanh" {
			// 0.5x(1+tanh(u)) = x/(1+exp(-2u)), without the cancellation
			return x / (1 + math.Exp(-2*math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}
		return 0.5 * x * math.Erfc(-x/math.Sqrt2) // 1+erf(z) = erfc(-z), no cancellation
	case graph.HardSigmoid:
		return math.Max(0, math.Min(1, advF(op, "alpha")*x+advF(op, "beta")))
	case graph.HardSwish:
		if math.IsInf(x, -1) {
			return 0
		}
		if advHardSwishPlusZero && x <= -3 {
			return 0
		}
		return x * math.Max(0, math.Min(1, x/6+0.5))
	case graph.LeakyReLU:
		if x >= 0 {
			return x
		}
		return advF(op, "alpha") * x
	case graph.Log:
		return math.Log(x)
	case graph.Mish:
		if math.IsInf(x, -1) {
			return math.Copysign(0, -1)
		}
		return x * math.Tanh(advSoftplus(x))
	case graph.Pow:
		return math.Pow(x, advF(op, "beta"))
	case graph.Sigmoid:
		return 1 / (1 + math.Exp(-x))
	case graph.SoftPlus:
		b := advF(op, "beta")
		return advSoftplus(b*x) / b
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
	}
	panic("advEltwise " + op.Kind.String())
}

func advBinary(k graph.OpKind, a, b float64) float64 {
	switch k {
	case graph.Add:
		return a + b
	case graph.Subtract:
		return a - b
	case graph.Multiply:
		return a * b
	case graph.Divide:
		return a / b
	case graph.Maximum:
		if a != a || b != b {
			return math.NaN()
		}
		return math.Max(a, b)
	case graph.Minimum:
		if a != a || b != b {
			return math.NaN()
		}
		return math.Min(a, b)
	}
	panic("advBinary " + k.String())
}

// advBroadcast is numpy's broadcast of a and b, or an error.
func advBroadcast(a, b []int64) ([]int64, error) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := range n {
		x, y := int64(1), int64(1)
		if j := i - (n - len(a)); j >= 0 {
			x = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			y = b[j]
		}
		switch {
		case x == y || y == 1:
			out[i] = x
		case x == 1:
			out[i] = y
		default:
			return nil, fmt.Errorf("dims %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

// advAt reads v at the output index idx (of rank len(out)) under numpy
// broadcasting.
func advAt(v advVal, idx []int64) float64 {
	off := len(idx) - len(v.dims)
	e := int64(0)
	for k, d := range v.dims {
		i := idx[off+k]
		if d == 1 {
			i = 0
		}
		e = e*d + i
	}
	return v.v[e]
}

// advEvalOp evaluates one op on its input values.
func advEvalOp(op *graph.Op, ins []advVal, axesVals []int64) (advVal, error) {
	outDT := op.Outputs[0].DataType
	var out advVal
	switch {
	case op.Kind.IsReduction():
		var axes []int64
		if len(op.Inputs) == 2 {
			axes = axesVals
		} else {
			axes, _ = op.Ints("axes")
		}
		rank := len(ins[0].dims)
		reduce := make([]bool, rank)
		for _, a := range axes {
			if a < 0 {
				a += int64(rank)
			}
			if a < 0 || a >= int64(rank) || reduce[a] {
				return advVal{}, fmt.Errorf("bad axes %v", axes)
			}
			reduce[a] = true
		}
		keep, _ := op.Bool("keep_dims")
		out = advReduce(op.Kind, 0, ins[0], reduce, keep)
	case op.Kind.IsEltwise():
		out = advVal{dims: ins[0].dims, v: make([]float64, len(ins[0].v))}
		for i, x := range ins[0].v {
			out.v[i] = advEltwise(op, x)
		}
	case op.Kind.IsBinary():
		a, b := ins[0], ins[1]
		if m, _ := op.Str("auto_broadcast"); m == "none" && fmt.Sprint(a.dims) != fmt.Sprint(b.dims) {
			return advVal{}, fmt.Errorf("auto_broadcast none with %v and %v", a.dims, b.dims)
		}
		dims, err := advBroadcast(a.dims, b.dims)
		if err != nil {
			return advVal{}, err
		}
		n := advNum(dims)
		out = advVal{dims: dims, v: make([]float64, n)}
		idx := make([]int64, len(dims))
		for e := int64(0); e < n; e++ {
			r := e
			for i := len(dims) - 1; i >= 0; i-- {
				idx[i] = r % dims[i]
				r /= dims[i]
			}
			out.v[e] = advBinary(op.Kind, advAt(a, idx), advAt(b, idx))
		}
	case op.Kind == graph.Dequantize || op.Kind == graph.Quantize:
		x := ins[0]
		q, err := graph.QuantParamsOf(op, len(x.dims))
		if err != nil {
			return advVal{}, err
		}
		out = advVal{dims: x.dims, v: make([]float64, len(x.v))}
		st := advStrides(x.dims)
		for e, xv := range x.v {
			c := 0
			if q.PerChannel {
				c = int((int64(e) / st[q.Axis]) % x.dims[q.Axis])
			}
			sc, zp := float64(q.Scales[c]), float64(q.Zps[c])
			if op.Kind == graph.Dequantize {
				out.v[e] = (xv - zp) * sc
			} else {
				out.v[e] = xv/sc + zp
			}
		}
	default:
		return advVal{}, fmt.Errorf("advEvalOp: %s not evaluated", op.Kind)
	}
	for i, x := range out.v {
		out.v[i] = advRound(outDT, x)
	}
	return out, nil
}

// advEvalGraph evaluates every op of a finalized graph in topological
// order on the given input values (by tensor id); axes tensors are read
// from axes (by tensor id). It returns every tensor's value.
func advEvalGraph(g *graph.Graph, inputs map[uint64]advVal, axes map[uint64][]int64, f32 map[uint64]bool) (map[uint64]advVal, error) {
	vals := map[uint64]advVal{}
	for k, v := range inputs {
		vals[k] = v
	}
	for _, op := range g.Ops() {
		if op.Kind == graph.End {
			continue
		}
		if op.Kind == graph.Log && f32[op.Inputs[0].ID] {
			if sum := g.Producer(op.Inputs[0].ID); sum != nil && sum.Kind == graph.ReduceSum && f32[sum.Inputs[0].ID] {
				if exp := g.Producer(sum.Inputs[0].ID); exp != nil && exp.Kind == graph.Exp {
					// fused log-sum-exp: computed as one, stably
					v := advLSE(sum, vals[exp.Inputs[0].ID], axes[advAxesID(sum)])
					dt := op.Outputs[0].DataType
					if f32[op.Outputs[0].ID] {
						dt = dtypes.F32
					}
					for i, x := range v.v {
						v.v[i] = advRound(dt, x)
					}
					vals[op.Outputs[0].ID] = v
					continue
				}
			}
		}
		if err := advEvalInto(op, vals, axes); err != nil {
			return nil, err
		}
		if id := op.Outputs[0].ID; f32[id] && op.Outputs[0].DataType.IsFloat() {
			// a fused intermediate: gdnn keeps it in f32 (README,
			// Semantics); redo the op with an f32 output
			c := op.Clone()
			c.Outputs[0].DataType = dtypes.F32
			if err := advEvalInto(c, vals, axes); err != nil {
				return nil, err
			}
		}
	}
	return vals, nil
}

func advEvalInto(op *graph.Op, vals map[uint64]advVal, axes map[uint64][]int64) error {
	var ins []advVal
	var ax []int64
	for i, t := range op.Inputs {
		if op.Kind.IsReduction() && i == 1 {
			ax = axes[t.ID]
			continue
		}
		v, ok := vals[t.ID]
		if !ok {
			return fmt.Errorf("%s: input %d has no value", op, t.ID)
		}
		ins = append(ins, v)
	}
	out, err := advEvalOp(op, ins, ax)
	if err != nil {
		return fmt.Errorf("%s: %v", op, err)
	}
	vals[op.Outputs[0].ID] = out
	return nil
}

func advSoftplus(y float64) float64 {
	return math.Max(y, 0) + math.Log1p(math.Exp(-math.Abs(y)))
}

// advHardSwishPlusZero makes the evaluator give HardSwish(x <= -3) as +0,
// as gdnn does, instead of the spec formula's x*0 = -0 (a finding of its
// own, kept out of the random runs).
var advHardSwishPlusZero = true

func advAxesID(op *graph.Op) uint64 {
	if len(op.Inputs) == 2 {
		return op.Inputs[1].ID
	}
	return 0
}

// advLSE is log-sum-exp of src over the sum op's axes.
func advLSE(sum *graph.Op, src advVal, axVals []int64) advVal {
	axes := axVals
	if len(sum.Inputs) < 2 {
		axes, _ = sum.Ints("axes")
	}
	rank := len(src.dims)
	reduce := make([]bool, rank)
	for _, a := range axes {
		if a < 0 {
			a += int64(rank)
		}
		reduce[a] = true
	}
	keep, _ := sum.Bool("keep_dims")
	return advReduce(graph.ReduceSum, graph.Exp, src, reduce, keep)
}

// advReduceMask marks the dims of a rank-dim tensor that axes (some
// negative) reduce.
func advReduceMask(rank int, axes []int64) []bool {
	reduce := make([]bool, rank)
	for _, ax := range axes {
		if ax < 0 {
			ax += int64(rank)
		}
		reduce[ax] = true
	}
	return reduce
}

// advKeptDims is a reduction's output dims: the kept dims, and with keep
// a 1 for each reduced one (never nil: rank 0 is []).
func advKeptDims(dims []int64, reduce []bool, keep bool) []int64 {
	out := []int64{}
	for i, d := range dims {
		switch {
		case !reduce[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

// advRandomAxes draws each of rank dims as an axis with probability 1/2,
// half of them counted from the end (negative).
func advRandomAxes(r *rand.Rand, rank int) []int64 {
	var axes []int64
	for i := range rank {
		if r.IntN(2) == 0 {
			ax := int64(i)
			if r.IntN(2) == 0 {
				ax -= int64(rank)
			}
			axes = append(axes, ax)
		}
	}
	return axes
}

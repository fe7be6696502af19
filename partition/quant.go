package partition

import (
	"fmt"
	"math"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
)

// Int8 enters a graph as oneDNN Graph takes it: a Dequantize (s8/u8 ->
// f32) before a reduction and, optionally, a Quantize (f32 -> s8/u8)
// after its post-op chain. Both fuse into the reduction's partition, so
// the plan reads the 8-bit src itself (summing it exactly, see internal/interp)
// and writes the 8-bit dst, and no f32 intermediate reaches memory.
//
// A per-tensor Dequantize is linear in x, so it moves behind the
// reduction as one affine map per output (zp and scale as below); a
// per-channel one too, where its channel dim is kept. A Quantize is the
// affine map x/scale + zp, followed by the integer dst's rounding to
// nearest even and saturation, which the plan does anyway. Each map runs
// as up to three scalar or per-channel binary post-ops (Add, Multiply or
// Divide, Add) whose operands are constants the compiled partition holds:
//
//	ReduceMean, ReduceMax, ReduceMin: (r - zp) * scale   (r is over the raw integers;
//	                                  a negative scale turns max into min and back)
//	ReduceSum:                        (r - zp*N) * scale (N elements per output)
//	ReduceL1, ReduceL2 with zp 0:     r * |scale|
//	Quantize:                         v / scale + zp
//
// A Dequantize directly followed (after the reduction) by the Quantize
// folds into one map, (r - zp) * (scale/qscale) + qzp. What is not linear
// is not fused, and the Dequantize's partition says why: ReduceProd (the
// product of scaled, shifted values is not a map of the product of the
// integers), ReduceL1 and ReduceL2 with a non-zero zero point,
// per-channel scales along a reduced dim (each output mixes channels),
// max/min with per-channel scales of both signs, a ReduceSum with a zero
// point whose axes arrive at run time (the map depends on N), per-channel
// maps whose channel dim cannot be placed when partitioning (unknown rank,
// run-time axes), and chains that would need more than plan.MaxBinary
// binary post-ops. A Quantize that cannot fuse stays a partition of its
// own.

// dequantTarget returns the reduction a Dequantize feeds as its src and
// may fuse into, or nil; and, when op feeds a reduction it cannot fuse
// with, why.
func dequantTarget(g *graph.Graph, op *graph.Op, taken *sched) (*graph.Op, string) {
	cons := g.Consumers(op.Outputs[0].ID)
	if len(cons) != 1 {
		for _, c := range cons {
			if c.Kind.IsReduction() {
				return nil, fmt.Sprintf("not fused before %s: its output has %d consumers; a fused Dequantize feeds only the reduction", c, len(cons))
			}
		}
		return nil, ""
	}
	red := cons[0]
	if !red.Kind.IsReduction() {
		return nil, ""
	}
	why := ""
	if red.Inputs[0].ID != op.Outputs[0].ID {
		why = "it does not feed the reduction's src"
	} else if len(red.Inputs) == 2 {
		p := g.Producer(red.Inputs[1].ID)
		if w := taken.wait(p, op.String()); w != "" {
			why = fmt.Sprintf("its axes tensor %d is produced by %s, %s", red.Inputs[1].ID, p, w)
		}
	}
	if why != "" {
		return nil, fmt.Sprintf("not fused before %s: %s", red, why)
	}
	return red, ""
}

// quantizeTail returns the Quantize that is the only consumer of the
// chain's last op's first output, or nil (a normalization that keeps its
// statistics has them as its further outputs: the Quantize maps dst).
func quantizeTail(g *graph.Graph, last *graph.Op) *graph.Op {
	if len(last.Outputs) == 0 {
		return nil
	}
	cons := g.Consumers(last.Outputs[0].ID)
	if len(cons) == 1 && cons[0].Kind == graph.Quantize && cons[0].Inputs[0].ID == last.Outputs[0].ID {
		return cons[0]
	}
	return nil
}

// fuseQuant wraps a reduction group (pre-op, reduction, post-ops) with
// its Dequantize dq (nil if none) and the Quantize after it, where they
// lower. It returns the ops of the partition and, for each of dq and the
// Quantize that could not join, why (keyed by op id).
func fuseQuant(g *graph.Graph, dq *graph.Op, chain []*graph.Op) ([]*graph.Op, map[uint64]string) {
	whyNot := map[uint64]string{}
	q := quantizeTail(g, chain[len(chain)-1])
	red := chain[0]
	if !red.Kind.IsReduction() {
		red = chain[1]
	}
	try := func(dq, q *graph.Op) string {
		ops := chain
		if dq != nil {
			ops = append([]*graph.Op{dq}, ops...)
		}
		if q != nil {
			ops = append(ops, q)
		}
		_, why := lowerAtGet(ops)
		return why
	}
	if q != nil {
		if why := try(dq, q); why == "" {
			return wrap(dq, chain, q), whyNot
		} else if dq == nil || try(dq, nil) == "" {
			// The Quantize is what does not fit.
			whyNot[q.ID] = fmt.Sprintf("not fused after %s: %s", red, why)
			return wrap(dq, chain, nil), whyNot
		}
	}
	if dq == nil {
		return chain, whyNot
	}
	if why := try(dq, nil); why != "" {
		whyNot[dq.ID] = fmt.Sprintf("not fused before %s: %s", red, why)
		return nil, whyNot
	}
	return wrap(dq, chain, nil), whyNot
}

func wrap(dq *graph.Op, chain []*graph.Op, q *graph.Op) []*graph.Op {
	var ops []*graph.Op
	if dq != nil {
		ops = append(ops, dq)
	}
	ops = append(ops, chain...)
	if q != nil {
		ops = append(ops, q)
	}
	return ops
}

// splitQuant returns the Dequantize heading ops and the Quantize ending
// them (nil where absent), and the reduction group between.
func splitQuant(ops []*graph.Op) (dq *graph.Op, core []*graph.Op, q *graph.Op) {
	core = ops
	if len(core) > 0 && core[0].Kind == graph.Dequantize {
		dq, core = core[0], core[1:]
	}
	if n := len(core); n > 0 && core[n-1].Kind == graph.Quantize {
		q, core = core[n-1], core[:n-1]
	}
	return dq, core, q
}

// affine is y = ((r + c) OP a) + d, OP a multiplication or (div) a
// division, with c, a, d each one value per output (length 1) or one per
// channel along src dim chDim.
type affine struct {
	c, a, d []float64
	div     bool
	chDim   int // -1: per tensor
	// plusZero: the map ends in an add even where d is all zeros, so that
	// a zero comes out +0. A sum or mean of dequantized values is +0 where
	// it is zero (a sum from +0), where (r + c) * a with a negative scale
	// would give -0.
	plusZero bool
}

// addsD reports whether the map's last step, + d, is emitted.
func (m *affine) addsD() bool { return m.plusZero || needed(m.d, 0) }

func (m *affine) postOps() int {
	n := 0
	for _, used := range []bool{needed(m.c, 0), needed(m.a, 1), m.addsD()} {
		if used {
			n++
		}
	}
	return n
}

// needed reports whether a step with values v does anything: not all id
// (0 for the additions, 1 for the scale).
func needed(v []float64, id float64) bool {
	for _, x := range v {
		if x != id {
			return true
		}
	}
	return false
}

// quantLowering is how a partition's Dequantize and Quantize run on its plan.
type quantLowering struct {
	swapMinMax bool    // a negative dequantize scale: max becomes min and back
	pre, post  *affine // before and after the user's post-ops; nil if none
	desc       string  // for the verbose line
}

// lowerCtx is what the lowering knows of the reduction.
type lowerCtx struct {
	red         *graph.Op
	alg         plan.Reduction
	reduce      []bool // per src dim; nil: unknown (rank or run-time axes)
	keepDims    bool
	runTimeAxes bool
	n           int64 // elements per output; -1 unknown
	userBins    int   // binary post-ops of the user's chain
	between     bool  // the user's chain has post-ops between the reduction and the Quantize
}

// lowerAtGet checks, when partitioning, that a group's Dequantize and
// Quantize lower, with what the graph knows before compile.
func lowerAtGet(ops []*graph.Op) (quantLowering, string) {
	dq, core, q := splitQuant(ops)
	ctx, why := newLowerCtx(core, nil)
	if why != "" {
		return quantLowering{}, why
	}
	return lower(dq, q, ctx)
}

// newLowerCtx describes the group's reduction; srcDims are the concrete
// src dims at compile (nil when partitioning: the graph's, maybe unknown).
func newLowerCtx(core []*graph.Op, srcDims []int64) (lowerCtx, string) {
	var pre *graph.Op
	red := core[0]
	if !red.Kind.IsReduction() {
		pre, red = red, core[1]
	}
	ctx := lowerCtx{red: red, n: -1}
	first := 1
	if pre != nil && pre.Kind == graph.Exp {
		ctx.alg, first = plan.LogSumExp, 3
	} else {
		var err error
		if ctx.alg, err = reductionOf(pre, red); err != nil {
			return ctx, err.Error()
		}
	}
	for _, op := range core[first:] {
		ctx.between = true
		if op.Kind.IsBinary() {
			ctx.userBins++
		}
	}
	ctx.keepDims, _ = red.Bool("keep_dims")
	if srcDims == nil {
		srcDims = red.Inputs[0].Dims
	}
	axes, fromAttr, err := graph.ReduceAxesAttr(red)
	switch {
	case err != nil:
		return ctx, err.Error()
	case !fromAttr:
		ctx.runTimeAxes = true
	case srcDims != nil:
		if ctx.reduce, err = shape.NormalizeAxes(red, red.Inputs[0].ID, axes, len(srcDims)); err != nil {
			return ctx, err.Error()
		}
		n := int64(1)
		for i, d := range srcDims {
			if ctx.reduce[i] {
				if d < 0 {
					n = -1
					break
				}
				n *= d
			}
		}
		ctx.n = n
	}
	return ctx, ""
}

// lower works out the maps for dq and q (either may be nil) around the
// reduction ctx describes, or says why they do not lower.
func lower(dq, q *graph.Op, ctx lowerCtx) (quantLowering, string) {
	var l quantLowering
	var descs []string
	rank := len(ctx.reduce)
	if dq != nil {
		p, err := graph.QuantParamsOf(dq, max(rank, len(dq.Inputs[0].Dims)))
		if err != nil {
			return l, err.Error()
		}
		m := &affine{chDim: -1}
		if p.PerChannel {
			switch {
			case ctx.reduce == nil:
				return l, "per-channel dequantize scales need the src rank and axes when partitioning"
			case ctx.reduce[p.Axis]:
				return l, fmt.Sprintf("the Dequantize's per-channel axis %d is reduced: each output mixes channels of different scales", p.Axis)
			}
			m.chDim = p.Axis
		}
		for i, s := range p.Scales {
			sc, zp := float64(s), float64(p.Zps[i])
			m.a = append(m.a, sc)
			m.d = append(m.d, 0)
			switch ctx.red.Kind {
			case graph.ReduceMean, graph.ReduceMax, graph.ReduceMin:
				m.c = append(m.c, -zp)
			case graph.ReduceSum:
				switch {
				case zp == 0:
				case ctx.runTimeAxes:
					return l, "a ReduceSum of data with a zero point subtracts zp*N, and N depends on axes that arrive at run time"
				case ctx.n < 0:
					zp = 1 // N is known at compile; count the step
				default:
					zp *= float64(ctx.n)
				}
				m.c = append(m.c, -zp)
			case graph.ReduceL1, graph.ReduceL2:
				if zp != 0 {
					return l, fmt.Sprintf("%s of (x - zp) * scale with zp %d is not a map of the reduction of x", ctx.red.Kind, p.Zps[i])
				}
				m.c = append(m.c, 0)
				m.a[i] = math.Abs(sc)
			default:
				return l, fmt.Sprintf("%s of dequantized data is not a map of the reduction of the integers (the product of (x - zp) * scale)", ctx.red.Kind)
			}
		}
		// A -0 scale counts as negative: (x - zp) * -0 has the sign
		// opposite to x - zp's, as with any negative scale.
		neg, pos, zero := false, false, false
		for _, s := range p.Scales {
			neg = neg || math.Signbit(float64(s))
			pos = pos || s > 0
			zero = zero || s == 0
		}
		switch ctx.red.Kind {
		case graph.ReduceMax, graph.ReduceMin:
			if neg && pos {
				return l, fmt.Sprintf("%s with per-channel scales of both signs is a max for some channels and a min for others", ctx.red.Kind)
			}
			// Over nothing the max is -Inf whatever the scale, where the
			// map would give -Inf * 0 = NaN.
			if zero && ctx.n < 0 {
				return l, fmt.Sprintf("%s of data dequantized with a zero scale: over a reduced axis of size 0 it is not a map of the max of the integers, and the axes are not known yet", ctx.red.Kind)
			}
			l.swapMinMax = neg
		case graph.ReduceSum, graph.ReduceMean:
			m.plusZero = neg
		}
		if ctx.n != 0 || ctx.red.Kind != graph.ReduceMax && ctx.red.Kind != graph.ReduceMin {
			l.pre = m
		} else {
			l.swapMinMax = false // over nothing: the identity, no map
		}
		descs = append(descs, "dequant:"+qDesc(dq.Inputs[0].DataType, p))
	}
	if q != nil {
		p, err := graph.QuantParamsOf(q, max(len(q.Inputs[0].Dims), 1))
		if err != nil {
			return l, err.Error()
		}
		m := &affine{chDim: -1, div: true}
		if p.PerChannel {
			if ctx.reduce == nil {
				return l, "per-channel quantize scales need the src rank and axes when partitioning"
			}
			if m.chDim = srcDimOf(p.Axis, ctx.reduce, ctx.keepDims); m.chDim < 0 {
				return l, fmt.Sprintf("the Quantize's per-channel axis %d is not a dim of the reduction's output", p.Axis)
			}
		}
		for i, s := range p.Scales {
			m.c = append(m.c, 0)
			m.a = append(m.a, float64(s))
			m.d = append(m.d, float64(p.Zps[i]))
		}
		l.post = m
		descs = append(descs, "quant:"+qDesc(q.Outputs[0].DataType, p))
	}
	if l.pre != nil && l.post != nil && !ctx.between {
		if m, ok := merge(l.pre, l.post); ok {
			l.pre, l.post = m, nil
			descs = append(descs, "folded")
		}
	}
	need := ctx.userBins
	for _, m := range []*affine{l.pre, l.post} {
		if m != nil {
			need += m.postOps()
		}
	}
	if need > plan.MaxBinary {
		return l, fmt.Sprintf("with the scales and zero points the chain needs %d binary post-ops; a kernel takes %d", need, plan.MaxBinary)
	}
	l.desc = strings.Join(descs, ";")
	return l, ""
}

// merge composes the dequantize map p and the quantize map q into one:
// ((r + c) * a/qa) + qd. Per-channel maps along different dims do not,
// nor ones of different channel counts (a dim unknown when partitioning
// could not check them; Compile refuses them against the concrete dims),
// nor scales whose quotient a/qa passes f32's range.
func merge(p, q *affine) (*affine, bool) {
	if p.chDim >= 0 && q.chDim >= 0 && p.chDim != q.chDim {
		return nil, false
	}
	if len(p.a) > 1 && len(q.a) > 1 && len(p.a) != len(q.a) {
		return nil, false
	}
	n := max(len(p.a), len(q.a))
	at := func(v []float64, i int) float64 {
		if len(v) == 1 {
			return v[0]
		}
		return v[i]
	}
	m := &affine{chDim: max(p.chDim, q.chDim)}
	for i := range n {
		m.c = append(m.c, at(p.c, i))
		a := at(p.a, i) / at(q.a, i)
		if math.IsInf(float64(float32(a)), 0) {
			// Past f32's range: 0 * Inf would turn a zero difference
			// into NaN, where the two maps give the zero point.
			return nil, false
		}
		m.a = append(m.a, a)
		m.d = append(m.d, at(q.d, i))
	}
	return m, true
}

// srcDimOf maps dim j of the reduction's output onto its src dim.
func srcDimOf(j int, reduce []bool, keep bool) int {
	if keep {
		return j
	}
	for i, r := range reduce {
		if r {
			continue
		}
		if j == 0 {
			return i
		}
		j--
	}
	return -1
}

func qDesc(dt dtypes.DataType, p graph.QuantParams) string {
	if p.PerChannel {
		return fmt.Sprintf("%s/per_channel:%d", dt, p.Axis)
	}
	return fmt.Sprintf("%s/scale:%g/zp:%d", dt, p.Scales[0], p.Zps[0])
}

// constOperand is a binary post-op operand the compiled partition holds:
// f32 values, one or one per channel along src dim chDim.
type constOperand struct {
	data  []float32
	chDim int
}

// bytes views the values as the kernel reads them.
func (o constOperand) bytes() []byte { return bytesOf(o.data) }

// strides addresses the operand over a rank-dim src index space.
func (o constOperand) strides(rank int) []int64 {
	s := make([]int64, rank)
	if o.chDim >= 0 && len(o.data) > 1 {
		s[o.chDim] = 1
	}
	return s
}

// emit appends m's post-ops to r, each with a constant operand.
func (r *recipe) emit(m *affine) {
	if m == nil {
		return
	}
	step := func(kind ops.Kind, v []float64) {
		data := make([]float32, len(v))
		for i, x := range v {
			data[i] = float32(x)
		}
		r.consts = append(r.consts, constOperand{data: data, chDim: m.chDim})
		r.postOps = append(r.postOps, plan.PostOp{Kind: kind, BinDT: dtypes.F32})
		r.binPorts = append(r.binPorts, -len(r.consts))
	}
	if needed(m.c, 0) {
		step(ops.Add, m.c)
	}
	if needed(m.a, 1) {
		if m.div {
			step(ops.Divide, m.a)
		} else {
			step(ops.Multiply, m.a)
		}
	}
	if m.addsD() {
		step(ops.Add, m.d)
	}
}

// constIndex returns which constant a binary port entry names, or -1 for
// an input port.
func constIndex(port int) int {
	if port < 0 {
		return -port - 1
	}
	return -1
}

// swapMinMax turns a max into a min and back.
func swapMinMax(red plan.Reduction) plan.Reduction {
	switch red.Combine {
	case plan.CombineMax:
		red.Combine = plan.CombineMin
	case plan.CombineMin:
		red.Combine = plan.CombineMax
	}
	return red
}

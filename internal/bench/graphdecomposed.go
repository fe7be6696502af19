package bench

import (
	"math"
	"strings"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// A decomposed normalization is a partition the partitioner recognized
// as a normalization written out in ops (partition.Partition.Pattern):
// softmax as ReduceMax, Subtract, Exp, ReduceSum, Divide; layer norm as
// ReduceMean, Subtract, Square, ReduceMean, Add eps, Sqrt, Divide; RMS
// norm as a square, ReduceMean, Add eps, then Sqrt and Divide or Pow
// -0.5 and Multiply; L2 normalization as ReduceL2 (or a square,
// ReduceSum, Sqrt), then Divide, Maximum eps and Divide, or Add eps and
// Divide. gdnnbench's reference evaluates those ops one by one in
// float64, as the graph writes them, so that it checks what the graph
// means rather than what gdnn made of it; the ops fused after them are
// the chain, as after a normalization op.

// decomposition is a decomposed normalization of a partition.
type decomposition struct {
	name    string      // softmax, layernorm, rmsnorm or l2norm
	ops     []*graph.Op // the pattern's ops, in order; the chain follows
	x       graph.LogicalTensor
	norm    []bool // the normalized dims of x
	softmax bool
}

// normOps are p's ops after a Dequantize or a residual sum fused before
// a normalization (partition.Partition.Pattern says "Dequantize before
// ..." or "residual Add ... before ..."), or all of them.
func normOps(p *partition.Partition) []*graph.Op {
	ops := p.Ops()
	if len(ops) > 1 && ops[0].Kind == graph.Dequantize && strings.HasPrefix(p.Pattern(), "Dequantize before ") {
		return ops[1:]
	}
	if n := residualOps(p); n > 0 && len(ops) > n {
		return ops[n:]
	}
	return ops
}

// readDecomposition returns the decomposed normalization partition p
// computes, or nil where p is no such partition. The partitioner has
// matched the pattern already: the shapes of its ops say which it is and
// how many ops it has.
func readDecomposition(p *partition.Partition) *decomposition {
	ops := normOps(p)
	if p.Pattern() == "" || len(ops) < 2 {
		return nil
	}
	at := func(i int) graph.OpKind {
		if i < len(ops) {
			return ops[i].Kind
		}
		return graph.OpKind(-1)
	}
	first := ops[0]
	var d decomposition
	n := 0
	switch {
	case first.Kind == graph.ReduceMax:
		d.name, d.softmax, n = "softmax", true, 5
	case first.Kind == graph.ReduceMean:
		d.name, n = "layernorm", 7
	case first.Kind == graph.ReduceL2:
		d.name, n = "l2norm", 3
		if at(1) == graph.Divide {
			n = 2
		}
	case first.IsSquare() && at(1) == graph.ReduceMean:
		d.name, n = "rmsnorm", 5
	case first.IsSquare() && at(1) == graph.ReduceSum:
		d.name, n = "l2norm", 5
		if at(3) == graph.Divide {
			n = 4
		}
	default:
		return nil
	}
	if len(ops) < n || len(first.Inputs) == 0 {
		return nil
	}
	d.ops, d.x = ops[:n], first.Inputs[0]
	red := first
	if !red.Kind.IsReduction() {
		red = ops[1]
	}
	axes, _ := red.Ints("axes")
	d.norm = make([]bool, len(d.x.Dims))
	for _, a := range axes {
		i, ok := norm.AxisIn(a, len(d.norm))
		if !ok {
			return nil
		}
		d.norm[i] = true
	}
	return &d
}

// result is the pattern's last op's output, which the chain reads.
func (d *decomposition) result() graph.LogicalTensor {
	return d.ops[len(d.ops)-1].Outputs[0]
}

// standIn is a normalization op that stands for the pattern where the
// graph driver's normalization code looks at one: its kind (SoftMax
// over the pattern's axis, or LayerNorm / RMSNorm), x as its input and
// the pattern's result as its output.
func (d *decomposition) standIn() *graph.Op {
	kind := graph.RMSNorm
	switch d.name {
	case "softmax":
		kind = graph.SoftMax
	case "layernorm":
		kind = graph.LayerNorm
	}
	op := graph.NewOp(d.ops[0].ID, kind, d.name).AddInput(d.x).AddOutput(d.result())
	for i, n := range d.norm {
		if n && d.softmax {
			op.SetAttr("axis", int64(i))
		}
	}
	return op
}

// eps is the tensor the pattern reads as its epsilon, if any: the
// operand of its Add or Maximum that no op of it produced.
func (d *decomposition) eps() (graph.LogicalTensor, bool) {
	made := map[uint64]bool{d.x.ID: true}
	for _, op := range d.ops {
		for _, t := range op.Outputs {
			made[t.ID] = true
		}
	}
	for _, op := range d.ops {
		if op.Kind != graph.Add && op.Kind != graph.Maximum {
			continue
		}
		for _, t := range op.Inputs {
			if !made[t.ID] {
				return t, true
			}
		}
	}
	return graph.LogicalTensor{}, false
}

// has16BitStep reports whether a tensor between the pattern's ops is
// of a 16-bit type, which the ops one by one round to and gdnn's fused
// program may not.
func (d *decomposition) has16BitStep() bool {
	for _, op := range d.ops[:len(d.ops)-1] {
		if op.Outputs[0].DataType.Size() == 2 {
			return true
		}
	}
	return false
}

// fillStats is fillRows (statsFill, or int8Fill for an 8-bit src) over
// the normalized dims of x, which need not be the last ones: element
// (row, col) of the fill goes to the element
// of x whose other dims count row and whose normalized dims count col.
func (d *decomposition) fillStats(fillRows func(rows, l int64) []float64) []float64 {
	dims := d.x.Dims
	var l int64 = 1
	for i, n := range d.norm {
		if n {
			l *= dims[i]
		}
	}
	total := rows(dims)
	fill := fillRows(total/max(l, 1), l)
	vals := make([]float64, total)
	coord := make([]int64, len(dims))
	for pos := range vals {
		var row, col int64
		for i, n := range d.norm {
			if n {
				col = col*dims[i] + coord[i]
			} else {
				row = row*dims[i] + coord[i]
			}
		}
		vals[pos] = fill[row*l+col]
		for i := len(dims) - 1; i >= 0; i-- {
			if coord[i]++; coord[i] < dims[i] {
				break
			}
			coord[i] = 0
		}
	}
	return vals
}

// f64Tensor is a tensor of the reference: logical row-major values.
type f64Tensor struct {
	dims []int64
	v    []float64
}

// eval computes the pattern's ops in float64 on the given inputs (x and
// eps by id) and returns the pattern's result.
func (d *decomposition) eval(inputs map[uint64]f64Tensor) (f64Tensor, error) {
	vals := map[uint64]f64Tensor{}
	for id, t := range inputs {
		vals[id] = t
	}
	var out f64Tensor
	for _, op := range d.ops {
		ins := make([]f64Tensor, len(op.Inputs))
		for i, t := range op.Inputs {
			v, ok := vals[t.ID]
			if !ok {
				return f64Tensor{}, status.Errorf(status.Unimplemented, "%s: input %d is neither x, eps nor computed by the pattern", op, t.ID)
			}
			ins[i] = v
		}
		var err error
		if out, err = evalOp(op, ins); err != nil {
			return f64Tensor{}, err
		}
		vals[op.Outputs[0].ID] = out
	}
	return out, nil
}

// evalOp computes one op of a decomposed normalization in float64.
func evalOp(op *graph.Op, ins []f64Tensor) (f64Tensor, error) {
	unary := func(f func(float64) float64) (f64Tensor, error) {
		out := f64Tensor{dims: ins[0].dims, v: make([]float64, len(ins[0].v))}
		for i, v := range ins[0].v {
			out.v[i] = f(v)
		}
		return out, nil
	}
	switch {
	case op.Kind.IsReduction():
		return evalReduction(op, ins[0])
	case len(ins) == 2 && op.Kind == graph.Subtract:
		return broadcastBinary(ins[0], ins[1], func(a, b float64) float64 { return a - b })
	case len(ins) == 2 && op.Kind == graph.Add:
		return broadcastBinary(ins[0], ins[1], func(a, b float64) float64 { return a + b })
	case len(ins) == 2 && op.Kind == graph.Multiply:
		return broadcastBinary(ins[0], ins[1], func(a, b float64) float64 { return a * b })
	case len(ins) == 2 && op.Kind == graph.Divide:
		return broadcastBinary(ins[0], ins[1], func(a, b float64) float64 { return a / b })
	case len(ins) == 2 && op.Kind == graph.Maximum:
		return broadcastBinary(ins[0], ins[1], math.Max)
	case len(ins) == 1 && op.Kind == graph.Sqrt:
		return unary(math.Sqrt)
	case len(ins) == 1 && op.Kind == graph.Exp:
		return unary(math.Exp)
	case len(ins) == 1 && op.Kind == graph.Square:
		return unary(func(v float64) float64 { return v * v })
	case len(ins) == 1 && op.Kind == graph.Pow:
		beta, _ := op.Float("beta")
		return unary(func(v float64) float64 { return math.Pow(v, float64(beta)) })
	}
	return f64Tensor{}, status.Errorf(status.Unimplemented, "gdnnbench has no float64 reference for %s in a decomposed normalization", op)
}

// evalReduction is a ReduceMax, ReduceMean, ReduceSum or ReduceL2 over
// its axes attribute, dims kept (as the patterns have them).
func evalReduction(op *graph.Op, x f64Tensor) (f64Tensor, error) {
	axes, _ := op.Ints("axes")
	dims := append([]int64(nil), x.dims...)
	for _, a := range axes {
		i, ok := norm.AxisIn(a, len(dims))
		if !ok {
			return f64Tensor{}, status.Errorf(status.InvalidArguments, "%s: axis %d out of range", op, a)
		}
		dims[i] = 1
	}
	out := f64Tensor{dims: dims, v: make([]float64, rows(dims))}
	count := make([]float64, len(out.v))
	if op.Kind == graph.ReduceMax {
		for i := range out.v {
			out.v[i] = math.Inf(-1)
		}
	}
	var err error
	forEachBroadcast(x.dims, dims, func(pos, at int64) {
		v := x.v[pos]
		switch op.Kind {
		case graph.ReduceMax:
			out.v[at] = math.Max(out.v[at], v)
		case graph.ReduceL2:
			out.v[at] += v * v
		case graph.ReduceMean, graph.ReduceSum:
			out.v[at] += v
		default:
			err = status.Errorf(status.Unimplemented, "gdnnbench has no float64 reference for %s in a decomposed normalization", op)
		}
		count[at]++
	})
	for i := range out.v {
		switch op.Kind {
		case graph.ReduceMean:
			out.v[i] /= count[i]
		case graph.ReduceL2:
			out.v[i] = math.Sqrt(out.v[i])
		}
	}
	return out, err
}

// broadcastBinary applies f to a and b broadcast to one shape (numpy
// rules: dims aligned from the right, a dim of 1 repeated).
func broadcastBinary(a, b f64Tensor, f func(a, b float64) float64) (f64Tensor, error) {
	rank := max(len(a.dims), len(b.dims))
	dims := make([]int64, rank)
	for i := range dims {
		da, db := dimFromRight(a.dims, rank-1-i), dimFromRight(b.dims, rank-1-i)
		switch {
		case da == db, db == 1:
			dims[i] = da
		case da == 1:
			dims[i] = db
		default:
			return f64Tensor{}, status.Errorf(status.InvalidShape, "dims %v and %v do not broadcast", a.dims, b.dims)
		}
	}
	out := f64Tensor{dims: dims, v: make([]float64, rows(dims))}
	bs := make([]int64, len(out.v))
	forEachBroadcast(dims, b.dims, func(pos, at int64) { bs[pos] = at })
	forEachBroadcast(dims, a.dims, func(pos, at int64) { out.v[pos] = f(a.v[at], b.v[bs[pos]]) })
	return out, nil
}

// dimFromRight is dims' i-th dim counted from the last (1 beyond the
// front).
func dimFromRight(dims []int64, i int) int64 {
	if i >= len(dims) {
		return 1
	}
	return dims[len(dims)-1-i]
}

// forEachBroadcast calls f with each logical position of a tensor of
// dims and the position in a tensor of sub (aligned from the right, its
// dims each 1 or equal to dims') that the element broadcasts from or
// reduces into.
func forEachBroadcast(dims, sub []int64, f func(pos, at int64)) {
	rank := len(dims)
	step := make([]int64, rank) // sub's stride along each dim of dims; 0 where broadcast
	s := int64(1)
	for i := rank - 1; i >= 0; i-- {
		d := dimFromRight(sub, rank-1-i)
		if d != 1 {
			step[i] = s
		}
		s *= d
	}
	coord := make([]int64, rank)
	at := int64(0)
	n := rows(dims)
	for pos := int64(0); pos < n; pos++ {
		f(pos, at)
		for i := rank - 1; i >= 0; i-- {
			coord[i]++
			at += step[i]
			if coord[i] < dims[i] {
				break
			}
			at -= step[i] * coord[i]
			coord[i] = 0
		}
	}
}

package partition

import (
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/normprog"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Exporters also write layer norm (ONNX before opset 17), RMS norm and
// L2 normalization as the ops that compute them, with epsilon as a
// tensor of the graph:
//
//	layer norm: d = x - ReduceMean(x); d / Sqrt(ReduceMean(d^2) + eps)
//	RMS norm:   ms = ReduceMean(x^2) + eps; x / Sqrt(ms), or x * Pow(ms, -0.5)
//	L2:         n = ReduceL2(x), or Sqrt(ReduceSum(x^2)); x / Maximum(n, eps), or x / (n + eps)
//
// where x^2 is a Square, a Pow with beta 2 or a Multiply of x by itself,
// every reduction keeps its dims and reduces the same axes (any set: each
// row is the elements those axes span), and eps is a scalar (every dim
// 1) that broadcasts onto the statistic without changing its shape. Each
// is recognized as one partition that runs the normalization's program
// (internal/normprog) with eps as a run-time operand, reading x only in
// the program's passes; the Multiply by gamma and the Add of beta that
// follow are binary post-ops of its chain, as any others. A form that
// differs (other axes per reduction, an intermediate read elsewhere, an
// eps that is not a scalar) is left to the ops' own partitions.

// decomposed is what a recognized layer norm, RMS norm or L2
// normalization computes: the program's kind over the normalized dims
// of x, and eps, its run-time epsilon (the synthetic op's inputs are x
// and eps).
type decomposed struct {
	kind     normprog.Kind
	norm     []bool
	epsAdded bool // L2: divide by norm + eps, not max(norm, eps)
}

// matchPattern returns the decomposed normalization that starts at op,
// or nil.
func matchPattern(g *graph.Graph, op *graph.Op, taken *sched) *normPattern {
	for _, match := range []func(*graph.Graph, *graph.Op, *sched) *normPattern{
		matchSoftmax, matchLayerNorm, matchRMSNorm, matchL2Norm,
	} {
		if p := match(g, op, taken); p != nil {
			return p
		}
	}
	return nil
}

// keptAxes is a reduction's normalized-dims mask over a src of the
// given rank: its axes as an attribute, in range, no repeats, dims kept.
func keptAxes(op *graph.Op, rank int) ([]bool, bool) {
	axes, ok := op.Ints("axes")
	keep, _ := op.Bool("keep_dims")
	if !ok || len(axes) == 0 || !keep || len(op.Inputs) != 1 || len(op.Outputs) != 1 || rank == 0 {
		return nil, false
	}
	mask := make([]bool, rank)
	for _, a := range axes {
		i, ok := norm.AxisIn(a, rank)
		if !ok || mask[i] {
			return nil, false
		}
		mask[i] = true
	}
	return mask, true
}

// reducesOver reports whether op is a reduction of the kind reading in
// over exactly the dims mask marks (rank of mask), dims kept.
func reducesOver(op *graph.Op, kind graph.OpKind, in uint64, mask []bool) bool {
	if op == nil || op.Kind != kind || len(op.Inputs) != 1 || op.Inputs[0].ID != in {
		return false
	}
	m, ok := keptAxes(op, len(mask))
	return ok && slices.Equal(m, mask)
}

// binaryOf reports whether op is a binary op of the kind with a as an
// operand (first, when ordered), and returns the other.
func binaryOf(op *graph.Op, kind graph.OpKind, a uint64, ordered bool) (graph.LogicalTensor, bool) {
	if op == nil || op.Kind != kind || len(op.Inputs) != 2 || len(op.Outputs) != 1 {
		return graph.LogicalTensor{}, false
	}
	switch {
	case op.Inputs[0].ID == a:
		return op.Inputs[1], true
	case op.Inputs[1].ID == a && !ordered:
		return op.Inputs[0], true
	}
	return graph.LogicalTensor{}, false
}

// isUnary reports whether op is a one-input op of the kind reading in.
func isUnary(op *graph.Op, in uint64, is func(*graph.Op) bool) bool {
	return op != nil && len(op.Inputs) == 1 && len(op.Outputs) == 1 && op.Inputs[0].ID == in && is(op)
}

// squareOf reports whether op squares x: Square, Pow with beta 2, or a
// Multiply of x by itself.
func squareOf(op *graph.Op, x uint64) bool {
	return op != nil && op.IsSquare() && len(op.Outputs) == 1 && op.Inputs[0].ID == x &&
		(op.Kind != graph.Multiply || op.Inputs[1].ID == x)
}

func powOf(beta float32) func(*graph.Op) bool {
	return func(op *graph.Op) bool { b, ok := op.Float("beta"); return op.Kind == graph.Pow && ok && b == beta }
}

func kindIs(k graph.OpKind) func(*graph.Op) bool {
	return func(op *graph.Op) bool { return op.Kind == k }
}

// scalarEps reports whether t can be the pattern's epsilon: a float
// tensor whose every dim is 1 (so it broadcasts onto a statistic of
// the given rank without changing its shape), ready when the pattern
// runs (a graph input, or the output of a partition before it).
func scalarEps(g *graph.Graph, t graph.LogicalTensor, rank int, taken *sched) bool {
	if t.Dims == nil || len(t.Dims) > rank || !isFloatType(t.DataType) {
		return false
	}
	for _, d := range t.Dims {
		if d != 1 {
			return false
		}
	}
	return taken.wait(g.Producer(t.ID), "the pattern's first op") == ""
}

func isFloatType(dt dtypes.DataType) bool {
	return dt == dtypes.F32 || dt == dtypes.BF16 || dt == dtypes.F16
}

// newDecomposed builds the pattern's result: its ops (none taken, each
// intermediate of float type), the synthetic op over x and eps whose
// output is the last op's, and what it computes.
func newDecomposed(name string, kind graph.OpKind, ops []*graph.Op, x graph.LogicalTensor, eps *graph.LogicalTensor, dec *decomposed, taken *sched) *normPattern {
	if !isFloatType(x.DataType) || eps != nil && eps.ID == x.ID { // (x as its own eps: a one-element x read as both)
		return nil
	}
	for _, op := range ops {
		if taken.has(op) || !isFloatType(op.Outputs[0].DataType) {
			return nil
		}
	}
	var axes []int64
	for i, n := range dec.norm {
		if n {
			axes = append(axes, int64(i))
		}
	}
	last := ops[len(ops)-1]
	op := graph.NewOp(ops[0].ID, kind, name).AddInput(x)
	if eps != nil {
		op.AddInput(*eps)
	}
	op.AddOutput(last.Outputs[0]).SetAttr("axes", axes)
	return &normPattern{name: name, ops: ops, op: op, dec: dec}
}

// matchLayerNorm returns the layer norm that starts at its first
// ReduceMean, or nil:
//
//	m = ReduceMean(x); d = Subtract(x, m); v = ReduceMean(Square(d))
//	y = Divide(d, Sqrt(Add(v, eps)))
func matchLayerNorm(g *graph.Graph, m *graph.Op, taken *sched) *normPattern {
	if m.Kind != graph.ReduceMean || len(m.Inputs) != 1 {
		return nil
	}
	x := m.Inputs[0]
	mask, ok := keptAxes(m, len(x.Dims))
	if !ok {
		return nil
	}
	sub := onlyConsumer(g, m.Outputs[0].ID)
	if o, ok := binaryOf(sub, graph.Subtract, x.ID, true); !ok || o.ID != m.Outputs[0].ID {
		return nil
	}
	d := sub.Outputs[0].ID
	cons := uniqueOps(g.Consumers(d))
	if len(cons) != 2 {
		return nil
	}
	sq, div := cons[0], cons[1]
	if !squareOf(sq, d) {
		sq, div = div, sq
	}
	if !squareOf(sq, d) {
		return nil
	}
	v := onlyConsumer(g, sq.Outputs[0].ID)
	if !reducesOver(v, graph.ReduceMean, sq.Outputs[0].ID, mask) {
		return nil
	}
	add := onlyConsumer(g, v.Outputs[0].ID)
	eps, ok := binaryOf(add, graph.Add, v.Outputs[0].ID, false)
	if !ok || !scalarEps(g, eps, len(mask), taken) {
		return nil
	}
	sqrt := onlyConsumer(g, add.Outputs[0].ID)
	if !isUnary(sqrt, add.Outputs[0].ID, kindIs(graph.Sqrt)) || onlyConsumer(g, sqrt.Outputs[0].ID) != div {
		return nil
	}
	if o, ok := binaryOf(div, graph.Divide, d, true); !ok || o.ID != sqrt.Outputs[0].ID {
		return nil
	}
	return newDecomposed("layernorm from ReduceMean, Subtract, Square, ReduceMean, Add eps, Sqrt, Divide", graph.LayerNorm,
		[]*graph.Op{m, sub, sq, v, add, sqrt, div}, x, &eps, &decomposed{kind: normprog.LayerNorm, norm: mask}, taken)
}

// matchRMSNorm returns the RMS norm that starts at its square, or nil:
//
//	ms = Add(ReduceMean(Square(x)), eps)
//	y = Divide(x, Sqrt(ms)), or Multiply(x, Pow(ms, -0.5))
func matchRMSNorm(g *graph.Graph, sq *graph.Op, taken *sched) *normPattern {
	if !sq.IsSquare() {
		return nil
	}
	x := sq.Inputs[0]
	if !squareOf(sq, x.ID) {
		return nil
	}
	mean := onlyConsumer(g, sq.Outputs[0].ID)
	if mean == nil {
		return nil
	}
	mask, ok := keptAxes(mean, len(x.Dims))
	if !ok || !reducesOver(mean, graph.ReduceMean, sq.Outputs[0].ID, mask) {
		return nil
	}
	add := onlyConsumer(g, mean.Outputs[0].ID)
	eps, ok := binaryOf(add, graph.Add, mean.Outputs[0].ID, false)
	if !ok || !scalarEps(g, eps, len(mask), taken) {
		return nil
	}
	ms := add.Outputs[0].ID
	root := onlyConsumer(g, ms)
	if root == nil {
		return nil
	}
	last := onlyConsumer(g, root.Outputs[0].ID)
	dec := &decomposed{kind: normprog.RMSNorm, norm: mask}
	ops := []*graph.Op{sq, mean, add, root, last}
	switch {
	case isUnary(root, ms, kindIs(graph.Sqrt)):
		if o, ok := binaryOf(last, graph.Divide, x.ID, true); ok && o.ID == root.Outputs[0].ID {
			return newDecomposed("rmsnorm from Square, ReduceMean, Add eps, Sqrt, Divide", graph.RMSNorm, ops, x, &eps, dec, taken)
		}
	case isUnary(root, ms, powOf(-0.5)):
		if o, ok := binaryOf(last, graph.Multiply, x.ID, false); ok && o.ID == root.Outputs[0].ID {
			return newDecomposed("rmsnorm from Square, ReduceMean, Add eps, Pow -0.5, Multiply", graph.RMSNorm, ops, x, &eps, dec, taken)
		}
	}
	return nil
}

// matchL2Norm returns the L2 normalization that starts at its ReduceL2
// or its square, or nil:
//
//	n = ReduceL2(x), or Sqrt(ReduceSum(Square(x)))
//	y = Divide(x, Maximum(n, eps)), or Divide(x, Add(n, eps))
func matchL2Norm(g *graph.Graph, first *graph.Op, taken *sched) *normPattern {
	var ops []*graph.Op
	var mask []bool
	var x graph.LogicalTensor
	switch {
	case first.Kind == graph.ReduceL2 && len(first.Inputs) == 1:
		x = first.Inputs[0]
		var ok bool
		if mask, ok = keptAxes(first, len(x.Dims)); !ok {
			return nil
		}
		ops = []*graph.Op{first}
	case first.IsSquare():
		x = first.Inputs[0]
		if !squareOf(first, x.ID) {
			return nil
		}
		sum := onlyConsumer(g, first.Outputs[0].ID)
		if sum == nil {
			return nil
		}
		var ok bool
		if mask, ok = keptAxes(sum, len(x.Dims)); !ok || !reducesOver(sum, graph.ReduceSum, first.Outputs[0].ID, mask) {
			return nil
		}
		sqrt := onlyConsumer(g, sum.Outputs[0].ID)
		if !isUnary(sqrt, sum.Outputs[0].ID, kindIs(graph.Sqrt)) {
			return nil
		}
		ops = []*graph.Op{first, sum, sqrt}
	default:
		return nil
	}
	n := ops[len(ops)-1].Outputs[0].ID
	name := "l2 normalization from "
	if first.Kind == graph.ReduceL2 {
		name += "ReduceL2, "
	} else {
		name += "Square, ReduceSum, Sqrt, "
	}
	// RMSNorm stands for the kind: a normalization whose chain takes
	// any float type (ReduceL2's would follow a reduction's rules).
	dec := &decomposed{kind: normprog.L2Norm, norm: mask}
	next := onlyConsumer(g, n)
	if o, ok := binaryOf(next, graph.Divide, x.ID, true); ok && o.ID == n {
		// No eps (ONNX's LpNormalization, exported): x over its norm
		// itself, so a row of zeros gives NaN, as the ops do.
		return newDecomposed(name+"Divide", graph.RMSNorm, append(ops, next), x, nil, dec, taken)
	}
	bound := next
	if bound == nil || bound.Kind != graph.Maximum && bound.Kind != graph.Add {
		return nil
	}
	eps, ok := binaryOf(bound, bound.Kind, n, false)
	if !ok || !scalarEps(g, eps, len(mask), taken) {
		return nil
	}
	div := onlyConsumer(g, bound.Outputs[0].ID)
	if o, ok := binaryOf(div, graph.Divide, x.ID, true); !ok || o.ID != bound.Outputs[0].ID {
		return nil
	}
	ops = append(ops, bound, div)
	if bound.Kind == graph.Add {
		name += "Add eps, Divide"
	} else {
		name += "Maximum eps, Divide"
	}
	dec.epsAdded = bound.Kind == graph.Add
	return newDecomposed(name, graph.RMSNorm, ops, x, &eps, dec, taken)
}

// compile builds the program of a decomposed normalization of src into
// dst with its run-time epsilon (nil: none, as an L2 normalization may
// have) and the chain's post-ops, into r. After a fused Dequantize dq,
// the program reads src as inDT (s8 or u8) and dequantizes it.
func (dec *decomposed) compile(op *graph.Op, src graph.LogicalTensor, eps *graph.LogicalTensor, dst graph.LogicalTensor, post []plan.PostOp,
	dq *kernelshape.Dequant, inDT dtypes.DataType, r *normRun) error {
	d := &normprog.Desc{Kind: dec.kind, SrcDT: src.DataType, DstDT: dst.DataType, Dims: src.Dims,
		SrcStrides: src.Strides, DstStrides: dst.Strides, Norm: dec.norm}
	if dq != nil {
		d.SrcDT, d.Dequant = inDT, dq
	}
	if eps == nil {
		var err error
		r.exec, err = normprog.FromDesc(d, post)
		return err
	}
	d.EpsDT, d.EpsAdded = eps.DataType, dec.epsAdded
	for _, n := range eps.Dims {
		if n != 1 {
			return status.Errorf(status.InvalidShape, "%s: epsilon tensor %d has dims %s, want a scalar (every dim 1)",
				op, eps.ID, graph.DimsString(eps.Dims))
		}
	}
	var err error
	r.exec, err = normprog.FromDesc(d, post)
	return err
}

// checkEps refuses an epsilon value that is NaN, infinite or negative,
// as the normalization ops refuse such an epsilon attribute: the ops of
// the pattern would give NaN (or the wrong rows) for it.
func checkEps(op *graph.Op, eps *Tensor) error {
	v := dtypes.LoadF32(eps.lt.DataType, eps.buf, 0)
	if why := norm.EpsilonProblem(v); why != "" {
		return status.Errorf(status.InvalidArguments, "%s: epsilon tensor %d: %s", op, eps.lt.ID, why)
	}
	return nil
}

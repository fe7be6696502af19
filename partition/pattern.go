package partition

import (
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/norm"
)

// Exporters write softmax as the ops that compute it (ONNX before opset
// 13 in some exporters, hand-written models, traced frameworks):
//
//	m = ReduceMax(x, axes=[a], keep_dims=true)
//	e = Exp(Subtract(x, m))
//	y = Divide(e, ReduceSum(e, axes=[a], keep_dims=true))
//
// Run op by op, that reads x twice, writes and reads e, and leaves two
// reductions and three element-wise passes to the caller. matchSoftmax
// recognizes the five ops as one SoftMax over axis a, which then runs as
// the normalization's program and takes the post-ops after it.

// normPattern is a recognized decomposed normalization: the ops in the
// graph, and the normalization op they compute (not in the graph).
type normPattern struct {
	name string
	ops  []*graph.Op
	op   *graph.Op
	dec  *decomposed // what op computes where it is no graph op's (nil: op's kind says)
}

// matchSoftmax returns the softmax that starts at mx, or nil. Every
// intermediate tensor must be read by the pattern's ops alone, and no
// op of it may be taken by an earlier partition.
func matchSoftmax(g *graph.Graph, mx *graph.Op, taken *sched) *normPattern {
	if mx.Kind != graph.ReduceMax || len(mx.Inputs) != 1 || len(mx.Outputs) != 1 {
		return nil
	}
	x := mx.Inputs[0]
	axis, ok := singleAxis(mx, len(x.Dims))
	if !ok || len(x.Dims) == 0 {
		return nil
	}
	sub := onlyConsumer(g, mx.Outputs[0].ID)
	if sub == nil || sub.Kind != graph.Subtract || sub.Inputs[0].ID != x.ID || sub.Inputs[1].ID != mx.Outputs[0].ID {
		return nil
	}
	exp := onlyConsumer(g, sub.Outputs[0].ID)
	if exp == nil || exp.Kind != graph.Exp {
		return nil
	}
	e := exp.Outputs[0].ID
	cons := uniqueOps(g.Consumers(e))
	if len(cons) != 2 {
		return nil
	}
	sum, div := cons[0], cons[1]
	if sum.Kind != graph.ReduceSum {
		sum, div = div, sum
	}
	if sum.Kind != graph.ReduceSum || div.Kind != graph.Divide || len(sum.Inputs) != 1 {
		return nil
	}
	if a, ok := singleAxis(sum, len(x.Dims)); !ok || a != axis {
		return nil
	}
	if onlyConsumer(g, sum.Outputs[0].ID) != div || div.Inputs[0].ID != e || div.Inputs[1].ID != sum.Outputs[0].ID {
		return nil
	}
	// As newDecomposed's: a float x and float intermediates (an integer
	// one would round the chain, and SoftMax takes no other src or dst).
	if !isFloatType(x.DataType) {
		return nil
	}
	ops := []*graph.Op{mx, sub, exp, sum, div}
	for _, op := range ops {
		if taken.has(op) || !isFloatType(op.Outputs[0].DataType) {
			return nil
		}
	}
	sm := graph.NewOp(mx.ID, graph.SoftMax, "softmax").AddInput(x).AddOutput(div.Outputs[0]).SetAttr("axis", int64(axis))
	return &normPattern{name: "softmax from ReduceMax, Subtract, Exp, ReduceSum, Divide", ops: ops, op: sm}
}

// singleAxis is a reduction's one axis, counted from the front, when it
// keeps its dims and has its axes as an attribute.
func singleAxis(op *graph.Op, rank int) (int, bool) {
	axes, ok := op.Ints("axes")
	keep, _ := op.Bool("keep_dims")
	if !ok || len(axes) != 1 || !keep {
		return 0, false
	}
	return norm.AxisIn(axes[0], rank)
}

// onlyConsumer is the one op that reads tensor id, where it has one
// output, or nil.
func onlyConsumer(g *graph.Graph, id uint64) *graph.Op {
	cons := uniqueOps(g.Consumers(id))
	if len(cons) != 1 || len(cons[0].Outputs) != 1 {
		// A pattern's ops have one output each, which the matchers read
		// next; an End op, which has none, ends no pattern.
		return nil
	}
	return cons[0]
}

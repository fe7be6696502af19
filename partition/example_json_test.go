package partition_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// A graph built in Go, saved as oneDNN Graph's JSON and loaded back:
// Square -> ReduceSum -> Add -> Sqrt -> Multiply, the root of a sum of
// squares plus eps times a scale, fuses into one partition; a Subtract
// whose right operand is that chain's result, 1 - r, cannot fuse, and its
// partition's Reason says why. Errors carry oneDNN's statuses.
func Example_jsonAndReason() {
	x := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 4})
	eps := graph.NewLogicalTensor(3, dtypes.F32, []int64{1})
	scale := graph.NewLogicalTensor(6, dtypes.F32, []int64{1})
	one := graph.NewLogicalTensor(8, dtypes.F32, []int64{1})
	t := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, dtypes.F32, nil) }

	g := graph.New()
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.Square, "square").AddInput(x).AddOutput(t(1)),
		graph.NewOp(1, graph.ReduceSum, "sum").AddInput(t(1)).AddOutput(t(2)).
			SetAttr("axes", []int64{-1}).SetAttr("keep_dims", true),
		graph.NewOp(2, graph.Add, "add_eps").AddInput(t(2)).AddInput(eps).AddOutput(t(4)),
		graph.NewOp(3, graph.Sqrt, "sqrt").AddInput(t(4)).AddOutput(t(5)),
		graph.NewOp(4, graph.Multiply, "scale").AddInput(t(5)).AddInput(scale).AddOutput(t(7)),
		graph.NewOp(5, graph.Subtract, "one_minus").AddInput(one).AddInput(t(7)).AddOutput(t(9)),
	} {
		if err := g.AddOp(op); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := g.Finalize(); err != nil {
		fmt.Println(err)
		return
	}

	var buf bytes.Buffer
	if err := g.WriteJSON(&buf); err != nil {
		fmt.Println(err)
		return
	}
	loaded, err := graph.ReadJSON(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := loaded.Finalize(); err != nil { // ReadJSON leaves that to the caller
		fmt.Println(err)
		return
	}
	parts, err := partition.Get(loaded, partition.Fusion)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range parts {
		fmt.Println(p.Ops(), p.IsSupported())
		if !p.IsSupported() {
			fmt.Println("reason:", p.Reason())
		}
	}

	// A mistake is an error value with a status to branch on.
	bad := graph.New()
	err = bad.AddOp(graph.NewOp(0, graph.ReduceSum, "sum").AddInput(x).AddOutput(t(1)).SetAttr("keepdims", true))
	fmt.Println(errors.Is(err, graph.InvalidGraphOp), err)
	// Output:
	// [op 0 (Square "square") op 1 (ReduceSum "sum") op 2 (Add "add_eps") op 3 (Sqrt "sqrt") op 4 (Multiply "scale")] true
	// [op 5 (Subtract "one_minus")] false
	// reason: op 5 (Subtract "one_minus"): gdnn compiles Subtract only as a post-op fused after a reduction (not fused after op 1 (ReduceSum "sum"): the chain's output is its right operand (the kernel computes r - b and r / b of the reduction's r))
	// true invalid_graph_op: op 0 (ReduceSum "sum"): unknown attribute "keepdims" for ReduceSum
}

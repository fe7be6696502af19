package graph_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// Build a ReduceMean over the spatial dims of an NCHW tensor and let
// Finalize infer the output shape.
func ExampleGraph_Finalize() {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{6, 12, 10, 24})
	dst := graph.NewLogicalTensorAny(1, dtypes.F32, nil) // shape to be inferred

	mean := graph.NewOp(0, graph.ReduceMean, "spatial_mean").
		AddInput(src).
		AddOutput(dst).
		SetAttr("axes", []int64{2, 3}).
		SetAttr("keep_dims", true)

	g := graph.New()
	if err := g.AddOp(mean); err != nil {
		fmt.Println(err)
		return
	}
	if err := g.Finalize(); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := g.Tensor(1)
	fmt.Println(graph.DimsString(out.Dims))

	// A wrong axis is an error value naming the op and the value.
	bad := graph.NewOp(1, graph.ReduceMean, "bad").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).SetAttr("axes", []int64{4})
	g2 := graph.New()
	_ = g2.AddOp(bad)
	fmt.Println(g2.Finalize())
	// Output:
	// 6x12x1x1
	// invalid_arguments: op 1 (ReduceMean "bad"): axes[0] = 4 is out of range [-4, 3] for src tensor 0 of rank 4
}

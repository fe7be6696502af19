package partition_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// Axes can also arrive at execute time, as an s32 tensor: each distinct
// value gets its kernel from the cache.
func Example_axesTensor() {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	axes := graph.NewLogicalTensor(1, dtypes.S32, []int64{1})
	g := graph.New()
	_ = g.AddOp(graph.NewOp(0, graph.ReduceMean, "mean").AddInput(src).AddInput(axes).
		AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).SetAttr("keep_dims", true))
	_ = g.Finalize()
	parts, _ := partition.Get(g, partition.Fusion)
	cp, err := parts[0].Compile([]graph.LogicalTensor{src, axes}, parts[0].Outputs())
	if err != nil {
		panic(err)
	}
	data := []float32{1, 2, 3, 4, 5, 6}
	srcT, _ := partition.NewTensor(src, data)
	for _, axis := range []int32{0, 1} {
		outDims := []int64{2, 3}
		outDims[axis] = 1
		out := graph.NewLogicalTensor(2, dtypes.F32, outDims)
		res := make([]float32, out.NumElements())
		axesT, _ := partition.NewTensor(axes, []int32{axis})
		dstT, _ := partition.NewTensor(out, res)
		if err := cp.Execute([]partition.Tensor{srcT, axesT}, []partition.Tensor{dstT}); err != nil {
			panic(err)
		}
		fmt.Println("axis", axis, res)
	}
	// Output:
	// axis 0 [2.5 3.5 4.5]
	// axis 1 [2 5]
}

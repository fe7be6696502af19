package partition_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// Axes can also arrive at execute time, as an s32 or s64 tensor (ONNX's
// int64 axes as they come): each distinct value gets its kernel from the
// cache, and QueryLogicalTensorWithAxes says what output a value needs.
func Example_axesTensor() {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	axes := graph.NewLogicalTensor(1, dtypes.S64, []int64{1})
	g := graph.New()
	if err := g.AddOp(graph.NewOp(0, graph.ReduceMean, "mean").AddInput(src).AddInput(axes).
		AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).SetAttr("keep_dims", true)); err != nil {
		panic(err)
	}
	if err := g.Finalize(); err != nil {
		panic(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		panic(err)
	}
	cp, err := parts[0].Compile([]graph.LogicalTensor{src, axes}, parts[0].Outputs())
	if err != nil {
		panic(err)
	}
	open, _ := cp.QueryLogicalTensor(2)
	fmt.Println("output dims before the axes are known:", graph.DimsString(open.Dims))
	srcT, err := partition.NewTensor(src, []float32{1, 2, 3, 4, 5, 6})
	if err != nil {
		panic(err)
	}
	for _, axis := range []int64{0, -1} {
		out, err := cp.QueryLogicalTensorWithAxes(2, []int64{axis})
		if err != nil {
			panic(err)
		}
		res := make([]float32, out.NumElements())
		axesT, err := partition.NewTensor(axes, []int64{axis})
		if err != nil {
			panic(err)
		}
		dstT, err := partition.NewTensor(out, res)
		if err != nil {
			panic(err)
		}
		if err := cp.Execute([]partition.Tensor{srcT, axesT}, []partition.Tensor{dstT}); err != nil {
			panic(err)
		}
		fmt.Println("axis", axis, "dims", graph.DimsString(out.Dims), res)
	}
	// Output:
	// output dims before the axes are known: ?x?
	// axis 0 dims 1x3 [2.5 3.5 4.5]
	// axis -1 dims 2x1 [2 5]
}

// Every Reduce* op compiles, and an Abs or Square before a reduction fuses
// into it: here a ReduceMax, a ReduceL2 and a Square -> ReduceSum (the sum
// of squares RMSNorm needs) over the rows of one tensor.
func Example_reductions() {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	data := []float32{1, -2, 3, -4, 0, 2}

	run := func(build func(g *graph.Graph, out graph.LogicalTensor)) {
		g := graph.New()
		out := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
		build(g, out)
		if err := g.Finalize(); err != nil {
			panic(err)
		}
		parts, _ := partition.Get(g, partition.Fusion)
		p := parts[0]
		cp, err := p.Compile(p.Inputs(), p.Outputs())
		if err != nil {
			panic(err)
		}
		outLT, _ := cp.QueryLogicalTensor(1)
		res := make([]float32, outLT.NumElements())
		srcT, _ := partition.NewTensor(src, data)
		dstT, _ := partition.NewTensor(outLT, res)
		if err := cp.Execute([]partition.Tensor{srcT}, []partition.Tensor{dstT}); err != nil {
			panic(err)
		}
		fmt.Println(p, res)
	}
	reduce := func(kind graph.OpKind) func(g *graph.Graph, out graph.LogicalTensor) {
		return func(g *graph.Graph, out graph.LogicalTensor) {
			_ = g.AddOp(graph.NewOp(1, kind, "").AddInput(src).AddOutput(out).SetAttr("axes", []int64{1}))
		}
	}
	run(reduce(graph.ReduceMax))
	run(reduce(graph.ReduceL2))
	run(func(g *graph.Graph, out graph.LogicalTensor) {
		sq := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
		_ = g.AddOp(graph.NewOp(2, graph.Square, "").AddInput(src).AddOutput(sq))
		_ = g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(sq).AddOutput(out).SetAttr("axes", []int64{1}))
	})
	// Output:
	// partition 0 [ReduceMax(1)] supported [3 2]
	// partition 0 [ReduceL2(1)] supported [3.7416575 4.472136]
	// partition 0 [Square(2) -> ReduceSum(1)] supported [14 20]
}

package partition_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// An exported transformer writes RMSNorm as the ops that compute it,
// epsilon a tensor of the graph: x * Pow(ReduceMean(x*x) + eps, -0.5) *
// gamma. gdnn recognizes the six ops as one partition, which reads x
// once per pass of its program and writes only the result.
func Example_decomposedRMSNorm() {
	f32 := dtypes.F32
	x := graph.NewLogicalTensor(1, f32, []int64{2, 4})
	eps := graph.NewLogicalTensor(2, f32, []int64{1})
	gamma := graph.NewLogicalTensor(3, f32, []int64{4})
	t := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, f32, nil) }
	g := graph.New()
	for _, op := range []*graph.Op{
		graph.NewOp(10, graph.Multiply, "x*x").AddInput(x).AddInput(x).AddOutput(t(10)),
		graph.NewOp(11, graph.ReduceMean, "ms").AddInput(t(10)).AddOutput(t(11)).
			SetAttr("axes", []int64{-1}).SetAttr("keep_dims", true),
		graph.NewOp(12, graph.Add, "+eps").AddInput(t(11)).AddInput(eps).AddOutput(t(12)),
		graph.NewOp(13, graph.Pow, "rsqrt").AddInput(t(12)).AddOutput(t(13)).SetAttr("beta", float32(-0.5)),
		graph.NewOp(14, graph.Multiply, "x*r").AddInput(x).AddInput(t(13)).AddOutput(t(14)),
		graph.NewOp(15, graph.Multiply, "*gamma").AddInput(t(14)).AddInput(gamma).AddOutput(t(15)),
	} {
		if err := g.AddOp(op); err != nil {
			panic(err)
		}
	}
	if err := g.Finalize(); err != nil {
		panic(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(parts), "partition:", parts[0])
	p := parts[0]
	fmt.Println(p.Pattern())
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		panic(err)
	}
	res := make([]float32, 8)
	var ins []partition.Tensor
	for _, data := range [][]float32{{1, 2, 3, 4, -2, -2, 2, 2}, {0}, {1, 1, 0.5, 2}} {
		lt := p.Inputs()[len(ins)]
		in, err := partition.NewTensor(lt, data)
		if err != nil {
			panic(err)
		}
		ins = append(ins, in)
	}
	out, _ := cp.QueryLogicalTensor(15)
	dst, err := partition.NewTensor(out, res)
	if err != nil {
		panic(err)
	}
	if err := cp.Execute(ins, []partition.Tensor{dst}); err != nil {
		panic(err)
	}
	fmt.Printf("%.4f\n", res)
	// Output:
	// 1 partition: partition 0 [Multiply(10) -> ReduceMean(11) -> Add(12) -> Pow(13) -> Multiply(14) -> Multiply(15)] supported
	// rmsnorm from Square, ReduceMean, Add eps, Pow -0.5, Multiply
	// [0.3651 0.7303 0.5477 2.9212 -1.0000 -1.0000 0.5000 2.0000]
}

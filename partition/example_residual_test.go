package partition_test

import (
	"fmt"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// A transformer block adds its attention output to the residual stream,
// h = x + attn, normalizes h for the next layer, and keeps h itself for
// the next residual Add. gdnn fuses the Add into the RMSNorm: one
// partition reads x and attn once and writes both the normalized rows
// and h.
func Example_residualRMSNorm() {
	f32 := dtypes.F32
	x := graph.NewLogicalTensor(1, f32, []int64{2, 4})
	attn := graph.NewLogicalTensor(2, f32, []int64{2, 4})
	gamma := graph.NewLogicalTensor(3, f32, []int64{4})
	t := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, f32, nil) }
	g := graph.New()
	for _, op := range []*graph.Op{
		graph.NewOp(10, graph.Add, "residual").AddInput(x).AddInput(attn).AddOutput(t(10)),
		graph.NewOp(11, graph.RMSNorm, "norm").AddInput(t(10)).AddInput(gamma).AddOutput(t(11)).
			SetAttr("epsilon", float32(0)),
		// The next layer's residual Add reads h again.
		graph.NewOp(12, graph.Add, "next residual").AddInput(t(10)).AddInput(t(11)).AddOutput(t(12)),
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
	p := parts[0]
	fmt.Println(p)
	fmt.Println(p.Pattern())
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		panic(err)
	}
	var ins []partition.Tensor
	for i, data := range [][]float32{{1, 2, 3, 4, -1, -1, 1, 1}, {0, 0, 0, 0, -1, -1, 1, 1}, {1, 1, 1, 2}} {
		in, err := partition.NewTensor(p.Inputs()[i], data)
		if err != nil {
			panic(err)
		}
		ins = append(ins, in)
	}
	h, y := make([]float32, 8), make([]float32, 8)
	var outs []partition.Tensor
	for _, o := range p.Outputs() {
		buf := y
		if o.ID == 10 {
			buf = h
		}
		lt, _ := cp.QueryLogicalTensor(o.ID)
		out, err := partition.NewTensor(lt, buf)
		if err != nil {
			panic(err)
		}
		outs = append(outs, out)
	}
	if err := cp.Execute(ins, outs); err != nil {
		panic(err)
	}
	fmt.Println("h:", h)
	fmt.Printf("y: %.4f\n", y)
	// Output:
	// partition 0 [Add(10) -> RMSNorm(11)] supported
	// residual Add before RMSNorm
	// h: [1 2 3 4 -2 -2 2 2]
	// y: [0.3651 0.7303 1.0954 2.9212 -1.0000 -1.0000 1.0000 2.0000]
}

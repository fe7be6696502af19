package partition_test

import (
	"fmt"
	"log"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// The whole flow: build a graph, get its partitions, compile the supported
// one for concrete shapes, and execute it on Go slices. README.md shows
// this body as a main function; TestReadmeSnippets keeps the two identical.
func Example() {
	// ReduceMean over the last axis of a 2x4 tensor, then ReLU, fused.
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 4})
	mean := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	dst := graph.NewLogicalTensorAny(2, dtypes.F32, nil)

	g := graph.New()
	err := g.AddOp(graph.NewOp(0, graph.ReduceMean, "mean").
		AddInput(src).AddOutput(mean).SetAttr("axes", []int64{-1}))
	if err != nil {
		log.Fatal(err) // a bad attribute is reported here, by AddOp
	}
	err = g.AddOp(graph.NewOp(1, graph.ReLU, "relu").AddInput(mean).AddOutput(dst))
	if err != nil {
		log.Fatal(err)
	}
	if err := g.Finalize(); err != nil { // checks the graph and infers shapes
		log.Fatal(err)
	}

	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		log.Fatal(err)
	}
	p := parts[0] // one partition: ReduceMean -> ReLU
	if !p.IsSupported() {
		log.Fatal(p.Reason())
	}
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		log.Fatal(err)
	}
	out, err := cp.QueryLogicalTensor(dst.ID) // compile inferred dims 2, dense
	if err != nil {
		log.Fatal(err)
	}

	res := make([]float32, out.NumElements())
	srcT, err := partition.NewTensor(src, []float32{1, 2, 3, 4, -5, -6, -7, -8})
	if err != nil {
		log.Fatal(err)
	}
	dstT, err := partition.NewTensor(out, res)
	if err != nil {
		log.Fatal(err)
	}
	if err := cp.Execute([]partition.Tensor{srcT}, []partition.Tensor{dstT}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("dst dims", graph.DimsString(out.Dims), "values", res)
	// Output: dst dims 2 values [2.5 0]
}

package partition

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// BenchmarkExecuteTiny measures the overhead of Execute on a cached
// compiled partition: tensor checks plus the kernel call, on a 2x3 f32
// mean (the kernel's own work is a few ns).
func BenchmarkExecuteTiny(b *testing.B) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	g := graph.New()
	if err := g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("axes", []int64{1})); err != nil {
		b.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		b.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		b.Fatal(err)
	}
	c, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	if err != nil {
		b.Fatal(err)
	}
	out, _ := c.QueryLogicalTensor(1)
	st, _ := NewTensor(src, make([]float32, 6))
	dt, _ := NewTensor(out, make([]float32, 2))
	in, outs := []Tensor{st}, []Tensor{dt}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Execute(in, outs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteRunTimeAxes is BenchmarkExecuteTiny with the axes as a
// run-time s64 tensor (ONNX's opset-18 reductions) and the output compiled
// without dims: the axes are read and checked on every execute, and the
// output's dims and layout come from the execute's tensor.
func BenchmarkExecuteRunTimeAxes(b *testing.B) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	axesLT := graph.NewLogicalTensor(2, dtypes.S64, []int64{1})
	g := graph.New()
	if err := g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).AddInput(axesLT).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil))); err != nil {
		b.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		b.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		b.Fatal(err)
	}
	c, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	if err != nil {
		b.Fatal(err)
	}
	out, err := c.QueryLogicalTensorWithAxes(1, []int64{1})
	if err != nil {
		b.Fatal(err)
	}
	st, _ := NewTensor(src, make([]float32, 6))
	at, _ := NewTensor(axesLT, []int64{1})
	dt, _ := NewTensor(out, make([]float32, 2))
	in, outs := []Tensor{st, at}, []Tensor{dt}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Execute(in, outs); err != nil {
			b.Fatal(err)
		}
	}
}

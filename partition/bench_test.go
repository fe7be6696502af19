package partition

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// compiledMeanFor compiles a ReduceMean of src over axis 1 into an f32
// output of open dims: the axes an attribute, or, with axes not nil, that
// run-time tensor.
func compiledMeanFor(b *testing.B, src graph.LogicalTensor, axes *graph.LogicalTensor) *CompiledPartition {
	op := graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil))
	if axes == nil {
		op.SetAttr("axes", []int64{1})
	} else {
		op.AddInput(*axes)
	}
	g := graph.New()
	must(b, g.AddOp(op))
	must(b, g.Finalize())
	p := onlySupported(b, g, Fusion)
	c, err := p.Compile(p.Inputs(), p.Outputs())
	must(b, err)
	return c
}

// executeLoop times Execute of c on in and outs.
func executeLoop(b *testing.B, c *CompiledPartition, in, outs []Tensor) {
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.Execute(in, outs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecuteTiny measures the overhead of Execute on a cached
// compiled partition: tensor checks plus the kernel call, on a 2x3 f32
// mean (the kernel's own work is a few ns).
func BenchmarkExecuteTiny(b *testing.B) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	c := compiledMeanFor(b, src, nil)
	out, _ := c.QueryLogicalTensor(1)
	st, _ := NewTensor(src, make([]float32, 6))
	dt, _ := NewTensor(out, make([]float32, 2))
	executeLoop(b, c, []Tensor{st}, []Tensor{dt})
}

// BenchmarkExecuteRunTimeAxes is BenchmarkExecuteTiny with the axes as a
// run-time s64 tensor (ONNX's opset-18 reductions) and the output compiled
// without dims: the axes are read and checked on every execute, and the
// output's dims and layout come from the execute's tensor.
func BenchmarkExecuteRunTimeAxes(b *testing.B) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	axesLT := graph.NewLogicalTensor(2, dtypes.S64, []int64{1})
	c := compiledMeanFor(b, src, &axesLT)
	out, err := c.QueryLogicalTensorWithAxes(1, []int64{1})
	must(b, err)
	st, _ := NewTensor(src, make([]float32, 6))
	at, _ := NewTensor(axesLT, []int64{1})
	dt, _ := NewTensor(out, make([]float32, 2))
	executeLoop(b, c, []Tensor{st, at}, []Tensor{dt})
}

package partition_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// TestL2PatternRefusesOverlappingOutput: the decomposed L2 normalization
// (ReduceL2, Maximum eps, Divide) into an output whose strides overlap
// ([16 4] with strides [1 1]) is refused on every ISA, as a SoftMax op's
// is; its fused kernel compiled and wrote it.
func TestL2PatternRefusesOverlappingOutput(t *testing.T) {
	defer jit.SetMaxISA(jit.SetMaxISA(jit.DetectedISA()))
	caps := []jit.ISA{jit.None, jit.EffectiveISA()}
	if caps[1] == jit.AVX512 {
		caps = append(caps, jit.AVX2)
	}
	for _, isa := range caps {
		jit.SetMaxISA(isa)
		f32 := dtypes.F32
		x := graph.NewLogicalTensor(1, f32, []int64{16, 4})
		eps := graph.NewLogicalTensor(2, f32, []int64{1})
		any := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, f32, nil) }
		g := graph.New()
		for _, op := range []*graph.Op{
			graph.NewOp(10, graph.ReduceL2, "").AddInput(x).AddOutput(any(10)).SetAttr("axes", []int64{-1}).SetAttr("keep_dims", true),
			graph.NewOp(11, graph.Maximum, "").AddInput(any(10)).AddInput(eps).AddOutput(any(11)),
			graph.NewOp(12, graph.Divide, "").AddInput(x).AddInput(any(11)).AddOutput(any(12)),
		} {
			if err := g.AddOp(op); err != nil {
				t.Fatal(err)
			}
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		parts, err := partition.Get(g, partition.Fusion)
		if err != nil {
			t.Fatal(err)
		}
		p := parts[0]
		if len(parts) != 1 || !strings.Contains(p.Pattern(), "L2") {
			t.Fatalf("%d partitions, the first %q; want the L2 normalization's one", len(parts), p.Pattern())
		}
		out := graph.NewLogicalTensorStrided(12, f32, []int64{16, 4}, []int64{1, 1})
		cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{out})
		if err != nil {
			if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "nest") {
				t.Errorf("%v: Compile: %v; want InvalidArguments naming the strides' nesting", isa, err)
			}
			continue
		}
		xs := make([]float32, 64)
		for i := range xs {
			xs[i] = float32(i%5) + 1
		}
		xt, _ := partition.NewTensor(p.Inputs()[0], xs)
		et, _ := partition.NewTensor(p.Inputs()[1], []float32{1e-6})
		res := make([]float32, 19)
		ot, _ := partition.NewTensor(out, res)
		err = cp.Execute([]partition.Tensor{xt, et}, []partition.Tensor{ot})
		t.Errorf("%v: %q compiled and executed (err %v) into an output of overlapping strides [1 1]: %v",
			isa, p.Pattern(), err, res)
	}
}

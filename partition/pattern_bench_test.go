package partition

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/cpubench"
)

// benchNormGraph compiles g's one partition and times its Execute on
// inputs of ones (eps: 1e-5) into an output of out's type; its bytes are
// x's (tensor 1) and the output's.
func benchNormGraph(b *testing.B, g *graph.Graph, out uint64, dt dtypes.DataType) {
	must(b, g.Finalize())
	parts, err := Get(g, Fusion)
	must(b, err)
	if len(parts) != 1 || !parts[0].IsSupported() {
		b.Fatalf("partitions %v; want one supported", parts)
	}
	p := parts[0]
	c, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(out, dt, nil)})
	must(b, err)
	var ins []Tensor
	var moved int64 // bytes of x and dst
	for _, lt := range c.Inputs() {
		n, err := MemSize(lt)
		must(b, err)
		buf := make([]byte, n)
		for i := range n / int64(lt.DataType.Size()) {
			dtypes.StoreF32(lt.DataType, buf, i, 1)
		}
		if lt.ID == 1 {
			moved += n
		}
		if lt.ID == 2 && p.pattern != "" {
			dtypes.StoreF32(lt.DataType, buf, 0, 1e-5)
		}
		tn, err := NewTensor(lt, buf)
		must(b, err)
		ins = append(ins, tn)
	}
	lt, err := c.QueryLogicalTensor(out)
	must(b, err)
	n, err := MemSize(lt)
	must(b, err)
	ot, err := NewTensor(lt, make([]byte, n))
	must(b, err)
	b.SetBytes(moved + n)
	// CPU time beside wall time: on a shared machine the other load
	// moves the wall time far more than this process's own work.
	cpubench.Loop(b, func() error { return c.Execute(ins, []Tensor{ot}) })
}

// BenchmarkNormPattern times the decomposed forms exporters write
// against the normalization op they compute, at the shapes S5
// (RMSNorm of 4x512x4096), S6 (LayerNorm of 32x128x768) and S8 (L2
// normalization of 256x384), each with gamma where the op has it;
// RMSNorm of S5 from s8 through a fused Dequantize; and LayerNorm of S6
// into s8 through a fused Quantize.
func BenchmarkNormPattern(b *testing.B) {
	f32 := dtypes.F32
	op := func(kind graph.OpKind, dims []int64, beta bool, attrs ...any) (*graph.Graph, uint64) {
		g := graph.New()
		o := graph.NewOp(1, kind, "").AddInput(graph.NewLogicalTensor(1, f32, dims)).
			AddInput(graph.NewLogicalTensor(3, f32, dims[len(dims)-1:])).AddOutput(graph.NewLogicalTensorAny(9, f32, nil))
		if beta {
			o.AddInput(graph.NewLogicalTensor(4, f32, dims[len(dims)-1:]))
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			o.SetAttr(attrs[i].(string), attrs[i+1])
		}
		must(b, g.AddOp(o))
		return g, 9
	}
	decomposed := func(dims []int64, build func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor, gamma bool) (*patternGraph, graph.LogicalTensor) {
		pg := newPatternGraph(b, f32)
		y := build(pg, graph.NewLogicalTensor(1, f32, dims), graph.NewLogicalTensor(2, f32, []int64{1}))
		if gamma {
			y = pg.bin(graph.Multiply, y, graph.NewLogicalTensor(3, f32, dims[len(dims)-1:]))
		}
		return pg, y
	}
	s5, s6, s8 := []int64{4, 512, 4096}, []int64{32, 128, 768}, []int64{256, 384}
	b.Run("S5/RMSNorm-op", func(b *testing.B) {
		g, out := op(graph.RMSNorm, s5, false, "begin_norm_axis", int64(-1), "epsilon", float32(1e-5))
		benchNormGraph(b, g, out, f32)
	})
	b.Run("S5/RMSNorm-pattern", func(b *testing.B) {
		pg, y := decomposed(s5, rmsNormOps([]int64{-1}, 1, true), true)
		benchNormGraph(b, pg.g, y.ID, f32)
	})
	b.Run("S5/RMSNorm-pattern-after-s8-Dequantize", func(b *testing.B) {
		pg := newPatternGraph(b, f32)
		x := graph.NewLogicalTensor(5, f32, s5)
		must(b, pg.g.AddOp(graph.NewOp(99, graph.Dequantize, "").AddInput(graph.NewLogicalTensor(1, dtypes.S8, s5)).AddOutput(x).
			SetAttr("qtype", "per_tensor").SetAttr("scales", []float32{0.05}).SetAttr("zps", []int64{0}).SetAttr("axis", int64(0))))
		y := rmsNormOps([]int64{-1}, 1, true)(pg, x, graph.NewLogicalTensor(2, f32, []int64{1}))
		y = pg.bin(graph.Multiply, y, graph.NewLogicalTensor(3, f32, s5[2:]))
		benchNormGraph(b, pg.g, y.ID, f32)
	})
	b.Run("S6/LayerNorm-op", func(b *testing.B) {
		g, out := op(graph.LayerNorm, s6, true, "begin_norm_axis", int64(-1), "use_affine", true, "keep_stats", false, "epsilon", float32(1e-5))
		benchNormGraph(b, g, out, f32)
	})
	b.Run("S6/LayerNorm-pattern", func(b *testing.B) {
		pg, y := decomposed(s6, layerNormOps([]int64{-1}, []int64{-1}, 1, false), true)
		y = pg.bin(graph.Add, y, graph.NewLogicalTensor(4, f32, s6[2:]))
		benchNormGraph(b, pg.g, y.ID, f32)
	})
	b.Run("S6/LayerNorm-pattern-s8", func(b *testing.B) {
		pg, y := decomposed(s6, layerNormOps([]int64{-1}, []int64{-1}, 1, false), true)
		y = pg.bin(graph.Add, y, graph.NewLogicalTensor(4, f32, s6[2:]))
		q := graph.NewOp(500, graph.Quantize, "").AddInput(y).AddOutput(graph.NewLogicalTensorAny(500, dtypes.S8, nil)).
			SetAttr("qtype", "per_tensor").SetAttr("scales", []float32{0.05}).SetAttr("zps", []int64{0}).SetAttr("axis", int64(0))
		must(b, pg.g.AddOp(q))
		benchNormGraph(b, pg.g, 500, dtypes.S8)
	})
	b.Run("S8/L2-pattern", func(b *testing.B) {
		pg, y := decomposed(s8, l2NormOps([]int64{-1}, true, graph.Maximum), false)
		benchNormGraph(b, pg.g, y.ID, f32)
	})
}

package partition

import (
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// statsTailGraph is a layer norm (GroupNorm where groups > 0) of src
// that keeps its statistics (outputs 10, 11 and 12), then the ops chain
// adds; it returns the graph, finalized.
func statsTailGraph(t *testing.T, src graph.LogicalTensor, groups int64, nxc, affine bool, chain func(g *graph.Graph)) *graph.Graph {
	t.Helper()
	f32 := dtypes.F32
	kind := graph.LayerNorm
	if groups > 0 {
		kind = graph.GroupNorm
	}
	op := graph.NewOp(1, kind, "norm").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(10, src.DataType, nil)).
		AddOutput(graph.NewLogicalTensorAny(11, f32, nil)).AddOutput(graph.NewLogicalTensorAny(12, f32, nil)).
		SetAttr("use_affine", affine).SetAttr("keep_stats", true).SetAttr("epsilon", float32(1e-3))
	pdims := src.Dims[len(src.Dims)-1:]
	if groups > 0 {
		op.SetAttr("groups", groups).SetAttr("data_format", map[bool]string{false: "NCX", true: "NXC"}[nxc])
		pdims = src.Dims[1:2]
		if nxc {
			pdims = src.Dims[len(src.Dims)-1:]
		}
	} else {
		op.SetAttr("begin_norm_axis", int64(-1))
	}
	if affine {
		op.AddInput(graph.NewLogicalTensor(1, f32, pdims)).AddInput(graph.NewLogicalTensor(2, f32, pdims))
	}
	g := graph.New()
	must(t, g.AddOp(op))
	chain(g)
	must(t, g.Finalize())
	return g
}

// tailOp adds the op kind reading in (and, for a binary op, other) and
// writing tensor out of type dt.
func tailOp(t *testing.T, g *graph.Graph, id uint64, kind graph.OpKind, dt dtypes.DataType, out uint64, in graph.LogicalTensor, other ...graph.LogicalTensor) {
	t.Helper()
	op := graph.NewOp(id, kind, strings.ToLower(kind.String())).AddInput(in)
	for _, o := range other {
		op.AddInput(o)
	}
	op.AddOutput(graph.NewLogicalTensorAny(out, dt, nil))
	must(t, g.AddOp(op))
}

// TestNormKeptStatsTail: a layer norm or group norm that keeps its mean
// and variance, followed by eltwise ops, binary ops (operands per
// channel, per row and of dst's shape), TypeCasts and a Quantize to s8
// or u8, is one supported partition of all its ops whose outputs are
// dst, the mean and the variance; on every ISA, dst matches the oracle
// followed by the ops one by one in float64 and the statistics the
// oracle's.
func TestNormKeptStatsTail(t *testing.T) { forEachISA(t, normKeptStatsTail) }

func normKeptStatsTail(t *testing.T, isa jit.ISA) {
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	any := func(id uint64, dt dtypes.DataType) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, dt, nil) }
	quant := func(t *testing.T, g *graph.Graph, in uint64, dt dtypes.DataType, scale float32, zp int64) {
		must(t, g.AddOp(graph.NewOp(9, graph.Quantize, "quantize").AddInput(any(in, f32)).AddOutput(any(40, dt)).
			SetAttr("scales", []float32{scale}).SetAttr("zps", []int64{zp}).SetAttr("qtype", "per_tensor")))
	}
	for i, c := range []struct {
		name string
		g    func(t *testing.T) *graph.Graph
	}{
		{"layernorm/f32/mul-per-channel-gelu-add-per-row", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, f32, []int64{3, 5, 40}), 0, false, true, func(g *graph.Graph) {
				tailOp(t, g, 2, graph.Multiply, f32, 20, any(10, f32), graph.NewLogicalTensor(30, f32, []int64{40}))
				tailOp(t, g, 3, graph.GELU, f32, 21, any(20, f32))
				tailOp(t, g, 4, graph.Add, f32, 22, any(21, f32), graph.NewLogicalTensor(31, f32, []int64{3, 5, 1}))
			})
		}},
		{"layernorm/bf16/relu-typecast-quantize-u8", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, bf16, []int64{4, 96}), 0, false, false, func(g *graph.Graph) {
				tailOp(t, g, 2, graph.ReLU, bf16, 20, any(10, bf16))
				tailOp(t, g, 3, graph.TypeCast, f32, 21, any(20, bf16))
				quant(t, g, 21, dtypes.U8, 0.02, 10)
			})
		}},
		{"layernorm/f32/quantize-s8", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, f32, []int64{7, 33}), 0, false, true, func(g *graph.Graph) {
				quant(t, g, 10, dtypes.S8, 0.03, -3)
			})
		}},
		{"layernorm/f32/chunked-add-per-row-relu", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, f32, []int64{130, 600}), 0, false, true, func(g *graph.Graph) {
				tailOp(t, g, 2, graph.Add, f32, 20, any(10, f32), graph.NewLogicalTensor(30, f32, []int64{130, 1}))
				tailOp(t, g, 3, graph.ReLU, f32, 21, any(20, f32))
			})
		}},
		{"groupnorm/f16/add-same-shape-tanh", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, f16, []int64{2, 6, 7}), 3, false, true, func(g *graph.Graph) {
				tailOp(t, g, 2, graph.Add, f16, 20, any(10, f16), graph.NewLogicalTensor(30, f32, []int64{2, 6, 7}))
				tailOp(t, g, 3, graph.Tanh, f16, 21, any(20, f16))
			})
		}},
		{"groupnorm/f32/nxc/mul-per-channel-quantize-s8", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, f32, []int64{2, 5, 12}), 4, true, true, func(g *graph.Graph) {
				tailOp(t, g, 2, graph.Multiply, f32, 20, any(10, f32), graph.NewLogicalTensor(30, f32, []int64{12}))
				quant(t, g, 20, dtypes.S8, 0.05, 2)
			})
		}},
		{"groupnorm/bf16/ncx/relu-typecast-f32", func(t *testing.T) *graph.Graph {
			return statsTailGraph(t, graph.NewLogicalTensor(0, bf16, []int64{3, 8, 5, 4}), 2, false, false, func(g *graph.Graph) {
				tailOp(t, g, 2, graph.ReLU, bf16, 20, any(10, bf16))
				tailOp(t, g, 3, graph.TypeCast, f32, 21, any(20, bf16))
			})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := c.g(t)
			parts, err := Get(g, Fusion)
			must(t, err)
			if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != len(g.Ops()) {
				t.Fatalf("partitions %v; want one supported partition of all %d ops", parts, len(g.Ops()))
			}
			outs := parts[0].Outputs()
			last := g.Ops()[len(g.Ops())-1].Outputs[0].ID
			if len(outs) != 3 || outs[0].ID != last || outs[1].ID != 11 || outs[2].ID != 12 {
				t.Fatalf("outputs %v; want %d (dst), then 11 and 12 (mean and variance)", outs, last)
			}
			runTailPartition(t, parts[0], isa, uint64(i))
		})
	}
}

// TestNormKeptStatsTailRefusal: an op after a normalization that reads
// one of its statistics as well as dst is not fused; it stays a
// partition of its own that says why.
func TestNormKeptStatsTailRefusal(t *testing.T) {
	f32 := dtypes.F32
	g := statsTailGraph(t, graph.NewLogicalTensor(0, f32, []int64{5, 5}), 0, false, false, func(g *graph.Graph) {
		tailOp(t, g, 2, graph.Add, f32, 20, graph.NewLogicalTensorAny(10, f32, nil), graph.NewLogicalTensorAny(11, f32, nil))
	})
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 2 || len(parts[0].Ops()) != 1 || !parts[0].IsSupported() || len(parts[0].Outputs()) != 3 ||
		parts[1].IsSupported() || !strings.Contains(parts[1].Reason(), "another output of") {
		t.Fatalf("partitions %v; want the layer norm alone (3 outputs), then the Add, unsupported, saying it reads a statistic", parts)
	}
}

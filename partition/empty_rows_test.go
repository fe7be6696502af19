package partition

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// emptyRowsRun compiles and runs g's one partition over inputs of no element
// (and filled statistics inputs), every output first filled with 0xAB
// bytes; it returns the outputs' bytes by id.
func emptyRowsRun(t *testing.T, g *graph.Graph) map[uint64][]byte {
	t.Helper()
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("partitions %v; want one supported partition", parts)
	}
	c, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	must(t, err)
	var ins, outs []Tensor
	res := map[uint64][]byte{}
	for i, lts := range [][]graph.LogicalTensor{c.Inputs(), c.Outputs()} {
		for _, lt := range lts {
			n, err := MemSize(lt)
			must(t, err)
			b := make([]byte, n)
			for j := range b {
				b[j] = 0xAB
			}
			tn, err := NewTensor(lt, b)
			must(t, err)
			if i == 0 {
				ins = append(ins, tn)
			} else {
				outs = append(outs, tn)
				res[lt.ID] = b
			}
		}
	}
	must(t, c.Execute(ins, outs))
	return res
}

// emptyRowsStatsGraph is [Dequantize s8 ->] kind over src of dims (tensor 1,
// or the Dequantize's output) keeping its statistics (SoftMax's stats 11;
// LayerNorm's and GroupNorm's mean 11 and variance 12) [-> Quantize to q].
func emptyRowsStatsGraph(t *testing.T, kind graph.OpKind, dims []int64, dq bool, q dtypes.DataType) *graph.Graph {
	f32 := dtypes.F32
	any := func(id uint64, dt dtypes.DataType) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, dt, nil) }
	g := graph.New()
	src := graph.NewLogicalTensor(1, f32, dims)
	if dq {
		must(t, g.AddOp(graph.NewOp(0, graph.Dequantize, "dq").AddInput(graph.NewLogicalTensor(0, dtypes.S8, dims)).AddOutput(any(1, f32)).
			SetAttr("scales", []float32{0.5}).SetAttr("zps", []int64{0})))
		src = any(1, f32)
	}
	op := graph.NewOp(1, kind, "norm").AddInput(src).AddOutput(any(10, f32)).AddOutput(any(11, f32))
	switch kind {
	case graph.SoftMax:
		op.SetAttr("axis", int64(1))
	case graph.LayerNorm:
		op.SetAttr("begin_norm_axis", int64(1)).SetAttr("keep_stats", true).SetAttr("use_affine", false).AddOutput(any(12, f32))
	case graph.GroupNorm:
		op.SetAttr("groups", int64(2)).SetAttr("data_format", "NCX").SetAttr("keep_stats", true).SetAttr("use_affine", false).AddOutput(any(12, f32))
	}
	must(t, g.AddOp(op))
	if q != dtypes.Undef {
		must(t, g.AddOp(graph.NewOp(2, graph.Quantize, "q").AddInput(any(10, f32)).AddOutput(any(20, q)).
			SetAttr("scales", []float32{0.1}).SetAttr("zps", []int64{3})))
	}
	must(t, g.Finalize())
	return g
}

// TestEmptyRowStatsFused: rows of no element have statistics, 0
// (README: "0 for an empty row" for SoftMax's stats, "mean and variance
// 0" for a row of no elements), and a normalization partition alone
// writes them so; with a fused Quantize after it, a fused Dequantize
// before it or a fused residual sum before it, it writes them too, not
// leaving the caller's bytes (0xAB here) in the statistics outputs.
func TestEmptyRowStatsFused(t *testing.T) {
	s8, u8 := dtypes.S8, dtypes.U8
	cases := []struct {
		name  string
		g     func(t *testing.T) *graph.Graph
		stats []uint64
	}{
		{"softmax/4x0/plain", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.SoftMax, []int64{4, 0}, false, dtypes.Undef)
		}, []uint64{11}},
		{"softmax/4x0/quantize-u8", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.SoftMax, []int64{4, 0}, false, u8)
		}, []uint64{11}},
		{"softmax/2x0x3/dequantize", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.SoftMax, []int64{2, 0, 3}, true, dtypes.Undef)
		}, []uint64{11}},
		{"layernorm/4x0/quantize-s8", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.LayerNorm, []int64{4, 0}, false, s8)
		}, []uint64{11, 12}},
		{"layernorm/4x0/dequantize", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.LayerNorm, []int64{4, 0}, true, dtypes.Undef)
		}, []uint64{11, 12}},
		{"layernorm/2x0x3/dequantize-quantize-u8", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.LayerNorm, []int64{2, 0, 3}, true, u8)
		}, []uint64{11, 12}},
		{"groupnorm/2x4x0/quantize-s8", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.GroupNorm, []int64{2, 4, 0}, false, s8)
		}, []uint64{11, 12}},
		{"groupnorm/2x0x3/dequantize", func(t *testing.T) *graph.Graph {
			return emptyRowsStatsGraph(t, graph.GroupNorm, []int64{2, 0, 3}, true, dtypes.Undef)
		}, []uint64{11, 12}},
		{"residual-layernorm/4x0", func(t *testing.T) *graph.Graph {
			return residualGraph{kind: graph.LayerNorm, dims: []int64{4, 0}, dt: dtypes.F32, sumDT: dtypes.F32, stats: true, relu: true}.build(t)
		}, []uint64{15, 16}},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := emptyRowsRun(t, c.g(t))
				for _, id := range c.stats {
					b := res[id]
					if len(b) == 0 {
						t.Fatalf("statistics output %d has no element", id)
					}
					for i := 0; i < len(b); i += 4 {
						if v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:])); v != 0 {
							t.Errorf("statistics output %d element %d is %g; want 0 (a row of no element)", id, i/4, v)
							break
						}
					}
				}
			})
		}
	})
}

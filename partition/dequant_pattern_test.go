package partition

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

const smName = "softmax from ReduceMax, Subtract, Exp, ReduceSum, Divide"

// dequantPatternCases are the decomposed normalizations of
// patternCases, and softmax's.
func dequantPatternCases() []patternCase {
	cases := []patternCase{{"softmax", []int64{5, 70}, []int64{1}, func(b *patternGraph, x, _ graph.LogicalTensor) graph.LogicalTensor {
		e := b.op(graph.Exp, []graph.LogicalTensor{b.bin(graph.Subtract, x, b.reduce(graph.ReduceMax, x, []int64{1}))})
		return b.bin(graph.Divide, e, b.reduce(graph.ReduceSum, e, []int64{-1}))
	}, smName, ""}}
	for _, c := range patternCases() {
		if c.want != "" {
			cases = append(cases, c)
		}
	}
	return cases
}

// buildDequantPattern builds c over x = Dequantize(q) (q is tensor 1,
// of qdt; x tensor 5) and eps (tensor 2), with the Dequantize's scales
// per tensor, or per channel of dim 0.
func buildDequantPattern(t *testing.T, c patternCase, qdt dtypes.DataType, perChannel bool) (*patternGraph, graph.LogicalTensor, *graph.Op) {
	b := newPatternGraph(t, dtypes.F32)
	q := graph.NewLogicalTensor(1, qdt, c.dims)
	x := graph.NewLogicalTensor(5, dtypes.F32, c.dims)
	dq := graph.NewOp(99, graph.Dequantize, "dq").AddInput(q).AddOutput(x).SetAttr("axis", int64(0))
	if perChannel {
		n := int(c.dims[0])
		scales, zps := make([]float32, n), make([]int64, n)
		for i := range scales {
			scales[i] = 0.04 + 0.01*float32(i)
		}
		dq.SetAttr("qtype", "per_channel").SetAttr("scales", scales).SetAttr("zps", zps)
	} else {
		dq.SetAttr("qtype", "per_tensor").SetAttr("scales", []float32{0.3}).SetAttr("zps", []int64{3})
	}
	must(t, b.g.AddOp(dq))
	y := c.build(b, x, graph.NewLogicalTensor(2, dtypes.F32, c.eps))
	return b, y, dq
}

// TestDequantBeforePattern: a per-tensor Dequantize whose output only a
// decomposed normalization reads joins its partition, with the chain
// after it, so the kernel reads the 8-bit src: on every ISA, s8 and u8,
// the results are the ops' one by one within the normalization
// tolerance.
func TestDequantBeforePattern(t *testing.T) {
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(51, uint64(isa)))
		for _, c := range dequantPatternCases() {
			for _, qdt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
				name := fmt.Sprintf("%s/%v", c.name, qdt)
				b, y, _ := buildDequantPattern(t, c, qdt, false)
				y = b.op(graph.ReLU, []graph.LogicalTensor{y})
				must(t, b.g.Finalize())
				parts, err := Get(b.g, Fusion)
				must(t, err)
				if len(parts) != 1 || !parts[0].IsSupported() {
					t.Fatalf("%s: %v; want one supported partition", name, parts)
				}
				p := parts[0]
				if want := "Dequantize before " + c.want; p.Pattern() != want {
					t.Fatalf("%s: pattern %q, want %q", name, p.Pattern(), want)
				}
				if in := p.Inputs(); in[0].ID != 1 || in[0].DataType != qdt {
					t.Fatalf("%s: inputs %v; want the %v src first", name, in, qdt)
				}
				cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(y.ID, dtypes.F32, nil)})
				must(t, err)
				wantImpl(t, cp, isa)
				if line := cp.verboseLine(0); !strings.Contains(line, "Dequantize before "+c.want) {
					t.Errorf("%s: verbose line %q does not name the pattern", name, line)
				}
				checkPatternRun(t, name, r, b.g, cp, y.ID, dtypes.F32, 1e-3)
			}
		}
	})
}

// TestDequantBeforePatternNotFused: a per-channel Dequantize, and one
// whose output an op outside the pattern reads too, stay in partitions
// of their own, whose reasons say why; the pattern is still one
// partition.
func TestDequantBeforePatternNotFused(t *testing.T) {
	for _, c := range dequantPatternCases() {
		for _, tc := range []struct {
			name, why  string
			perChannel bool
		}{
			{"per-channel", "its scales are per channel", true},
			{"read-outside", "outside the pattern", false},
		} {
			b, _, dq := buildDequantPattern(t, c, dtypes.S8, tc.perChannel)
			if !tc.perChannel {
				b.op(graph.Abs, []graph.LogicalTensor{dq.Outputs[0]})
			}
			must(t, b.g.Finalize())
			parts, err := Get(b.g, Fusion)
			must(t, err)
			var dqPart, patPart *Partition
			for _, p := range parts {
				switch {
				case p.Ops()[0].ID == dq.ID:
					dqPart = p
				case p.Pattern() == c.want:
					patPart = p
				}
			}
			if dqPart == nil || patPart == nil || len(dqPart.Ops()) != 1 {
				t.Fatalf("%s/%s: %v; want the Dequantize alone and the pattern", c.name, tc.name, parts)
			}
			if want := "not fused before the " + c.want + ": "; dqPart.IsSupported() ||
				!strings.Contains(dqPart.Reason(), want) || !strings.Contains(dqPart.Reason(), tc.why) {
				t.Errorf("%s/%s: the Dequantize's reason %q; want %q and %q", c.name, tc.name, dqPart.Reason(), want, tc.why)
			}
		}
	}
}

package partition

import (
	"bytes"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// TestDequantNormJSONRoundTrip: a Dequantize before a normalization (and
// a Quantize after it) with scales at the edges (-0, the least
// subnormal, the largest finite) and zero points at the ends of s32
// written as JSON and read back is the same fused partition, keeps its
// scales and zero points bit for bit and writes the same JSON again.
func TestDequantNormJSONRoundTrip(t *testing.T) {
	for _, s := range []float32{float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, math.MaxFloat32, -0.0371} {
		for _, zp := range []int64{math.MinInt32, math.MaxInt32, -128, 255} {
			for _, kind := range []graph.OpKind{graph.SoftMax, graph.LayerNorm, graph.GroupNorm} {
				c := dqNormCase{kind: kind, srcDT: dtypes.U8, dims: []int64{2, 4, 5, 3}, scale: s, zp: zp, quant: dtypes.S8, qScale: 0.5, qZp: zp}
				g := c.build(t)
				var b bytes.Buffer
				must(t, g.WriteJSON(&b))
				js := b.String()
				back, err := graph.ReadJSON(&b)
				if err != nil {
					t.Fatalf("%v scale %v zp %d: %v", kind, s, zp, err)
				}
				must(t, back.Finalize())
				before, err := Get(g, Fusion)
				must(t, err)
				after, err := Get(back, Fusion)
				must(t, err)
				if len(after) != 1 || after[0].String() != before[0].String() {
					t.Fatalf("%v scale %v zp %d: partitions %v after the round trip, %v before", kind, s, zp, after, before)
				}
				found := 0
				for _, op := range back.Ops() {
					if op.Kind != graph.Dequantize {
						continue
					}
					found++
					q, err := graph.QuantParamsOf(op, 4)
					must(t, err)
					if math.Float32bits(q.Scales[0]) != math.Float32bits(s) || q.Zps[0] != zp {
						t.Errorf("%v: scale %v zp %d read back as %v and %d", kind, s, zp, q.Scales[0], q.Zps[0])
					}
				}
				if found != 1 {
					t.Fatalf("%v: %d Dequantize ops read back, want 1", kind, found)
				}
				var again bytes.Buffer
				must(t, back.WriteJSON(&again))
				if again.String() != js {
					t.Errorf("%v scale %v zp %d: the JSON read back is written as\n%s\nnot\n%s", kind, s, zp, again.String(), js)
				}
			}
		}
	}
}

package partition

import (
	"math"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// TestResidualBiasKeepsNarrowSumRounding: h = Add(x, skip) declared bf16,
// then h2 = Add(h, bias) declared f32, then LayerNorm(h2). Run op by op,
// h is rounded to bf16 (a step of 2 at 300) before the bias is added; a
// fused residual that computes x + skip + bias in f32 and rounds only to
// h2's type (f32) loses that rounding, and the normalized rows, whose
// spread is a few units, come out several percent off. Either the
// partition with the LayerNorm leaves the bf16 Add out, or it computes
// what the ops compute.
func TestResidualBiasKeepsNarrowSumRounding(t *testing.T) {
	const rows, n = 4, 37
	dims := []int64{rows, n}
	xv, sv, bv := make([]float32, rows*n), make([]float32, rows*n), make([]float32, n)
	for i := range xv {
		xv[i] = 300 + float32(i%11)*0.37
		sv[i] = float32(math.Sin(float64(i))) * 0.8
	}
	for i := range bv {
		bv[i] = float32(math.Cos(float64(i))) * 0.6
	}
	x := graph.NewLogicalTensor(1, dtypes.F32, dims)
	skip := graph.NewLogicalTensor(2, dtypes.F32, dims)
	bias := graph.NewLogicalTensor(3, dtypes.F32, []int64{n})
	h := graph.NewLogicalTensorAny(10, dtypes.BF16, nil)
	h2 := graph.NewLogicalTensorAny(11, dtypes.F32, nil)
	y := graph.NewLogicalTensorAny(12, dtypes.F32, nil)
	g := graph.New()
	must(t, g.AddOp(graph.NewOp(1, graph.Add, "").AddInput(x).AddInput(skip).AddOutput(h)))
	must(t, g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(h).AddInput(bias).AddOutput(h2)))
	must(t, g.AddOp(graph.NewOp(3, graph.LayerNorm, "").AddInput(h2).AddOutput(y).
		SetAttr("use_affine", false).SetAttr("keep_stats", false).SetAttr("epsilon", float32(1e-3))))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	var p *Partition
	for _, q := range parts {
		if slices.ContainsFunc(q.Ops(), func(o *graph.Op) bool { return o.ID == 3 }) {
			p = q
		}
	}
	if !slices.ContainsFunc(p.Ops(), func(o *graph.Op) bool { return o.ID == 1 }) {
		return // the bf16 Add runs as its own op: its rounding is the caller's
	}
	// The ops one by one, in float64 with h rounded to bf16.
	want := make([]float64, rows*n)
	for r := range rows {
		row := make([]float64, n)
		mean := 0.0
		for j := range n {
			i := r*n + j
			u := math.Float32bits(xv[i] + sv[i])
			hv := float64(math.Float32frombits((u + 0x7fff + (u>>16)&1) &^ 0xffff)) // to bf16, to nearest even
			row[j] = float64(float32(hv + float64(bv[j])))
			mean += row[j] / n
		}
		v := 0.0
		for j := range n {
			v += (row[j] - mean) * (row[j] - mean) / n
		}
		for j := range n {
			want[r*n+j] = (row[j] - mean) / math.Sqrt(v+1e-3)
		}
	}
	var ins []Tensor
	for _, lt := range p.Inputs() {
		data := map[uint64][]float32{1: xv, 2: sv, 3: bv}[lt.ID]
		tt, err := NewTensor(lt, data)
		must(t, err)
		ins = append(ins, tt)
	}
	cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(y.ID, dtypes.F32, nil)})
	must(t, err)
	olt, err := cp.QueryLogicalTensor(y.ID)
	must(t, err)
	got := make([]float32, rows*n)
	ot, err := NewTensor(olt, got)
	must(t, err)
	must(t, cp.Execute(ins, []Tensor{ot}))
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-3*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d is %v, the ops give %v (h rounded to bf16)", p.Pattern(), i, got[i], want[i])
		}
	}
}

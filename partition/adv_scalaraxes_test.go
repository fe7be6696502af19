package partition_test

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// A rank-0 (scalar) s64 axes tensor holds one axis (README, Semantics);
// a negative one counts from the end. Checked against the evaluator for
// every axis value and keep_dims.
func TestAdvScalarAxesTensor(t *testing.T) {
	advCacheCapacity(t, 0)
	for _, keep := range []bool{false, true} {
		for _, ax := range []int64{-3, -2, -1, 0, 1, 2} {
			g := graph.New()
			x := graph.NewLogicalTensor(1, dtypes.F32, []int64{2, 3, 4})
			a := graph.NewLogicalTensor(2, dtypes.S64, []int64{})
			r := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
			mustAdv(t, g.AddOp(graph.NewOp(1, graph.ReduceMax, "").AddInput(x).AddInput(a).AddOutput(r).SetAttr("keep_dims", keep)))
			mustAdv(t, g.Finalize())
			xv := advVal{dims: []int64{2, 3, 4}, v: make([]float64, 24)}
			for i := range xv.v {
				xv.v[i] = float64((i * 7) % 11)
			}
			ins := map[uint64]advVal{1: xv}
			axes := map[uint64][]int64{2: {ax}}
			got, parts, err := advRunGDNN(g, partition.Fusion, ins, axes)
			if err != nil {
				t.Fatalf("axis %d keep %v: %v %v", ax, keep, parts, err)
			}
			want, _ := advEvalGraph(g, ins, axes, nil)
			if advKey(got[3]) != advKey(want[3]) {
				t.Errorf("axis %d keep %v: got %v, want %v", ax, keep, got[3], want[3])
			}
		}
	}
}

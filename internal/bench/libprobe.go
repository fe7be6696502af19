package bench

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// libReadBW measures gdnn's contiguous f32 full reduction over an n-byte
// buffer (the streaming kernel) and returns bytes/s from the best time.
func libReadBW(n int64) (float64, error) {
	elems := n / 4
	g := graph.New()
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{elems})
	dst := graph.NewLogicalTensor(1, dtypes.F32, []int64{1})
	op := graph.NewOp(0, graph.ReduceMean, "probe").AddInput(src).AddOutput(dst).SetAttr("axes", []int64{0}).
		SetAttr("keep_dims", true)
	if err := g.AddOp(op); err != nil {
		return 0, err
	}
	if err := g.Finalize(); err != nil {
		return 0, err
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		return 0, err
	}
	if len(parts) != 1 {
		return 0, status.Errorf(status.Unimplemented, "probe graph gave %d partitions", len(parts))
	}
	cp, err := parts[0].Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{dst})
	if err != nil {
		return 0, err
	}
	data := make([]float32, elems)
	for i := range data {
		data[i] = 1
	}
	out := make([]float32, 1)
	in, err := partition.NewTensor(src, data)
	if err != nil {
		return 0, err
	}
	o, err := partition.NewTensor(dst, out)
	if err != nil {
		return 0, err
	}
	t, err := measure(func() error {
		return cp.Execute([]partition.Tensor{in}, []partition.Tensor{o})
	}, 30, 0)
	if err != nil {
		return 0, err
	}
	return float64(n) / (t.Min / 1e3), nil
}

package partition

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

// exactRun builds src (2x3 of sdt) -> op over axis 1 -> dst (ddt),
// compiles the one partition and executes it on data.
func exactRun(t *testing.T, op graph.OpKind, sdt, ddt dtypes.DataType, data any, dst any) {
	t.Helper()
	src := graph.NewLogicalTensor(0, sdt, []int64{2, 3})
	out := graph.NewLogicalTensor(1, ddt, []int64{2})
	g := graph.New()
	if err := g.AddOp(graph.NewOp(0, op, "red").AddInput(src).AddOutput(out).SetAttr("axes", []int64{1})); err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil || len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("partitions %v, %v; want one supported", parts, err)
	}
	cp, err := parts[0].Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{out})
	if err != nil {
		t.Fatal(err)
	}
	st, err := NewTensor(src, data)
	if err != nil {
		t.Fatal(err)
	}
	dt, err := NewTensor(out, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.Execute([]Tensor{st}, []Tensor{dt}); err != nil {
		t.Fatal(err)
	}
}

// TestExactPartitions runs the integer and boolean reductions through
// the graph API: ReduceSum of an int64 mask, wraparound, the mean's
// truncation, all and any.
func TestExactPartitions(t *testing.T) {
	d64 := make([]int64, 2)
	exactRun(t, graph.ReduceSum, dtypes.S64, dtypes.S64, []int64{1, 1, 0, math.MaxInt64, 1, 0}, d64)
	if !slices.Equal(d64, []int64{2, math.MinInt64}) {
		t.Errorf("s64 sum: %v", d64)
	}
	exactRun(t, graph.ReduceMean, dtypes.S64, dtypes.S64, []int64{-1, -1, -2, 1, 2, 2}, d64)
	if !slices.Equal(d64, []int64{-1, 1}) {
		t.Errorf("s64 mean: %v", d64)
	}
	d32 := make([]int32, 2)
	exactRun(t, graph.ReduceMax, dtypes.S32, dtypes.S32, []int32{math.MinInt32, -7, -9, 4, math.MaxInt32, 0}, d32)
	if !slices.Equal(d32, []int32{-7, math.MaxInt32}) {
		t.Errorf("s32 max: %v", d32)
	}
	du := make([]uint32, 2)
	exactRun(t, graph.ReduceBitwiseOr, dtypes.U32, dtypes.U32, []uint32{1, 2, 4, 8, 16, 32}, du)
	if !slices.Equal(du, []uint32{7, 56}) {
		t.Errorf("u32 or: %v", du)
	}
	db := make([]bool, 2)
	exactRun(t, graph.ReduceLogicalAnd, dtypes.Boolean, dtypes.Boolean, []bool{true, true, true, true, false, true}, db)
	if !slices.Equal(db, []bool{true, false}) {
		t.Errorf("all: %v", db)
	}
	exactRun(t, graph.ReduceLogicalOr, dtypes.U8, dtypes.Boolean, []byte{0, 0, 0, 0, 3, 0}, db)
	if !slices.Equal(db, []bool{false, true}) {
		t.Errorf("any: %v", db)
	}
}

// TestExactRefused: what integer and boolean data cannot do is an error
// naming it, and a post-op after an exact reduction stays apart with a
// Reason.
func TestExactRefused(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.Boolean, []int64{4})
	for _, c := range []struct {
		op   graph.OpKind
		src  graph.LogicalTensor
		dst  dtypes.DataType
		st   error
		want string
	}{
		{graph.ReduceL2, src, dtypes.Boolean, graph.Unimplemented, "square>sum>root_add_eps(p=2,eps=0) of boolean data"},
		{graph.ReduceSum, src, dtypes.Boolean, graph.InvalidDataType, "a sum of boolean data has no meaning"},
		{graph.ReduceBitwiseAnd, graph.NewLogicalTensor(0, dtypes.F32, []int64{4}), dtypes.F32, graph.InvalidDataType, "reduces integer or boolean data, not f32"},
		{graph.ReduceLogicalOr, graph.NewLogicalTensor(0, dtypes.S64, []int64{4}), dtypes.S64, graph.InvalidDataType, "writes boolean or u8, not s64"},
	} {
		op := graph.NewOp(0, c.op, "").AddInput(c.src).AddOutput(graph.NewLogicalTensor(1, c.dst, []int64{1})).
			SetAttr("axes", []int64{0}).SetAttr("keep_dims", true)
		err := graph.New().AddOp(op)
		if !errors.Is(err, c.st) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v of %v: %v, want %v saying %q", c.op, c.src.DataType, err, c.st, c.want)
		}
	}

	// s32 mean -> f32, then ReLU: the ReLU is not fused.
	g := graph.New()
	s := graph.NewLogicalTensor(0, dtypes.S32, []int64{2, 3})
	m := graph.NewLogicalTensor(1, dtypes.F32, []int64{2})
	y := graph.NewLogicalTensor(2, dtypes.F32, []int64{2})
	for _, err := range []error{
		g.AddOp(graph.NewOp(0, graph.ReduceMean, "").AddInput(s).AddOutput(m).SetAttr("axes", []int64{1})),
		g.AddOp(graph.NewOp(1, graph.ReLU, "").AddInput(m).AddOutput(y)),
		g.Finalize(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || len(parts[0].Ops()) != 1 || !strings.Contains(parts[0].Reason()+parts[1].Reason(), "reduces s32 data exactly") {
		for _, p := range parts {
			t.Logf("partition %v: supported %v, reason %q", p.Ops(), p.IsSupported(), p.Reason())
		}
		t.Errorf("want the mean and the ReLU apart, a Reason saying why")
	}
}

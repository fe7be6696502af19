package partition_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// orderGraph builds the ops of a graph afresh (Finalize fills in the
// ops' tensors, so a graph's ops are not shared).
type orderGraph struct {
	name string
	ops  func() []*graph.Op
	// contested: two groups want an op only the other can make ready,
	// so the grouping may depend on the order (not checked).
	contested bool
}

func orderTensor(id uint64, dims ...int64) graph.LogicalTensor {
	return graph.NewLogicalTensor(id, dtypes.F32, dims)
}

// meanPoolingOps is sentence-transformer mean pooling: pooled =
// ReduceSum(x 1 [2, 7, 16] * mask 2 [2, 7, 1], axis 1) into 11, count =
// Clamp(ReduceSum(mask, axis 1), 1e-9) into 13, out 14 = pooled / count.
// The pooled ops come first, as exporters list them.
func meanPoolingOps() []*graph.Op {
	return []*graph.Op{
		graph.NewOp(1, graph.Multiply, "masked").AddInput(orderTensor(1, 2, 7, 16)).AddInput(orderTensor(2, 2, 7, 1)).
			AddOutput(orderTensor(10, 2, 7, 16)),
		graph.NewOp(2, graph.ReduceSum, "pooled").AddInput(orderTensor(10, 2, 7, 16)).AddOutput(orderTensor(11, 2, 16)).
			SetAttr("axes", []int64{1}).SetAttr("keep_dims", false),
		graph.NewOp(3, graph.ReduceSum, "count").AddInput(orderTensor(2, 2, 7, 1)).AddOutput(orderTensor(12, 2, 1)).
			SetAttr("axes", []int64{1}).SetAttr("keep_dims", false),
		graph.NewOp(4, graph.Clamp, "clamp").AddInput(orderTensor(12, 2, 1)).AddOutput(orderTensor(13, 2, 1)).
			SetAttr("min", float32(1e-9)).SetAttr("max", float32(3.4e38)),
		graph.NewOp(5, graph.Divide, "mean").AddInput(orderTensor(11, 2, 16)).AddInput(orderTensor(13, 2, 1)).
			AddOutput(orderTensor(14, 2, 16)),
	}
}

// buildOrdered adds ops to a new graph in the order given by perm.
func buildOrdered(t *testing.T, ops []*graph.Op, perm []int) *graph.Graph {
	t.Helper()
	g := graph.New()
	for _, i := range perm {
		if err := g.AddOp(ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	for i, op := range g.Ops() {
		if op.ID != ops[perm[i]].ID {
			t.Fatalf("Finalize reordered the ops: %v", g.Ops())
		}
	}
	return g
}

// checkPartitions checks that parts is a valid execution order (each
// partition reads graph inputs and outputs of partitions before it) in
// which every op of g but End is in exactly one partition; it returns
// the grouping: each partition's op ids, sorted, one partition a line.
func checkPartitions(t *testing.T, g *graph.Graph, parts []*partition.Partition) string {
	t.Helper()
	ready := map[uint64]bool{}
	seen := map[uint64]bool{}
	var groups []string
	for _, p := range parts {
		for _, in := range p.Inputs() {
			if g.Producer(in.ID) != nil && !ready[in.ID] {
				t.Errorf("%v reads tensor %d before its producer's partition\n%v", p, in.ID, parts)
			}
		}
		var ids []int
		for _, op := range p.Ops() {
			if seen[op.ID] {
				t.Errorf("op %d is in two partitions: %v", op.ID, parts)
			}
			seen[op.ID] = true
			ids = append(ids, int(op.ID))
			for _, o := range op.Outputs {
				ready[o.ID] = true
			}
		}
		slices.Sort(ids)
		groups = append(groups, fmt.Sprint(ids))
	}
	for _, op := range g.Ops() {
		if !seen[op.ID] && op.Kind != graph.End {
			t.Errorf("%v is in no partition: %v", op, parts)
		}
	}
	slices.Sort(groups)
	return strings.Join(groups, "\n")
}

// TestMeanPoolingEitherOrder: mean pooling fuses the Divide after the
// masked ReduceSum whether the graph lists the pooling's ops or the
// count's first, and the partitions, run in the order Get returns them,
// give the op by op result, bit for bit the same in both orders.
func TestMeanPoolingEitherOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	x := advVal{dims: []int64{2, 7, 16}, v: make([]float64, 2*7*16)}
	for i := range x.v {
		x.v[i] = float64(float32(r.Float64()*4 - 2))
	}
	mask := advVal{dims: []int64{2, 7, 1}, v: []float64{1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0}}
	in := map[uint64]advVal{1: x, 2: mask}
	var grouping string
	var first advVal
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {2, 3, 0, 1, 4}} {
		g := buildOrdered(t, meanPoolingOps(), order)
		got, parts, err := advRunGDNN(g, partition.Fusion, in, nil)
		if err != nil {
			t.Fatalf("order %v: %v", order, err)
		}
		groups := checkPartitions(t, g, parts)
		if grouping == "" {
			grouping = groups
		} else if groups != grouping {
			t.Errorf("order %v: grouping\n%s\nwant\n%s", order, groups, grouping)
		}
		if len(parts) != 2 {
			t.Fatalf("order %v: %v, want the count's partition and the pooling's", order, parts)
		}
		for _, p := range parts {
			if !p.IsSupported() {
				t.Errorf("order %v: %v", order, p)
			}
		}
		if ops := parts[1].Ops(); len(ops) != 3 || ops[0].Kind != graph.Multiply || ops[2].Kind != graph.Divide {
			t.Errorf("order %v: %v, want the Divide fused after the masked ReduceSum", order, parts)
		}
		want, err := advEvalGraph(g, in, nil, advFusedIntermediates(parts))
		if err != nil {
			t.Fatal(err)
		}
		w, y := want[14], got[14]
		if fmt.Sprint(y.dims) != fmt.Sprint(w.dims) {
			t.Fatalf("order %v: dims %v, want %v", order, y.dims, w.dims)
		}
		for i := range w.v {
			if !advClose(dtypes.F32, y.v[i], w.v[i], advTol(dtypes.F32), advTol(dtypes.F32)*7) {
				t.Errorf("order %v: element %d: %v, want %v", order, i, y.v[i], w.v[i])
			}
		}
		if first.v == nil {
			first = y
		} else {
			for i := range y.v {
				if math.Float64bits(y.v[i]) != math.Float64bits(first.v[i]) {
					t.Errorf("order %v: element %d: %v, the other order %v", order, i, y.v[i], first.v[i])
				}
			}
		}
	}
}

// randomTopological is a random order of ops in which every op comes
// after the producers of its inputs.
func randomTopological(r *rand.Rand, ops []*graph.Op) []int {
	producer := map[uint64]int{}
	for i, op := range ops {
		for _, o := range op.Outputs {
			producer[o.ID] = i
		}
	}
	deps := make([]map[int]bool, len(ops))
	for i, op := range ops {
		deps[i] = map[int]bool{}
		for _, in := range op.Inputs {
			if p, ok := producer[in.ID]; ok {
				deps[i][p] = true
			}
		}
	}
	done := map[int]bool{}
	var order []int
	for len(order) < len(ops) {
		var ready []int
		for i := range ops {
			if done[i] {
				continue
			}
			ok := true
			for p := range deps[i] {
				ok = ok && done[p]
			}
			if ok {
				ready = append(ready, i)
			}
		}
		i := ready[r.IntN(len(ready))]
		done[i] = true
		order = append(order, i)
	}
	return order
}

// orderGraphs are fused graphs whose groups read tensors other ops
// produce.
var orderGraphs = []orderGraph{
	{"mean pooling", meanPoolingOps, false},
	{"reduction, Subtract of another reduction's result, ReLU", func() []*graph.Op {
		return []*graph.Op{
			graph.NewOp(1, graph.ReduceMean, "mean").AddInput(orderTensor(1, 4, 8)).AddOutput(orderTensor(10, 4, 1)).
				SetAttr("axes", []int64{1}).SetAttr("keep_dims", true),
			graph.NewOp(2, graph.Subtract, "sub").AddInput(orderTensor(10, 4, 1)).AddInput(orderTensor(12, 4, 1)).
				AddOutput(orderTensor(13, 4, 1)),
			graph.NewOp(3, graph.ReLU, "relu").AddInput(orderTensor(13, 4, 1)).AddOutput(orderTensor(14, 4, 1)),
			graph.NewOp(4, graph.Sigmoid, "gate").AddInput(orderTensor(2, 4, 1)).AddOutput(orderTensor(11, 4, 1)),
			graph.NewOp(5, graph.ReduceMax, "max").AddInput(orderTensor(11, 4, 1)).AddOutput(orderTensor(12, 4, 1)).
				SetAttr("axes", []int64{1}).SetAttr("keep_dims", true),
		}
	}, false},
	{"residual and bias Add before LayerNorm, the bias, gamma and a post-op operand computed", func() []*graph.Op {
		return []*graph.Op{
			graph.NewOp(1, graph.Add, "residual").AddInput(orderTensor(1, 4, 16)).AddInput(orderTensor(2, 4, 16)).
				AddOutput(orderTensor(10, 4, 16)),
			graph.NewOp(2, graph.Add, "bias").AddInput(orderTensor(10, 4, 16)).AddInput(orderTensor(21, 16)).
				AddOutput(orderTensor(11, 4, 16)),
			graph.NewOp(3, graph.LayerNorm, "ln").AddInput(orderTensor(11, 4, 16)).AddInput(orderTensor(22, 16)).
				AddInput(orderTensor(5, 16)).AddOutput(orderTensor(12, 4, 16)).
				SetAttr("begin_norm_axis", int64(-1)).SetAttr("keep_stats", false),
			graph.NewOp(4, graph.Multiply, "scale").AddInput(orderTensor(12, 4, 16)).AddInput(orderTensor(23, 4, 1)).
				AddOutput(orderTensor(13, 4, 16)),
			graph.NewOp(5, graph.Tanh, "make bias").AddInput(orderTensor(3, 16)).AddOutput(orderTensor(21, 16)),
			graph.NewOp(6, graph.Abs, "make gamma").AddInput(orderTensor(4, 16)).AddOutput(orderTensor(22, 16)),
			graph.NewOp(7, graph.ReduceMean, "make scale").AddInput(orderTensor(6, 4, 16)).AddOutput(orderTensor(23, 4, 1)).
				SetAttr("axes", []int64{1}).SetAttr("keep_dims", true),
		}
	}, false},
	// A LayerNorm's post-op whose operand depends on the LayerNorm's
	// own mean: it cannot fuse.
	{"post-op operand computed from the normalization's mean", func() []*graph.Op {
		return []*graph.Op{
			graph.NewOp(1, graph.LayerNorm, "ln").AddInput(orderTensor(1, 8, 8)).AddInput(orderTensor(2, 8)).
				AddInput(orderTensor(3, 8)).AddOutput(orderTensor(10, 8, 8)).AddOutput(orderTensor(11, 8)).
				AddOutput(orderTensor(12, 8)).SetAttr("begin_norm_axis", int64(-1)).SetAttr("keep_stats", true),
			graph.NewOp(2, graph.Abs, "of the mean").AddInput(orderTensor(11, 8)).AddOutput(orderTensor(13, 8)),
			graph.NewOp(3, graph.Add, "add").AddInput(orderTensor(10, 8, 8)).AddInput(orderTensor(13, 8)).
				AddOutput(orderTensor(14, 8, 8)),
		}
	}, false},
	// The bias Add is wanted by the residual group (as its bias) and by
	// the ReduceMean computing the bias (as its post-op): each needs
	// the other's partition first.
	{"residual and a reduction both wanting the bias Add", func() []*graph.Op {
		return []*graph.Op{
			graph.NewOp(1, graph.Add, "residual").AddInput(orderTensor(1, 4, 16)).AddInput(orderTensor(2, 4, 16)).
				AddOutput(orderTensor(10, 4, 16)),
			graph.NewOp(2, graph.Add, "bias").AddInput(orderTensor(10, 4, 16)).AddInput(orderTensor(21, 4, 16)).
				AddOutput(orderTensor(11, 4, 16)),
			graph.NewOp(3, graph.RMSNorm, "rms").AddInput(orderTensor(11, 4, 16)).AddInput(orderTensor(4, 16)).
				AddOutput(orderTensor(12, 4, 16)).SetAttr("begin_norm_axis", int64(-1)),
			graph.NewOp(4, graph.ReduceMean, "make bias").AddInput(orderTensor(3, 2, 4, 16)).AddOutput(orderTensor(21, 4, 16)).
				SetAttr("axes", []int64{0}).SetAttr("keep_dims", false),
		}
	}, true},
}

// TestGetAnyTopologicalOrder: Get on random topological orders of the
// same ops gives a valid execution order with every op once, and (but
// where two groups contest an op) the same grouping in every order.
func TestGetAnyTopologicalOrder(t *testing.T) {
	for _, c := range orderGraphs {
		r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
		var want string
		for range 40 {
			perm := randomTopological(r, c.ops())
			g := buildOrdered(t, c.ops(), perm)
			parts, err := partition.Get(g, partition.Fusion)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := checkPartitions(t, g, parts)
			if c.contested {
				continue
			}
			if want == "" {
				want = got
			} else if got != want {
				t.Fatalf("%s, order %v: grouping\n%s\nwant\n%s\n%v", c.name, perm, got, want, parts)
			}
		}
	}
}

// TestGetRefusesCyclicFusion: a fusion that would read an operand
// computed from the group's own result is refused, whatever the order;
// the partitions stay a valid execution order.
func TestGetRefusesCyclicFusion(t *testing.T) {
	// out = Divide(ReduceSum(x), Exp(ReduceSum(x))).
	sum := func() []*graph.Op {
		return []*graph.Op{
			graph.NewOp(1, graph.ReduceSum, "sum").AddInput(orderTensor(1, 4, 8)).AddOutput(orderTensor(10, 4, 1)).
				SetAttr("axes", []int64{1}).SetAttr("keep_dims", true),
			graph.NewOp(2, graph.Exp, "f").AddInput(orderTensor(10, 4, 1)).AddOutput(orderTensor(11, 4, 1)),
			graph.NewOp(3, graph.Divide, "div").AddInput(orderTensor(10, 4, 1)).AddInput(orderTensor(11, 4, 1)).
				AddOutput(orderTensor(12, 4, 1)),
		}
	}
	g := buildOrdered(t, sum(), []int{0, 1, 2})
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		t.Fatal(err)
	}
	checkPartitions(t, g, parts)
	if len(parts) != 3 {
		t.Errorf("%v, want the ReduceSum, Exp and Divide apart", parts)
	}
	// The LayerNorm's post-op Add reads Abs(mean of the LayerNorm).
	g = buildOrdered(t, orderGraphs[3].ops(), []int{0, 1, 2})
	parts, err = partition.Get(g, partition.Fusion)
	if err != nil {
		t.Fatal(err)
	}
	checkPartitions(t, g, parts)
	if len(parts) != 3 || len(parts[0].Ops()) != 1 {
		t.Fatalf("%v, want the LayerNorm, Abs and Add apart", parts)
	}
	if why := parts[2].Reason(); !strings.Contains(why, "produced by op 2 (Abs \"of the mean\"), which depends on op 1 (LayerNorm \"ln\"), where this group starts") {
		t.Errorf("the Add's reason: %s", why)
	}
}

package partition

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// exactOps maps the exact reductions kerneltest draws to the graph's ops.
var exactOps = map[plan.Reduction]graph.OpKind{
	plan.AlgSum.Reduction(0, 0): graph.ReduceSum, plan.AlgMul.Reduction(0, 0): graph.ReduceProd,
	plan.AlgMax.Reduction(0, 0): graph.ReduceMax, plan.AlgMin.Reduction(0, 0): graph.ReduceMin,
	plan.AlgMean.Reduction(0, 0):  graph.ReduceMean,
	plan.Bitwise(plan.CombineAnd): graph.ReduceBitwiseAnd,
	plan.Bitwise(plan.CombineOr):  graph.ReduceBitwiseOr,
	plan.Bitwise(plan.CombineXor): graph.ReduceBitwiseXor,
	plan.LogicalAnd:               graph.ReduceLogicalAnd,
	plan.LogicalOr:                graph.ReduceLogicalOr,
	plan.LogicalXor:               graph.ReduceLogicalXor,
}

// FuzzExactPartition draws an integer or boolean reduction (type, kind,
// dims, axes, layout) from the fuzz input, runs it through the graph API
// (partition, compile, execute, src and dst against guard pages) and
// compares every output with the exact oracle.
func FuzzExactPartition(f *testing.F) {
	for _, seed := range []uint64{1, 2, 3, 51, 1 << 40} {
		f.Add(binary.LittleEndian.AppendUint64(nil, seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var seed uint64
		for i, b := range data {
			seed ^= uint64(b) << (8 * (i % 8))
		}
		r := rand.New(rand.NewSource(int64(seed)))
		sdt := kerneltest.ExactTypes[r.Intn(len(kerneltest.ExactTypes))]
		cases := kerneltest.ExactPairs(r, sdt)
		c := cases[r.Intn(len(cases))]
		p := kerneltest.RandomExactProblem(r, 4096, sdt, c)
		if p.Reduction == plan.Copy {
			return // no axes: every Reduce* op copies, the float path for s8 and u8
		}
		checkExactPartition(t, r, p)
	})
}

// checkExactPartition runs p through the graph API and checks it.
func checkExactPartition(t *testing.T, r *rand.Rand, p *plan.Problem) {
	var axes []int64
	for i, red := range p.Reduce {
		if red {
			axes = append(axes, int64(i))
		}
	}
	src := graph.NewLogicalTensorStrided(0, p.SrcDT, p.Dims, p.SrcStrides)
	out := graph.NewLogicalTensorStrided(1, p.DstDT, kerneltest.KeptDims(p), p.DstStrides)
	dstStrides := make([]int64, len(p.Dims))
	copy(dstStrides, p.DstStrides)
	for i := range dstStrides {
		if p.Reduce[i] {
			dstStrides[i] = 1 // any: the dim has size 1
		}
	}
	out.Strides = dstStrides
	g := graph.New()
	what := fmt.Sprintf("%v %v>%v dims %v strides %v axes %v", p.Reduction, p.SrcDT, p.DstDT, p.Dims, p.SrcStrides, axes)
	op := graph.NewOp(0, exactOps[p.Reduction], "red").AddInput(src).AddOutput(out).SetAttr("axes", axes).SetAttr("keep_dims", true)
	if err := g.AddOp(op); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	parts, err := Get(g, Fusion)
	if err != nil || len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("%s: partitions %v, %v", what, parts, err)
	}
	cp, err := parts[0].Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{out})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	sb, dbytes, _ := kerneltest.Buffers(t, p, 0x3c, func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) }, nil)
	fence := kerneltest.NewFence(t, true)
	defer fence.Free()
	fs, fd := fence.Place(sb), fence.Place(dbytes)
	st, err := NewTensor(src, fs)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	dt, err := NewTensor(out, fd)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := cp.Execute([]Tensor{st}, []Tensor{dt}); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	kerneltest.CheckExact(t, what, p, sb, fd, 0x3c)
}

// TestExactPartitionRandom runs many random exact problems through the
// graph API (what the fuzz target does for one).
func TestExactPartitionRandom(t *testing.T) {
	r := rand.New(rand.NewSource(5151))
	for _, sdt := range kerneltest.ExactTypes {
		for range 12 {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				if p := kerneltest.RandomExactProblem(r, 4096, sdt, c); p.Reduction != plan.Copy {
					checkExactPartition(t, r, p)
				}
			}
		}
	}
}

package partition

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/oracle"
)

// residualGraph is h = x + skip [+ bias]; y = norm(h, gamma [, beta])
// [then a ReLU]; with readSum, h is also read by an Abs (as the next
// residual would be). Tensor ids: x 1, skip 2, bias 3, gamma 4, beta 5,
// x+skip 10, h 11, y 12, ReLU's 13, Abs's 14.
type residualGraph struct {
	kind          graph.OpKind
	dims          []int64
	dt, sumDT     dtypes.DataType
	bias, readSum bool
	relu          bool
	stats         bool // LayerNorm keeps its mean (15) and variance (16)
}

func (rg residualGraph) String() string {
	return fmt.Sprintf("%s/%v/%v:%v/bias=%v/readSum=%v/relu=%v/stats=%v", rg.kind, rg.dims, rg.dt, rg.sumDT, rg.bias, rg.readSum, rg.relu, rg.stats)
}

// normOp is rg's normalization of tensor src.
func (rg residualGraph) normOp(src graph.LogicalTensor) *graph.Op {
	op := graph.NewOp(3, rg.kind, "norm").AddInput(src).AddInput(graph.NewLogicalTensor(4, dtypes.F32, rg.normDims())).
		AddOutput(graph.NewLogicalTensorAny(12, rg.sumDT, nil)).SetAttr("begin_norm_axis", int64(-1)).SetAttr("epsilon", float32(1e-5))
	if rg.kind == graph.LayerNorm {
		op.AddInput(graph.NewLogicalTensor(5, dtypes.F32, rg.normDims())).SetAttr("keep_stats", rg.stats)
		if rg.stats {
			op.AddOutput(graph.NewLogicalTensorAny(15, dtypes.F32, nil)).AddOutput(graph.NewLogicalTensorAny(16, dtypes.F32, nil))
		}
	}
	return op
}

// normDims are the dims of gamma, beta and the bias: the last one.
func (rg residualGraph) normDims() []int64 { return rg.dims[len(rg.dims)-1:] }

func (rg residualGraph) build(t testing.TB) *graph.Graph {
	t.Helper()
	g := graph.New()
	any := func(id uint64, dt dtypes.DataType) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, dt, nil) }
	x, skip := graph.NewLogicalTensor(1, rg.dt, rg.dims), graph.NewLogicalTensor(2, rg.dt, rg.dims)
	must(t, g.AddOp(graph.NewOp(1, graph.Add, "residual").AddInput(x).AddInput(skip).AddOutput(any(10, rg.sumDT))))
	h := uint64(10)
	if rg.bias {
		must(t, g.AddOp(graph.NewOp(2, graph.Add, "bias").AddInput(any(10, rg.sumDT)).
			AddInput(graph.NewLogicalTensor(3, dtypes.F32, rg.normDims())).AddOutput(any(11, rg.sumDT))))
		h = 11
	}
	must(t, g.AddOp(rg.normOp(any(h, rg.sumDT))))
	if rg.relu {
		must(t, g.AddOp(graph.NewOp(4, graph.ReLU, "relu").AddInput(any(12, rg.sumDT)).AddOutput(any(13, rg.sumDT))))
	}
	if rg.readSum {
		must(t, g.AddOp(graph.NewOp(5, graph.Abs, "next").AddInput(any(h, rg.sumDT)).AddOutput(any(14, rg.sumDT))))
	}
	must(t, g.Finalize())
	return g
}

// residualData is random data for every input tensor of rg.
func residualData(rg residualGraph, r *rand.Rand) map[uint64][]byte {
	n := int64(1)
	for _, d := range rg.dims {
		n *= d
	}
	c := rg.normDims()[0]
	gen := func(dt dtypes.DataType, n int64, lo, hi float64) []byte {
		b := make([]byte, n*int64(dt.Size()))
		for i := range n {
			dtypes.StoreF32(dt, b, i, float32(lo+(hi-lo)*r.Float64()))
		}
		return b
	}
	return map[uint64][]byte{1: gen(rg.dt, n, -3, 3), 2: gen(rg.dt, n, -3, 3), 3: gen(dtypes.F32, c, -1, 1),
		4: gen(dtypes.F32, c, 0.5, 1.5), 5: gen(dtypes.F32, c, -1, 1)}
}

// runPartition compiles p (outputs of layout any) and executes it on
// data; it returns the outputs by tensor id.
func runPartition(t testing.TB, p *Partition, data map[uint64][]byte) (*CompiledPartition, map[uint64][]byte) {
	t.Helper()
	c, in, outs := executable(t, p, data)
	must(t, c.Execute(in, outs))
	got := map[uint64][]byte{}
	for i, lt := range c.Outputs() {
		got[lt.ID] = outs[i].buf
	}
	return c, got
}

// opByOp runs rg as a framework would without the fusion: the sum in
// f32 by hand, rounded once to the sum's type (the fused rule; op by op
// a 16-bit sum would be rounded after each Add), then the normalization
// (and ReLU) as gdnn's partition of its own. It returns the sum and the
// normalization's (or ReLU's) output.
func opByOp(t *testing.T, rg residualGraph, data map[uint64][]byte) (sum []byte, out map[uint64][]byte) {
	t.Helper()
	n := int64(len(data[1]) / rg.dt.Size())
	c := int64(len(data[3]) / 4)
	sum = make([]byte, n*int64(rg.sumDT.Size()))
	for i := range n {
		v := dtypes.LoadF32(rg.dt, data[1], i) + dtypes.LoadF32(rg.dt, data[2], i)
		if rg.bias {
			v += dtypes.LoadF32(dtypes.F32, data[3], i%c)
		}
		dtypes.StoreF32(rg.sumDT, sum, i, v)
	}
	g := graph.New()
	must(t, g.AddOp(rg.normOp(graph.NewLogicalTensor(10, rg.sumDT, rg.dims))))
	if rg.relu {
		must(t, g.AddOp(graph.NewOp(4, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(12, rg.sumDT, nil)).
			AddOutput(graph.NewLogicalTensorAny(13, rg.sumDT, nil))))
	}
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 1 {
		t.Fatalf("the normalization alone: partitions %v", parts)
	}
	in := map[uint64][]byte{10: sum, 4: data[4], 5: data[5]}
	_, out = runPartition(t, parts[0], in)
	return sum, out
}

// TestResidualNormFusion: x + skip [+ bias] -> LayerNorm or RMSNorm
// [-> ReLU] is one partition, the sum an output where the graph reads
// it; its results equal, bit for bit, the sums computed in f32 and the
// normalization run as a partition of its own (the same kernels over
// the same data), and the float64 oracle's within its bounds; on every
// ISA and for any thread count.
func TestResidualNormFusion(t *testing.T) {
	var cases []residualGraph
	for _, kind := range []graph.OpKind{graph.RMSNorm, graph.LayerNorm} {
		for _, dts := range [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F32}} {
			for v := range 8 {
				dims := []int64{3, 5, 40}
				if v >= 6 {
					dims = []int64{96, 1100} // several chunks
				}
				cases = append(cases, residualGraph{kind: kind, dims: dims, dt: dts[0], sumDT: dts[1],
					bias: v&1 != 0, readSum: v&2 != 0, relu: v&4 != 0 || v == 6})
			}
			if kind == graph.LayerNorm {
				for v := range 4 {
					cases = append(cases, residualGraph{kind: kind, dims: []int64{4, 6, 70}, dt: dts[0], sumDT: dts[1],
						bias: v&1 == 0, readSum: v != 3, relu: v&2 != 0, stats: true})
				}
			}
		}
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(21, uint64(isa)))
		for _, rg := range cases {
			g := rg.build(t)
			parts, err := Get(g, Fusion)
			must(t, err)
			p := parts[0]
			nOps := 2 + map[bool]int{true: 1}[rg.bias] + map[bool]int{true: 1}[rg.relu]
			if !p.IsSupported() || len(p.Ops()) != nOps {
				t.Fatalf("%v: first partition %v; want %d ops fused", rg, p, nOps)
			}
			wantOuts := 1 + map[bool]int{true: 1}[rg.readSum] + map[bool]int{true: 2}[rg.stats]
			if len(p.Outputs()) != wantOuts {
				t.Fatalf("%v: %d output ports, want %d", rg, len(p.Outputs()), wantOuts)
			}
			if rg.readSum && len(parts) != 2 {
				t.Fatalf("%v: partitions %v; want the fused one and the Abs", rg, parts)
			}
			data := residualData(rg, r)
			var first map[uint64][]byte
			for _, threads := range []int{1, 2, 3} {
				prev := jit.SetThreads(threads)
				c, got := runPartition(t, p, data)
				jit.SetThreads(prev)
				wantImpl(t, c, isa)
				if !strings.HasPrefix(p.Pattern(), "residual Add") {
					t.Errorf("%v: Pattern() %q does not name the fusion", rg, p.Pattern())
				}
				if !strings.Contains(c.verboseLine(time.Millisecond), "residual Add") {
					t.Errorf("%v: the verbose line %q does not name the fusion", rg, c.verboseLine(time.Millisecond))
				}
				if first == nil {
					first = got
					continue
				}
				for id := range got {
					if !bytes.Equal(got[id], first[id]) {
						t.Fatalf("%v: %d threads: output %d differs from 1 thread's", rg, threads, id)
					}
				}
			}
			sum, alone := opByOp(t, rg, data)
			last := uint64(12)
			if rg.relu {
				last = 13
			}
			// Op by op, the normalization may run another kernel (the
			// fused per-row one, which a residual sum does not take):
			// the two agree within a few roundings of the output type.
			for id, y := range alone {
				dt := dtypes.Undef
				for _, o := range p.Outputs() {
					if o.ID == id {
						dt = o.DataType
					}
				}
				if i, ok := closeOutputs(dt, first[id], y); !ok {
					t.Errorf("%v: output %d element %d differs from the sum then the normalization", rg, id, i)
				}
			}
			h := uint64(10)
			if rg.bias {
				h = 11
			}
			if rg.readSum && !bytes.Equal(first[h], sum) {
				t.Errorf("%v: the sum output differs from the sum computed in f32", rg)
			}
			checkResidualOracle(t, rg, sum, data, first[last])
		}
	})
}

// checkResidualOracle compares y with the float64 oracle's normalization
// of sum.
func checkResidualOracle(t *testing.T, rg residualGraph, sum []byte, data map[uint64][]byte, y []byte) {
	t.Helper()
	dense := graph.DenseStrides(rg.dims)
	pr := &norm.Problem{Kind: norm.RMSNorm, Dims: rg.dims, Axis: -1, Eps: 1e-5,
		Src: norm.Operand{DT: rg.sumDT, Strides: dense}, Dst: norm.Operand{DT: dtypes.F32, Strides: dense},
		Gamma: norm.Operand{DT: dtypes.F32, Strides: []int64{1}}}
	b := norm.Buffers{Src: sum, Gamma: data[4]}
	if rg.kind == graph.LayerNorm {
		pr.Kind = norm.LayerNorm
		pr.Beta = norm.Operand{DT: dtypes.F32, Strides: []int64{1}}
		b.Beta = data[5]
	}
	want := oracle.Norm(pr, b)
	for i, w := range want.Dst {
		if rg.relu {
			w = math.Max(w, 0)
		}
		got := float64(dtypes.LoadF32(rg.sumDT, y, int64(i)))
		if math.Abs(got-w) > oracle.NormTolerance(rg.sumDT, w, 2*want.Bound[i]) {
			t.Fatalf("%v: element %d is %v, the oracle's %v", rg, i, got, w)
		}
	}
}

// TestResidualNearMisses: what looks like a residual sum before a
// normalization but does not fuse stays op by op, the Add's partition
// saying why.
func TestResidualNearMisses(t *testing.T) {
	f32 := dtypes.F32
	any := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, f32, nil) }
	rms := func(src uint64, gamma graph.LogicalTensor) *graph.Op {
		in := any(src)
		if src == gamma.ID {
			in = gamma
		}
		return graph.NewOp(3, graph.RMSNorm, "rms").AddInput(in).AddInput(gamma).AddOutput(any(12))
	}
	gamma := graph.NewLogicalTensor(4, f32, []int64{8})
	cases := []struct {
		name  string
		ops   func() []*graph.Op
		fused bool
		why   string
	}{
		{"x plus a broadcast row", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{8})).AddOutput(any(10)),
				rms(10, gamma)}
		}, false, "a residual Add adds two tensors of one known shape"},
		{"x plus a tensor that enlarges it", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{1, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{4, 8})).AddOutput(any(10)),
				rms(10, gamma)}
		}, false, "one known shape"},
		{"a bias that enlarges the sum", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{4, 8})).AddOutput(any(10)),
				graph.NewOp(2, graph.Add, "bias").AddInput(any(10)).AddInput(graph.NewLogicalTensor(3, f32, []int64{2, 4, 8})).AddOutput(any(11)),
				rms(11, gamma)}
		}, false, "do not broadcast onto"},
		{"x + skip read besides the bias Add", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{4, 8})).AddOutput(any(10)),
				graph.NewOp(2, graph.Add, "bias").AddInput(any(10)).AddInput(graph.NewLogicalTensor(3, f32, []int64{8})).AddOutput(any(11)),
				rms(11, gamma),
				graph.NewOp(5, graph.Abs, "other").AddInput(any(10)).AddOutput(any(14))}
		}, false, "is read by 2 ops"},
		{"gamma computed after the Add", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{4, 8})).AddOutput(any(10)),
				graph.NewOp(6, graph.Abs, "gamma").AddInput(any(10)).AddOutput(graph.NewLogicalTensor(15, f32, []int64{4, 8})),
				graph.NewOp(3, graph.LayerNorm, "ln").AddInput(any(10)).AddInput(graph.NewLogicalTensor(15, f32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(16, f32, []int64{4, 8})).AddOutput(any(12)).SetAttr("begin_norm_axis", int64(0)).
					SetAttr("keep_stats", false)}
		}, false, "runs after"},
		{"an s32 operand", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, dtypes.S32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{4, 8})).AddOutput(any(10)),
				rms(10, gamma)}
		}, false, "tensor 1 is s32"},
		{"the sum as the norm's src and its gamma", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{8})).AddOutput(graph.NewLogicalTensor(10, f32, []int64{8})),
				rms(10, graph.NewLogicalTensor(10, f32, []int64{8}))}
		}, false, "as its gamma or beta"},
		{"the sum read by another op", func() []*graph.Op {
			return []*graph.Op{
				graph.NewOp(1, graph.Add, "add").AddInput(graph.NewLogicalTensor(1, f32, []int64{4, 8})).
					AddInput(graph.NewLogicalTensor(2, f32, []int64{4, 8})).AddOutput(any(10)),
				rms(10, gamma),
				graph.NewOp(5, graph.Abs, "next").AddInput(any(10)).AddOutput(any(14))}
		}, true, ""},
	}
	for _, c := range cases {
		g := graph.New()
		for _, op := range c.ops() {
			must(t, g.AddOp(op))
		}
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		var add *Partition
		for _, p := range parts {
			if p.Ops()[0].Kind == graph.Add && p.Ops()[0].ID == 1 {
				add = p
			}
		}
		if add == nil {
			t.Fatalf("%s: no partition starts at the Add: %v", c.name, parts)
		}
		if fused := add.IsSupported() && add.norm != nil; fused != c.fused {
			t.Errorf("%s: %v; fused %v, want %v", c.name, add, fused, c.fused)
		}
		if !c.fused && !strings.Contains(add.Reason(), c.why) {
			t.Errorf("%s: reason %q; want it to say %q", c.name, add.Reason(), c.why)
		}
		checkTopological(t, g, parts)
	}
}

// TestResidualCompileRefusals: concrete inputs that break the fusion's
// shape rules are refused at compile.
func TestResidualCompileRefusals(t *testing.T) {
	rg := residualGraph{kind: graph.RMSNorm, dims: []int64{4, 8}, dt: dtypes.F32, sumDT: dtypes.F32, readSum: true}
	g := rg.build(t)
	parts, err := Get(g, Fusion)
	must(t, err)
	p := parts[0]
	ins := p.Inputs()
	for i := range ins {
		if ins[i].ID == 2 {
			ins[i] = graph.NewLogicalTensor(2, dtypes.F32, []int64{4, 9})
		}
	}
	if _, err := p.Compile(ins, p.Outputs()); err == nil {
		t.Error("a skip of other dims than x compiles")
	}
	c, err := p.Compile(p.Inputs(), p.Outputs())
	must(t, err)
	x := make([]float32, 33)
	var inT []Tensor
	for _, lt := range c.Inputs() {
		n, _ := MemSize(lt)
		buf := make([]byte, n)
		if lt.ID == 1 {
			buf = bytesOf(x[:32])
		}
		tt, err := NewTensor(lt, buf)
		must(t, err)
		inT = append(inT, tt)
	}
	outs := c.Outputs()
	dst, err := NewTensor(outs[0], make([]float32, 32))
	must(t, err)
	sumOverX, err := NewTensor(outs[1], x[1:]) // in place only as x itself (TestNormInPlace)
	must(t, err)
	if err := c.Execute(inT, []Tensor{dst, sumOverX}); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("the sum over x shifted by one element: %v", err)
	}
}

// maskedGraph is y = Reduce{Sum,Mean}(Multiply(x, mask), axes) [-> ReLU],
// the operands in the given order (x first unless swap). Tensor ids: x 1,
// mask 2, product 10, y 11, ReLU's 12.
func maskedGraph(t testing.TB, kind graph.OpKind, x, mask graph.LogicalTensor, axes []int64, keep, swap, relu bool) *graph.Graph {
	g := graph.New()
	a, b := x, mask
	if swap {
		a, b = mask, x
	}
	f32 := dtypes.F32
	must(t, g.AddOp(graph.NewOp(1, graph.Multiply, "mask").AddInput(a).AddInput(b).AddOutput(graph.NewLogicalTensorAny(10, f32, nil))))
	must(t, g.AddOp(graph.NewOp(2, kind, "pool").AddInput(graph.NewLogicalTensorAny(10, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(11, f32, nil)).SetAttr("axes", axes).SetAttr("keep_dims", keep)))
	if relu {
		must(t, g.AddOp(graph.NewOp(3, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(11, f32, nil)).
			AddOutput(graph.NewLogicalTensorAny(12, f32, nil))))
	}
	must(t, g.Finalize())
	return g
}

// TestMaskedReduceFusion: Multiply(x, mask) -> ReduceSum or ReduceMean
// [-> ReLU] is one partition (the verbose line says pre:multiply); on
// grid data (exact sums) it equals the float64 result and the Multiply
// done by hand then the reduction's own partition, bit for bit, on every
// ISA and for any thread count.
func TestMaskedReduceFusion(t *testing.T) {
	type mcase struct {
		dims, maskDims []int64
		axes           []int64
		kind           graph.OpKind
		dt             dtypes.DataType
		keep, swap     bool
	}
	var cases []mcase
	for _, kind := range []graph.OpKind{graph.ReduceMean, graph.ReduceSum} {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			cases = append(cases,
				mcase{[]int64{8, 128, 384}, []int64{8, 128, 1}, []int64{1}, kind, dt, false, false}, // S9
				mcase{[]int64{3, 7, 19}, []int64{3, 7, 1}, []int64{-2}, kind, dt, true, true},
				mcase{[]int64{4, 6, 33}, []int64{33}, []int64{2}, kind, dt, false, false},         // weights over H
				mcase{[]int64{5, 9, 16}, []int64{5, 9, 16}, []int64{0, 1}, kind, dt, false, true}, // reduce over two dims
				mcase{[]int64{5, 9, 16}, []int64{16}, []int64{2}, kind, dt, true, true})           // the src second
		}
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(31, uint64(isa)))
		for _, c := range cases {
			name := fmt.Sprintf("%s/%v/%v*%v/axes%v", c.kind, c.dt, c.dims, c.maskDims, c.axes)
			x, mask := graph.NewLogicalTensor(1, c.dt, c.dims), graph.NewLogicalTensor(2, c.dt, c.maskDims)
			relu := c.swap
			g := maskedGraph(t, c.kind, x, mask, c.axes, c.keep, c.swap, relu)
			parts, err := Get(g, Fusion)
			must(t, err)
			// The reduction reads x, the operand of the product's dims
			// (either, where both have them).
			if len(parts) != 1 || !parts[0].IsSupported() || parts[0].Inputs()[0].ID != 1 && !slices.Equal(c.dims, c.maskDims) {
				t.Fatalf("%s: partitions %v (inputs %v); want one supported partition reading x first", name, parts, parts[0].Inputs())
			}
			grid := func(dt dtypes.DataType, n int64, den int, mul bool) []byte {
				b := make([]byte, n*int64(dt.Size()))
				for i := range n {
					v := float32(r.IntN(8*den+1)-4*den) / float32(den)
					if mul {
						v = float32(r.IntN(2)) // a 0/1 mask
					}
					dtypes.StoreF32(dt, b, i, v)
				}
				return b
			}
			data := map[uint64][]byte{1: grid(c.dt, x.NumElements(), 8, false), 2: grid(c.dt, mask.NumElements(), 1, true)}
			var first map[uint64][]byte
			out := uint64(11)
			if relu {
				out = 12
			}
			for _, threads := range []int{1, 2, 3} {
				prev := jit.SetThreads(threads)
				cp, got := runPartition(t, parts[0], data)
				jit.SetThreads(prev)
				wantImpl(t, cp, isa)
				if line := cp.verboseLine(time.Millisecond); !strings.Contains(line, "pre:multiply") {
					t.Errorf("%s: the verbose line %q does not name the fused Multiply", name, line)
				}
				if first == nil {
					first = got
				} else if !bytes.Equal(got[out], first[out]) {
					t.Fatalf("%s: %d threads: the result differs from 1 thread's", name, threads)
				}
			}
			prod, want := maskedExpect(c.dims, c.maskDims, c.axes, c.kind == graph.ReduceMean, relu, c.dt, data[1], data[2])
			for i, w := range want {
				if got := dtypes.LoadF32(dtypes.F32, first[out], int64(i)); got != w {
					t.Fatalf("%s: element %d is %v, want %v", name, i, got, w)
				}
			}
			// The same reduction op by op: the product by hand, then
			// the reduction (and ReLU) as a partition of its own.
			g2 := graph.New()
			op := graph.NewOp(2, c.kind, "pool").AddInput(graph.NewLogicalTensor(10, dtypes.F32, c.dims)).
				AddOutput(graph.NewLogicalTensorAny(11, dtypes.F32, nil)).SetAttr("axes", c.axes).SetAttr("keep_dims", c.keep)
			must(t, g2.AddOp(op))
			if relu {
				must(t, g2.AddOp(graph.NewOp(3, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(11, dtypes.F32, nil)).
					AddOutput(graph.NewLogicalTensorAny(12, dtypes.F32, nil))))
			}
			must(t, g2.Finalize())
			_, alone := runPartition(t, onlySupported(t, g2, Fusion), map[uint64][]byte{10: prod})
			if !bytes.Equal(alone[out], first[out]) {
				t.Errorf("%s: the fused result differs from the Multiply then the reduction", name)
			}
		}
	})
}

// maskedExpect is the product (f32, dense) and, in float64, its sum or
// mean over axes [then ReLU], in the output's row-major order.
func maskedExpect(dims, maskDims, axes []int64, mean, relu bool, dt dtypes.DataType, x, mask []byte) ([]byte, []float32) {
	r := len(dims)
	red := make([]bool, r)
	for _, a := range axes {
		red[(a+int64(r))%int64(r)] = true
	}
	off := r - len(maskDims)
	ms := graph.DenseStrides(maskDims)
	xs := graph.DenseStrides(dims)
	var outDims []int64
	for i, d := range dims {
		if !red[i] {
			outDims = append(outDims, d)
		}
	}
	os := graph.DenseStrides(outDims)
	n := 1
	for _, d := range outDims {
		n *= int(d)
	}
	sums := make([]float64, n)
	prod := make([]byte, 4*graph.NewLogicalTensor(0, dtypes.F32, dims).NumElements())
	count := int64(1)
	for i, d := range dims {
		if red[i] {
			count *= d
		}
	}
	idx := make([]int64, r)
	var rec func(k int)
	rec = func(k int) {
		if k == r {
			mi, oi, j := int64(0), int64(0), 0
			for i, v := range idx {
				if i >= off && maskDims[i-off] != 1 {
					mi += v * ms[i-off]
				}
				if !red[i] {
					oi += v * os[j]
					j++
				}
			}
			p := dtypes.LoadF32(dt, x, dot64(idx, xs)) * dtypes.LoadF32(dt, mask, mi)
			dtypes.StoreF32(dtypes.F32, prod, dot64(idx, xs), p)
			sums[oi] += float64(p)
			return
		}
		for v := range dims[k] {
			idx[k] = v
			rec(k + 1)
		}
	}
	rec(0)
	want := make([]float32, n)
	for i, s := range sums {
		w := float32(s) // exact: grid data
		if mean {
			w /= float32(count)
		}
		if relu && w < 0 {
			w = 0
		}
		want[i] = w
	}
	return prod, want
}

func dot64(a, b []int64) int64 {
	s := int64(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestMaskedReduceNearMisses: a Multiply that does not fuse before a
// reduction stays op by op, its partition saying why.
func TestMaskedReduceNearMisses(t *testing.T) {
	f32 := dtypes.F32
	cases := []struct {
		name    string
		x, mask graph.LogicalTensor
		kind    graph.OpKind
		why     string
	}{
		{"a mask that enlarges x", graph.NewLogicalTensor(1, f32, []int64{2, 1, 6}), graph.NewLogicalTensor(2, f32, []int64{2, 4, 1}),
			graph.ReduceMean, "neither of its operands"},
		{"a ReduceMax", graph.NewLogicalTensor(1, f32, []int64{2, 4, 6}), graph.NewLogicalTensor(2, f32, []int64{2, 4, 1}),
			graph.ReduceMax, "ReduceSum and ReduceMean only"},
		{"unknown dims", graph.NewLogicalTensor(1, f32, []int64{2, -1, 6}), graph.NewLogicalTensor(2, f32, []int64{2, 4, 1}),
			graph.ReduceSum, "not known"},
		{"an s32 mask", graph.NewLogicalTensor(1, f32, []int64{2, 4, 6}), graph.NewLogicalTensor(2, dtypes.S32, []int64{2, 4, 1}),
			graph.ReduceSum, "is s32"},
		{"nothing kept", graph.NewLogicalTensor(1, f32, []int64{1, 400, 1}), graph.NewLogicalTensor(2, f32, []int64{1, 400, 1}),
			graph.ReduceSum, "keeps no dim"},
	}
	for _, c := range cases {
		g := maskedGraph(t, c.kind, c.x, c.mask, []int64{1}, false, false, false)
		parts, err := Get(g, Fusion)
		must(t, err)
		if len(parts) != 2 || parts[0].IsSupported() || !strings.Contains(parts[0].Reason(), c.why) {
			t.Errorf("%s: partitions %v; want the Multiply alone, unsupported, saying %q", c.name, parts, c.why)
		}
	}
	// Axes as a tensor.
	g := graph.New()
	x, mask := graph.NewLogicalTensor(1, f32, []int64{2, 4, 6}), graph.NewLogicalTensor(2, f32, []int64{2, 4, 1})
	must(t, g.AddOp(graph.NewOp(1, graph.Multiply, "mask").AddInput(x).AddInput(mask).AddOutput(graph.NewLogicalTensorAny(10, f32, nil))))
	must(t, g.AddOp(graph.NewOp(2, graph.ReduceSum, "pool").AddInput(graph.NewLogicalTensorAny(10, f32, nil)).
		AddInput(graph.NewLogicalTensor(3, dtypes.S64, []int64{1})).AddOutput(graph.NewLogicalTensorAny(11, f32, nil))))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 2 || parts[0].IsSupported() || !strings.Contains(parts[0].Reason(), "axes are an attribute") {
		t.Errorf("axes as a tensor: partitions %v; want the Multiply alone, saying why", parts)
	}
	// A Quantize after the pooling stays a partition of its own.
	g = graph.New()
	must(t, g.AddOp(graph.NewOp(1, graph.Multiply, "mask").AddInput(x).AddInput(mask).AddOutput(graph.NewLogicalTensorAny(10, f32, nil))))
	must(t, g.AddOp(graph.NewOp(2, graph.ReduceMean, "pool").AddInput(graph.NewLogicalTensorAny(10, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(11, f32, nil)).SetAttr("axes", []int64{1})))
	must(t, g.AddOp(graph.NewOp(3, graph.Quantize, "q").AddInput(graph.NewLogicalTensorAny(11, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(12, dtypes.S8, nil)).SetAttr("scales", []float32{0.5}).SetAttr("zps", []int64{0}).
		SetAttr("qtype", "per_tensor")))
	must(t, g.Finalize())
	parts, err = Get(g, Fusion)
	must(t, err)
	if len(parts) != 2 || len(parts[0].Ops()) != 2 || parts[1].IsSupported() || !strings.Contains(parts[1].Reason(), "fuses only without a Quantize") {
		t.Errorf("a Quantize after masked pooling: partitions %v; want it alone, saying why", parts)
	} else if _, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs()); err != nil {
		t.Errorf("the masked pooling before a Quantize: %v", err)
	}
	// A non-broadcastable mask is refused by the graph itself.
	g = graph.New()
	err = g.AddOp(graph.NewOp(1, graph.Multiply, "mask").AddInput(graph.NewLogicalTensor(1, f32, []int64{2, 4, 6})).
		AddInput(graph.NewLogicalTensor(2, f32, []int64{2, 4, 3})).AddOutput(graph.NewLogicalTensorAny(10, f32, nil)))
	if err == nil {
		err = g.Finalize()
	}
	if err == nil {
		t.Error("a Multiply of dims 2x4x6 and 2x4x3 is accepted")
	}
}

// closeOutputs reports whether a and b, tensors of dt, agree within 32
// units in the last place of f32, or two of a 16-bit dt (relative, or
// absolute below 1), and the first element where they do not. The
// float64 oracle bounds each of them; this only says that they are the
// same computation.
func closeOutputs(dt dtypes.DataType, a, b []byte) (int64, bool) {
	if len(a) != len(b) || dt.Size() == 0 {
		return -1, false
	}
	tol := map[dtypes.DataType]float64{dtypes.F32: 32 * 0x1p-23, dtypes.BF16: 2 * 0x1p-7, dtypes.F16: 2 * 0x1p-10}[dt]
	for i := int64(0); i < int64(len(a)/dt.Size()); i++ {
		x, y := float64(dtypes.LoadF32(dt, a, i)), float64(dtypes.LoadF32(dt, b, i))
		if math.IsNaN(x) != math.IsNaN(y) || math.Abs(x-y) > tol*math.Max(1, math.Abs(y)) {
			return i, false
		}
	}
	return 0, true
}

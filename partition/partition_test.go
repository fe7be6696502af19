package partition

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/shape"
)

// meanGraph builds src(0) -> ReduceMean(op 1, axes attr) -> dst(1).
func meanGraph(t *testing.T, sdt, ddt dtypes.DataType, src graph.LogicalTensor, axes []int64, keep bool) *graph.Graph {
	t.Helper()
	g := graph.New()
	op := graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(1, ddt, nil)).SetAttr("axes", axes).SetAttr("keep_dims", keep)
	must(t, g.AddOp(op))
	must(t, g.Finalize())
	return g
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// onlySupported gets the partitions and returns the single supported one.
// runTimeAxesPartition returns the one supported partition of a graph
// of one reduction of kind over src, its axes read from the tensor
// axesLT, with keep_dims keep and an output of unknown dims.
func runTimeAxesPartition(t testing.TB, kind graph.OpKind, src, axesLT graph.LogicalTensor, keep bool) *Partition {
	t.Helper()
	g := graph.New()
	must(t, g.AddOp(graph.NewOp(1, kind, "").AddInput(src).AddInput(axesLT).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("keep_dims", keep)))
	must(t, g.Finalize())
	return onlySupported(t, g, Fusion)
}

func onlySupported(t testing.TB, g *graph.Graph, policy Policy) *Partition {
	t.Helper()
	parts, err := Get(g, policy)
	must(t, err)
	var sup []*Partition
	for _, p := range parts {
		if p.IsSupported() {
			sup = append(sup, p)
		}
	}
	if len(sup) != 1 {
		t.Fatalf("%d supported partitions, want 1: %v", len(sup), parts)
	}
	return sup[0]
}

// runMean compiles and executes a plain ReduceMean and checks it against
// the float64 reference.
func runMean(t *testing.T, sdt, ddt dtypes.DataType, src graph.LogicalTensor, axes []int64, keep bool) *CompiledPartition {
	t.Helper()
	g := meanGraph(t, sdt, ddt, src, axes, keep)
	p := onlySupported(t, g, Fusion)
	c, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, ddt, nil)})
	must(t, err)
	out, err := c.QueryLogicalTensor(1)
	must(t, err)
	r := rand.New(rand.NewPCG(1, uint64(len(src.Dims))))
	in := newBuffer(src, uniform(r, -2, 2))
	dst := newBuffer(out, func() float64 { return 7 })
	st, err := NewTensor(src, in.bytes)
	must(t, err)
	dt, err := NewTensor(out, dst.bytes)
	must(t, err)
	must(t, c.Execute([]Tensor{st}, []Tensor{dt}))
	reduce, err := shape.NormalizeAxes(p.Ops()[0], p.Ops()[0].Inputs[0].ID, axes, len(src.Dims))
	must(t, err)
	want, wantDims := reference(in, reduce, keep, nil)
	if graph.DimsString(wantDims) != graph.DimsString(out.Dims) {
		t.Fatalf("output dims %s, want %s", graph.DimsString(out.Dims), graph.DimsString(wantDims))
	}
	checkOutput(t, dst, want, 1e-6)
	return c
}

var dtypePairs = [][2]dtypes.DataType{
	{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.BF16, dtypes.F32},
	{dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
}

func TestEndToEndDtypesAndKeepDims(t *testing.T) {
	shapes := []struct {
		dims []int64
		axes []int64
	}{
		{[]int64{6, 12, 10, 24}, []int64{2, 3}},
		{[]int64{6, 12, 10, 24}, []int64{1}},
		{[]int64{6, 12, 10, 24}, []int64{-2}},
		{[]int64{64, 33}, []int64{0}},
		{[]int64{5, 7, 3}, []int64{0, 2}},
		{[]int64{1000}, []int64{0}},
		{[]int64{3, 4}, []int64{}},
		{[]int64{}, []int64{}},
		{[]int64{4, 0}, []int64{1}},
		{[]int64{0, 4}, []int64{1}},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, pair := range dtypePairs {
			for _, s := range shapes {
				for _, keep := range []bool{true, false} {
					name := fmt.Sprintf("%s:%s/%s/axes%v/keep=%v", pair[0], pair[1], graph.DimsString(s.dims), s.axes, keep)
					t.Run(name, func(t *testing.T) {
						c := runMean(t, pair[0], pair[1], graph.NewLogicalTensor(0, pair[0], s.dims), s.axes, keep)
						if n := graph.NewLogicalTensor(0, pair[0], s.dims).NumElements(); n > 1 {
							wantImpl(t, c, isa)
						}
					})
				}
			}
		}
	})
}

func TestStridedLayouts(t *testing.T) {
	// NHWC memory for NCHW dims 2x8x5x6: strides N=240, C=1, H=48, W=8.
	nhwc := graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{2, 8, 5, 6}, []int64{240, 1, 48, 8})
	// Padded rows: 4x10 with a row pitch of 16.
	padded := graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{4, 10}, []int64{16, 1})
	// Broadcast view: stride 0 on dim 0 (reading the same row 3 times).
	bcast := graph.NewLogicalTensorStrided(0, dtypes.F32, []int64{3, 9}, []int64{0, 1})
	for _, c := range []struct {
		name string
		src  graph.LogicalTensor
		axes []int64
	}{
		{"nhwc spatial", nhwc, []int64{2, 3}},
		{"nhwc channel", nhwc, []int64{1}},
		{"nhwc batch", nhwc, []int64{0}},
		{"padded rows", padded, []int64{1}},
		{"padded cols", padded, []int64{0}},
		{"broadcast view", bcast, []int64{0}},
	} {
		forEachISA(t, func(t *testing.T, isa jit.ISA) {
			for _, pair := range dtypePairs {
				t.Run(c.name+"/"+pair[0].String()+":"+pair[1].String(), func(t *testing.T) {
					src := c.src.Clone()
					src.DataType = pair[0]
					wantImpl(t, runMean(t, pair[0], pair[1], src, c.axes, true), isa)
				})
			}
		})
	}
}

// The ONNX ReduceMean examples, with the values the spec prints.
func TestONNXExamples(t *testing.T) {
	data := []float32{5, 1, 20, 2, 30, 1, 40, 2, 55, 1, 60, 2}
	cases := []struct {
		axes []int64
		keep bool
		want []float32
	}{
		{[]int64{1}, false, []float32{12.5, 1.5, 35, 1.5, 57.5, 1.5}},
		{[]int64{1}, true, []float32{12.5, 1.5, 35, 1.5, 57.5, 1.5}},
		{[]int64{0, 1, 2}, true, []float32{18.25}},
		{[]int64{-2}, true, []float32{12.5, 1.5, 35, 1.5, 57.5, 1.5}},
	}
	for _, c := range cases {
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 2, 2})
		g := meanGraph(t, dtypes.F32, dtypes.F32, src, c.axes, c.keep)
		p := onlySupported(t, g, Fusion)
		cp, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
		must(t, err)
		out, _ := cp.QueryLogicalTensor(1)
		got := make([]float32, out.NumElements())
		st, _ := NewTensor(src, data)
		dt, _ := NewTensor(out, got)
		must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("axes %v keep %v: got %v, want %v", c.axes, c.keep, got, c.want)
		}
	}
}

// axesData is an axes tensor's data in its type, s32 or s64.
func axesData(dt dtypes.DataType, axes ...int64) any {
	if dt == dtypes.S64 {
		return axes
	}
	out := make([]int32, len(axes))
	for i, a := range axes {
		out[i] = int32(a)
	}
	return out
}

func TestAxesTensor(t *testing.T) {
	for _, axDT := range []dtypes.DataType{dtypes.S32, dtypes.S64} {
		for _, prop := range []graph.Property{graph.PropertyConstant, graph.PropertyVariable} {
			t.Run(axDT.String()+"/"+prop.String(), func(t *testing.T) {
				testAxesTensor(t, axDT, prop)
			})
		}
	}
}

func testAxesTensor(t *testing.T, axDT dtypes.DataType, prop graph.Property) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6, 5})
	axesLT := graph.NewLogicalTensor(2, axDT, []int64{1}).WithProperty(prop)
	p := runTimeAxesPartition(t, graph.ReduceMean, src, axesLT, true)
	c, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	must(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	in := newBuffer(src, uniform(r, 0, 1))
	st, _ := NewTensor(src, in.bytes)
	// A different axes value on each execute must still be right.
	for _, axis := range []int64{1, 0, -1, 1, 2} {
		reduce, _ := shape.NormalizeAxes(p.Ops()[0], p.Ops()[0].Inputs[0].ID, []int64{axis}, 3)
		outDims := shape.ReduceDims(src.Dims, reduce, true)
		out := graph.NewLogicalTensor(1, dtypes.F32, outDims)
		dst := newBuffer(out, func() float64 { return 0 })
		at, err := NewTensor(axesLT, axesData(axDT, axis))
		must(t, err)
		dt, _ := NewTensor(out, dst.bytes)
		must(t, c.Execute([]Tensor{st, at}, []Tensor{dt}))
		want, _ := reference(in, reduce, true, nil)
		checkOutput(t, dst, want, 1e-6)
	}
	// Bad axes values are errors, not crashes. An s64 axis is read whole:
	// 1<<32 and -1<<32+1 would be the valid 0 and 1 if cut to 32 bits.
	out := graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 1, 5})
	dt, _ := NewTensor(out, make([]float32, 20))
	bads := []int64{3, -4, 1 << 30}
	if axDT == dtypes.S64 {
		bads = append(bads, 1<<32, -1<<32+1, math.MaxInt64, math.MinInt64)
	}
	for _, bad := range bads {
		at, _ := NewTensor(axesLT, axesData(axDT, bad))
		if err := c.Execute([]Tensor{st, at}, []Tensor{dt}); !errors.Is(err, graph.InvalidArguments) {
			t.Errorf("axis %d: err = %v", bad, err)
		}
	}
	// Axes that do not match the output's dims.
	at, _ := NewTensor(axesLT, axesData(axDT, 0))
	if err := c.Execute([]Tensor{st, at}, []Tensor{dt}); !errors.Is(err, graph.InvalidShape) {
		t.Errorf("axes/dst mismatch: err = %v", err)
	}
	// The axes tensor's type is the compiled one.
	other := dtypes.S32
	if axDT == dtypes.S32 {
		other = dtypes.S64
	}
	wrong, _ := NewTensor(graph.NewLogicalTensor(2, other, []int64{1}), axesData(other, 1))
	if err := c.Execute([]Tensor{st, wrong}, []Tensor{dt}); !errors.Is(err, graph.InvalidDataType) {
		t.Errorf("%s axes tensor for a partition compiled with %s: err = %v", other, axDT, err)
	}
}

// chainGraph builds ReduceMean(keep_dims) over NCHW spatial dims followed
// by the given post-op ops (ids from 10; tensors from 10).
func chainGraph(t *testing.T, src graph.LogicalTensor, post func(g *graph.Graph, cur graph.LogicalTensor) graph.LogicalTensor) (*graph.Graph, graph.LogicalTensor) {
	t.Helper()
	g := graph.New()
	meanOut := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).AddOutput(meanOut).
		SetAttr("axes", []int64{2, 3}).SetAttr("keep_dims", true)))
	last := post(g, meanOut)
	must(t, g.Finalize())
	return g, last
}

func TestFusedChains(t *testing.T) {
	forEachISA(t, fusedChains)
}

func fusedChains(t *testing.T, isa jit.ISA) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 8, 5, 6})
	r := rand.New(rand.NewPCG(5, 6))
	in := newBuffer(src, uniform(r, -1, 1))

	t.Run("Subtract then Square", func(t *testing.T) {
		ref := graph.NewLogicalTensor(20, dtypes.F32, []int64{2, 8, 1, 1})
		g, last := chainGraph(t, src, func(g *graph.Graph, cur graph.LogicalTensor) graph.LogicalTensor {
			d := graph.NewLogicalTensorAny(11, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(10, graph.Subtract, "").AddInput(cur).AddInput(ref).AddOutput(d)))
			sq := graph.NewLogicalTensorAny(12, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(11, graph.Square, "").AddInput(d).AddOutput(sq)))
			return sq
		})
		refBuf := newBuffer(ref, uniform(r, -1, 1))
		runChain(t, isa, g, last, in, []buffer{refBuf}, []refPostOp{
			{f: func(x, b float64) float64 { return x - b }, operand: &refBuf},
			{f: func(x, _ float64) float64 { return x * x }},
		}, 3)
	})
	t.Run("Add per-channel bias then ReLU", func(t *testing.T) {
		bias := graph.NewLogicalTensor(20, dtypes.F32, []int64{1, 8, 1, 1})
		g, last := chainGraph(t, src, func(g *graph.Graph, cur graph.LogicalTensor) graph.LogicalTensor {
			d := graph.NewLogicalTensorAny(11, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(10, graph.Add, "").AddInput(bias).AddInput(cur).AddOutput(d)))
			o := graph.NewLogicalTensorAny(12, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(11, graph.ReLU, "").AddInput(d).AddOutput(o)))
			return o
		})
		biasBuf := newBuffer(bias, uniform(r, -0.5, 0.5))
		runChain(t, isa, g, last, in, []buffer{biasBuf}, []refPostOp{
			{f: func(x, b float64) float64 { return x + b }, operand: &biasBuf},
			{f: func(x, _ float64) float64 { return math.Max(x, 0) }},
		}, 3)
	})
	t.Run("scalar Multiply, Clamp, Sqrt, LeakyReLU", func(t *testing.T) {
		scale := graph.NewLogicalTensor(20, dtypes.BF16, []int64{1})
		g, last := chainGraph(t, src, func(g *graph.Graph, cur graph.LogicalTensor) graph.LogicalTensor {
			a := graph.NewLogicalTensorAny(11, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(10, graph.Multiply, "").AddInput(cur).AddInput(scale).AddOutput(a)))
			b := graph.NewLogicalTensorAny(12, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(11, graph.Clamp, "").AddInput(a).AddOutput(b).SetAttr("min", float32(-0.1)).SetAttr("max", float32(0.2))))
			c := graph.NewLogicalTensorAny(13, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(12, graph.Abs, "").AddInput(b).AddOutput(c)))
			d := graph.NewLogicalTensorAny(14, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(13, graph.Sqrt, "").AddInput(c).AddOutput(d)))
			e := graph.NewLogicalTensorAny(15, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(14, graph.LeakyReLU, "").AddInput(d).AddOutput(e).SetAttr("alpha", float32(0.1))))
			return e
		})
		scaleBuf := newBuffer(scale, func() float64 { return 3 })
		runChain(t, isa, g, last, in, []buffer{scaleBuf}, []refPostOp{
			{f: func(x, b float64) float64 { return x * b }, operand: &scaleBuf},
			{f: func(x, _ float64) float64 { return math.Min(math.Max(x, -0.1), 0.2) }},
			{f: func(x, _ float64) float64 { return math.Abs(x) }},
			{f: func(x, _ float64) float64 { return math.Sqrt(x) }},
			{f: func(x, _ float64) float64 { return x }},
		}, 6)
	})
	t.Run("RMSNorm's statistic: Add eps then Pow -0.5", func(t *testing.T) {
		eps := graph.NewLogicalTensor(20, dtypes.F32, []int64{1})
		g, last := chainGraph(t, src, func(g *graph.Graph, cur graph.LogicalTensor) graph.LogicalTensor {
			a := graph.NewLogicalTensorAny(11, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(10, graph.Add, "").AddInput(cur).AddInput(eps).AddOutput(a)))
			p := graph.NewLogicalTensorAny(12, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(11, graph.Pow, "").AddInput(a).AddOutput(p).SetAttr("beta", float32(-0.5))))
			c := graph.NewLogicalTensorAny(13, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(12, graph.Pow, "").AddInput(p).AddOutput(c).SetAttr("beta", float32(3))))
			return c
		})
		epsBuf := newBuffer(eps, func() float64 { return 2 })
		runChain(t, isa, g, last, in, []buffer{epsBuf}, []refPostOp{
			{f: func(x, b float64) float64 { return x + b }, operand: &epsBuf},
			{f: func(x, _ float64) float64 { return math.Pow(x, -0.5) }},
			{f: func(x, _ float64) float64 { return x * x * x }},
		}, 4)
	})
	t.Run("full-tensor Divide with strided operand", func(t *testing.T) {
		den := graph.NewLogicalTensorStrided(20, dtypes.F16, []int64{2, 8, 1, 1}, []int64{1, 2, 1, 1})
		g, last := chainGraph(t, src, func(g *graph.Graph, cur graph.LogicalTensor) graph.LogicalTensor {
			d := graph.NewLogicalTensorAny(11, dtypes.F32, nil)
			must(t, g.AddOp(graph.NewOp(10, graph.Divide, "").AddInput(cur).AddInput(den).AddOutput(d)))
			return d
		})
		denBuf := newBuffer(den, uniform(r, 1, 2))
		runChain(t, isa, g, last, in, []buffer{denBuf}, []refPostOp{
			{f: func(x, b float64) float64 { return x / b }, operand: &denBuf},
		}, 2)
	})
}

// runChain checks that the graph is one fused partition and that it
// computes the reference.
func runChain(t *testing.T, isa jit.ISA, g *graph.Graph, last graph.LogicalTensor, in buffer, operands []buffer, post []refPostOp, nOps int) {
	t.Helper()
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != nOps {
		t.Fatalf("want one supported partition of %d ops, got %v", nOps, parts)
	}
	p := parts[0]
	ins := []graph.LogicalTensor{in.lt}
	tensors := []Tensor{}
	st, _ := NewTensor(in.lt, in.bytes)
	tensors = append(tensors, st)
	for _, o := range operands {
		ins = append(ins, o.lt)
		ot, err := NewTensor(o.lt, o.bytes)
		must(t, err)
		tensors = append(tensors, ot)
	}
	c, err := p.Compile(ins, []graph.LogicalTensor{graph.NewLogicalTensorAny(last.ID, dtypes.F32, nil)})
	must(t, err)
	out, _ := c.QueryLogicalTensor(last.ID)
	dst := newBuffer(out, func() float64 { return 0 })
	dt, _ := NewTensor(out, dst.bytes)
	must(t, c.Execute(tensors, []Tensor{dt}))
	wantImpl(t, c, isa)
	want, _ := reference(in, []bool{false, false, true, true}, true, post)
	checkOutput(t, dst, want, 1e-5)

	// The debug policy splits the same graph into one partition per op.
	dparts, err := Get(g, Debug)
	must(t, err)
	if len(dparts) != nOps || !dparts[0].IsSupported() || dparts[1].IsSupported() {
		t.Fatalf("debug policy: %v", dparts)
	}
}

// TestUnfusedOpsSayWhy builds ReduceMean chains whose next op cannot be
// fused and checks that the op's own (unsupported) partition says why.
func TestUnfusedOpsSayWhy(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	cases := []struct {
		name       string
		next       func(mean graph.LogicalTensor) *graph.Op
		want       string
		sdt, meanT dtypes.DataType // zero: f32
	}{
		{"an integer chain tensor", func(m graph.LogicalTensor) *graph.Op {
			return graph.NewOp(2, graph.Add, "").AddInput(m).AddInput(graph.NewLogicalTensor(9, f32, []int64{4, 1})).
				AddOutput(graph.NewLogicalTensorAny(3, f32, nil))
		}, "it reads the chain's s32 output, which a fused chain never rounds mid-way", dtypes.S8, dtypes.S32},
		{"bf16 after an f32 src", func(m graph.LogicalTensor) *graph.Op {
			return graph.NewOp(2, graph.Add, "").AddInput(m).AddInput(graph.NewLogicalTensor(9, f32, []int64{4, 1})).
				AddOutput(graph.NewLogicalTensorAny(3, bf16, nil))
		}, "its output is bf16; with src f32 a fused chain must end in f32", 0, 0},
		{"mean on the right of a Subtract", func(m graph.LogicalTensor) *graph.Op {
			return graph.NewOp(2, graph.Subtract, "").AddInput(graph.NewLogicalTensor(9, f32, []int64{4, 1})).AddInput(m).
				AddOutput(graph.NewLogicalTensorAny(3, f32, nil))
		}, "right operand", 0, 0},
		{"operand that enlarges the output", func(m graph.LogicalTensor) *graph.Op {
			return graph.NewOp(2, graph.Add, "").AddInput(m).AddInput(graph.NewLogicalTensor(9, f32, []int64{4, 5})).
				AddOutput(graph.NewLogicalTensorAny(3, f32, nil))
		}, "do not broadcast onto 4x1", 0, 0},
		{"Pow with a beta gdnn does not compute", func(m graph.LogicalTensor) *graph.Op {
			return graph.NewOp(2, graph.Pow, "").AddInput(m).AddOutput(graph.NewLogicalTensorAny(3, f32, nil)).SetAttr("beta", float32(1.5))
		}, "it is Pow with beta 1.5, and gdnn computes x^beta for beta 0, 1, 2, 3, -1, -2, 0.5 and -0.5", 0, 0},
		{"mean times itself", func(m graph.LogicalTensor) *graph.Op {
			return graph.NewOp(2, graph.Multiply, "").AddInput(m).AddInput(m).AddOutput(graph.NewLogicalTensorAny(3, f32, nil))
		}, "both its operands are the chain's output", 0, 0},
	}
	for _, c := range cases {
		g := graph.New()
		sdt, meanT := cmp.Or(c.sdt, f32), cmp.Or(c.meanT, f32)
		mean := graph.NewLogicalTensorAny(1, meanT, nil)
		must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(graph.NewLogicalTensor(0, sdt, []int64{4, 5})).
			AddOutput(mean).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
		must(t, g.AddOp(c.next(mean)))
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		if len(parts) != 2 || !parts[0].IsSupported() || parts[1].IsSupported() {
			t.Fatalf("%s: partitions %v", c.name, parts)
		}
		if r := parts[1].Reason(); !strings.Contains(r, "not fused after op 1") || !strings.Contains(r, c.want) {
			t.Errorf("%s: reason %q, want it to say %q", c.name, r, c.want)
		}
	}
}

// TestUnfusedConsumersSayWhy: a chain tensor read by two ops fuses
// neither, and both say why (the mean's output, then a ReLU's).
func TestUnfusedConsumersSayWhy(t *testing.T) {
	f32 := dtypes.F32
	for _, midChain := range []bool{false, true} {
		g := graph.New()
		cur := graph.NewLogicalTensorAny(1, f32, nil)
		must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "mean").AddInput(graph.NewLogicalTensor(0, f32, []int64{4, 5})).
			AddOutput(cur).SetAttr("axes", []int64{1})))
		if midChain {
			r := graph.NewLogicalTensorAny(2, f32, nil)
			must(t, g.AddOp(graph.NewOp(2, graph.ReLU, "").AddInput(cur).AddOutput(r)))
			cur = r
		}
		must(t, g.AddOp(graph.NewOp(3, graph.Tanh, "").AddInput(cur).AddOutput(graph.NewLogicalTensorAny(3, f32, nil))))
		must(t, g.AddOp(graph.NewOp(4, graph.Sigmoid, "").AddInput(cur).AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		want := fmt.Sprintf("not fused after op 1 (ReduceMean \"mean\"): tensor %d has 2 consumers, and a fused chain keeps no intermediate result", cur.ID)
		saying := 0
		for _, p := range parts {
			if id := p.Ops()[0].ID; id == 3 || id == 4 {
				if !strings.Contains(p.Reason(), want) {
					t.Errorf("mid-chain %v: %v says %q, want %q", midChain, p, p.Reason(), want)
				}
				saying++
			}
		}
		if saying != 2 {
			t.Errorf("mid-chain %v: partitions %v", midChain, parts)
		}
	}
}

func TestUnsupportedOpsLeftToCaller(t *testing.T) {
	f32 := dtypes.F32
	g := graph.New()
	// MatMul -> ReduceMean -> SoftMax, and a ReduceSum on the side: the
	// MatMul is left to the caller, the SoftMax compiles alone.
	must(t, g.AddOp(graph.NewOp(1, graph.MatMul, "mm").AddInput(graph.NewLogicalTensor(0, f32, []int64{8, 16})).
		AddInput(graph.NewLogicalTensor(1, f32, []int64{16, 32})).AddOutput(graph.NewLogicalTensorAny(2, f32, nil))))
	must(t, g.AddOp(graph.NewOp(2, graph.ReduceMean, "mean").AddInput(graph.NewLogicalTensorAny(2, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(3, f32, nil)).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
	must(t, g.AddOp(graph.NewOp(3, graph.SoftMax, "sm").AddInput(graph.NewLogicalTensorAny(3, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
	must(t, g.AddOp(graph.NewOp(4, graph.ReduceSum, "sum").AddInput(graph.NewLogicalTensor(5, f32, []int64{4})).
		AddOutput(graph.NewLogicalTensorAny(6, f32, nil)).SetAttr("axes", []int64{0})))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 4 {
		t.Fatalf("%d partitions: %v", len(parts), parts)
	}
	var mean *Partition
	for _, p := range parts {
		switch p.Ops()[0].Kind {
		case graph.ReduceMean:
			mean = p
			if !p.IsSupported() || len(p.Ops()) != 1 {
				t.Errorf("mean partition: %v", p)
			}
		case graph.SoftMax:
			// A partition of its own: not fused after the mean.
			if !p.IsSupported() || len(p.Ops()) != 1 {
				t.Errorf("softmax partition: %v", p)
			}
		case graph.MatMul:
			if p.IsSupported() || !strings.Contains(p.Reason(), "does not compile") {
				t.Errorf("%v", p)
			}
			if _, err := p.Compile(p.Inputs(), p.Outputs()); !errors.Is(err, graph.Unimplemented) {
				t.Errorf("compiling %v: %v", p, err)
			}
		case graph.ReduceSum:
			if !p.IsSupported() || len(p.Ops()) != 1 {
				t.Errorf("sum partition: %v", p)
			}
		}
	}
	// The mean partition's input is the MatMul's output (dims inferred 8x32).
	in := mean.Inputs()[0]
	if in.ID != 2 || graph.DimsString(in.Dims) != "8x32" {
		t.Fatalf("mean input port %v", in)
	}
	src := graph.NewLogicalTensor(2, f32, []int64{8, 32})
	c, err := mean.Compile([]graph.LogicalTensor{src}, mean.Outputs())
	must(t, err)
	out, _ := c.QueryLogicalTensor(3)
	if graph.DimsString(out.Dims) != "8x1" {
		t.Fatalf("out %v", out)
	}
	data := make([]float32, 256)
	for i := range data {
		data[i] = float32(i % 32)
	}
	got := make([]float32, 8)
	st, _ := NewTensor(src, data)
	dt, _ := NewTensor(out, got)
	must(t, c.Execute([]Tensor{st}, []Tensor{dt}))
	for _, v := range got {
		if v != 15.5 {
			t.Fatalf("got %v", got)
		}
	}
}

func TestConcurrentExecute(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{16, 64, 7})
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, false)
	p := onlySupported(t, g, Fusion)
	c, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	must(t, err)
	out, _ := c.QueryLogicalTensor(1)
	r := rand.New(rand.NewPCG(9, 9))
	in := newBuffer(src, uniform(r, -1, 1))
	want, _ := reference(in, []bool{false, true, false}, false, nil)
	st, _ := NewTensor(src, in.bytes)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]float32, out.NumElements())
			dt, _ := NewTensor(out, got)
			for range 20 {
				if err := c.Execute([]Tensor{st}, []Tensor{dt}); err != nil {
					errs <- err
					return
				}
				for i, w := range want {
					if math.Abs(float64(got[i])-w) > 1e-6*math.Abs(w)+1e-7 {
						errs <- fmt.Errorf("got[%d] = %v, want %v", i, got[i], w)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// checkTopological asserts that every partition's inputs are graph inputs
// or outputs of earlier partitions.
func checkTopological(t *testing.T, g *graph.Graph, parts []*Partition) {
	t.Helper()
	ready := map[uint64]bool{}
	for _, p := range parts {
		for _, in := range p.Inputs() {
			if g.Producer(in.ID) != nil && !ready[in.ID] {
				t.Errorf("%v reads tensor %d before its producer's partition", p, in.ID)
			}
		}
		for _, op := range p.Ops() {
			for _, o := range op.Outputs {
				ready[o.ID] = true
			}
		}
	}
}

// A binary post-op whose other operand comes from an op later in the
// graph's order fuses as one before it does: the producer's partition
// comes first, and the partitions stay in topological order.
func TestFusionKeepsTopologicalOrder(t *testing.T) {
	f32 := dtypes.F32
	src := graph.NewLogicalTensor(0, f32, []int64{4, 8})
	mean := graph.NewLogicalTensorAny(1, f32, nil)
	x := graph.NewLogicalTensor(2, f32, []int64{4, 1})
	producer := graph.NewOp(2, graph.Wildcard, "makes x").AddOutput(x)
	reduce := graph.NewOp(1, graph.ReduceMean, "mean").AddInput(src).AddOutput(mean).
		SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)
	add := graph.NewOp(3, graph.Add, "add").AddInput(mean).AddInput(x).AddOutput(graph.NewLogicalTensorAny(3, f32, nil))
	for _, c := range []struct {
		name  string
		order []*graph.Op
		fused bool
	}{
		{"operand produced after the mean", []*graph.Op{reduce, producer, add}, true},
		{"operand produced before the mean", []*graph.Op{producer, reduce, add}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			for _, op := range c.order {
				must(t, g.AddOp(op))
			}
			must(t, g.Finalize())
			parts, err := Get(g, Fusion)
			must(t, err)
			checkTopological(t, g, parts)
			var meanPart *Partition
			for _, p := range parts {
				if p.Ops()[0].Kind == graph.ReduceMean {
					meanPart = p
				}
			}
			if fused := len(meanPart.Ops()) == 2; fused != c.fused {
				t.Fatalf("fused = %v, want %v: %v", fused, c.fused, parts)
			}
		})
	}
}

// The compile line of GDNN_VERBOSE speaks in the user's terms: the
// implementation, tensors (type, dims, strides), axes and ops.
func TestVerboseLine(t *testing.T) {
	src := graph.NewLogicalTensorStrided(0, dtypes.BF16, []int64{2, 8, 5, 6}, []int64{240, 1, 48, 8})
	g := meanGraph(t, dtypes.BF16, dtypes.F32, src, []int64{2, 3}, false)
	c, err := onlySupported(t, g, Fusion).Compile([]graph.LogicalTensor{src},
		[]graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	must(t, err)
	line := c.verboseLine(1500 * time.Microsecond)
	want := "gdnn_verbose,compile,cpu,partition," + c.Impl() + ",0,bf16:2x8x5x6:240x1x48x8 dst_f32:2x8:8x1,axes:2x3 alg:mean,ReduceMean,1.5000"
	if r := c.Reason(); r != "" { // no JIT here (TestReasonSaysWhyTheInterpreterRuns checks the suffix)
		want += "," + r
	}
	if line != want {
		t.Errorf("verbose line\n%s\nwant\n%s", line, want)
	}
}

// Axes print as the numbers the user gave: a negative axis is not an
// unknown dim ("?"), and empty axes (the identity) say "none".
func TestVerboseLineAxes(t *testing.T) {
	for _, c := range []struct {
		axes []int64
		keep bool
		want string
	}{
		{[]int64{-1}, false, ",axes:-1 alg:mean,"},
		{[]int64{0, -1}, true, ",axes:0x-1 keep_dims alg:mean,"},
		{[]int64{-2}, false, ",axes:-2 alg:mean,"},
		{[]int64{}, false, ",axes:none alg:mean,"},
	} {
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{3, 4})
		g := meanGraph(t, dtypes.F32, dtypes.F32, src, c.axes, c.keep)
		cp, err := onlySupported(t, g, Fusion).Compile([]graph.LogicalTensor{src},
			[]graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
		must(t, err)
		if line := cp.verboseLine(time.Millisecond); !strings.Contains(line, c.want) {
			t.Errorf("axes %v: verbose line %s, want it to contain %q", c.axes, line, c.want)
		}
	}
}

// With run-time axes, the partition says which output dims it expects for
// given axes: QueryLogicalTensorWithAxes describes the output, and a wrong
// output at Execute is told the dims those axes give, not "?".
func TestRunTimeAxesExpectedOutput(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6, 5})
	for _, keep := range []bool{false, true} {
		for _, axDT := range []dtypes.DataType{dtypes.S32, dtypes.S64} {
			axesLT := graph.NewLogicalTensor(2, axDT, []int64{1})
			p := runTimeAxesPartition(t, graph.ReduceMean, src, axesLT, keep)
			c, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
			must(t, err)
			open, err := c.QueryLogicalTensor(1)
			must(t, err)
			if open.KnownDims() {
				t.Fatalf("QueryLogicalTensor gives %v for an output the axes decide", open)
			}
			in := newBuffer(src, uniform(newRand(5), -1, 1))
			st, _ := NewTensor(src, in.bytes)
			for _, axis := range []int64{0, 1, -1} {
				reduce, _ := shape.NormalizeAxes(p.Ops()[0], p.Ops()[0].Inputs[0].ID, []int64{axis}, 3)
				want := shape.ReduceDims(src.Dims, reduce, keep)
				out, err := c.QueryLogicalTensorWithAxes(1, []int64{axis})
				must(t, err)
				if !slices.Equal(out.Dims, want) || !out.Concrete() || out.DataType != dtypes.F32 {
					t.Fatalf("keep %v axis %d: %v, want dims %v, dense", keep, axis, out, want)
				}
				// A tensor made from it is what Execute takes.
				dst := newBuffer(out, func() float64 { return 0 })
				dt, _ := NewTensor(out, dst.bytes)
				at, _ := NewTensor(axesLT, axesData(axDT, axis))
				must(t, c.Execute([]Tensor{st, at}, []Tensor{dt}))
				if msg := verifyOutput(in, reduce, keep, nil, dst); msg != "" {
					t.Fatalf("keep %v axis %d: %s", keep, axis, msg)
				}
				// Inputs are as compiled, whatever the axes.
				if got, err := c.QueryLogicalTensorWithAxes(0, []int64{axis}); err != nil || !slices.Equal(got.Dims, src.Dims) {
					t.Errorf("src for axis %d: %v, %v", axis, got, err)
				}
			}
			// A dst of the wrong dims (even the wrong rank) is told what
			// the axes want.
			for _, wrong := range [][]int64{{4, 6, 5}, {6}, {1, 1}} {
				out := graph.NewLogicalTensor(1, dtypes.F32, wrong)
				dt, _ := NewTensor(out, make([]float32, out.NumElements()))
				at, _ := NewTensor(axesLT, axesData(axDT, -1))
				err := c.Execute([]Tensor{st, at}, []Tensor{dt})
				want := "4x6"
				if keep {
					want = "4x6x1"
				}
				msg := fmt.Sprintf("output tensor 1 has dims %s; for axes [-1] the partition gives %s", graph.DimsString(wrong), want)
				if !errors.Is(err, graph.InvalidShape) || !strings.Contains(fmt.Sprint(err), msg) {
					t.Errorf("keep %v, dst %v: err = %v, want %q", keep, wrong, err, msg)
				}
			}
			// Refusals: bad axes, the wrong count, a tensor that is not a port.
			for _, bad := range []struct {
				id     uint64
				axes   []int64
				status graph.Status
				msg    string
			}{
				{1, []int64{3}, graph.InvalidArguments, "out of range"},
				{1, []int64{-4}, graph.InvalidArguments, "out of range"},
				{1, []int64{0, 1}, graph.InvalidArguments, "2 axes given; the axes tensor 2 holds 1"},
				{1, nil, graph.InvalidArguments, "0 axes given; the axes tensor 2 holds 1"},
				{9, []int64{0}, graph.InvalidArguments, "tensor 9 is not a port"},
			} {
				if _, err := c.QueryLogicalTensorWithAxes(bad.id, bad.axes); !errors.Is(err, bad.status) || !strings.Contains(fmt.Sprint(err), bad.msg) {
					t.Errorf("QueryLogicalTensorWithAxes(%d, %v): err = %v, want %v saying %q", bad.id, bad.axes, err, bad.status, bad.msg)
				}
			}
		}
	}
}

// An output compiled with concrete dims under run-time axes: axes that
// give other dims are told so, by QueryLogicalTensorWithAxes and Execute.
func TestRunTimeAxesCompiledOutput(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6})
	axesLT := graph.NewLogicalTensor(2, dtypes.S64, []int64{1})
	p := runTimeAxesPartition(t, graph.ReduceMean, src, axesLT, false)
	out := graph.NewLogicalTensor(1, dtypes.F32, []int64{4})
	c, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{out})
	must(t, err)
	if got, err := c.QueryLogicalTensorWithAxes(1, []int64{1}); err != nil || !slices.Equal(got.Dims, []int64{4}) {
		t.Errorf("axis 1: %v, %v", got, err)
	}
	const msg = "output tensor 1 was compiled with dims 4; for axes [0] the partition gives 6"
	if _, err := c.QueryLogicalTensorWithAxes(1, []int64{0}); !errors.Is(err, graph.InvalidShape) || !strings.Contains(fmt.Sprint(err), msg) {
		t.Errorf("axis 0: err = %v, want %q", err, msg)
	}
	st, _ := NewTensor(src, make([]float32, 24))
	at, _ := NewTensor(axesLT, []int64{0})
	dt, _ := NewTensor(out, make([]float32, 4))
	if err := c.Execute([]Tensor{st, at}, []Tensor{dt}); !errors.Is(err, graph.InvalidShape) || !strings.Contains(fmt.Sprint(err), msg) {
		t.Errorf("Execute with axis 0: err = %v, want %q", err, msg)
	}
}

// A partition with attribute axes has no run-time axes to ask about.
func TestQueryLogicalTensorWithAxesAttribute(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6})
	g := meanGraph(t, dtypes.F32, dtypes.F32, src, []int64{1}, false)
	c, err := onlySupported(t, g, Fusion).Compile([]graph.LogicalTensor{src},
		[]graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	must(t, err)
	if _, err := c.QueryLogicalTensorWithAxes(1, []int64{1}); !errors.Is(err, graph.InvalidArguments) ||
		!strings.Contains(err.Error(), "axes as an attribute") {
		t.Errorf("err = %v", err)
	}
	var nilC *CompiledPartition
	if _, err := nilC.QueryLogicalTensorWithAxes(1, []int64{1}); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("nil: err = %v", err)
	}
}

// TestRunTimeAxesOpenOutputLayouts: with run-time axes and an output
// compiled without dims, Execute takes the output's strides as given; the
// partition keeps one kernel per axes value and output layout and uses it
// again (so later executes compile nothing), and a padded output gets a
// kernel of its own.
func TestRunTimeAxesOpenOutputLayouts(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{4, 6, 5})
	axesLT := graph.NewLogicalTensor(2, dtypes.S32, []int64{1})
	p := runTimeAxesPartition(t, graph.ReduceSum, src, axesLT, false)
	c, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
	must(t, err)
	in := newBuffer(src, uniform(newRand(6), -1, 1))
	st, _ := NewTensor(src, in.bytes)
	at, _ := NewTensor(axesLT, []int32{1})
	reduce := []bool{false, true, false}
	dense := graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 5})
	padded := graph.NewLogicalTensorStrided(1, dtypes.F32, []int64{4, 5}, []int64{8, 1})
	kernels := func() int {
		c.run.mu.Lock()
		defer c.run.mu.Unlock()
		return len(c.run.byAxes)
	}
	for i, c2 := range []struct {
		out  graph.LogicalTensor
		want int
	}{{dense, 1}, {dense, 1}, {padded, 2}, {dense, 2}, {padded, 2}} {
		dst := newBuffer(c2.out, func() float64 { return 0 })
		dt, _ := NewTensor(c2.out, dst.bytes)
		must(t, c.Execute([]Tensor{st, at}, []Tensor{dt}))
		if msg := verifyKind(redKind{red: graph.ReduceSum}, in, reduce, false, nil, dst); msg != "" {
			t.Fatalf("execute %d, output strides %v: %s", i, c2.out.Strides, msg)
		}
		if n := kernels(); n != c2.want {
			t.Errorf("after execute %d (output strides %v) the partition keeps %d kernels, want %d", i, c2.out.Strides, n, c2.want)
		}
	}
}

// TestReasonSaysWhyTheInterpreterRuns: a supported partition the JIT
// cannot take runs on the interpreter (nothing fails), and Reason and the
// verbose compile line say so, with the cause; where the JIT runs all of
// it, both say nothing. The cause here is a loop nest deeper than the
// emitters': rank 12 with alternating reduced and kept dims gives 6 outer
// and 6 reduced loops, which no merging shortens. With run-time axes the
// kernel is chosen at Execute, and Reason follows it; a blocked kernel
// gives its boxes' cause.
func TestReasonSaysWhyTheInterpreterRuns(t *testing.T) {
	f32 := dtypes.F32
	deepDims := []int64{2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	alternate := []int64{1, 3, 5, 7, 9, 11}
	const depth = "6 outer and 6 reduced loops exceed the supported depth"
	jitHere := jit.EffectiveISA() != jit.None
	compile := func(src graph.LogicalTensor, axes []int64) *CompiledPartition {
		t.Helper()
		p := onlySupported(t, meanGraph(t, f32, f32, src, axes, true), Fusion)
		cp, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, f32, nil)})
		must(t, err)
		return cp
	}
	deep := compile(graph.NewLogicalTensor(0, f32, deepDims), alternate)
	r := deep.Reason()
	if deep.Impl() != "interp" || !strings.HasPrefix(r, "interpreter: ") || jitHere && !strings.Contains(r, depth) {
		t.Errorf("rank 12, alternating axes: Impl %s, Reason %q; want interp, and the loop depth where a JIT exists", deep.Impl(), r)
	}
	if line := deep.verboseLine(0); !strings.HasSuffix(line, ","+r) {
		t.Errorf("verbose line %s\nwant it to end with the reason %q", line, r)
	}
	if jitHere {
		shallow := compile(graph.NewLogicalTensor(0, f32, []int64{2, 3, 4}), []int64{1})
		if r := shallow.Reason(); r != "" || strings.Contains(shallow.verboseLine(0), "interpreter") {
			t.Errorf("2x3x4 over axis 1 (%s): Reason %q, verbose line %s; want neither to name the interpreter",
				shallow.Impl(), r, shallow.verboseLine(0))
		}
	}
	// It still runs, and correctly: the interpreter is a fallback, not an
	// error.
	in := make([]float32, 1<<12)
	for i := range in {
		in[i] = float32(i % 7)
	}
	st, err := NewTensor(graph.NewLogicalTensor(0, f32, deepDims), in)
	must(t, err)
	out, err := deep.QueryLogicalTensor(1)
	must(t, err)
	res := make([]float32, out.NumElements())
	dt, err := NewTensor(out, res)
	must(t, err)
	must(t, deep.Execute([]Tensor{st}, []Tensor{dt}))

	// Capped to no JIT: the cause is the cap.
	prev := jit.SetMaxISA(jit.None)
	defer jit.SetMaxISA(prev)
	capped := compile(graph.NewLogicalTensor(0, f32, []int64{2, 3, 4}), []int64{1})
	if r := capped.Reason(); !strings.HasPrefix(r, "interpreter: ") || jitHere && !strings.Contains(r, "ISA capped to none") {
		t.Errorf("capped to none: Reason %q", r)
	}
	jit.SetMaxISA(prev)

	// Run-time axes: nothing before an Execute, then the cause of the
	// kernel that Execute used.
	src := graph.NewLogicalTensor(0, f32, deepDims)
	axesLT := graph.NewLogicalTensor(2, dtypes.S64, []int64{6})
	rt, err := runTimeAxesPartition(t, graph.ReduceSum, src, axesLT, true).Compile(
		[]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, f32, nil)})
	must(t, err)
	if r := rt.Reason(); r != "" {
		t.Errorf("run-time axes before any Execute: Reason %q, want \"\"", r)
	}
	at, err := NewTensor(axesLT, alternate)
	must(t, err)
	rtOut, err := rt.QueryLogicalTensorWithAxes(1, alternate)
	must(t, err)
	ot, err := NewTensor(rtOut, make([]float32, rtOut.NumElements()))
	must(t, err)
	must(t, rt.Execute([]Tensor{st, at}, []Tensor{ot}))
	if r := rt.Reason(); rt.Impl() != "interp" || !strings.HasPrefix(r, "interpreter: ") || jitHere && !strings.Contains(r, depth) {
		t.Errorf("run-time axes after an Execute: Impl %s, Reason %q", rt.Impl(), r)
	}

	// A blocked kernel: its reduction boxes' cause.
	jit.SetMaxISA(jit.None)
	bsrc := graph.NewLogicalTensorBlocked(0, f32, []int64{2, 20, 3}, "aBx16b")
	bp := blockedGraph(t, graph.ReduceSum, bsrc, graph.NewLogicalTensorAny(1, f32, nil), []int64{2}, true, nil)
	bcp, err := bp.Compile([]graph.LogicalTensor{bsrc}, []graph.LogicalTensor{graph.NewLogicalTensorBlocked(1, f32, []int64{2, 20, 1}, "aBx16b")})
	must(t, err)
	if r := bcp.Reason(); !strings.HasPrefix(r, "interpreter: reduction: ") || jitHere && !strings.Contains(r, "ISA capped to none") {
		t.Errorf("blocked, capped to none: Reason %q", r)
	}
}

package partition

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// sumGraph builds src(0) -> ReduceSum(axes, keep_dims) -> Add(acc) ->
// ReLU -> dst: the reduction accumulated into acc, a tensor of the dst's
// shape (oneDNN's sum post-op, then an eltwise one), computed in src's
// type (f32 for 8-bit src). It returns the graph, acc and dst (dst
// with acc's layout).
func sumGraph(t *testing.T, src graph.LogicalTensor, axes []int64, ddt, accDT dtypes.DataType, accStrides []int64) (*graph.Graph, graph.LogicalTensor, graph.LogicalTensor) {
	t.Helper()
	dims := append([]int64(nil), src.Dims...)
	for _, a := range axes {
		dims[a] = 1
	}
	acc := graph.NewLogicalTensorStrided(5, accDT, dims, accStrides)
	dst := graph.NewLogicalTensorStrided(3, ddt, dims, accStrides)
	mid := src.DataType // the chain computes in src's float type, or f32
	if !mid.IsFloat() {
		mid = dtypes.F32
	}
	g := graph.New()
	must(t, g.AddOp(graph.NewOp(0, graph.ReduceSum, "sum").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(1, mid, nil)).SetAttr("axes", axes).SetAttr("keep_dims", true)))
	must(t, g.AddOp(graph.NewOp(1, graph.Add, "acc").AddInput(graph.NewLogicalTensorAny(1, mid, nil)).AddInput(acc).
		AddOutput(graph.NewLogicalTensorAny(2, mid, nil))))
	must(t, g.AddOp(graph.NewOp(2, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(2, mid, nil)).AddOutput(dst)))
	must(t, g.Finalize())
	return g, acc, dst
}

// TestInPlaceAdd runs reductions accumulated in place (the Add's second
// operand given as the output's own buffer) on every ISA cap, with shapes
// the runtime splits (blocks, tiles, two stages; a padded and a permuted
// dst), bf16 and f16 outputs whose operand is read as the other 16-bit
// type, integer outputs of s8 data whose operand is read as their
// integers or as another type of their size, and checks each output
// against the float64 reference computed from the values dst held before
// the run.
func TestInPlaceAdd(t *testing.T) {
	type tc struct {
		dims   []int64
		axes   []int64
		ddt    dtypes.DataType
		accDT  dtypes.DataType
		layout func(dims []int64) []int64 // dst strides; nil: dense
	}
	padded := func(dims []int64) []int64 { // rows padded by 3 elements
		st := make([]int64, len(dims))
		s := int64(1)
		for i := len(dims) - 1; i >= 0; i-- {
			st[i] = s
			s *= dims[i]
			if i == len(dims)-1 {
				s += 3
			}
		}
		return st
	}
	permuted := func(dims []int64) []int64 { // dims 0 and 1 swapped in memory
		st := graph.DenseStrides(dims)
		st[0], st[1] = dims[1], dims[0]*dims[1]
		for i := 2; i < len(dims); i++ {
			st[0] *= dims[i]
			st[1] *= dims[i]
		}
		return st
	}
	cases := []tc{
		{dims: []int64{37, 300}, axes: []int64{1}, ddt: dtypes.F32, accDT: dtypes.F32},
		{dims: []int64{600, 333}, axes: []int64{0}, ddt: dtypes.F32, accDT: dtypes.F32},
		{dims: []int64{3, 400000}, axes: []int64{1}, ddt: dtypes.F32, accDT: dtypes.F32},
		{dims: []int64{9, 130, 17}, axes: []int64{1}, ddt: dtypes.F32, accDT: dtypes.F32, layout: padded},
		{dims: []int64{9, 13, 170}, axes: []int64{2}, ddt: dtypes.F32, accDT: dtypes.F32, layout: permuted},
		{dims: []int64{64, 515}, axes: []int64{1}, ddt: dtypes.BF16, accDT: dtypes.BF16},
		{dims: []int64{64, 515}, axes: []int64{1}, ddt: dtypes.BF16, accDT: dtypes.F16},
		{dims: []int64{515, 64}, axes: []int64{0}, ddt: dtypes.F16, accDT: dtypes.BF16},
		{dims: []int64{7, 5}, axes: nil, ddt: dtypes.F32, accDT: dtypes.F32},
		// Integer dst (s8 src): the operand read as the dst's integers,
		// or as another type of their size.
		{dims: []int64{37, 300}, axes: []int64{1}, ddt: dtypes.S32, accDT: dtypes.S32},
		{dims: []int64{600, 333}, axes: []int64{0}, ddt: dtypes.S8, accDT: dtypes.S8},
		{dims: []int64{3, 400000}, axes: []int64{1}, ddt: dtypes.U8, accDT: dtypes.U8},
		{dims: []int64{64, 515}, axes: []int64{1}, ddt: dtypes.S8, accDT: dtypes.U8},
		{dims: []int64{9, 130, 17}, axes: []int64{1}, ddt: dtypes.S32, accDT: dtypes.F32, layout: padded},
		{dims: []int64{9, 13, 170}, axes: []int64{2}, ddt: dtypes.U8, accDT: dtypes.U8, layout: permuted},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(24, 1))
		for i, c := range cases {
			sdt, lo, hi := c.ddt, -1.0, 1.0
			if sdt.IsInt() {
				// gdnn stores integers from 8-bit data.
				sdt, lo, hi = dtypes.S8, -100, 100
			}
			src := graph.NewLogicalTensor(0, sdt, c.dims)
			dims := append([]int64(nil), c.dims...)
			reduced := make([]bool, len(dims))
			for _, a := range c.axes {
				dims[a], reduced[a] = 1, true
			}
			st := graph.DenseStrides(dims)
			if c.layout != nil {
				st = c.layout(dims)
			}
			g, acc, dst := sumGraph(t, src, c.axes, c.ddt, c.accDT, st)
			p := onlySupported(t, g, Fusion)
			cp, err := p.Compile([]graph.LogicalTensor{src, acc}, []graph.LogicalTensor{dst})
			must(t, err)
			wantImpl(t, cp, isa)
			in := newBuffer(src, uniform(r, lo, hi))
			prev := newBuffer(acc, func() float64 { return float64(r.IntN(33)-16) / 4 })
			st0, err := NewTensor(src, in.bytes)
			must(t, err)
			buf := append([]byte(nil), prev.bytes...)
			at, err := NewTensor(acc, buf)
			must(t, err)
			dt, err := NewTensor(dst, buf)
			must(t, err)
			must(t, cp.Execute([]Tensor{st0, at}, []Tensor{dt}))

			means, _ := reference(in, reduced, true, nil)
			n := 1.0
			for _, a := range c.axes {
				n *= float64(c.dims[a])
			}
			tol := 1e-5
			if c.ddt != dtypes.F32 {
				tol = 1.0 / 64
			}
			k := 0
			forEachIndex(dims, func(idx []int64) {
				off := offset(idx, st)
				want := math.Max(means[k]*n+load(c.accDT, prev.bytes, off), 0)
				got := load(c.ddt, buf, off)
				bad := math.Abs(got-want) > tol*max(1, math.Abs(want))
				if c.ddt.IsInt() {
					// Rounded to nearest even from an f32 within tol.
					lo, hi := storeAs(c.ddt, float32(want-tol*max(1, math.Abs(want)))), storeAs(c.ddt, float32(want+tol*max(1, math.Abs(want))))
					bad = got < lo || got > hi
				}
				if bad {
					t.Fatalf("case %d %v over %v %v (acc %v): output %v = %v, want %v", i, c.dims, c.axes, c.ddt, c.accDT, idx, got, want)
				}
				k++
			})
		}
	})
}

// TestInPlaceRefused: an input sharing the output's memory any other way
// than as a dst-shaped Add operand given as the output itself is an
// InvalidArguments error, and the output is left untouched.
func TestInPlaceRefused(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{8, 16})
	dense := []int64{1, 1}
	g, acc, dst := sumGraph(t, src, []int64{1}, dtypes.F32, dtypes.F32, dense)
	cp, err := onlySupported(t, g, Fusion).Compile([]graph.LogicalTensor{src, acc}, []graph.LogicalTensor{dst})
	must(t, err)
	mem := make([]float32, 256)
	srcBuf := make([]float32, 8*16)
	tensor := func(lt graph.LogicalTensor, b []float32) Tensor {
		tt, err := NewTensor(lt, b)
		must(t, err)
		return tt
	}
	for _, c := range []struct {
		name     string
		src, acc []float32
		dst      []float32
	}{
		{"operand one element past dst", srcBuf, mem[1:9], mem[0:8]},
		{"operand one element before dst", srcBuf, mem[0:8], mem[1:9]},
		{"src sharing dst", mem[: 8*16 : 8*16], mem[20:28], mem[:8]},
	} {
		if len(c.src) < 8*16 {
			c.src = append(c.src, make([]float32, 8*16-len(c.src))...)
		}
		before := fmt.Sprint(mem)
		err := cp.Execute([]Tensor{tensor(src, c.src), tensor(acc, c.acc)}, []Tensor{tensor(dst, c.dst)})
		if !errors.Is(err, graph.InvalidArguments) {
			t.Errorf("%s: got %v, want InvalidArguments", c.name, err)
		}
		if fmt.Sprint(mem) != before {
			t.Errorf("%s: the output was written", c.name)
		}
	}

	// A scalar (broadcast) operand over the output's buffer.
	g2 := graph.New()
	out := graph.NewLogicalTensor(3, dtypes.F32, []int64{8, 1})
	must(t, g2.AddOp(graph.NewOp(0, graph.ReduceSum, "sum").AddInput(src).
		AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
	must(t, g2.AddOp(graph.NewOp(1, graph.Add, "b").AddInput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).
		AddInput(graph.NewLogicalTensor(5, dtypes.F32, []int64{1, 1})).AddOutput(out)))
	must(t, g2.Finalize())
	scalar := graph.NewLogicalTensor(5, dtypes.F32, []int64{1, 1})
	cp2, err := onlySupported(t, g2, Fusion).Compile([]graph.LogicalTensor{src, scalar}, []graph.LogicalTensor{out})
	must(t, err)
	err = cp2.Execute([]Tensor{tensor(src, srcBuf), tensor(scalar, mem[:1])}, []Tensor{tensor(out, mem[:8])})
	if !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("a broadcast operand on the output's buffer: got %v, want InvalidArguments", err)
	}
}

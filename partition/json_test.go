package partition

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/shape"
)

// sharedGraphDir holds oneDNN's benchdnn graph cases; CI lays shared/
// beside the checkout.
var sharedGraphDir = filepath.Join("..", "..", "shared", "benchdnn-inputs", "graph")

func loadCase(t *testing.T, rel string) *graph.Graph {
	t.Helper()
	f, err := os.Open(filepath.Join(sharedGraphDir, rel))
	if err != nil {
		t.Fatalf("oneDNN's graph cases are expected beside the checkout: %v", err)
	}
	defer f.Close()
	g, err := graph.ReadJSON(f)
	must(t, err)
	must(t, g.Finalize())
	return g
}

func TestOneDNNReduceMeanJSON(t *testing.T) {
	forEachISA(t, oneDNNReduceMeanJSON)
}

func TestOneDNNMeanFusionJSON(t *testing.T) {
	forEachISA(t, oneDNNMeanFusionJSON)
}

func oneDNNReduceMeanJSON(t *testing.T, isa jit.ISA) {
	g := loadCase(t, "op/f32/reducemean.json")
	p := onlySupported(t, g, Fusion)
	in := p.Inputs()
	if len(in) != 1 || graph.DimsString(in[0].Dims) != "1x128x150x150" {
		t.Fatalf("inputs %v", in)
	}
	c, err := p.Compile(in, p.Outputs())
	must(t, err)
	out, _ := c.QueryLogicalTensor(p.Outputs()[0].ID)
	r := rand.New(rand.NewPCG(11, 12))
	src := newBuffer(in[0], uniform(r, -1, 1))
	dst := newBuffer(out, func() float64 { return 0 })
	st, _ := NewTensor(in[0], src.bytes)
	dt, _ := NewTensor(out, dst.bytes)
	must(t, c.Execute([]Tensor{st}, []Tensor{dt}))
	wantImpl(t, c, isa)
	want, _ := reference(src, []bool{false, true, false, false}, true, nil)
	checkOutput(t, dst, want, 1e-6)
}

func oneDNNMeanFusionJSON(t *testing.T, isa jit.ISA) {
	g := loadCase(t, "pattern/f32/reduction_post_ops_mean_fusion.json")
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != 2 {
		t.Fatalf("want ONE supported partition of ReduceMean -> Add, got %v", parts)
	}
	p := parts[0]
	in := p.Inputs()
	if len(in) != 2 {
		t.Fatalf("inputs %v", in)
	}
	c, err := p.Compile(in, p.Outputs())
	must(t, err)
	out, _ := c.QueryLogicalTensor(p.Outputs()[0].ID)
	r := rand.New(rand.NewPCG(13, 14))
	src := newBuffer(in[0], uniform(r, -1, 1))
	addend := newBuffer(in[1], uniform(r, -1, 1))
	dst := newBuffer(out, func() float64 { return 0 })
	st, _ := NewTensor(in[0], src.bytes)
	at, _ := NewTensor(in[1], addend.bytes)
	dt, _ := NewTensor(out, dst.bytes)
	must(t, c.Execute([]Tensor{st, at}, []Tensor{dt}))
	wantImpl(t, c, isa)
	want, _ := reference(src, []bool{false, true, false, false}, true, []refPostOp{
		{f: func(x, b float64) float64 { return x + b }, operand: &addend},
	})
	checkOutput(t, dst, want, 1e-6)

	// The same case in bf16 and f16, as benchdnn's --dt would rewrite it.
	for _, dt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
		g := graph.New()
		mean := p.Ops()[0]
		add := p.Ops()[1]
		retype := func(ts []graph.LogicalTensor) []graph.LogicalTensor {
			out := make([]graph.LogicalTensor, len(ts))
			for i, x := range ts {
				out[i] = x.Clone()
				out[i].DataType = dt
			}
			return out
		}
		m := graph.NewOp(mean.ID, mean.Kind, mean.Name).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)
		m.Inputs, m.Outputs = retype(mean.Inputs), retype(mean.Outputs)
		a := graph.NewOp(add.ID, add.Kind, add.Name).SetAttr("auto_broadcast", "none")
		a.Inputs, a.Outputs = retype(add.Inputs), retype(add.Outputs)
		must(t, g.AddOp(m))
		must(t, g.AddOp(a))
		must(t, g.Finalize())
		q := onlySupported(t, g, Fusion)
		c, err := q.Compile(q.Inputs(), q.Outputs())
		must(t, err)
		qin := q.Inputs()
		out, _ := c.QueryLogicalTensor(q.Outputs()[0].ID)
		src := newBuffer(qin[0], uniform(r, -1, 1))
		addend := newBuffer(qin[1], uniform(r, -1, 1))
		dst := newBuffer(out, func() float64 { return 0 })
		st, _ := NewTensor(qin[0], src.bytes)
		at, _ := NewTensor(qin[1], addend.bytes)
		dtt, _ := NewTensor(out, dst.bytes)
		must(t, c.Execute([]Tensor{st, at}, []Tensor{dtt}))
		wantImpl(t, c, isa)
		want, _ := reference(src, []bool{false, true, false, false}, true, []refPostOp{
			{f: func(x, b float64) float64 { return x + b }, operand: &addend},
		})
		checkOutput(t, dst, want, 1e-6)
		if math.IsNaN(load(dt, dst.bytes, 0)) {
			t.Fatalf("%s: NaN result", dt)
		}
	}
}

// An ONNX-style graph whose axes input is s64, read from oneDNN's graph
// JSON, compiles and executes with int64 axes values.
func TestS64AxesJSON(t *testing.T) {
	const doc = `{
  "version": "3.0.0", "engine_kind": "cpu", "fpmath_mode": "strict",
  "input_ports": [0, 1], "output_ports": [2],
  "graph": [
    {"id": 0, "name": "mean", "kind": "ReduceMean",
     "attrs": {"keep_dims": {"type": "bool", "value": 0}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 3], "stride": [3, 1], "layout_type": "strided", "property_type": "undef"},
                {"id": 1, "dtype": "s64", "shape": [1], "stride": [1], "layout_type": "strided", "property_type": "variable"}],
     "outputs": [{"id": 2, "dtype": "f32", "shape": [-1], "stride": [-1], "layout_type": "strided", "property_type": "undef"}]}
  ]
}`
	g, err := graph.ReadJSON(strings.NewReader(doc))
	must(t, err)
	must(t, g.Finalize())
	p := onlySupported(t, g, Fusion)
	c, err := p.Compile(p.Inputs(), p.Outputs())
	must(t, err)
	srcT, err := NewTensor(p.Inputs()[0], []float32{1, 2, 3, 4, 5, 6})
	must(t, err)
	for _, c2 := range []struct {
		axis int64
		want []float32
	}{{0, []float32{2.5, 3.5, 4.5}}, {-1, []float32{2, 5}}} {
		axT, err := NewTensor(p.Inputs()[1], []int64{c2.axis})
		must(t, err)
		got := make([]float32, len(c2.want))
		dstT, err := NewTensor(graph.NewLogicalTensor(2, dtypes.F32, []int64{int64(len(got))}), got)
		must(t, err)
		must(t, c.Execute([]Tensor{srcT, axT}, []Tensor{dstT}))
		if !slices.Equal(got, c2.want) {
			t.Errorf("axis %d: got %v, want %v", c2.axis, got, c2.want)
		}
	}
}

// oneDNN's reduction cases for every kind (op/f32/reduce*.json) and its
// reduction post-op patterns load, form one supported partition each and
// compile on every ISA; the patterns compute what the float64 reference
// allows.
func TestOneDNNReductionJSON(t *testing.T) {
	kinds := map[graph.OpKind]redKind{}
	for _, k := range genKinds {
		if k.pre == 0 {
			kinds[k.op()] = k
		}
	}
	files := []string{"op/f32/reducel1.json", "op/f32/reducel2.json", "op/f32/reducemax.json", "op/f32/reducemin.json",
		"op/f32/reduceprod.json", "op/f32/reducesum.json"}
	for _, name := range []string{"l1_chain", "l2", "max_chain", "min_chain", "prod_chain", "sum_chain"} {
		files = append(files, "pattern/f32/reduction_post_ops_"+name+"_fusion.json")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			g := loadCase(t, file)
			parts, err := Get(g, Fusion)
			must(t, err)
			if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != len(g.Ops()) {
				t.Fatalf("want ONE supported partition of every op, got %v", parts)
			}
			p := parts[0]
			red := p.Ops()[0]
			in := p.Inputs()
			if strings.HasPrefix(file, "op/") {
				// 2.9M elements each, a shape TestOneDNNReduceMeanJSON runs:
				// here the kinds compile on every ISA, and the differential
				// tests check their values.
				forEachISA(t, func(t *testing.T, isa jit.ISA) {
					_, err := p.Compile(in, p.Outputs())
					must(t, err)
				})
				return
			}
			r := rand.New(rand.NewPCG(15, 16))
			src := newBuffer(in[0], uniform(r, -1, 1))
			if red.Kind == graph.ReduceProd {
				src = newBuffer(in[0], uniform(r, 0.5, 1.5)) // a product of thousands stays in range
			}
			ts := []Tensor{{lt: in[0], buf: src.bytes}}
			operands := make([]buffer, len(in)-1)
			for i, lt := range in[1:] {
				operands[i] = newBuffer(lt, uniform(r, 0.5, 2))
				ts = append(ts, Tensor{lt: lt, buf: operands[i].bytes})
			}
			// The post-ops as the reference describes them.
			var ops []fop
			cur := red.Outputs[0].ID
			k := 0
			for _, op := range p.Ops()[1:] {
				f := fop{kind: op.Kind}
				if op.Kind.IsBinary() {
					f.operand = &operands[k]
					f.operandLeft = op.Inputs[1].ID == cur
					k++
				}
				ops = append(ops, f)
				cur = op.Outputs[0].ID
			}
			axes, _ := red.Ints("axes")
			reduce, err := shape.NormalizeAxes(red, red.Inputs[0].ID, axes, len(in[0].Dims))
			must(t, err)
			keep, _ := red.Bool("keep_dims")
			want, _ := kindRanges(kinds[red.Kind], src, reduce, keep, ops)
			forEachISA(t, func(t *testing.T, isa jit.ISA) {
				c, err := p.Compile(in, p.Outputs())
				must(t, err)
				out, _ := c.QueryLogicalTensor(p.Outputs()[0].ID)
				dst := newBuffer(out, func() float64 { return 0 })
				must(t, c.Execute(ts, []Tensor{{lt: out, buf: dst.bytes}}))
				i, bad := 0, 0
				forEachIndex(out.Dims, func(idx []int64) {
					got := load(out.DataType, dst.bytes, offset(idx, out.Strides))
					if !want[i].accepts(out.DataType, got) && bad < 4 {
						t.Errorf("%s (%s): dst%v = %g, want %s", red.Kind, c.Impl(), idx, got, want[i])
						bad++
					}
					i++
				})
			})
		})
	}
}

// A graph with a fused pre-op goes to oneDNN's JSON and back and still
// forms the same partition.
func TestPreOpGraphJSONRoundTrip(t *testing.T) {
	f32 := dtypes.F32
	src := graph.NewLogicalTensor(0, f32, []int64{4, 8})
	g := graph.New()
	sum := addPre(t, g, graph.Square, graph.ReduceSum, src, []int64{1})
	must(t, g.AddOp(graph.NewOp(2, graph.Sqrt, "").AddInput(sum).AddOutput(graph.NewLogicalTensorAny(2, f32, nil))))
	must(t, g.Finalize())
	var b bytes.Buffer
	must(t, g.WriteJSON(&b))
	back, err := graph.ReadJSON(&b)
	must(t, err)
	must(t, back.Finalize())
	p := onlySupported(t, back, Fusion)
	if got := p.String(); got != "partition 0 [Square(3) -> ReduceSum(1) -> Sqrt(2)] supported" {
		t.Fatalf("after the round trip: %s", got)
	}
	c, err := p.Compile(p.Inputs(), p.Outputs())
	must(t, err)
	out, _ := c.QueryLogicalTensor(2)
	data := make([]float32, 32)
	for i := range data {
		data[i] = float32(i%8) - 3
	}
	res := make([]float32, 4)
	st, _ := NewTensor(src, data)
	dt, _ := NewTensor(out, res)
	must(t, c.Execute([]Tensor{st}, []Tensor{dt}))
	// sqrt(9+4+1+0+1+4+9+16) = sqrt(44) for every row.
	for i, v := range res {
		if math.Abs(float64(v)-math.Sqrt(44)) > 1e-6 {
			t.Errorf("row %d = %v, want sqrt(44)", i, v)
		}
	}
}

// A graph output that the JSON lists in output_ports but a fusable op also
// consumes stays a partition output: ReadJSON marks it with an End op, as
// oneDNN does, so the chain stops there and Execute writes it. Without the
// listing the chain fuses it away.
func TestJSONOutputPortNotFused(t *testing.T) {
	const doc = `{
  "version": "3.0.0", "engine_kind": "cpu", "fpmath_mode": "strict",
  "input_ports": [0], "output_ports": OUT,
  "graph": [
    {"id": 1, "name": "sum", "kind": "ReduceSum",
     "attrs": {"axes": {"type": "s64[]", "value": [1]}, "keep_dims": {"type": "bool", "value": 0}},
     "inputs": [{"id": 0, "dtype": "f32", "shape": [2, 3], "stride": [3, 1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 1, "dtype": "f32", "shape": [2], "stride": [1], "layout_type": "strided", "property_type": "undef"}]},
    {"id": 2, "name": "relu", "kind": "ReLU",
     "inputs": [{"id": 1, "dtype": "f32", "shape": [2], "stride": [1], "layout_type": "strided", "property_type": "undef"}],
     "outputs": [{"id": 2, "dtype": "f32", "shape": [2], "stride": [1], "layout_type": "strided", "property_type": "undef"}]}
  ]
}`
	load := func(out string) []*Partition {
		g, err := graph.ReadJSON(strings.NewReader(strings.Replace(doc, "OUT", out, 1)))
		must(t, err)
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		return parts
	}
	if parts := load("[2]"); len(parts) != 1 || len(parts[0].Ops()) != 2 {
		t.Fatalf("output_ports [2]: %d partitions, want the sum and ReLU fused in one", len(parts))
	}
	parts := load("[1, 2]")
	if len(parts) != 2 || !parts[0].IsSupported() || len(parts[0].Ops()) != 1 {
		t.Fatalf("output_ports [1, 2]: %d partitions, want the sum alone, then the ReLU", len(parts))
	}
	outs := parts[0].Outputs()
	if len(outs) != 1 || outs[0].ID != 1 {
		t.Fatalf("the sum's partition outputs %v, want tensor 1", outs)
	}
	c, err := parts[0].Compile(parts[0].Inputs(), outs)
	must(t, err)
	src, err := NewTensor(parts[0].Inputs()[0], []float32{1, 2, 3, -4, -5, -6})
	must(t, err)
	got := make([]float32, 2)
	dst, err := NewTensor(outs[0], got)
	must(t, err)
	must(t, c.Execute([]Tensor{src}, []Tensor{dst}))
	if !slices.Equal(got, []float32{6, -15}) {
		t.Errorf("tensor 1 = %v, want [6 -15]", got)
	}
}

package partition

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit"
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

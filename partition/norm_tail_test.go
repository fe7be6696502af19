package partition

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNormTailJSONCases: oneDNN's graph cases of a softmax, layer norm
// or group norm followed by post-ops, a TypeCast and a Quantize are one
// supported partition each, every op in it, and run on every ISA to
// what the ops compute one by one in float64 (dims shrunk so the oracle
// checks every element).
func TestNormTailJSONCases(t *testing.T) { forEachISA(t, normTailJSONCases) }

func normTailJSONCases(t *testing.T, isa jit.ISA) {
	small := map[int64]int64{128: 3, 512: 24, 48: 5}
	for i, name := range []string{"int8/int8_softmax_add.json", "int8/int8_lnorm_gelu_quantize.json",
		"int8/int8_lnorm_multiply_quantize.json", "int8/int8_lnorm_tc_multiply_quantize.json",
		"int8/int8_bf16_gnorm_add_fusion.json", "int8/int8_bf16_gnorm_relu_fusion.json",
		"f32/lnorm_gelu.json", "f32/softmax_post_ops_binary_fusion.json", "f32/softmax_post_ops_unary_fusion.json"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(sharedGraphDir, "pattern", name))
			if err != nil {
				t.Fatalf("oneDNN's graph cases are expected beside the checkout: %v", err)
			}
			if strings.HasSuffix(name, "softmax_add.json") {
				// The file names output port 5, which no op writes (its
				// Quantize writes 4): the graph reader refuses that.
				var doc map[string]any
				must(t, json.Unmarshal(data, &doc))
				doc["output_ports"] = []int{4}
				data, err = json.Marshal(doc)
				must(t, err)
			}
			g0, err := graph.ReadJSON(bytes.NewReader(data))
			must(t, err)
			g := shrunk(t, g0, small)
			parts, err := Get(g, Fusion)
			must(t, err)
			if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != len(g.Ops()) {
				t.Fatalf("partitions %v; want one supported partition of all %d ops", parts, len(g.Ops()))
			}
			// Written back to JSON and read again, it partitions the same.
			var buf bytes.Buffer
			must(t, g.WriteJSON(&buf))
			back, err := graph.ReadJSON(&buf)
			must(t, err)
			must(t, back.Finalize())
			again, err := Get(back, Fusion)
			must(t, err)
			if fmt.Sprint(again) != fmt.Sprint(parts) {
				t.Errorf("after the JSON round trip %v, want %v", again, parts)
			}
			runTailPartition(t, parts[0], isa, uint64(i))
		})
	}
}

// runTailPartition compiles and executes p (a normalization op and the
// ops after it) on random data and checks its output against the oracle
// of the op followed by the other ops, one by one in float64; and, where
// the op keeps its statistics (p's outputs after dst), the mean and
// variance against the oracle's.
func runTailPartition(t *testing.T, p *Partition, isa jit.ISA, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 9))
	var anyOuts []graph.LogicalTensor
	for _, o := range p.Outputs() {
		anyOuts = append(anyOuts, graph.NewLogicalTensorAny(o.ID, o.DataType, nil))
	}
	out := p.Outputs()[0]
	c, err := p.Compile(p.Inputs(), anyOuts)
	must(t, err)
	wantImpl(t, c, isa)
	pops := p.Ops()
	head := pops[0]
	bufs := map[uint64][]byte{}
	lts := map[uint64]graph.LogicalTensor{}
	var inT []Tensor
	for _, lt := range c.Inputs() {
		n, err := MemSize(lt)
		must(t, err)
		b := make([]byte, n)
		for i := range n / int64(lt.DataType.Size()) {
			v := 3 * (2*r.Float64() - 1)
			if lt.ID != head.Inputs[0].ID {
				v = 1 + v/8
			}
			dtypes.StoreF32(lt.DataType, b, i, float32(v))
		}
		bufs[lt.ID], lts[lt.ID] = b, lt
		tt, err := NewTensor(lt, b)
		must(t, err)
		inT = append(inT, tt)
	}
	var outT []Tensor
	var olts []graph.LogicalTensor
	for _, o := range anyOuts {
		lt, err := c.QueryLogicalTensor(o.ID)
		must(t, err)
		n, err := MemSize(lt)
		must(t, err)
		b := make([]byte, n)
		for i := range b {
			b[i] = 0xff // NaN or -1 where nothing is written
		}
		tt, err := NewTensor(lt, b)
		must(t, err)
		bufs[lt.ID] = b
		outT, olts = append(outT, tt), append(olts, lt)
	}
	olt, dst := olts[0], bufs[out.ID]
	must(t, c.Execute(inT, outT))

	// The normalization in float64 into a dense f32 dst, then each op.
	var ins []graph.LogicalTensor
	for _, in := range head.Inputs {
		ins = append(ins, lts[in.ID])
	}
	src := ins[0]
	dense := graph.DenseStrides(src.Dims)
	ndst := graph.NewLogicalTensorStrided(head.Outputs[0].ID, dtypes.F32, src.Dims, dense)
	// The statistics, where kept, are the partition's outputs after dst.
	pr := normProblemOf(t, head, ins, append([]graph.LogicalTensor{ndst}, olts[1:]...))
	nb := norm.Buffers{Src: bufs[src.ID]}
	if len(ins) > 1 {
		nb.Gamma = bufs[ins[1].ID]
	}
	if len(ins) > 2 {
		nb.Beta = bufs[ins[2].ID]
	}
	want := oracle.Norm(pr, nb)
	if len(olts) > 1 && len(want.Mean) == 0 {
		t.Fatalf("%v: %d outputs, and the oracle computed no statistics", p, len(olts))
	}
	for i, m := range []map[int64]float64{want.Mean, want.Var} {
		if len(olts) < 3 {
			break
		}
		for off, w := range m {
			got := float64(dtypes.LoadF32(dtypes.F32, bufs[olts[1+i].ID], off))
			if math.IsNaN(got) || math.Abs(got-w) > oracle.NormStatTolerance(w) {
				t.Fatalf("%v on %s: statistic %d [%d] = %v, want %v", p, c.Impl(), i, off, got, w)
			}
		}
	}
	scale := 1.0 // of a Quantize: the tolerance in output units
	forEach(src.Dims, func(idx []int64, off int) {
		w := want.Dst[int64(off)]
		bound := 64 * want.Bound[int64(off)]
		cur := head.Outputs[0].ID
		for _, op := range pops[1:] {
			switch {
			case op.Kind == graph.TypeCast:
			case op.Kind == graph.Quantize:
				q, err := graph.QuantParamsOf(op, len(src.Dims))
				must(t, err)
				scale = float64(q.Scales[0])
				w = w/scale + float64(q.Zps[0])
			case op.Kind.IsBinary():
				other := op.Inputs[1]
				if other.ID == cur {
					other = op.Inputs[0]
				}
				lt := lts[other.ID]
				k := len(idx) - len(lt.Dims)
				o := int64(0)
				for i, d := range lt.Dims {
					if d > 1 {
						o += idx[k+i] * lt.Strides[i]
					}
				}
				v := float64(dtypes.LoadF32(lt.DataType, bufs[lt.ID], o))
				switch op.Kind {
				case graph.Add:
					w += v
				case graph.Multiply:
					w, bound = w*v, bound*math.Abs(v)
				}
			default:
				po, err := postOpOf(op)
				must(t, err)
				w = float64(plan.Eltwise(po.Kind, po.Alpha, po.Beta, float32(w)))
			}
			cur = op.Outputs[0].ID
		}
		o := int64(0)
		for i, v := range idx {
			o += v * olt.Strides[i]
		}
		got := float64(dtypes.LoadF32(olt.DataType, dst, o))
		tol := oracle.NormTolerance(olt.DataType, w, bound)
		if olt.DataType.IsInt8() {
			lo, hi := -128.0, 127.0
			if olt.DataType == dtypes.U8 {
				lo, hi = 0, 255
			}
			w = math.Min(math.Max(w, lo), hi)
			tol = 0.5 + 4*bound/scale + 1e-6
		}
		if math.Abs(got-w) > tol || math.IsNaN(got) {
			t.Fatalf("%v on %s: dst%v = %v, want %v (tolerance %g)", p, c.Impl(), idx, got, w, tol)
		}
	})
}

// TestNormTailRefusals: a per-channel Quantize, and one after a
// TypeCast whose output is also read elsewhere, are not fused after a
// normalization; the Quantize stays a partition of its own that says
// why.
func TestNormTailRefusals(t *testing.T) {
	f32 := dtypes.F32
	build := func(qattrs map[string]any, twice bool) []*Partition {
		g := graph.New()
		must(t, g.AddOp(graph.NewOp(1, graph.SoftMax, "sm").AddInput(graph.NewLogicalTensor(0, f32, []int64{4, 6})).
			AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axis", int64(1))))
		must(t, g.AddOp(graph.NewOp(2, graph.TypeCast, "tc").AddInput(graph.NewLogicalTensorAny(1, f32, nil)).
			AddOutput(graph.NewLogicalTensorAny(2, f32, nil))))
		q := graph.NewOp(3, graph.Quantize, "q").AddInput(graph.NewLogicalTensorAny(2, f32, nil)).
			AddOutput(graph.NewLogicalTensorAny(3, dtypes.S8, nil))
		for k, v := range qattrs {
			q.SetAttr(k, v)
		}
		must(t, g.AddOp(q))
		if twice {
			must(t, g.AddOp(graph.NewOp(4, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(2, f32, nil)).
				AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
		}
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		return parts
	}
	perTensor := map[string]any{"qtype": "per_tensor", "scales": []float32{0.5}, "zps": []int64{3}, "axis": int64(0)}
	perChannel := map[string]any{"qtype": "per_channel", "scales": []float32{0.5, 1, 2, 4, 1, 1}, "zps": []int64{0, 0, 0, 0, 0, 0}, "axis": int64(1)}
	for _, c := range []struct {
		name   string
		parts  []*Partition
		nFused int
		why    string
	}{
		{"per-tensor", build(perTensor, false), 3, ""},
		{"per-channel", build(perChannel, false), 2, "its scales are per channel"},
		{"cast read twice", build(perTensor, true), 2, "Quantize only fused after a reduction or a normalization"},
	} {
		if len(c.parts[0].Ops()) != c.nFused || !c.parts[0].IsSupported() {
			t.Errorf("%s: %v; want the first %d ops in one supported partition", c.name, c.parts, c.nFused)
			continue
		}
		if c.why != "" && (len(c.parts) < 2 || c.parts[1].IsSupported() || !strings.Contains(c.parts[1].Reason(), c.why)) {
			t.Errorf("%s: %v; want the Quantize alone, saying %q", c.name, c.parts, c.why)
		}
	}
	// The fused per-tensor Quantize runs: x / 0.5 + 3, rounded.
	p := build(perTensor, false)[0]
	forEachISA(t, func(t *testing.T, isa jit.ISA) { runTailPartition(t, p, isa, 5) })
}

// TestNormTailAfterCast: post-ops after a normalization's TypeCast to a
// 16-bit type fuse, as they do with no cast, whatever the type they end
// in (a fused chain computes in f32 and rounds once, at its end); the
// partition runs against the ops one by one.
func TestNormTailAfterCast(t *testing.T) {
	f32 := dtypes.F32
	for _, dt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
		g := graph.New()
		must(t, g.AddOp(graph.NewOp(1, graph.SoftMax, "sm").AddInput(graph.NewLogicalTensor(0, f32, []int64{4, 6})).
			AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axis", int64(1))))
		must(t, g.AddOp(graph.NewOp(2, graph.TypeCast, "tc").AddInput(graph.NewLogicalTensorAny(1, f32, nil)).
			AddOutput(graph.NewLogicalTensorAny(2, dt, nil))))
		must(t, g.AddOp(graph.NewOp(3, graph.Multiply, "k").AddInput(graph.NewLogicalTensorAny(2, dt, nil)).
			AddInput(graph.NewLogicalTensor(5, f32, []int64{1, 6})).AddOutput(graph.NewLogicalTensorAny(3, dt, nil))))
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		if len(parts) != 1 || len(parts[0].Ops()) != 3 || !parts[0].IsSupported() {
			t.Fatalf("%v: %v; want SoftMax, TypeCast and Multiply in one supported partition", dt, parts)
		}
		forEachISA(t, func(t *testing.T, isa jit.ISA) { runTailPartition(t, parts[0], isa, 6) })
	}
}

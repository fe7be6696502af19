package partition

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// normProblemOf describes a compiled normalization op for the oracle,
// reading the op's attributes as oneDNN Graph defines them.
func normProblemOf(t *testing.T, op *graph.Op, ins, outs []graph.LogicalTensor) *norm.Problem {
	t.Helper()
	src := ins[0]
	p := &norm.Problem{Dims: src.Dims, Src: norm.Operand{DT: src.DataType, Strides: src.Strides},
		Dst: norm.Operand{DT: outs[0].DataType, Strides: outs[0].Strides}}
	switch op.Kind {
	case graph.SoftMax:
		p.Kind, p.Axis = norm.Softmax, 1
		mode, _ := op.Str("mode")
		p.InfAsZero = mode == "inf_as_zero"
	case graph.LogSoftmax:
		p.Kind, p.Axis = norm.LogSoftmax, -1
	case graph.LayerNorm:
		p.Kind, p.Axis = norm.LayerNorm, -1
	case graph.RMSNorm:
		p.Kind, p.Axis = norm.RMSNorm, -1
	case graph.GroupNorm:
		p.Kind, p.Axis = norm.GroupNorm, int64(len(src.Dims)-1)
		if f, _ := op.Str("data_format"); f == "NCX" {
			p.Axis = 1
		}
		p.Groups, _ = op.Int("groups")
	}
	for _, name := range []string{"axis", "begin_norm_axis"} {
		if a, ok := op.Attr(name); ok {
			p.Axis = a.I
		}
	}
	p.Eps = 1e-5
	if a, ok := op.Attr("epsilon"); ok {
		p.Eps = a.F
	}
	if len(ins) > 1 {
		p.Gamma = norm.Operand{DT: ins[1].DataType, Strides: ins[1].Strides}
	}
	if len(ins) > 2 {
		p.Beta = norm.Operand{DT: ins[2].DataType, Strides: ins[2].Strides}
	}
	switch {
	case len(outs) == 3:
		p.Mean = norm.Operand{DT: outs[1].DataType, Strides: outs[1].Strides}
		p.Var = norm.Operand{DT: outs[2].DataType, Strides: outs[2].Strides}
	case len(outs) == 2 && op.Kind == graph.SoftMax:
		p.Stats = norm.Operand{DT: outs[1].DataType, Strides: outs[1].Strides}
	}
	return p
}

// runNormPartitions compiles and executes every partition of g, each of
// which must be one normalization op, on random data, and checks the
// results against the float64 oracle.
func runNormPartitions(t *testing.T, g *graph.Graph, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	parts, err := Get(g, Fusion)
	must(t, err)
	for _, p := range parts {
		ops := p.Ops()
		if !p.IsSupported() || len(ops) != 1 || !ops[0].Kind.IsNormalization() {
			t.Fatalf("%v: want a supported partition of one normalization op", p)
		}
		op := ops[0]
		var outs []graph.LogicalTensor
		for _, o := range p.Outputs() {
			outs = append(outs, graph.NewLogicalTensorAny(o.ID, o.DataType, nil))
		}
		c, err := p.Compile(p.Inputs(), outs)
		must(t, err)
		// Machine code runs it wherever the JIT runs, else the
		// interpreter, saying why.
		if jit.EffectiveISA() != jit.None && (!strings.HasPrefix(c.Impl(), "jit:") || c.Reason() != "") {
			t.Errorf("%v: impl %q, reason %q; want machine code", p, c.Impl(), c.Reason())
		}
		if c.Impl() == "interp" && !strings.HasPrefix(c.Reason(), "interpreter: ") {
			t.Errorf("%v: impl %q, reason %q; want the interpreter, saying why", p, c.Impl(), c.Reason())
		}
		// The op's inputs in its own order (ports hold each tensor once).
		var ins, couts []graph.LogicalTensor
		var inT, outT []Tensor
		bufs := map[uint64][]byte{}
		for _, lt := range c.Inputs() {
			n, err := MemSize(lt)
			must(t, err)
			b := make([]byte, n)
			for i := range n / int64(lt.DataType.Size()) {
				v := 4 * (2*r.Float64() - 1)
				if lt.ID != op.Inputs[0].ID {
					v = 1 + v/8 // gamma near 1, beta near 1
				}
				dtypes.StoreF32(lt.DataType, b, i, float32(v))
			}
			bufs[lt.ID] = b
			tt, err := NewTensor(lt, b)
			must(t, err)
			inT = append(inT, tt)
		}
		for _, in := range op.Inputs {
			lt, err := c.QueryLogicalTensor(in.ID)
			must(t, err)
			ins = append(ins, lt)
		}
		before := map[uint64][]byte{}
		for id, b := range bufs {
			before[id] = slices.Clone(b)
		}
		for _, o := range outs {
			lt, err := c.QueryLogicalTensor(o.ID)
			must(t, err)
			n, err := MemSize(lt)
			must(t, err)
			b := make([]byte, n)
			bufs[lt.ID] = b
			tt, err := NewTensor(lt, b)
			must(t, err)
			outT = append(outT, tt)
			couts = append(couts, lt)
		}
		must(t, c.Execute(inT, outT))
		pr := normProblemOf(t, op, ins, couts)
		nb := norm.Buffers{Src: before[ins[0].ID], Dst: bufs[couts[0].ID]}
		if len(ins) > 1 {
			nb.Gamma = before[ins[1].ID]
		}
		if len(ins) > 2 {
			nb.Beta = before[ins[2].ID]
		}
		want := oracle.Norm(pr, nb)
		dt := couts[0].DataType
		for off, w := range want.Dst {
			got := float64(dtypes.LoadF32(dt, nb.Dst, off))
			if math.IsNaN(w) != math.IsNaN(got) || math.Abs(got-w) > oracle.NormTolerance(dt, w, want.Bound[off]) {
				t.Fatalf("%v: dst[%d] = %v, want %v", p, off, got, w)
			}
		}
		stats := []map[int64]float64{want.Mean, want.Var}
		if pr.Stats.Present() {
			stats = []map[int64]float64{want.Stats}
		}
		for i, m := range stats {
			if len(couts) < 2 {
				break
			}
			if len(m) == 0 {
				t.Fatalf("%v: the oracle gives no statistic %d", p, i)
			}
			for off, w := range m {
				got := float64(dtypes.LoadF32(dtypes.F32, bufs[couts[1+i].ID], off))
				if math.IsNaN(w) != math.IsNaN(got) || math.Abs(got-w) > oracle.NormStatTolerance(w) {
					t.Fatalf("%v: statistic %d [%d] = %v, want %v", p, i, off, got, w)
				}
			}
		}
	}
}

// TestNormPartitionsRandom: each normalization op, with random dims,
// axes, layouts (permuted and padded inputs), data types and optional
// ports (SoftMax's stats among them), is a supported partition of its own whose results match the
// oracle.
func TestNormPartitionsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	dts := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}
	n := 40
	if testing.Short() {
		n = 10
	}
	for i := range n {
		for _, k := range []graph.OpKind{graph.SoftMax, graph.LogSoftmax, graph.LayerNorm, graph.RMSNorm, graph.GroupNorm} {
			c := normCase{kind: k, dims: make([]int64, 2+r.IntN(3)), groups: int64(1 + r.IntN(2))}
			for d := range c.dims {
				c.dims[d] = int64(1 + r.IntN(6))
			}
			c.srcDT, c.dstDT, c.gammaDT, c.betaDT = dts[r.IntN(3)], dts[r.IntN(3)], dts[r.IntN(3)], dts[r.IntN(3)]
			c.channelsLast = r.IntN(2) == 0
			c.axis = int64(r.IntN(len(c.dims)))
			c.affine, c.stats, c.infAsZero = r.IntN(2) == 0, r.IntN(2) == 0, r.IntN(2) == 0
			g := c.graph(t)
			t.Run(fmt.Sprintf("%d/%v", i, k), func(t *testing.T) { runNormPartitions(t, g, uint64(i)) })
		}
	}
}

// normCase is one normalization op of TestNormPartitionsRandom and
// FuzzNormPartitions.
type normCase struct {
	kind                          graph.OpKind
	dims                          []int64 // GroupNorm's dims[1] is multiplied by groups
	srcDT, dstDT, gammaDT, betaDT dtypes.DataType
	channelsLast                  bool  // dim 1 innermost in memory
	axis                          int64 // from the front; LogSoftmax's is given from the end
	affine, stats, infAsZero      bool
	groups                        int64
}

// graph is the case's op alone in a finalized graph.
func (c normCase) graph(t *testing.T) *graph.Graph {
	t.Helper()
	k, dims, rank, axis := c.kind, slices.Clone(c.dims), len(c.dims), c.axis
	if k == graph.GroupNorm {
		dims[1] *= c.groups
	}
	src := graph.NewLogicalTensor(0, c.srcDT, dims)
	if c.channelsLast {
		order := append([]int{0}, append(seq(2, rank), 1)...)
		src = graph.NewLogicalTensorStrided(0, src.DataType, dims, stridesInOrder(dims, order))
	}
	op := graph.NewOp(1, k, "op").AddInput(src).AddOutput(graph.NewLogicalTensorAny(10, c.dstDT, nil))
	var pdims []int64
	switch k {
	case graph.SoftMax:
		op.SetAttr("axis", axis).SetAttr("mode", map[bool]string{false: "none", true: "inf_as_zero"}[c.infAsZero])
		if c.stats {
			op.AddOutput(graph.NewLogicalTensorAny(11, dtypes.F32, nil))
		}
	case graph.LogSoftmax:
		op.SetAttr("axis", axis-int64(rank))
	case graph.LayerNorm, graph.RMSNorm:
		op.SetAttr("begin_norm_axis", axis).SetAttr("use_affine", c.affine).SetAttr("epsilon", float32(0.01))
		pdims = dims[axis:]
	case graph.GroupNorm:
		op.SetAttr("groups", c.groups).SetAttr("use_affine", c.affine).SetAttr("data_format", "NCX")
		pdims = []int64{dims[1]}
	}
	if k == graph.LayerNorm || k == graph.GroupNorm {
		op.SetAttr("keep_stats", c.stats)
		if c.stats {
			op.AddOutput(graph.NewLogicalTensorAny(11, dtypes.F32, nil)).AddOutput(graph.NewLogicalTensorAny(12, dtypes.F32, nil))
		}
	}
	if c.affine && k != graph.SoftMax && k != graph.LogSoftmax {
		op.AddInput(graph.NewLogicalTensor(1, c.gammaDT, pdims))
		if k != graph.RMSNorm {
			op.AddInput(graph.NewLogicalTensor(2, c.betaDT, pdims))
		}
	}
	g := graph.New()
	must(t, g.AddOp(op))
	must(t, g.Finalize())
	return g
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// stridesInOrder lays dims out densely with order[0] outermost and the
// last of order innermost.
func stridesInOrder(dims []int64, order []int) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for k := len(order) - 1; k >= 0; k-- {
		s[order[k]] = acc
		acc *= dims[order[k]]
	}
	return s
}

// shrunk returns a copy of g0 (read from JSON, not finalized) with every
// dim mapped by small (values not in it kept), each strided tensor keeping
// its order of strides, densely.
func shrunk(t *testing.T, g0 *graph.Graph, small map[int64]int64) *graph.Graph {
	t.Helper()
	fix := func(lt graph.LogicalTensor) graph.LogicalTensor {
		old := lt.Strides
		for i, d := range lt.Dims {
			if s, ok := small[d]; ok {
				lt.Dims[i] = s
			}
		}
		if lt.Layout == graph.LayoutStrided && len(old) == len(lt.Dims) {
			order := seq(0, len(old))
			sort.SliceStable(order, func(a, b int) bool { return old[order[a]] > old[order[b]] })
			lt.Strides = stridesInOrder(lt.Dims, order)
		}
		return lt
	}
	g := graph.New()
	for _, op := range g0.Ops() {
		c := op.Clone()
		for i := range c.Inputs {
			c.Inputs[i] = fix(c.Inputs[i])
		}
		for i := range c.Outputs {
			c.Outputs[i] = fix(c.Outputs[i])
		}
		must(t, g.AddOp(c))
	}
	must(t, g.Finalize())
	return g
}

// TestNormSharedJSONCases runs oneDNN's graph cases of the normalization
// ops gdnn compiles, with their dims shrunk (batch and spatial dims made
// small, channels kept divisible by the groups) so that the float64
// oracle can check every element.
func TestNormSharedJSONCases(t *testing.T) {
	small := map[int64]int64{64: 2, 128: 3, 28: 7, 384: 5, 1024: 16, 320: 64, 48: 5}
	for i, name := range []string{"softmax.json", "softmax_w_stats.json", "logsoftmax.json", "lnorm.json", "lnorm_3d.json", "lnorm_ks.json", "rmsnorm.json", "gnorm.json"} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(sharedGraphDir, "op", "f32", name))
			if err != nil {
				t.Fatalf("oneDNN's graph cases are expected beside the checkout: %v", err)
			}
			defer f.Close()
			g0, err := graph.ReadJSON(f)
			must(t, err)
			runNormPartitions(t, shrunk(t, g0, small), uint64(i))
		})
	}
}

// TestNormFusion: a normalization op next to a reduction is not fused
// into the reduction's chain, but the eltwise and binary ops after it
// are its post-ops, up to an integer output; results match the oracle
// followed by the post-ops.
func TestNormFusion(t *testing.T) {
	f32 := dtypes.F32
	g := graph.New()
	must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "sum").AddInput(graph.NewLogicalTensor(0, f32, []int64{4, 6})).
		AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
	must(t, g.AddOp(graph.NewOp(2, graph.SoftMax, "sm").AddInput(graph.NewLogicalTensorAny(1, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(2, f32, nil)).SetAttr("axis", 0)))
	must(t, g.AddOp(graph.NewOp(3, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(2, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(3, f32, nil))))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 2 || len(parts[1].Ops()) != 2 || !parts[1].IsSupported() {
		t.Fatalf("partitions %v; want the sum, then the softmax with its ReLU (supported)", parts)
	}

	// LayerNorm -> Multiply by a per-channel operand -> GELU -> Add of a
	// per-row operand, bf16 out.
	const rows, ch = 5, 12
	g = graph.New()
	x := graph.NewLogicalTensor(10, f32, []int64{rows, ch})
	must(t, g.AddOp(graph.NewOp(1, graph.LayerNorm, "ln").AddInput(x).AddOutput(graph.NewLogicalTensorAny(11, f32, nil)).
		SetAttr("begin_norm_axis", int64(1)).SetAttr("use_affine", false).SetAttr("keep_stats", false).SetAttr("epsilon", float32(1e-5))))
	w := graph.NewLogicalTensor(12, f32, []int64{ch})
	must(t, g.AddOp(graph.NewOp(2, graph.Multiply, "mul").AddInput(graph.NewLogicalTensorAny(11, f32, nil)).AddInput(w).
		AddOutput(graph.NewLogicalTensorAny(13, f32, nil))))
	must(t, g.AddOp(graph.NewOp(3, graph.GELU, "gelu").AddInput(graph.NewLogicalTensorAny(13, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(14, f32, nil))))
	bias := graph.NewLogicalTensor(15, f32, []int64{rows, 1})
	must(t, g.AddOp(graph.NewOp(4, graph.Add, "add").AddInput(bias).AddInput(graph.NewLogicalTensorAny(14, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(16, dtypes.BF16, nil))))
	must(t, g.Finalize())
	parts, err = Get(g, Fusion)
	must(t, err)
	if len(parts) != 1 || len(parts[0].Ops()) != 4 || !parts[0].IsSupported() {
		t.Fatalf("partitions %v; want LayerNorm with three post-ops", parts)
	}
	p := parts[0]
	out := graph.NewLogicalTensorAny(16, dtypes.BF16, nil)
	c, err := p.Compile(p.Inputs(), []graph.LogicalTensor{out})
	must(t, err)
	if jit.EffectiveISA() != jit.None && c.Reason() != "" {
		t.Errorf("fused LayerNorm: impl %q, reason %q; want machine code", c.Impl(), c.Reason())
	}
	r := rand.New(rand.NewPCG(11, 12))
	vals := func(n int, lim float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32((r.Float64()*2 - 1) * lim)
		}
		return v
	}
	xs, ws, bs := vals(rows*ch, 3), vals(ch, 2), vals(rows, 1)
	byID := map[uint64][]float32{10: xs, 12: ws, 15: bs}
	var inT []Tensor
	for _, lt := range c.Inputs() {
		tt, err := NewTensor(lt, bytesOf(byID[lt.ID]))
		must(t, err)
		inT = append(inT, tt)
	}
	dst := make([]byte, rows*ch*2)
	lt, err := c.QueryLogicalTensor(16)
	must(t, err)
	ot, err := NewTensor(lt, dst)
	must(t, err)
	must(t, c.Execute(inT, []Tensor{ot}))
	pr := &norm.Problem{Kind: norm.LayerNorm, Dims: []int64{rows, ch}, Axis: 1, Eps: 1e-5,
		Src: norm.Operand{DT: f32, Strides: []int64{ch, 1}}, Dst: norm.Operand{DT: f32, Strides: []int64{ch, 1}}}
	want := oracle.Norm(pr, norm.Buffers{Src: bytesOf(xs)})
	for i := int64(0); i < rows*ch; i++ {
		y := float32(want.Dst[i]) * ws[i%ch]
		y = plan.Eltwise(ops.GELUErf, 0, 0, y)
		y += bs[i/ch]
		got := dtypes.LoadF32(dtypes.BF16, dst, i)
		if math.Abs(float64(got-y)) > oracle.NormTolerance(dtypes.BF16, float64(y), 64*want.Bound[i]*(1+math.Abs(float64(ws[i%ch])))) {
			t.Fatalf("element %d is %v, want %v", i, got, y)
		}
	}
}

// TestNormChainEndsInFloat: the chain after a normalization is cut
// before an op with an integer output, saying why.
func TestNormChainEndsInFloat(t *testing.T) {
	f32 := dtypes.F32
	sm := graph.NewOp(1, graph.SoftMax, "sm").AddOutput(graph.NewLogicalTensorAny(1, f32, nil))
	relu := graph.NewOp(2, graph.ReLU, "relu").AddOutput(graph.NewLogicalTensorAny(2, f32, nil))
	abs := graph.NewOp(3, graph.Abs, "abs").AddOutput(graph.NewLogicalTensorAny(3, dtypes.U8, nil))
	kept, cut, why := normChain([]*graph.Op{sm, relu, abs})
	if len(kept) != 2 || cut != abs || !strings.Contains(why, "u8") {
		t.Errorf("normChain keeps %d ops, cuts %v (%q); want 2, the Abs, naming u8", len(kept), cut, why)
	}
	if kept, cut, _ := normChain([]*graph.Op{sm, relu}); len(kept) != 2 || cut != nil {
		t.Errorf("normChain of a float chain keeps %d ops and cuts %v", len(kept), cut)
	}
}

// TestNormExecuteRefusals: what Execute refuses for a normalization
// partition, before anything runs.
func TestNormExecuteRefusals(t *testing.T) {
	f32 := dtypes.F32
	x := graph.NewLogicalTensor(0, f32, []int64{2, 8})
	g := graph.New()
	must(t, g.AddOp(graph.NewOp(1, graph.LayerNorm, "ln").AddInput(x).AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(2, f32, nil)).AddOutput(graph.NewLogicalTensorAny(3, f32, nil)).SetAttr("use_affine", false)))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	c, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	must(t, err)
	if _, err := c.QueryLogicalTensorWithAxes(1, nil); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("QueryLogicalTensorWithAxes: %v", err)
	}
	lts := c.Outputs()
	buf := make([]float32, 17)
	src, _ := NewTensor(x, buf[:16])
	dst, _ := NewTensor(lts[0], buf[1:]) // dst over src shifted by one element: not in place
	mean, _ := NewTensor(lts[1], make([]float32, 2))
	vr, _ := NewTensor(lts[2], make([]float32, 2))
	if err := c.Execute([]Tensor{src}, []Tensor{dst, mean, vr}); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "overlaps input tensor 0") {
		t.Errorf("dst over src: %v", err)
	}
	dst, _ = NewTensor(lts[0], make([]float32, 16))
	if err := c.Execute([]Tensor{src}, []Tensor{dst, mean}); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "port tensor 3 is not given") {
		t.Errorf("missing variance: %v", err)
	}
	if err := c.Execute([]Tensor{src}, []Tensor{dst, mean, mean}); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("mean twice: %v", err)
	}
	short, _ := NewTensor(graph.NewLogicalTensor(1, f32, []int64{2, 8}), make([]float32, 16))
	if err := c.Execute([]Tensor{src}, []Tensor{short, mean, vr}); err != nil {
		t.Errorf("a dense dst: %v", err)
	}
	wrong, _ := NewTensor(graph.NewLogicalTensor(1, f32, []int64{2, 4}), make([]float32, 8))
	if err := c.Execute([]Tensor{src}, []Tensor{wrong, mean, vr}); !errors.Is(err, graph.InvalidShape) {
		t.Errorf("dst of other dims: %v", err)
	}
}

// softmaxOps adds the decomposed softmax of x over axis to g (tensor
// ids from 100), and returns the id of its output.
func softmaxOps(t *testing.T, g *graph.Graph, x graph.LogicalTensor, axis int64, sumAxis int64) uint64 {
	f32 := dtypes.F32
	any := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, f32, nil) }
	must(t, g.AddOp(graph.NewOp(100, graph.ReduceMax, "max").AddInput(x).AddOutput(any(101)).
		SetAttr("axes", []int64{axis}).SetAttr("keep_dims", true)))
	must(t, g.AddOp(graph.NewOp(102, graph.Subtract, "sub").AddInput(x).AddInput(any(101)).AddOutput(any(103))))
	must(t, g.AddOp(graph.NewOp(104, graph.Exp, "exp").AddInput(any(103)).AddOutput(any(105))))
	must(t, g.AddOp(graph.NewOp(106, graph.ReduceSum, "sum").AddInput(any(105)).AddOutput(any(107)).
		SetAttr("axes", []int64{sumAxis}).SetAttr("keep_dims", true)))
	must(t, g.AddOp(graph.NewOp(108, graph.Divide, "div").AddInput(any(105)).AddInput(any(107)).AddOutput(any(109))))
	return 109
}

// TestSoftmaxPattern: the five ops exporters write for softmax are one
// partition that computes SoftMax, with the ReLU after it fused; results
// match the oracle. A pattern whose sum runs over another axis is not
// recognized.
func TestSoftmaxPattern(t *testing.T) {
	f32 := dtypes.F32
	const rows, n = 6, 37
	x := graph.NewLogicalTensor(1, f32, []int64{rows, n})
	g := graph.New()
	out := softmaxOps(t, g, x, -1, 1)
	must(t, g.AddOp(graph.NewOp(110, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(out, f32, nil)).
		AddOutput(graph.NewLogicalTensorAny(111, f32, nil))))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 1 || len(parts[0].Ops()) != 6 || !parts[0].IsSupported() {
		t.Fatalf("partitions %v; want one supported partition of the six ops", parts)
	}
	p := parts[0]
	c, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(111, f32, nil)})
	must(t, err)
	if jit.EffectiveISA() != jit.None && (c.Reason() != "" || !strings.HasPrefix(c.Impl(), "jit:")) {
		t.Errorf("softmax pattern: impl %q, reason %q; want machine code", c.Impl(), c.Reason())
	}
	r := rand.New(rand.NewPCG(13, 14))
	xs := make([]float32, rows*n)
	for i := range xs {
		xs[i] = float32(r.NormFloat64() * 5)
	}
	in, err := NewTensor(c.Inputs()[0], bytesOf(xs))
	must(t, err)
	dst := make([]float32, rows*n)
	lt, err := c.QueryLogicalTensor(111)
	must(t, err)
	ot, err := NewTensor(lt, bytesOf(dst))
	must(t, err)
	must(t, c.Execute([]Tensor{in}, []Tensor{ot}))
	pr := &norm.Problem{Kind: norm.Softmax, Dims: []int64{rows, n}, Axis: 1,
		Src: norm.Operand{DT: f32, Strides: []int64{n, 1}}, Dst: norm.Operand{DT: f32, Strides: []int64{n, 1}}}
	want := oracle.Norm(pr, norm.Buffers{Src: bytesOf(xs)})
	for i, w := range want.Dst {
		if got := float64(dst[i]); math.Abs(got-w) > oracle.NormTolerance(f32, w, want.Bound[i]) {
			t.Fatalf("element %d is %v, want %v", i, got, w)
		}
	}

	g = graph.New()
	softmaxOps(t, g, x, 1, 0)
	must(t, g.Finalize())
	parts, err = Get(g, Fusion)
	must(t, err)
	for _, p := range parts {
		for _, op := range p.Ops() {
			if op.Kind == graph.ReduceMax && len(p.Ops()) >= 5 {
				t.Fatalf("a softmax pattern with its sum over another axis is recognized: %v", parts)
			}
		}
	}
}

// TestSoftmaxPatternNeedsFloats: the five ops of a decomposed softmax
// over a non-float x, or with an intermediate of an integer type (which
// rounds the chain, where SoftMax would not), are not taken as one
// SoftMax: their partitions are the ops' own.
func TestSoftmaxPatternNeedsFloats(t *testing.T) {
	f32, f64, s32, u8, s8 := dtypes.F32, dtypes.F64, dtypes.S32, dtypes.U8, dtypes.S8
	for _, c := range []struct {
		name  string
		x     dtypes.DataType
		types map[uint64]dtypes.DataType // tensor id -> type; f32 otherwise
	}{
		{"f64 throughout", f64, map[uint64]dtypes.DataType{101: f64, 103: f64, 105: f64, 107: f64, 109: f64}},
		{"u8 x", u8, nil},
		{"s32 max", f32, map[uint64]dtypes.DataType{101: s32}},
		{"s8 exp", f32, map[uint64]dtypes.DataType{105: s8}},
		{"s32 sum", f32, map[uint64]dtypes.DataType{107: s32}},
		{"s32 quotient", f32, map[uint64]dtypes.DataType{109: s32}},
	} {
		typ := func(id uint64) dtypes.DataType {
			if dt, ok := c.types[id]; ok {
				return dt
			}
			return f32
		}
		any := func(id uint64) graph.LogicalTensor { return graph.NewLogicalTensorAny(id, typ(id), nil) }
		x := graph.NewLogicalTensor(1, c.x, []int64{2, 2})
		g := graph.New()
		must(t, g.AddOp(graph.NewOp(100, graph.ReduceMax, "max").AddInput(x).AddOutput(any(101)).
			SetAttr("axes", []int64{-1}).SetAttr("keep_dims", true)))
		must(t, g.AddOp(graph.NewOp(102, graph.Subtract, "sub").AddInput(x).AddInput(any(101)).AddOutput(any(103))))
		must(t, g.AddOp(graph.NewOp(104, graph.Exp, "exp").AddInput(any(103)).AddOutput(any(105))))
		must(t, g.AddOp(graph.NewOp(106, graph.ReduceSum, "sum").AddInput(any(105)).AddOutput(any(107)).
			SetAttr("axes", []int64{-1}).SetAttr("keep_dims", true)))
		must(t, g.AddOp(graph.NewOp(108, graph.Divide, "div").AddInput(any(105)).AddInput(any(107)).AddOutput(any(109))))
		if err := g.Finalize(); err != nil {
			continue // a type the ops' own schemas refuse: nothing to fuse
		}
		parts, err := Get(g, Fusion)
		must(t, err)
		for _, p := range parts {
			if p.Pattern() != "" || len(p.Ops()) >= 5 {
				t.Errorf("%s: partition of %d ops, pattern %q; want no softmax pattern", c.name, len(p.Ops()), p.Pattern())
			}
		}
	}
}

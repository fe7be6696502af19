package partition

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/oracle"
)

// dqNormCase is a Dequantize -> normalization [-> Quantize] graph.
type dqNormCase struct {
	kind   graph.OpKind
	srcDT  dtypes.DataType
	dims   []int64
	scale  float32
	zp     int64
	quant  dtypes.DataType // Undef: an f32 dst
	qScale float32
	qZp    int64
	// before is how many dims before the last SoftMax and LogSoftmax
	// normalize over (0: the last; 1: the one before it, columns).
	before int
}

// build returns the graph: the src is tensor 0, the dst tensor 9, gamma
// and beta (per element of the last dim, per channel for GroupNorm) 3
// and 4.
func (c dqNormCase) build(t *testing.T) *graph.Graph {
	t.Helper()
	f32 := dtypes.F32
	g := graph.New()
	src := graph.NewLogicalTensor(0, c.srcDT, c.dims)
	x := graph.NewLogicalTensorAny(1, f32, nil)
	must(t, g.AddOp(graph.NewOp(0, graph.Dequantize, "dq").AddInput(src).AddOutput(x).
		SetAttr("scales", []float32{c.scale}).SetAttr("zps", []int64{c.zp})))
	y := graph.NewLogicalTensorAny(9, f32, nil)
	if c.quant != dtypes.Undef {
		y = graph.NewLogicalTensorAny(2, f32, nil)
	}
	rank := len(c.dims)
	op := graph.NewOp(1, c.kind, "norm").AddInput(x)
	switch c.kind {
	case graph.SoftMax, graph.LogSoftmax:
		op.SetAttr("axis", int64(rank-1-c.before))
	case graph.LayerNorm, graph.RMSNorm:
		op.SetAttr("begin_norm_axis", int64(rank-1)).SetAttr("use_affine", true).SetAttr("epsilon", float32(1e-3))
		if c.kind == graph.LayerNorm {
			op.SetAttr("keep_stats", false)
		}
		op.AddInput(graph.NewLogicalTensor(3, f32, c.dims[rank-1:]))
		if c.kind == graph.LayerNorm {
			op.AddInput(graph.NewLogicalTensor(4, f32, c.dims[rank-1:]))
		}
	case graph.GroupNorm:
		op.SetAttr("groups", int64(2)).SetAttr("data_format", "NCX").SetAttr("use_affine", true).
			SetAttr("keep_stats", false).SetAttr("epsilon", float32(1e-3))
		op.AddInput(graph.NewLogicalTensor(3, f32, c.dims[1:2])).AddInput(graph.NewLogicalTensor(4, f32, c.dims[1:2]))
	}
	must(t, g.AddOp(op.AddOutput(y)))
	if c.quant != dtypes.Undef {
		must(t, g.AddOp(graph.NewOp(2, graph.Quantize, "q").AddInput(y).AddOutput(graph.NewLogicalTensorAny(9, c.quant, nil)).
			SetAttr("scales", []float32{c.qScale}).SetAttr("zps", []int64{c.qZp})))
	}
	must(t, g.Finalize())
	return g
}

// TestDequantNormPartitions: a Dequantize before each normalization,
// with and without a Quantize after it, is one partition whose pattern
// names it, runs as machine code where the JIT runs, and matches the
// float64 oracle of the dequantized src.
func TestDequantNormPartitions(t *testing.T) {
	cases := []dqNormCase{
		{kind: graph.SoftMax, srcDT: dtypes.U8, dims: []int64{6, 37}, scale: 0.1, zp: 128, quant: dtypes.U8, qScale: 1.0 / 255},
		{kind: graph.SoftMax, srcDT: dtypes.S8, dims: []int64{3, 1000}, scale: 0.05},
		{kind: graph.LogSoftmax, srcDT: dtypes.S8, dims: []int64{5, 9}, scale: 0.25, zp: -3},
		{kind: graph.LayerNorm, srcDT: dtypes.S8, dims: []int64{4, 100}, scale: 0.0371, zp: 2, quant: dtypes.S8, qScale: 0.05},
		{kind: graph.RMSNorm, srcDT: dtypes.U8, dims: []int64{2, 3, 17}, scale: 0.02, zp: 100},
		{kind: graph.GroupNorm, srcDT: dtypes.U8, dims: []int64{2, 4, 5, 3}, scale: 0.5, zp: 7, quant: dtypes.U8, qScale: 0.03, qZp: 128},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range cases {
		c.check(t, r)
	}
}

// check compiles c's graph, checks it is one partition of machine code
// (where the JIT runs), runs it over random src and compares dst with
// the float64 oracle of the dequantized src.
func (c dqNormCase) check(t *testing.T, r *rand.Rand) {
	t.Helper()
	g := c.build(t)
	parts, err := Get(g, Fusion)
	must(t, err)
	want := 2
	if c.quant != dtypes.Undef {
		want = 3
	}
	if len(parts) != 1 || len(parts[0].Ops()) != want || !parts[0].IsSupported() {
		t.Fatalf("%v: partitions %v; want one of %d ops", c.kind, parts, want)
	}
	p := parts[0]
	if pat := "Dequantize before " + c.kind.String(); p.Pattern() != pat {
		t.Errorf("%v: pattern %q, want %q", c.kind, p.Pattern(), pat)
	}
	outDT := dtypes.F32
	if c.quant != dtypes.Undef {
		outDT = c.quant
	}
	cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(9, outDT, nil)})
	must(t, err)
	if jit.EffectiveISA() != jit.None && (!strings.HasPrefix(cp.Impl(), "jit:") || cp.Reason() != "") {
		t.Errorf("%v: impl %q, reason %q; want machine code", c.kind, cp.Impl(), cp.Reason())
	}
	n := int64(1)
	for _, d := range c.dims {
		n *= d
	}
	src := make([]byte, n)
	for i := range src {
		src[i] = byte(r.UintN(256))
	}
	// The Dequantize's f32 output, the oracle's src.
	x := make([]byte, 4*n)
	for i := range n {
		v := (float64(dtypes.LoadF32(c.srcDT, src, i)) - float64(c.zp)) * float64(c.scale)
		dtypes.StoreF32(dtypes.F32, x, i, float32(v))
	}
	params := map[uint64][]byte{0: src}
	var pr norm.Problem
	rank := len(c.dims)
	pr.Dims, pr.Eps = c.dims, 1e-3
	pr.Src = norm.Operand{DT: dtypes.F32, Strides: dense(c.dims)}
	pr.Dst = pr.Src
	pd := c.dims[rank-1:]
	switch c.kind {
	case graph.SoftMax:
		pr.Kind, pr.Axis = norm.Softmax, -1
	case graph.LogSoftmax:
		pr.Kind, pr.Axis = norm.LogSoftmax, -1
	case graph.LayerNorm:
		pr.Kind, pr.Axis = norm.LayerNorm, -1
	case graph.RMSNorm:
		pr.Kind, pr.Axis = norm.RMSNorm, -1
	case graph.GroupNorm:
		pr.Kind, pr.Axis, pr.Groups, pd = norm.GroupNorm, 1, 2, c.dims[1:2]
	}
	var nb norm.Buffers
	if c.kind != graph.SoftMax && c.kind != graph.LogSoftmax {
		gamma, beta := make([]byte, 4*pd[0]), make([]byte, 4*pd[0])
		for i := range pd[0] {
			dtypes.StoreF32(dtypes.F32, gamma, i, float32(0.5+r.Float64()))
			dtypes.StoreF32(dtypes.F32, beta, i, float32(r.Float64()-0.5))
		}
		params[3], nb.Gamma = gamma, gamma
		pr.Gamma = norm.Operand{DT: dtypes.F32, Strides: []int64{1}}
		if c.kind != graph.RMSNorm {
			params[4], nb.Beta = beta, beta
			pr.Beta = pr.Gamma
		}
	}
	var inT []Tensor
	for _, lt := range cp.Inputs() {
		tt, err := NewTensor(lt, params[lt.ID])
		must(t, err)
		inT = append(inT, tt)
	}
	olt, err := cp.QueryLogicalTensor(9)
	must(t, err)
	dst := make([]byte, n*int64(outDT.Size()))
	ot, err := NewTensor(olt, dst)
	must(t, err)
	must(t, cp.Execute(inT, []Tensor{ot}))
	nb.Src = x
	ref := oracle.Norm(&pr, nb)
	for i := range n {
		w := ref.Dst[i]
		got := float64(dtypes.LoadF32(outDT, dst, i))
		if c.quant != dtypes.Undef {
			// The Quantize: round to nearest even, saturate; a value
			// near a rounding boundary may go either way.
			q := w/float64(c.qScale) + float64(c.qZp)
			lo, hi := -128.0, 127.0
			if c.quant == dtypes.U8 {
				lo, hi = 0, 255
			}
			if math.Abs(got-math.Max(lo, math.Min(hi, math.RoundToEven(q)))) > 1 {
				t.Fatalf("%v: dst[%d] = %v, want %v (%v before rounding)", c.kind, i, got, math.RoundToEven(q), q)
			}
			continue
		}
		if math.IsNaN(w) != math.IsNaN(got) || math.Abs(got-w) > oracle.NormTolerance(outDT, w, ref.Bound[i]) {
			t.Fatalf("%v (%v scale %v zp %d): dst[%d] = %v, want %v", c.kind, c.srcDT, c.scale, c.zp, i, got, w)
		}
	}
}

// dense is row-major strides over dims.
func dense(dims []int64) []int64 {
	s := make([]int64, len(dims))
	n := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = n
		n *= dims[i]
	}
	return s
}

// TestDequantNormNotFused: a Dequantize that does not fit before a
// normalization stays a partition of its own, saying why.
func TestDequantNormNotFused(t *testing.T) {
	f32 := dtypes.F32
	mk := func(perChannel, twoReaders bool, out dtypes.DataType) *graph.Graph {
		g := graph.New()
		dq := graph.NewOp(0, graph.Dequantize, "dq").AddInput(graph.NewLogicalTensor(0, dtypes.S8, []int64{2, 8})).
			AddOutput(graph.NewLogicalTensorAny(1, out, nil))
		if perChannel {
			dq.SetAttr("qtype", "per_channel").SetAttr("axis", int64(1)).SetAttr("scales", []float32{1, 2, 3, 4, 5, 6, 7, 8})
		} else {
			dq.SetAttr("scales", []float32{0.5})
		}
		must(t, g.AddOp(dq))
		must(t, g.AddOp(graph.NewOp(1, graph.SoftMax, "sm").AddInput(graph.NewLogicalTensorAny(1, out, nil)).
			AddOutput(graph.NewLogicalTensorAny(2, out, nil)).SetAttr("axis", int64(1))))
		if twoReaders {
			must(t, g.AddOp(graph.NewOp(2, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(1, out, nil)).
				AddOutput(graph.NewLogicalTensorAny(3, out, nil))))
		}
		must(t, g.Finalize())
		return g
	}
	for _, c := range []struct {
		name string
		g    *graph.Graph
		why  string
	}{
		{"per channel", mk(true, false, f32), "per channel"},
		{"two readers", mk(false, true, f32), "2 consumers"},
	} {
		parts, err := Get(c.g, Fusion)
		must(t, err)
		p := parts[0]
		if len(p.Ops()) != 1 || p.IsSupported() || !strings.Contains(p.Reason(), "not fused before op 1 (SoftMax") || !strings.Contains(p.Reason(), c.why) {
			t.Errorf("%s: partition %v, reason %q; want the Dequantize alone, unsupported, saying %q", c.name, p, p.Reason(), c.why)
		}
	}
}

// TestDequantNormExtremes: a Dequantize with zero points at the ends of
// s8 and u8 and past them, and scales 0, negative, subnormal, tiny and
// huge, before each normalization, against the float64 oracle.
func TestDequantNormExtremes(t *testing.T) {
	kinds := []graph.OpKind{graph.SoftMax, graph.LogSoftmax, graph.LayerNorm, graph.RMSNorm, graph.GroupNorm}
	scales := []float32{0, float32(math.Copysign(0, -1)), -0.25, math.SmallestNonzeroFloat32, 1e-40, 1e-30, 3e4, -1}
	zps := map[dtypes.DataType][]int64{dtypes.S8: {-128, 127, 0, 1000}, dtypes.U8: {0, 255, 128, -1000}}
	r := rand.New(rand.NewPCG(5, 6))
	i := 0
	for _, kind := range kinds {
		for _, dt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
			for _, zp := range zps[dt] {
				for _, s := range scales {
					i++
					dims := [][]int64{{3, 37}, {2, 64}, {2, 4, 5, 3}, {1, 2049}}[i%4]
					if kind == graph.GroupNorm {
						dims = []int64{2, 4, 5, 3}
					}
					c := dqNormCase{kind: kind, srcDT: dt, dims: dims, scale: s, zp: zp}
					c.check(t, r)
				}
			}
		}
	}
}

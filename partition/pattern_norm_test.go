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

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/status"
)

// patternGraph builds decomposed normalizations: tensors from id 100,
// ops from id 1, x is tensor 1 and eps tensor 2.
type patternGraph struct {
	t    testing.TB
	g    *graph.Graph
	dt   dtypes.DataType // of x and every intermediate
	next uint64
}

func newPatternGraph(t testing.TB, dt dtypes.DataType) *patternGraph {
	return &patternGraph{t: t, g: graph.New(), dt: dt, next: 100}
}

// op adds an op of kind over the inputs, with attrs as name, value
// pairs, and returns its output tensor (of the graph's type, dims
// unknown).
func (b *patternGraph) op(kind graph.OpKind, ins []graph.LogicalTensor, attrs ...any) graph.LogicalTensor {
	out := graph.NewLogicalTensorAny(b.next, b.dt, nil)
	o := graph.NewOp(b.next, kind, "").AddOutput(out)
	b.next++
	for _, in := range ins {
		o.AddInput(in)
	}
	for i := 0; i+1 < len(attrs); i += 2 {
		o.SetAttr(attrs[i].(string), attrs[i+1])
	}
	must(b.t, b.g.AddOp(o))
	return out
}

func (b *patternGraph) reduce(kind graph.OpKind, x graph.LogicalTensor, axes []int64) graph.LogicalTensor {
	return b.op(kind, []graph.LogicalTensor{x}, "axes", axes, "keep_dims", true)
}

func (b *patternGraph) bin(kind graph.OpKind, l, r graph.LogicalTensor) graph.LogicalTensor {
	return b.op(kind, []graph.LogicalTensor{l, r})
}

// square writes x^2 in one of the spellings: Square, Pow 2, Multiply.
func (b *patternGraph) square(x graph.LogicalTensor, spelling int) graph.LogicalTensor {
	switch spelling % 3 {
	case 0:
		return b.op(graph.Square, []graph.LogicalTensor{x})
	case 1:
		return b.op(graph.Pow, []graph.LogicalTensor{x}, "beta", float32(2))
	}
	return b.bin(graph.Multiply, x, x)
}

// patternCase is one decomposed normalization: how to build it, what
// the partition's verbose line names, and whether it should be
// recognized.
type patternCase struct {
	name  string
	dims  []int64
	eps   []int64 // eps dims
	build func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor
	want  string // the pattern's name, "" for a near-miss that is not one
	// not is the pattern a near-miss must not be taken for ("": any).
	// A layer norm's near-miss may hold a true RMS norm of x - mean.
	not string
}

func layerNormOps(axes, axes2 []int64, spelling int, swapAdd bool) func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
	return func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
		m := b.reduce(graph.ReduceMean, x, axes)
		d := b.bin(graph.Subtract, x, m)
		v := b.reduce(graph.ReduceMean, b.square(d, spelling), axes2)
		var ve graph.LogicalTensor
		if swapAdd {
			ve = b.bin(graph.Add, eps, v)
		} else {
			ve = b.bin(graph.Add, v, eps)
		}
		return b.bin(graph.Divide, d, b.op(graph.Sqrt, []graph.LogicalTensor{ve}))
	}
}

func rmsNormOps(axes []int64, spelling int, pow bool) func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
	return func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
		ms := b.bin(graph.Add, b.reduce(graph.ReduceMean, b.square(x, spelling), axes), eps)
		if pow {
			return b.bin(graph.Multiply, b.op(graph.Pow, []graph.LogicalTensor{ms}, "beta", float32(-0.5)), x)
		}
		return b.bin(graph.Divide, x, b.op(graph.Sqrt, []graph.LogicalTensor{ms}))
	}
}

func l2NormOps(axes []int64, reduceL2 bool, bound graph.OpKind) func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
	return func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
		var n graph.LogicalTensor
		if reduceL2 {
			n = b.reduce(graph.ReduceL2, x, axes)
		} else {
			n = b.op(graph.Sqrt, []graph.LogicalTensor{b.reduce(graph.ReduceSum, b.square(x, 0), axes)})
		}
		return b.bin(graph.Divide, x, b.bin(bound, n, eps))
	}
}

const (
	lnName  = "layernorm from ReduceMean, Subtract, Square, ReduceMean, Add eps, Sqrt, Divide"
	rmsDiv  = "rmsnorm from Square, ReduceMean, Add eps, Sqrt, Divide"
	rmsPow  = "rmsnorm from Square, ReduceMean, Add eps, Pow -0.5, Multiply"
	l2Max   = "l2 normalization from ReduceL2, Maximum eps, Divide"
	l2Add   = "l2 normalization from ReduceL2, Add eps, Divide"
	l2SqMax = "l2 normalization from Square, ReduceSum, Sqrt, Maximum eps, Divide"
)

func patternCases() []patternCase {
	d3 := []int64{3, 5, 37}
	one := []int64{1}
	return []patternCase{
		{"layernorm/last", d3, one, layerNormOps([]int64{-1}, []int64{2}, 0, false), lnName, ""},
		{"layernorm/last2-pow", d3, []int64{1, 1, 1}, layerNormOps([]int64{1, 2}, []int64{-2, -1}, 1, true), lnName, ""},
		{"layernorm/mul-rank0", d3, []int64{}, layerNormOps([]int64{2}, []int64{2}, 2, false), lnName, ""},
		{"layernorm/channels", []int64{2, 7, 3, 4}, one, layerNormOps([]int64{1}, []int64{1}, 0, false), lnName, ""},
		{"rmsnorm/div", d3, one, rmsNormOps([]int64{-1}, 1, false), rmsDiv, ""},
		{"rmsnorm/div-mul", d3, one, rmsNormOps([]int64{1, 2}, 2, false), rmsDiv, ""},
		{"rmsnorm/pow", d3, one, rmsNormOps([]int64{-1}, 1, true), rmsPow, ""},
		{"rmsnorm/pow-outer", d3, one, rmsNormOps([]int64{0}, 0, true), rmsPow, ""},
		{"l2/reducel2-max", []int64{6, 130}, one, l2NormOps([]int64{1}, true, graph.Maximum), l2Max, ""},
		{"l2/reducel2-add", []int64{6, 130}, one, l2NormOps([]int64{-1}, true, graph.Add), l2Add, ""},
		{"l2/square-max", []int64{4, 3, 20}, one, l2NormOps([]int64{0, 2}, false, graph.Maximum), l2SqMax, ""},
		// Near-misses: the ops stay in their own partitions.
		{"near/layernorm-axes-differ", d3, one, layerNormOps([]int64{2}, []int64{1}, 0, false), "", lnName},
		{"near/eps-not-scalar", d3, []int64{37}, rmsNormOps([]int64{-1}, 1, false), "", ""},
		{"near/eps-rank-too-high", []int64{5, 37}, []int64{1, 1, 1}, rmsNormOps([]int64{-1}, 1, false), "", ""},
		{"near/rms-pow-not-half", d3, one, func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
			ms := b.bin(graph.Add, b.reduce(graph.ReduceMean, b.square(x, 0), []int64{-1}), eps)
			return b.bin(graph.Multiply, x, b.op(graph.Pow, []graph.LogicalTensor{ms}, "beta", float32(-1)))
		}, "", ""},
		{"near/rms-sum-not-mean", d3, one, func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
			ms := b.bin(graph.Add, b.reduce(graph.ReduceSum, b.square(x, 0), []int64{-1}), eps)
			return b.bin(graph.Divide, x, b.op(graph.Sqrt, []graph.LogicalTensor{ms}))
		}, "", ""},
		{"near/rms-divides-other", d3, one, func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
			ms := b.bin(graph.Add, b.reduce(graph.ReduceMean, b.square(x, 0), []int64{-1}), eps)
			return b.bin(graph.Divide, b.op(graph.Sqrt, []graph.LogicalTensor{ms}), x)
		}, "", ""},
		{"near/l2-mean-not-sum", []int64{6, 130}, one, func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
			n := b.op(graph.Sqrt, []graph.LogicalTensor{b.reduce(graph.ReduceMean, b.square(x, 0), []int64{1})})
			return b.bin(graph.Divide, x, b.bin(graph.Maximum, n, eps))
		}, "", ""},
		{"near/l2-minimum", []int64{6, 130}, one, l2NormOps([]int64{1}, true, graph.Minimum), "", ""},
		{"near/layernorm-subtracts-other", d3, one, func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
			m := b.reduce(graph.ReduceMean, x, []int64{2})
			d := b.bin(graph.Subtract, m, x)
			v := b.reduce(graph.ReduceMean, b.square(d, 0), []int64{2})
			return b.bin(graph.Divide, d, b.op(graph.Sqrt, []graph.LogicalTensor{b.bin(graph.Add, v, eps)}))
		}, "", lnName},
		{"near/layernorm-mean-read-twice", d3, one, func(b *patternGraph, x, eps graph.LogicalTensor) graph.LogicalTensor {
			m := b.reduce(graph.ReduceMean, x, []int64{2})
			d := b.bin(graph.Subtract, x, m)
			v := b.reduce(graph.ReduceMean, b.square(d, 0), []int64{2})
			y := b.bin(graph.Divide, d, b.op(graph.Sqrt, []graph.LogicalTensor{b.bin(graph.Add, v, eps)}))
			return b.bin(graph.Add, y, m) // the mean is read outside the pattern
		}, "", lnName},
	}
}

// buildPattern builds c over x (tensor 1) and eps (tensor 2), with the
// affine Multiply gamma (tensor 3, over the last dim) and Add beta
// (tensor 4) after it when affine.
func buildPattern(t *testing.T, c patternCase, dt dtypes.DataType, affine, relu bool) (*graph.Graph, graph.LogicalTensor) {
	b := newPatternGraph(t, dt)
	x := graph.NewLogicalTensor(1, dt, c.dims)
	eps := graph.NewLogicalTensor(2, dtypes.F32, c.eps)
	y := c.build(b, x, eps)
	if affine {
		gamma := graph.NewLogicalTensor(3, dt, c.dims[len(c.dims)-1:])
		beta := graph.NewLogicalTensor(4, dtypes.F32, c.dims[len(c.dims)-1:])
		y = b.bin(graph.Add, b.bin(graph.Multiply, y, gamma), beta)
	}
	if relu {
		y = b.op(graph.ReLU, []graph.LogicalTensor{y})
	}
	must(t, b.g.Finalize())
	return b.g, y
}

// TestNormPatternsPartition: each decomposed form is one supported
// partition (with gamma and beta after it as post-ops) whose verbose
// line names the pattern; each near-miss is not taken as one.
func TestNormPatternsPartition(t *testing.T) {
	for _, c := range patternCases() {
		for _, affine := range []bool{false, true} {
			g, y := buildPattern(t, c, dtypes.F32, affine, false)
			parts, err := Get(g, Fusion)
			must(t, err)
			if c.want == "" {
				for _, p := range parts {
					if p.pattern != "" && (c.not == "" || p.pattern == c.not) {
						t.Errorf("%s: recognized as %q: %v", c.name, p.pattern, parts)
					}
				}
				continue
			}
			if len(parts) != 1 || !parts[0].IsSupported() || parts[0].Reason() != "" {
				t.Fatalf("%s (affine %v): partitions %v; want one supported partition", c.name, affine, parts)
			}
			p := parts[0]
			if p.pattern != c.want {
				t.Errorf("%s: pattern %q, want %q", c.name, p.pattern, c.want)
			}
			// x is one port however many ops read it: the program reads
			// it in its passes only.
			ids := []uint64{1, 2}
			if affine {
				ids = append(ids, 3, 4)
			}
			var got []uint64
			for _, in := range p.Inputs() {
				got = append(got, in.ID)
			}
			if !slices.Equal(got, ids) {
				t.Errorf("%s: input ports %v, want %v", c.name, got, ids)
			}
			cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(y.ID, dtypes.F32, nil)})
			must(t, err)
			if line := cp.verboseLine(0); !strings.Contains(line, ","+c.want+": ") {
				t.Errorf("%s: verbose line %q does not name the pattern", c.name, line)
			}
			if p.Pattern() != c.want {
				t.Errorf("%s: Pattern() %q, want %q", c.name, p.Pattern(), c.want)
			}
			if jit.EffectiveISA() != jit.None && (cp.Reason() != "" || !strings.HasPrefix(cp.Impl(), "jit:")) {
				t.Errorf("%s: impl %q, reason %q; want machine code", c.name, cp.Impl(), cp.Reason())
			}
		}
	}
}

// evalOps runs g's ops one by one over float64 tensors (dense
// row-major, numpy broadcasting), each result passed through round: the
// identity for the float64 oracle, a rounding to f32 for an f32
// op-by-op run. vals holds the inputs by id; it gets every output.
func evalOps(t *testing.T, g *graph.Graph, vals map[uint64][]float64, dims map[uint64][]int64, round func(float64) float64) {
	for _, op := range g.Ops() {
		in := func(i int) ([]float64, []int64) { id := op.Inputs[i].ID; return vals[id], dims[id] }
		var out []float64
		var od []int64
		switch k := op.Kind; {
		case k == graph.ReduceMean || k == graph.ReduceSum || k == graph.ReduceL2 || k == graph.ReduceMax:
			x, xd := in(0)
			axes, _ := op.Ints("axes")
			red := make([]bool, len(xd))
			for _, a := range axes {
				i, _ := norm.AxisIn(a, len(xd))
				red[i] = true
			}
			od = slices.Clone(xd)
			cnt := 1.0
			for i := range od {
				if red[i] {
					cnt *= float64(od[i])
					od[i] = 1
				}
			}
			out = make([]float64, elems(od))
			if k == graph.ReduceMax {
				for i := range out {
					out[i] = math.Inf(-1)
				}
			}
			forEach(xd, func(idx []int64, off int) {
				v := x[off]
				switch k {
				case graph.ReduceL2:
					v *= v
				case graph.ReduceMax:
					o := &out[offsetIn(od, idx)]
					*o = math.Max(*o, v)
					return
				}
				out[offsetIn(od, idx)] += v
			})
			for i := range out {
				switch k {
				case graph.ReduceMean:
					out[i] /= cnt
				case graph.ReduceL2:
					out[i] = math.Sqrt(out[i])
				}
			}
		case op.Kind.IsBinary():
			a, ad := in(0)
			b, bd := in(1)
			od = broadcastDims(ad, bd)
			out = make([]float64, elems(od))
			forEach(od, func(idx []int64, off int) {
				x, y := a[offsetIn(ad, idx)], b[offsetIn(bd, idx)]
				switch k {
				case graph.Add:
					out[off] = x + y
				case graph.Subtract:
					out[off] = x - y
				case graph.Multiply:
					out[off] = x * y
				case graph.Divide:
					out[off] = x / y
				case graph.Maximum:
					out[off] = math.Max(x, y)
				case graph.Minimum:
					out[off] = math.Min(x, y)
				}
			})
		default:
			x, xd := in(0)
			od = xd
			out = make([]float64, len(x))
			beta, _ := op.Float("beta")
			var q graph.QuantParams
			if k == graph.Quantize || k == graph.Dequantize {
				q, _ = graph.QuantParamsOf(op, len(xd))
			}
			for i, v := range x {
				switch k {
				case graph.Dequantize:
					out[i] = (v - float64(q.Zps[0])) * float64(q.Scales[0])
				case graph.Exp:
					out[i] = math.Exp(v)
				case graph.TypeCast:
					out[i] = v
				case graph.Quantize: // before the rounding and saturation
					out[i] = v/float64(q.Scales[0]) + float64(q.Zps[0])
				case graph.Square:
					out[i] = v * v
				case graph.Sqrt:
					out[i] = math.Sqrt(v)
				case graph.Pow:
					out[i] = math.Pow(v, float64(beta))
				case graph.ReLU:
					out[i] = math.Max(v, 0)
				default:
					t.Fatalf("evalOps: no %v", k)
				}
			}
		}
		for i := range out {
			out[i] = round(out[i])
		}
		vals[op.Outputs[0].ID], dims[op.Outputs[0].ID] = out, od
	}
}

func elems(d []int64) int {
	n := 1
	for _, v := range d {
		n *= int(v)
	}
	return n
}

// forEach calls f with every multi-index of dims and its dense offset.
func forEach(dims []int64, f func(idx []int64, off int)) {
	idx := make([]int64, len(dims))
	for off := 0; off < elems(dims); off++ {
		f(idx, off)
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
	}
}

// offsetIn is the dense offset in a tensor of dims (right-aligned,
// broadcast where a dim is 1) of the multi-index idx.
func offsetIn(dims, idx []int64) int {
	off, k := 0, len(idx)-len(dims)
	for i, n := range dims {
		v := idx[k+i]
		if n == 1 {
			v = 0
		}
		off = off*int(n) + int(v)
	}
	return off
}

func broadcastDims(a, b []int64) []int64 {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := slices.Clone(a)
	for i, n := range b {
		j := len(a) - len(b) + i
		if out[j] == 1 {
			out[j] = n
		}
	}
	return out
}

// TestNormPatternsRun: each recognized pattern, alone and with gamma,
// beta and a ReLU after it, in f32 and bf16, computes what its ops
// compute one by one: within the normalization tolerance of package
// oracle of the float64 evaluation and of an f32 op-by-op run (each op
// rounded to f32), with a small and a large epsilon.
func TestNormPatternsRun(t *testing.T) { forEachISA(t, normPatternsRun) }

func normPatternsRun(t *testing.T, isa jit.ISA) {
	r := rand.New(rand.NewPCG(50, uint64(isa)))
	for _, c := range patternCases() {
		if c.want == "" {
			continue
		}
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
			for _, affine := range []bool{false, true} {
				name := fmt.Sprintf("%s/%v/affine=%v", c.name, dt, affine)
				g, y := buildPattern(t, c, dt, affine, affine)
				parts, err := Get(g, Fusion)
				must(t, err)
				if len(parts) != 1 {
					t.Fatalf("%s: %v", name, parts)
				}
				p := parts[0]
				cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(y.ID, dt, nil)})
				must(t, err)
				wantImpl(t, cp, isa)
				for _, epsV := range []float32{1e-5, 0.25} {
					checkPatternRun(t, name, r, g, cp, y.ID, dt, epsV)
				}
			}
		}
	}
}

// checkPatternRun executes cp over random inputs and compares its
// output with the op-by-op evaluations of g.
func checkPatternRun(t *testing.T, name string, r *rand.Rand, g *graph.Graph, cp *CompiledPartition, out uint64, dt dtypes.DataType, epsV float32) {
	t.Helper()
	vals, dims := map[uint64][]float64{}, map[uint64][]int64{}
	var ins []Tensor
	for _, lt := range cp.Inputs() {
		n := elems(lt.Dims)
		v := make([]float64, n)
		raw := make([]byte, n*lt.DataType.Size())
		for i := range v {
			x := float32(r.NormFloat64()*2 + 0.5)
			if lt.ID == 2 {
				x = epsV
			}
			dtypes.StoreF32(lt.DataType, raw, int64(i), x)
			v[i] = float64(dtypes.LoadF32(lt.DataType, raw, int64(i)))
		}
		vals[lt.ID], dims[lt.ID] = v, lt.Dims
		tn, err := NewTensor(lt, raw)
		must(t, err)
		ins = append(ins, tn)
	}
	lt, err := cp.QueryLogicalTensor(out)
	must(t, err)
	dst := make([]byte, elems(lt.Dims)*dt.Size())
	ot, err := NewTensor(lt, dst)
	must(t, err)
	must(t, cp.Execute(ins, []Tensor{ot}))
	exact := map[uint64][]float64{}
	exactDims := map[uint64][]int64{}
	f32 := map[uint64][]float64{}
	f32Dims := map[uint64][]int64{}
	for id, v := range vals {
		exact[id], exactDims[id], f32[id], f32Dims[id] = v, dims[id], v, dims[id]
	}
	evalOps(t, g, exact, exactDims, func(v float64) float64 { return v })
	evalOps(t, g, f32, f32Dims, func(v float64) float64 { return float64(float32(v)) })
	// The bound of package oracle for a row of n (the widest
	// normalized extent here), relative to the largest result, at
	// least 1: the pattern's results are of that magnitude.
	mag := 1.0
	for _, w := range exact[out] {
		mag = max(mag, math.Abs(w))
	}
	bound := (4*math.Ceil(math.Log2(float64(len(exact[out]))+1)) + 16) / (1 << 24) * mag
	for i, w := range exact[out] {
		got := float64(dtypes.LoadF32(dt, dst, int64(i)))
		for _, want := range []float64{w, f32[out][i]} {
			if math.Abs(got-want) > oracle.NormTolerance(dt, want, bound) || math.IsNaN(got) {
				t.Fatalf("%s (eps %v, %s): element %d is %v, want %v (float64 %v)", name, epsV, cp.Impl(), i, got, want, w)
			}
		}
	}
}

// TestNormPatternHostileEps: an epsilon tensor that is not one element
// at compile is an InvalidShape error; an epsilon value that is NaN,
// infinite or negative at Execute is an InvalidArguments error that
// names it (the LayerNorm op's rule for its epsilon attribute), and dst
// is not written.
func TestNormPatternHostileEps(t *testing.T) {
	c := patternCases()[4] // rmsnorm/div, eps of dims [1]
	g, y := buildPattern(t, c, dtypes.F32, false, false)
	parts, err := Get(g, Fusion)
	must(t, err)
	p := parts[0]
	ins := p.Inputs()
	for i := range ins {
		if ins[i].ID == 2 {
			ins[i].Dims = []int64{3} // the graph's [1] made [3] at compile
		}
	}
	outLT := graph.NewLogicalTensorAny(y.ID, dtypes.F32, nil)
	if _, err := p.Compile(ins, []graph.LogicalTensor{outLT}); !errors.Is(err, status.InvalidShape) || !strings.Contains(err.Error(), "tensor 2") {
		t.Errorf("an epsilon of 3 elements: Compile gives %v, want InvalidShape naming tensor 2", err)
	}
	cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{outLT})
	must(t, err)
	x := make([]float32, 3*5*37)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	for _, e := range []float32{float32(math.NaN()), -1e-6, float32(math.Inf(1))} {
		xt, err := NewTensor(cp.Inputs()[0], x)
		must(t, err)
		et, err := NewTensor(cp.Inputs()[1], []float32{e})
		must(t, err)
		lt, err := cp.QueryLogicalTensor(y.ID)
		must(t, err)
		dst := make([]float32, 3*5*37)
		dst[0] = 42
		ot, err := NewTensor(lt, dst)
		must(t, err)
		err = cp.Execute([]Tensor{xt, et}, []Tensor{ot})
		if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), "tensor 2") {
			t.Errorf("epsilon %v: Execute gives %v, want an error naming the epsilon", e, err)
		}
		if dst[0] != 42 {
			t.Errorf("epsilon %v: dst written", e)
		}
	}
}

// TestLayerNormPatternNoCancellation: the decomposed layer norm keeps
// the two-pass variance of its ops: data of mean 1e4 and spread 1 keeps
// f32 accuracy (E[x^2] - E[x]^2 in f32 would lose every digit).
func TestLayerNormPatternNoCancellation(t *testing.T) {
	c := patternCase{name: "layernorm", dims: []int64{4, 512}, eps: []int64{1}, build: layerNormOps([]int64{-1}, []int64{-1}, 0, false)}
	g, y := buildPattern(t, c, dtypes.F32, false, false)
	parts, err := Get(g, Fusion)
	must(t, err)
	p := parts[0]
	cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(y.ID, dtypes.F32, nil)})
	must(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 4*512)
	xs := make([]float64, len(x))
	for i := range x {
		x[i] = float32(1e4 + r.NormFloat64())
		xs[i] = float64(x[i])
	}
	xt, err := NewTensor(cp.Inputs()[0], x)
	must(t, err)
	et, err := NewTensor(cp.Inputs()[1], []float32{1e-5})
	must(t, err)
	lt, err := cp.QueryLogicalTensor(y.ID)
	must(t, err)
	dst := make([]float32, len(x))
	ot, err := NewTensor(lt, dst)
	must(t, err)
	must(t, cp.Execute([]Tensor{xt, et}, []Tensor{ot}))
	vals := map[uint64][]float64{1: xs, 2: {float64(float32(1e-5))}}
	dims := map[uint64][]int64{1: c.dims, 2: c.eps}
	evalOps(t, g, vals, dims, func(v float64) float64 { return v })
	for i, w := range vals[y.ID] {
		if got := float64(dst[i]); math.Abs(got-w) > 1e-3 {
			t.Fatalf("element %d is %g, want %g", i, got, w)
		}
	}
}

// TestNormPatternsJSON: each pattern's graph written to JSON and read
// back partitions the same: one partition of the same ops and pattern.
func TestNormPatternsJSON(t *testing.T) {
	for _, c := range patternCases() {
		if c.want == "" {
			continue
		}
		g, _ := buildPattern(t, c, dtypes.BF16, true, true)
		var buf bytes.Buffer
		must(t, g.WriteJSON(&buf))
		back, err := graph.ReadJSON(&buf)
		must(t, err)
		must(t, back.Finalize())
		parts, err := Get(back, Fusion)
		must(t, err)
		want, err := Get(g, Fusion)
		must(t, err)
		if len(parts) != 1 || parts[0].pattern != c.want || fmt.Sprint(parts) != fmt.Sprint(want) {
			t.Errorf("%s: after the JSON round trip %v, want %v (pattern %q)", c.name, parts, want, c.want)
		}
	}
}

// TestNormPatternQuantized: a decomposed RMS norm, its gamma, a TypeCast
// and a per-tensor Quantize to s8 are one partition, which writes the
// s8 output: the ops' float64 result, rounded and saturated, on every
// ISA.
func TestNormPatternQuantized(t *testing.T) {
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		f32 := dtypes.F32
		b := newPatternGraph(t, f32)
		x := graph.NewLogicalTensor(1, f32, []int64{6, 40})
		eps := graph.NewLogicalTensor(2, f32, []int64{1})
		y := rmsNormOps([]int64{-1}, 1, true)(b, x, eps)
		y = b.bin(graph.Multiply, y, graph.NewLogicalTensor(3, f32, []int64{40}))
		y = b.op(graph.TypeCast, []graph.LogicalTensor{y})
		q := graph.NewOp(b.next, graph.Quantize, "").AddInput(y).AddOutput(graph.NewLogicalTensorAny(b.next, dtypes.S8, nil)).
			SetAttr("qtype", "per_tensor").SetAttr("scales", []float32{0.05}).SetAttr("zps", []int64{-4}).SetAttr("axis", int64(0))
		must(t, b.g.AddOp(q))
		must(t, b.g.Finalize())
		parts, err := Get(b.g, Fusion)
		must(t, err)
		if len(parts) != 1 || parts[0].pattern != rmsPow || len(parts[0].Ops()) != 8 {
			t.Fatalf("%v; want one partition of the pattern, the Multiply, the TypeCast and the Quantize", parts)
		}
		p := parts[0]
		cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensorAny(q.Outputs[0].ID, dtypes.S8, nil)})
		must(t, err)
		wantImpl(t, cp, isa)
		r := rand.New(rand.NewPCG(8, 9))
		vals := map[uint64][]float64{}
		var ins []Tensor
		for _, lt := range cp.Inputs() {
			v := make([]float32, elems(lt.Dims))
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			if lt.ID == 2 {
				v[0] = 1e-5
			}
			f := make([]float64, len(v))
			for i := range v {
				f[i] = float64(v[i])
			}
			vals[lt.ID] = f
			tn, err := NewTensor(lt, v)
			must(t, err)
			ins = append(ins, tn)
		}
		lt, err := cp.QueryLogicalTensor(q.Outputs[0].ID)
		must(t, err)
		dst := make([]int8, 6*40)
		ot, err := NewTensor(lt, dst)
		must(t, err)
		must(t, cp.Execute(ins, []Tensor{ot}))
		evalOps(t, b.g, vals, map[uint64][]int64{1: x.Dims, 2: eps.Dims, 3: {40}}, func(v float64) float64 { return v })
		spread := 0
		for i, w := range vals[q.Outputs[0].ID] {
			w = math.Min(math.Max(w, -128), 127)
			if got := float64(dst[i]); math.Abs(got-w) > 0.5+1e-3 {
				t.Fatalf("element %d is %v, want %v rounded", i, got, w)
			}
			if dst[i] != dst[0] {
				spread++
			}
		}
		if spread == 0 {
			t.Fatal("every output is the same: the test checks nothing")
		}
	})
}

// TestL2NormWithoutEps: x divided by its L2 norm, with no eps (ONNX's
// LpNormalization as exporters write it), is one partition whose only
// input is x; a row of zeros gives NaN, as the ops do.
func TestL2NormWithoutEps(t *testing.T) {
	const rows, n = 6, 130
	for _, reduceL2 := range []bool{true, false} {
		b := newPatternGraph(t, dtypes.F32)
		x := graph.NewLogicalTensor(1, dtypes.F32, []int64{rows, n})
		var norm graph.LogicalTensor
		if reduceL2 {
			norm = b.reduce(graph.ReduceL2, x, []int64{1})
		} else {
			norm = b.op(graph.Sqrt, []graph.LogicalTensor{b.reduce(graph.ReduceSum, b.square(x, 2), []int64{-1})})
		}
		y := b.bin(graph.Divide, x, norm)
		must(t, b.g.Finalize())
		parts, err := Get(b.g, Fusion)
		must(t, err)
		if len(parts) != 1 || !parts[0].IsSupported() {
			t.Fatalf("reduceL2=%v: partitions %v; want one supported", reduceL2, parts)
		}
		p := parts[0]
		if want := "Divide"; !strings.HasPrefix(p.Pattern(), "l2 normalization from ") || !strings.HasSuffix(p.Pattern(), ", Sqrt, "+want) && !strings.HasSuffix(p.Pattern(), "ReduceL2, "+want) {
			t.Errorf("reduceL2=%v: Pattern() %q", reduceL2, p.Pattern())
		}
		if ins := p.Inputs(); len(ins) != 1 || ins[0].ID != x.ID {
			t.Fatalf("reduceL2=%v: input ports %v; want x alone", reduceL2, ins)
		}
		src := make([]float32, rows*n)
		r := rand.New(rand.NewPCG(7, 1))
		for i := range src {
			if i/n != 2 { // row 2 stays zero
				src[i] = float32(r.NormFloat64())
			}
		}
		forEachISA(t, func(t *testing.T, isa jit.ISA) {
			out := make([]float32, rows*n)
			cp, err := p.Compile(p.Inputs(), []graph.LogicalTensor{graph.NewLogicalTensor(y.ID, dtypes.F32, []int64{rows, n})})
			must(t, err)
			wantImpl(t, cp, isa)
			in, err := NewTensor(p.Inputs()[0], src)
			must(t, err)
			o, err := NewTensor(cp.Outputs()[0], out)
			must(t, err)
			must(t, cp.Execute([]Tensor{in}, []Tensor{o}))
			for i := range rows {
				ss := 0.0
				for j := range n {
					ss += float64(src[i*n+j]) * float64(src[i*n+j])
				}
				for j := range n {
					want, got := float64(src[i*n+j])/math.Sqrt(ss), float64(out[i*n+j])
					if math.IsNaN(want) != math.IsNaN(got) || math.Abs(got-want) > 1e-6 {
						t.Fatalf("reduceL2=%v: y[%d][%d] = %v, want %v", reduceL2, i, j, got, want)
					}
				}
			}
		})
	}
}

// TestDecomposedCutShortByEnd: every decomposed normalization cut short
// after any of its ops, whose last output an End op reads, partitions
// with no panic and no error: a pattern's op with no output (End) ends
// no pattern.
func TestDecomposedCutShortByEnd(t *testing.T) {
	f32 := dtypes.F32
	type step struct {
		kind  graph.OpKind
		ins   []uint64
		attrs map[string]any
	}
	keep := map[string]any{"axes": []int64{-1}, "keep_dims": true}
	pow := func(b float32) map[string]any { return map[string]any{"beta": b} }
	// x is tensor 1, eps 2; step i writes tensor 10+i.
	forms := map[string][]step{
		"softmax": {{graph.ReduceMax, []uint64{1}, keep}, {graph.Subtract, []uint64{1, 10}, nil}, {graph.Exp, []uint64{11}, nil},
			{graph.ReduceSum, []uint64{12}, keep}, {graph.Divide, []uint64{12, 13}, nil}},
		"layer norm": {{graph.ReduceMean, []uint64{1}, keep}, {graph.Subtract, []uint64{1, 10}, nil}, {graph.Pow, []uint64{11}, pow(2)},
			{graph.ReduceMean, []uint64{12}, keep}, {graph.Add, []uint64{13, 2}, nil}, {graph.Sqrt, []uint64{14}, nil},
			{graph.Divide, []uint64{11, 15}, nil}},
		"rms norm, Pow -0.5": {{graph.Multiply, []uint64{1, 1}, nil}, {graph.ReduceMean, []uint64{10}, keep}, {graph.Add, []uint64{11, 2}, nil},
			{graph.Pow, []uint64{12}, pow(-0.5)}, {graph.Multiply, []uint64{1, 13}, nil}},
		"rms norm, Sqrt": {{graph.Square, []uint64{1}, nil}, {graph.ReduceMean, []uint64{10}, keep}, {graph.Add, []uint64{11, 2}, nil},
			{graph.Sqrt, []uint64{12}, nil}, {graph.Divide, []uint64{1, 13}, nil}},
		"l2": {{graph.ReduceL2, []uint64{1}, keep}, {graph.Maximum, []uint64{10, 2}, nil}, {graph.Divide, []uint64{1, 11}, nil}},
		"l2 from squares": {{graph.Square, []uint64{1}, nil}, {graph.ReduceSum, []uint64{10}, keep}, {graph.Sqrt, []uint64{11}, nil},
			{graph.Add, []uint64{2, 12}, nil}, {graph.Divide, []uint64{1, 13}, nil}},
	}
	for name, steps := range forms {
		for k := 1; k <= len(steps); k++ {
			g := graph.New()
			tensors := map[uint64]graph.LogicalTensor{1: graph.NewLogicalTensor(1, f32, []int64{4, 3, 37}), 2: graph.NewLogicalTensor(2, f32, []int64{1})}
			for i, s := range steps[:k] {
				out := graph.NewLogicalTensorAny(uint64(10+i), f32, nil)
				tensors[out.ID] = out
				op := graph.NewOp(uint64(i+1), s.kind, fmt.Sprint(s.kind))
				for _, in := range s.ins {
					op.AddInput(tensors[in])
				}
				op.AddOutput(out)
				for a, v := range s.attrs {
					op.SetAttr(a, v)
				}
				if err := g.AddOp(op); err != nil {
					t.Fatalf("%s, %d ops: %v", name, k, err)
				}
			}
			if err := g.AddOp(graph.NewOp(99, graph.End, "end").AddInput(tensors[uint64(10+k-1)])); err != nil {
				t.Fatalf("%s, %d ops: %v", name, k, err)
			}
			must(t, g.Finalize())
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s cut after %d ops: panic %v", name, k, r)
					}
				}()
				if _, err := Get(g, Fusion); err != nil {
					t.Errorf("%s cut after %d ops: %v", name, k, err)
				}
			}()
		}
	}
}

package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/shape"
)

// TestKindsDifferential runs random problems of every reduction kind and
// pre-op fusion (rank, layouts, axes, keep_dims, dtypes, post-ops, special
// values) under every ISA cap and checks each result against the float64
// reference's interval, and that the backends agree on NaN.
func TestKindsDifferential(t *testing.T) {
	n := 25
	if testing.Short() {
		n = 8
	}
	for _, k := range genKinds {
		t.Run(k.String(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(k.red)<<8|uint64(k.pre), 21))
			for i := range n {
				b := make([]byte, 48)
				for j := range b {
					b[j] = byte(r.IntN(256))
				}
				p := genFromBytes(&fuzzBytes{b: b}, r)
				p.kind, p.squareAs = k, 0
				if k.pre == graph.Square { // every form of the square
					p.squareAs = []graph.OpKind{0, graph.Pow, graph.Multiply}[i%3]
				}
				checkJITvsInterp(t, p, r, i%4)
			}
		})
	}
}

// runKind compiles and executes problem p on src under the current ISA
// cap and returns the output.
func runKind(t *testing.T, p genProblem, src buffer) buffer {
	t.Helper()
	dst, _, err := p.run(src, nil)
	if err != nil {
		t.Fatalf("%s %v axes %v: %v", p.kind, p.src, p.axes, err)
	}
	return dst
}

// A reduced axis of size 0 gives each kind's empty result, in every dst
// type: sum 0, prod 1, max -Inf, min +Inf, L1 and L2 0, mean NaN (0/0);
// a pre-op changes nothing. Dims whose product would overflow beside
// the zero are no error.
func TestEmptyReductions(t *testing.T) {
	want := map[graph.OpKind]float64{
		graph.ReduceSum: 0, graph.ReduceProd: 1, graph.ReduceMax: math.Inf(-1), graph.ReduceMin: math.Inf(1),
		graph.ReduceL1: 0, graph.ReduceL2: 0, graph.ReduceMean: math.NaN(),
	}
	pairs := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32}}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, k := range genKinds {
			for _, pr := range pairs {
				for _, shape := range []struct {
					dims []int64
					axes []int64
				}{{[]int64{3, 0, 5}, []int64{1}}, {[]int64{0}, []int64{0}}, {[]int64{4, 0}, []int64{0, 1}},
					// No element, whatever the other dims multiply to.
					{[]int64{1 << 62, 0, 4}, []int64{0, 1, 2}}} {
					src := graph.NewLogicalTensor(0, pr[0], shape.dims)
					p := genProblem{kind: k, src: src, dstDT: pr[1], axes: shape.axes}
					dst := runKind(t, p, newBuffer(src, func() float64 { return 1 }))
					w := want[k.op()]
					n := 0
					forEachIndex(dst.lt.Dims, func(idx []int64) {
						n++
						got := load(dst.lt.DataType, dst.bytes, offset(idx, dst.lt.Strides))
						if got != w && !(math.IsNaN(got) && math.IsNaN(w)) {
							t.Fatalf("%s %v -> %s: dst%v = %v, want %v", k, src, pr[1], idx, got, w)
						}
					})
					if n == 0 {
						t.Fatalf("%s %v: no outputs", k, src)
					}
				}
			}
		}
	})
}

// NaN propagates through max and min (and through Abs before them)
// wherever it sits in a row or column: first, last, in a vector tail,
// beside infinities; rows without NaN give their exact extreme.
func TestNaNThroughMaxMin(t *testing.T) {
	kinds := []redKind{{red: graph.ReduceMax}, {red: graph.ReduceMin}, {graph.ReduceMax, graph.Abs}, {graph.ReduceMin, graph.Abs}}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := newRand(5)
		for _, k := range kinds {
			for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
				for _, n := range []int64{1, 7, 16, 17, 33, 100, 1000} {
					for _, axis := range []int64{0, 1} {
						dims := []int64{n, 9}
						if axis == 1 {
							dims = []int64{9, n}
						}
						src := graph.NewLogicalTensor(0, dt, dims)
						// Output j has its NaN at position pos[j] of its
						// reduced extent (none for j >= len(pos)).
						pos := []int64{0, n - 1, n / 2, (n - 1) / 16 * 16, n - 1, 0}
						idxOf := func(idx []int64) (out, at int64) {
							if axis == 1 {
								return idx[0], idx[1]
							}
							return idx[1], idx[0]
						}
						in := newBuffer(src, func() float64 { return 0 })
						forEachIndex(dims, func(idx []int64) {
							out, at := idxOf(idx)
							v := -4 + 8*r.Float64()
							switch {
							case out < int64(len(pos)) && at == pos[out]:
								v = math.NaN()
							case out == 4 && at == 0, out == 7 && at == n/3:
								v = math.Inf(1)
							case out == 5 && at == n-1, out == 8 && at == n/2:
								v = math.Inf(-1)
							}
							store(dt, in.bytes, offset(idx, src.Strides), v)
						})
						p := genProblem{kind: k, src: src, dstDT: dt, axes: []int64{axis}, reduce: []bool{axis == 0, axis == 1}}
						dst := runKind(t, p, in)
						if msg := verifyKind(k, in, p.reduce, false, nil, dst); msg != "" {
							t.Fatalf("%s %s n=%d axis %d: %s", k, dt, n, axis, msg)
						}
						for j := range pos {
							if got := load(dt, dst.bytes, int64(j)); !math.IsNaN(got) {
								t.Fatalf("%s %s n=%d axis %d: output %d is %v, want NaN", k, dt, n, axis, j, got)
							}
						}
					}
				}
			}
		}
	})
}

// Results are bit-identical for any thread count, for every kind, on
// shapes the runtime splits into many calls and two stages.
func TestKindsDeterministicAcrossThreadCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("large problems")
	}
	prev := jit.Threads()
	defer jit.SetThreads(prev)
	// One of each combine and finalize, and a pre-op (min, L1 and Abs ->
	// max reuse their machinery).
	kinds := []redKind{{red: graph.ReduceSum}, {red: graph.ReduceMax}, {red: graph.ReduceProd},
		{red: graph.ReduceL2}, {graph.ReduceSum, graph.Square}}
	if kerneltest.RaceDetector {
		kinds = kinds[:2] // the race detector slows the interpreter's loops tenfold
	}
	cases := []struct {
		name string
		src  graph.LogicalTensor
		axes []int64
		ddt  dtypes.DataType
	}{
		{"rows", graph.NewLogicalTensor(0, dtypes.F32, []int64{32, 20000}), []int64{1}, dtypes.F32},
		{"long rows, two stages", graph.NewLogicalTensor(0, dtypes.BF16, []int64{2, 1 << 20}), []int64{1}, dtypes.BF16},
		{"columns", graph.NewLogicalTensor(0, dtypes.F16, []int64{2000, 300}), []int64{0}, dtypes.F32},
	}
	for _, k := range kinds {
		for _, c := range cases {
			// Values near 1 keep a product of millions inside the f32 range.
			gen := uniform(newRand(11), -1, 3)
			if k.red == graph.ReduceProd {
				gen = uniform(newRand(11), 0.995, 1.005)
			}
			in := newBuffer(c.src, gen)
			reduce := make([]bool, len(c.src.Dims))
			for _, a := range c.axes {
				reduce[a] = true
			}
			p := genProblem{kind: k, src: c.src, dstDT: c.ddt, axes: c.axes, reduce: reduce}
			for i, isa := range isaCaps() {
				t.Run(fmt.Sprintf("%s/%s/%s", k, c.name, isa), func(t *testing.T) {
					pi := jit.SetMaxISA(isa)
					defer jit.SetMaxISA(pi)
					var first []byte
					for _, th := range []int{1, 2} {
						jit.SetThreads(th)
						dst := runKind(t, p, in)
						switch {
						case first == nil:
							first = dst.bytes
							// The reference walks every element: once per kind, on
							// the smallest shape (the differential tests cover values).
							if i == 0 && c.name == "columns" {
								if msg := verifyKind(k, in, reduce, false, nil, dst); msg != "" {
									t.Fatal(msg)
								}
							}
						case !slices.Equal(first, dst.bytes):
							t.Fatalf("%d threads: results differ from 1 thread", th)
						}
					}
				})
			}
		}
	}
}

// addPre adds src(0) -> pre (op 3, tensor 3) -> red (op 1, tensor 1) with
// the given axes, and returns the reduction's output. A Pow pre-op has
// beta 2 and a Multiply multiplies src by itself: the square's other forms.
func addPre(t *testing.T, g *graph.Graph, pre, red graph.OpKind, src graph.LogicalTensor, axes []int64) graph.LogicalTensor {
	t.Helper()
	out := graph.NewLogicalTensorAny(1, src.DataType, nil)
	in := src
	if pre != 0 {
		in = graph.NewLogicalTensorAny(3, src.DataType, nil)
		op := graph.NewOp(3, pre, "pre").AddInput(src).AddOutput(in)
		switch pre {
		case graph.Pow:
			op.SetAttr("beta", float32(2))
		case graph.Multiply:
			op.AddInput(src)
		}
		must(t, g.AddOp(op))
	}
	must(t, g.AddOp(graph.NewOp(1, red, "red").AddInput(in).AddOutput(out).SetAttr("axes", axes)))
	return out
}

// An Abs or Square pre-op fuses into a ReduceSum, ReduceMean, ReduceMax or
// ReduceMin as its transform, and so do a Pow with beta 2 and a Multiply
// of a tensor by itself (ONNX's ways to write a square); where a pre-op
// does not fuse, its own partition says why.
func TestPreOpFusion(t *testing.T) {
	f32 := dtypes.F32
	data := []float64{1, -2, 3, -4, 0.5, -0.25}
	src := graph.NewLogicalTensor(0, f32, []int64{2, 3})
	fused := []struct {
		pre, red graph.OpKind
		want     []float64
	}{
		{graph.Square, graph.ReduceSum, []float64{14, 16.3125}},
		{graph.Square, graph.ReduceMean, []float64{14.0 / 3, 16.3125 / 3}},
		{graph.Square, graph.ReduceMax, []float64{9, 16}},
		{graph.Pow, graph.ReduceMean, []float64{14.0 / 3, 16.3125 / 3}},
		{graph.Pow, graph.ReduceSum, []float64{14, 16.3125}},
		{graph.Multiply, graph.ReduceMean, []float64{14.0 / 3, 16.3125 / 3}},
		{graph.Multiply, graph.ReduceMin, []float64{1, 0.0625}},
		{graph.Abs, graph.ReduceSum, []float64{6, 4.75}},
		{graph.Abs, graph.ReduceMean, []float64{2, 4.75 / 3}},
		{graph.Abs, graph.ReduceMax, []float64{3, 4}},
		{graph.Abs, graph.ReduceMin, []float64{1, 0.25}},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, c := range fused {
			g := graph.New()
			cur := addPre(t, g, c.pre, c.red, src, []int64{1})
			must(t, g.AddOp(graph.NewOp(2, graph.ReLU, "").AddInput(cur).AddOutput(graph.NewLogicalTensorAny(2, f32, nil))))
			must(t, g.Finalize())
			parts, err := Get(g, Fusion)
			must(t, err)
			if len(parts) != 1 || !parts[0].IsSupported() || len(parts[0].Ops()) != 3 {
				t.Fatalf("%s -> %s -> ReLU: partitions %v", c.pre, c.red, parts)
			}
			if in := parts[0].Inputs(); len(in) != 1 || in[0].ID != 0 {
				t.Fatalf("%s -> %s: input ports %v, want the pre-op's src", c.pre, c.red, in)
			}
			cp, err := parts[0].Compile([]graph.LogicalTensor{src}, parts[0].Outputs())
			must(t, err)
			line := cp.verboseLine(0)
			transform := "square"
			if c.pre == graph.Abs {
				transform = "abs"
			}
			if want := c.pre.String() + "+" + c.red.String() + "+ReLU"; !strings.Contains(line, want) ||
				!strings.Contains(line, " alg:"+transform+">") {
				t.Errorf("verbose line %q does not name the fused pre-op", line)
			}
			out, _ := cp.QueryLogicalTensor(2)
			res := make([]float32, 2)
			st, _ := NewTensor(src, toF32(data))
			dt, _ := NewTensor(out, res)
			must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
			for i, w := range c.want {
				if math.Abs(float64(res[i])-w) > 1e-6*math.Abs(w) {
					t.Errorf("%s -> %s: out[%d] = %v, want %v", c.pre, c.red, i, res[i], w)
				}
			}
			// The debug policy fuses nothing.
			dparts, err := Get(g, Debug)
			must(t, err)
			if len(dparts) != 3 || dparts[0].IsSupported() || !dparts[1].IsSupported() {
				t.Errorf("debug policy: %v", dparts)
			}
		}
	})

	notFused := []struct {
		name  string
		build func(g *graph.Graph)
		want  string
	}{
		{"Abs before ReduceL1", func(g *graph.Graph) { addPre(t, g, graph.Abs, graph.ReduceL1, src, []int64{1}) },
			"not fused before op 1 (ReduceL1 \"red\"): Abs before ReduceL1 would not be one per-element transform"},
		{"Square before ReduceL2", func(g *graph.Graph) { addPre(t, g, graph.Square, graph.ReduceL2, src, []int64{1}) },
			"Square before ReduceL2 would not be one per-element transform"},
		{"Abs before ReduceProd", func(g *graph.Graph) { addPre(t, g, graph.Abs, graph.ReduceProd, src, []int64{1}) },
			"Abs before ReduceProd would not be one per-element transform"},
		{"Sqrt", func(g *graph.Graph) { addPre(t, g, graph.Sqrt, graph.ReduceSum, src, []int64{1}) },
			"Sqrt is not a pre-op gdnn fuses (Abs and Square are, Pow with beta 2 and Multiply of a tensor by itself as squares, and Exp as log-sum-exp)"},
		{"Pow with beta 3", func(g *graph.Graph) {
			p := graph.NewLogicalTensorAny(3, f32, nil)
			must(t, g.AddOp(graph.NewOp(3, graph.Pow, "pre").AddInput(src).AddOutput(p).SetAttr("beta", float32(3))))
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "red").AddInput(p).
				AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axes", []int64{1})))
		}, "it is Pow with beta 3, and a Pow fuses before a reduction only as a square (beta 2)"},
		{"Pow with beta 2 before ReduceL2", func(g *graph.Graph) { addPre(t, g, graph.Pow, graph.ReduceL2, src, []int64{1}) },
			"Pow before ReduceL2 would not be one per-element transform"},
		{"Multiply of two tensors before ReduceMax", func(g *graph.Graph) {
			m := graph.NewLogicalTensorAny(3, f32, nil)
			other := graph.NewLogicalTensor(5, f32, []int64{2, 3})
			must(t, g.AddOp(graph.NewOp(3, graph.Multiply, "pre").AddInput(src).AddInput(other).AddOutput(m)))
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceMax, "red").AddInput(m).
				AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axes", []int64{1})))
		}, "a Multiply of two tensors fuses before ReduceSum and ReduceMean only, not ReduceMax"},
		{"Exp without Log", func(g *graph.Graph) { addPre(t, g, graph.Exp, graph.ReduceSum, src, []int64{1}) },
			"Exp fuses before a ReduceSum only as log-sum-exp, with a Log as the sum's only consumer"},
		{"Exp before ReduceMax", func(g *graph.Graph) { addPre(t, g, graph.Exp, graph.ReduceMax, src, []int64{1}) },
			"Exp fuses only as log-sum-exp (Exp -> ReduceSum -> Log)"},
		// A pre-op into an integer tensor rounds and saturates, which a
		// fused transform (in f32) would not.
		{"Abs into s8", func(g *graph.Graph) {
			a := graph.NewLogicalTensor(3, dtypes.S8, []int64{2, 3})
			must(t, g.AddOp(graph.NewOp(3, graph.Abs, "pre").AddInput(src).AddOutput(a)))
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "red").AddInput(a).
				AddOutput(graph.NewLogicalTensorAny(1, f32, nil)).SetAttr("axes", []int64{1})))
		}, "its output is s8, and a fused pre-op's result stays f32 (the rounding and saturation to s8 would be lost)"},
		{"log-sum-exp through u8", func(g *graph.Graph) {
			e := graph.NewLogicalTensor(3, dtypes.U8, []int64{2, 3})
			must(t, g.AddOp(graph.NewOp(3, graph.Exp, "pre").AddInput(src).AddOutput(e)))
			s := graph.NewLogicalTensorAny(1, f32, nil)
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "red").AddInput(e).AddOutput(s).SetAttr("axes", []int64{1})))
			must(t, g.AddOp(graph.NewOp(4, graph.Log, "").AddInput(s).AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
		}, "its output is u8"},
		{"two consumers", func(g *graph.Graph) {
			addPre(t, g, graph.Square, graph.ReduceSum, src, []int64{1})
			must(t, g.AddOp(graph.NewOp(4, graph.ReLU, "").AddInput(graph.NewLogicalTensorAny(3, f32, nil)).
				AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
		}, "its output has 2 consumers; a fused pre-op feeds only the reduction"},
	}
	for _, c := range notFused {
		g := graph.New()
		c.build(g)
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		checkTopological(t, g, parts)
		var red *Partition
		for _, p := range parts {
			switch k := p.Ops()[0]; {
			case k.Kind.IsReduction():
				red = p
			case k.ID == 3 && (p.IsSupported() || !strings.Contains(p.Reason(), c.want)):
				t.Errorf("%s: %v, want a reason saying %q", c.name, p, c.want)
			}
		}
		if red == nil || !red.IsSupported() { // led by the reduction: the pre-op is not in it
			t.Errorf("%s: the reduction's partition: %v", c.name, parts)
		}
	}
	// An axes tensor produced after the pre-op in graph order: its
	// producer's partition comes first, and the pre-op fuses.
	g := graph.New()
	sq := graph.NewLogicalTensorAny(3, f32, nil)
	must(t, g.AddOp(graph.NewOp(3, graph.Square, "").AddInput(src).AddOutput(sq)))
	axes := graph.NewLogicalTensor(7, dtypes.S32, []int64{1})
	must(t, g.AddOp(graph.NewOp(5, graph.Wildcard, "").AddOutput(axes)))
	must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "red").AddInput(sq).AddInput(axes).
		AddOutput(graph.NewLogicalTensorAny(1, f32, nil))))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	checkTopological(t, g, parts)
	if len(parts) != 2 || parts[0].Ops()[0].ID != 5 || len(parts[1].Ops()) != 2 || !parts[1].IsSupported() {
		t.Errorf("axes produced after the pre-op: %v, want the Wildcard, then Square -> ReduceSum", parts)
	}
}

// Exp -> ReduceSum -> Log (log-sum-exp) is one supported partition,
// computed stably (shifted by the max): rows of 1000s give 1000 + log(3),
// not Inf, a row of -Inf gives -Inf, with a post-op after it. ReduceSum ->
// Log alone is an ordinary post-op fusion.
func TestLogSumExp(t *testing.T) {
	f32 := dtypes.F32
	src := graph.NewLogicalTensor(0, f32, []int64{4, 3})
	inf := float32(math.Inf(1))
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		g := graph.New()
		sum := addPre(t, g, graph.Exp, graph.ReduceSum, src, []int64{1})
		lse := graph.NewLogicalTensorAny(2, f32, nil)
		must(t, g.AddOp(graph.NewOp(2, graph.Log, "").AddInput(sum).AddOutput(lse)))
		must(t, g.AddOp(graph.NewOp(4, graph.ReLU, "").AddInput(lse).AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
		must(t, g.Finalize())
		p := onlySupported(t, g, Fusion)
		if len(p.Ops()) != 4 {
			t.Fatalf("log-sum-exp partition %v", p)
		}
		cp, err := p.Compile([]graph.LogicalTensor{src}, p.Outputs())
		must(t, err)
		out, _ := cp.QueryLogicalTensor(4)
		res := make([]float32, 4)
		st, _ := NewTensor(src, []float32{1000, 1000, 1000, 1, 2, 3, -inf, -inf, -inf, -5, -6, -7})
		dt, _ := NewTensor(out, res)
		must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
		lse3 := func(a, b, c float64) float64 {
			m := max(a, b, c)
			return m + math.Log(math.Exp(a-m)+math.Exp(b-m)+math.Exp(c-m))
		}
		want := []float64{1000 + math.Log(3), lse3(1, 2, 3), 0, 0} // ReLU of -Inf and of lse(-5,-6,-7) < 0
		for i, w := range want {
			if math.Abs(float64(res[i])-w) > 1e-6*math.Abs(w)+1e-6 {
				t.Errorf("log-sum-exp out[%d] = %v, want %v", i, res[i], w)
			}
		}
	})

	// A Log with a second consumer ends the partition: the group is
	// Exp -> ReduceSum -> Log, and an Exp -> ReduceSum never compiles
	// without its Log.
	g := graph.New()
	sum := addPre(t, g, graph.Exp, graph.ReduceSum, src, []int64{1})
	lse := graph.NewLogicalTensorAny(2, f32, nil)
	must(t, g.AddOp(graph.NewOp(2, graph.Log, "").AddInput(sum).AddOutput(lse)))
	must(t, g.AddOp(graph.NewOp(4, graph.ReLU, "").AddInput(lse).AddOutput(graph.NewLogicalTensorAny(4, f32, nil))))
	must(t, g.AddOp(graph.NewOp(5, graph.Abs, "").AddInput(lse).AddOutput(graph.NewLogicalTensorAny(5, f32, nil))))
	must(t, g.Finalize())
	parts, err := Get(g, Fusion)
	must(t, err)
	if len(parts) != 3 || !parts[0].IsSupported() || len(parts[0].Ops()) != 3 {
		t.Fatalf("partitions %v", parts)
	}
	for _, p := range parts {
		if p.IsSupported() && p.Ops()[0].Kind == graph.Exp && (len(p.Ops()) < 3 || p.Ops()[2].Kind != graph.Log) {
			t.Errorf("Exp -> ReduceSum without its Log compiled: %v", p)
		}
	}

	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		src := graph.NewLogicalTensor(0, f32, []int64{2, 3})
		g := graph.New()
		sum := addPre(t, g, 0, graph.ReduceSum, src, []int64{1})
		must(t, g.AddOp(graph.NewOp(2, graph.Log, "").AddInput(sum).AddOutput(graph.NewLogicalTensorAny(2, f32, nil))))
		must(t, g.Finalize())
		p := onlySupported(t, g, Fusion)
		if len(p.Ops()) != 2 {
			t.Fatalf("ReduceSum -> Log: %v", p)
		}
		cp, err := p.Compile([]graph.LogicalTensor{src}, p.Outputs())
		must(t, err)
		out, _ := cp.QueryLogicalTensor(2)
		res := make([]float32, 2)
		st, _ := NewTensor(src, []float32{1, 2, 3, 10, 20, 30})
		dt, _ := NewTensor(out, res)
		must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
		for i, w := range []float64{math.Log(6), math.Log(60)} {
			if math.Abs(float64(res[i])-w) > 1e-6*w {
				t.Errorf("log(sum) out[%d] = %v, want %v", i, res[i], w)
			}
		}
	})
}

// TestLogSumExpOfMaskedRows: Exp -> ReduceSum -> Log over masked rows,
// whose only finite element is 0 (first, in the middle, last; in rows of
// 37, so in a tail lane too, and in a row of one), gives exactly +0 on
// every ISA and the interpreter: e^0 is exactly 1 in the exp that sums
// it. Rows that start with 0 take the unshifted pass, which the exp for
// sums runs; the others take the shifted one, so each kind runs alone.
func TestLogSumExpOfMaskedRows(t *testing.T) {
	f32, ninf := dtypes.F32, float32(math.Inf(-1))
	masked := func(width, zero int) []float32 {
		row := make([]float32, width)
		for i := range row {
			row[i] = map[bool]float32{true: 0, false: ninf}[i == zero]
		}
		return row
	}
	var ran []string
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		ran = append(ran, isa.String())
		for _, c := range []struct {
			name  string
			width int
			zeros []int // where each row's 0 is
		}{
			{"0 first", 37, []int{0, 0, 0}},
			{"0 elsewhere", 37, []int{36, 18, 1}},
			{"[0]", 1, []int{0, 0, 0}},
		} {
			src := graph.NewLogicalTensor(0, f32, []int64{int64(len(c.zeros)), int64(c.width)})
			g := graph.New()
			sum := addPre(t, g, graph.Exp, graph.ReduceSum, src, []int64{1})
			must(t, g.AddOp(graph.NewOp(2, graph.Log, "").AddInput(sum).AddOutput(graph.NewLogicalTensorAny(2, f32, nil))))
			must(t, g.Finalize())
			p := onlySupported(t, g, Fusion)
			cp, err := p.Compile([]graph.LogicalTensor{src}, p.Outputs())
			must(t, err)
			wantImpl(t, cp, isa)
			var in []float32
			for _, z := range c.zeros {
				in = append(in, masked(c.width, z)...)
			}
			out, _ := cp.QueryLogicalTensor(2)
			res := make([]float32, len(c.zeros))
			st, _ := NewTensor(src, in)
			dt, _ := NewTensor(out, res)
			must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
			for i, r := range res {
				if math.Float32bits(r) != 0 {
					t.Errorf("%s: log-sum-exp of row %d is %v (bits %#x), want +0", c.name, i, r, math.Float32bits(r))
				}
			}
		}
	})
	t.Logf("ran on %v", ran)
}

// Two graphs that differ only in the reduction's kind, or in a pre-op,
// compile to different partitions: the compiled-partition cache must not
// hand one the other's kernel.
func TestCacheKeyHoldsTheReduction(t *testing.T) {
	prev, _ := SetCompiledPartitionCacheCapacity(64)
	defer SetCompiledPartitionCacheCapacity(prev)
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
	data := []float32{1, -2, 3, -4, 5, -6}
	compile := func(pre, red graph.OpKind) (*CompiledPartition, []float32) {
		g := graph.New()
		addPre(t, g, pre, red, src, []int64{1})
		must(t, g.Finalize())
		p := onlySupported(t, g, Fusion)
		cp, err := p.Compile([]graph.LogicalTensor{src}, p.Outputs())
		must(t, err)
		out, _ := cp.QueryLogicalTensor(1)
		res := make([]float32, 2)
		st, _ := NewTensor(src, data)
		dt, _ := NewTensor(out, res)
		must(t, cp.Execute([]Tensor{st}, []Tensor{dt}))
		return cp, res
	}
	seen := map[*CompiledPartition]string{}
	results := map[string][]float32{}
	for _, c := range []struct{ pre, red graph.OpKind }{
		{0, graph.ReduceSum}, {0, graph.ReduceMax}, {0, graph.ReduceMin}, {0, graph.ReduceMean},
		{0, graph.ReduceProd}, {0, graph.ReduceL1}, {0, graph.ReduceL2},
		{graph.Abs, graph.ReduceSum}, {graph.Square, graph.ReduceSum}, {graph.Abs, graph.ReduceMax},
	} {
		name := redKind{c.red, c.pre}.String()
		cp, res := compile(c.pre, c.red)
		if other, ok := seen[cp]; ok {
			t.Errorf("%s got the compiled partition of %s", name, other)
		}
		seen[cp] = name
		results[name] = res
		// The same ops in a new graph: the same kernel, the new graph's
		// partition.
		if again, _ := compile(c.pre, c.red); again.kern != cp.kern || again.Partition() == cp.Partition() {
			t.Errorf("%s: compiling the same graph again missed the cache", name)
		}
	}
	want := map[string][]float32{
		"ReduceSum": {2, -5}, "ReduceMax": {3, 5}, "ReduceMin": {-2, -6}, "ReduceMean": {2.0 / 3, -5.0 / 3},
		"ReduceProd": {-6, 120}, "ReduceL1": {6, 15}, "Abs->ReduceSum": {6, 15}, "Square->ReduceSum": {14, 77},
		"Abs->ReduceMax": {3, 6},
	}
	for name, w := range want {
		if got := results[name]; math.Abs(float64(got[0]-w[0])) > 1e-6 || math.Abs(float64(got[1]-w[1])) > 1e-5 {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
	if got := results["ReduceL2"]; math.Abs(float64(got[0])-math.Sqrt(14)) > 1e-6 || math.Abs(float64(got[1])-math.Sqrt(77)) > 1e-5 {
		t.Errorf("ReduceL2 = %v", got)
	}
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// Empty axes reduce each element alone: a copy (with conversion) for
// sum, mean, max, min and prod, |x| for L1 and L2 (also where f32's x*x
// would overflow or underflow), the pre-op's value (f32's x*x for
// Square) with a pre-op.
func TestEmptyAxes(t *testing.T) {
	for _, data := range [][]float64{
		{1, -2, 3, -4.5, 0, -0.25},
		{3e38, -1e20, 1e-30, -1e-40, 2e19, -7},
	} {
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 3})
		forEachISA(t, func(t *testing.T, isa jit.ISA) {
			for _, k := range genKinds {
				i := 0
				in := newBuffer(src, func() float64 { i++; return data[i-1] })
				p := genProblem{kind: k, src: src, dstDT: dtypes.F32, axes: []int64{}}
				dst := runKind(t, p, in)
				for j, x := range data {
					x = float64(float32(x))
					want := x
					switch {
					case k.pre == graph.Abs || k.red == graph.ReduceL1 || k.red == graph.ReduceL2:
						want = math.Abs(x)
					case k.pre == graph.Square:
						want = float64(float32(x) * float32(x))
					}
					if got := load(dtypes.F32, dst.bytes, int64(j)); got != want {
						t.Errorf("%s: element %d = %v, want %v", k, j, got, want)
					}
				}
			}
		})
	}
}

// Max and min order -0 below +0, whichever comes first.
func TestSignedZerosThroughMaxMin(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 2})
	negZero := math.Copysign(0, -1)
	data := []float64{negZero, 0, 0, negZero}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, c := range []struct {
			kind graph.OpKind
			neg  bool
		}{{graph.ReduceMax, false}, {graph.ReduceMin, true}} {
			i := 0
			in := newBuffer(src, func() float64 { i++; return data[i-1] })
			dst := runKind(t, genProblem{kind: redKind{red: c.kind}, src: src, dstDT: dtypes.F32, axes: []int64{1}}, in)
			for j := range 2 {
				if got := load(dtypes.F32, dst.bytes, int64(j)); got != 0 || math.Signbit(got) != c.neg {
					t.Errorf("%s row %d = %v (sign bit %v), want a zero with sign bit %v", c.kind, j, got, math.Signbit(got), c.neg)
				}
			}
		}
	})
}

// Every kind and pre-op takes its axes from a run-time s32 tensor too;
// the axes port follows the src (the pre-op's) port.
func TestKindsWithAxesTensor(t *testing.T) {
	src := graph.NewLogicalTensor(0, dtypes.BF16, []int64{3, 4, 5})
	axesLT := graph.NewLogicalTensor(7, dtypes.S32, []int64{2})
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, k := range genKinds {
			g := graph.New()
			in := src
			if k.pre != 0 {
				in = graph.NewLogicalTensorAny(3, dtypes.BF16, nil)
				must(t, g.AddOp(graph.NewOp(3, k.pre, "").AddInput(src).AddOutput(in)))
			}
			must(t, g.AddOp(graph.NewOp(1, k.op(), "").AddInput(in).AddInput(axesLT).
				AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil))))
			must(t, g.Finalize())
			p := onlySupported(t, g, Fusion)
			if ports := p.Inputs(); len(ports) != 2 || ports[0].ID != 0 || ports[1].ID != 7 {
				t.Fatalf("%s: input ports %v", k, ports)
			}
			c, err := p.Compile([]graph.LogicalTensor{src, axesLT}, p.Outputs())
			must(t, err)
			data := newBuffer(src, uniform(newRand(3), -2, 2))
			for _, axes := range [][2]int32{{0, 2}, {-1, 1}, {2, 0}} {
				reduce := make([]bool, 3)
				for _, a := range axes {
					reduce[(a+3)%3] = true
				}
				out := graph.NewLogicalTensor(1, dtypes.F32, shape.ReduceDims(src.Dims, reduce, false))
				dst := newBuffer(out, func() float64 { return 0 })
				at, _ := NewTensor(axesLT, axes[:])
				must(t, c.Execute([]Tensor{{lt: src, buf: data.bytes}, at}, []Tensor{{lt: out, buf: dst.bytes}}))
				if msg := verifyKind(k, data, reduce, false, nil, dst); msg != "" {
					t.Fatalf("%s axes %v: %s", k, axes, msg)
				}
			}
		}
	})
}

// A fused partition that reads one tensor twice (an operand of two
// post-ops, src as an operand) has one port for it, and compiles and runs
// with the tensor given once.
func TestTensorReadTwice(t *testing.T) {
	f32 := dtypes.F32
	x := graph.NewLogicalTensor(0, f32, []int64{2, 4})
	b := graph.NewLogicalTensor(5, f32, []int64{2, 1})
	xs := []float32{1, 2, 3, 4, -1, 0.5, 2, 8}
	cases := []struct {
		name  string
		build func(g *graph.Graph)
		ins   []graph.LogicalTensor
		data  [][]float32
		want  []float32
	}{
		{"(sum + b) / b", func(g *graph.Graph) {
			r, s := graph.NewLogicalTensorAny(1, f32, nil), graph.NewLogicalTensorAny(2, f32, nil)
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(x).AddOutput(r).
				SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
			must(t, g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(b).AddOutput(s)))
			must(t, g.AddOp(graph.NewOp(3, graph.Divide, "").AddInput(s).AddInput(b).AddOutput(graph.NewLogicalTensorAny(3, f32, nil))))
		}, []graph.LogicalTensor{x, b}, [][]float32{xs, {2, 4}}, []float32{(10 + 2) / 2.0, (9.5 + 4) / 4.0}},
		{"sum over a column of one, + src", func(g *graph.Graph) {
			c := graph.NewLogicalTensor(0, f32, []int64{2, 1})
			r := graph.NewLogicalTensorAny(1, f32, nil)
			must(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(c).AddOutput(r).
				SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
			must(t, g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(c).AddOutput(graph.NewLogicalTensorAny(3, f32, nil))))
		}, []graph.LogicalTensor{graph.NewLogicalTensor(0, f32, []int64{2, 1})}, [][]float32{{3, -5}}, []float32{6, -10}},
	}
	for _, c := range cases {
		g := graph.New()
		c.build(g)
		must(t, g.Finalize())
		parts, err := Get(g, Fusion)
		must(t, err)
		if len(parts) != 1 || !parts[0].IsSupported() {
			t.Fatalf("%s: %v", c.name, parts)
		}
		p := parts[0]
		if in := p.Inputs(); len(in) != len(c.ins) {
			t.Fatalf("%s: input ports %v, want one per tensor", c.name, in)
		}
		cp, err := p.Compile(c.ins, p.Outputs())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var ts []Tensor
		for i, lt := range c.ins {
			tt, err := NewTensor(lt, c.data[i])
			must(t, err)
			ts = append(ts, tt)
		}
		out, _ := cp.QueryLogicalTensor(3)
		res := make([]float32, len(c.want))
		dt, err := NewTensor(out, res)
		must(t, err)
		must(t, cp.Execute(ts, []Tensor{dt}))
		for i, w := range c.want {
			if res[i] != w {
				t.Errorf("%s: out[%d] = %v, want %v", c.name, i, res[i], w)
			}
		}
	}
}

// An RMSNorm statistic as ONNX exporters write it, Pow(x, 2) or Mul(x, x)
// -> ReduceMean -> Add eps -> Sqrt (or Pow -0.5), is one partition and
// computes sqrt(mean(x²) + eps) on every ISA.
func TestExportedRMSNormStatistic(t *testing.T) {
	f32 := dtypes.F32
	const rows, cols = 5, 67
	src := graph.NewLogicalTensor(0, f32, []int64{rows, cols})
	eps := graph.NewLogicalTensor(20, f32, []int64{1})
	r := rand.New(rand.NewPCG(7, 11))
	data := make([]float64, rows*cols)
	for i := range data {
		data[i] = float64(float32(r.Float64()*8 - 4))
	}
	const epsVal = 1e-3
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		for _, sq := range []graph.OpKind{graph.Pow, graph.Multiply} {
			for _, last := range []graph.OpKind{graph.Sqrt, graph.Pow} {
				name := fmt.Sprintf("%s -> ReduceMean -> Add -> %s", sq, last)
				g := graph.New()
				m := graph.NewLogicalTensorAny(1, f32, nil)
				p := graph.NewLogicalTensorAny(3, f32, nil)
				pre := graph.NewOp(3, sq, "").AddInput(src).AddOutput(p)
				if sq == graph.Pow {
					pre.SetAttr("beta", float32(2))
				} else {
					pre.AddInput(src)
				}
				must(t, g.AddOp(pre))
				must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(p).AddOutput(m).
					SetAttr("axes", []int64{-1}).SetAttr("keep_dims", true)))
				a := graph.NewLogicalTensorAny(4, f32, nil)
				must(t, g.AddOp(graph.NewOp(4, graph.Add, "").AddInput(m).AddInput(eps).AddOutput(a)))
				out := graph.NewLogicalTensorAny(5, f32, nil)
				fin := graph.NewOp(5, last, "").AddInput(a).AddOutput(out)
				if last == graph.Pow {
					fin.SetAttr("beta", float32(-0.5))
				}
				must(t, g.AddOp(fin))
				must(t, g.Finalize())
				part := onlySupported(t, g, Fusion)
				if len(part.Ops()) != 4 || len(part.Inputs()) != 2 {
					t.Fatalf("%s: %v with inputs %v, want the four ops reading src and eps", name, part, part.Inputs())
				}
				cp, err := part.Compile([]graph.LogicalTensor{src, eps}, part.Outputs())
				must(t, err)
				o, _ := cp.QueryLogicalTensor(5)
				res := make([]float32, rows)
				st, _ := NewTensor(src, toF32(data))
				et, _ := NewTensor(eps, []float32{epsVal})
				dt, _ := NewTensor(o, res)
				must(t, cp.Execute([]Tensor{st, et}, []Tensor{dt}))
				for i := range rows {
					s := 0.0
					for _, x := range data[i*cols : (i+1)*cols] {
						s += x * x
					}
					want := math.Sqrt(s/cols + epsVal)
					if last == graph.Pow {
						want = 1 / want
					}
					if math.Abs(float64(res[i])-want) > 1e-5*want {
						t.Errorf("%s: row %d = %v, want %v", name, i, res[i], want)
					}
				}
			}
		}
	})
}

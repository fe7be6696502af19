package partition_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/gdnn/gdnn/jit"
	"github.com/gdnn/gdnn/partition"
)

// TestF64Chain compiles Square -> ReduceMean -> Add(eps, f64) -> Pow(-0.5)
// over f64 data (an RMSNorm's statistic) into one partition and checks it
// against float64 arithmetic: every step in float64, nothing rounded to
// f32 (values 1 + k*2^-40 would all be 1 in f32).
func TestF64Chain(t *testing.T) {
	const rows, cols = 3, 5000
	x := graph.NewLogicalTensor(0, dtypes.F64, []int64{rows, cols})
	sq := graph.NewLogicalTensorAny(1, dtypes.F64, nil)
	ms := graph.NewLogicalTensorAny(2, dtypes.F64, nil)
	eps := graph.NewLogicalTensor(3, dtypes.F64, []int64{1})
	add := graph.NewLogicalTensorAny(4, dtypes.F64, nil)
	out := graph.NewLogicalTensorAny(5, dtypes.F64, nil)
	g := graph.New()
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.Square, "").AddInput(x).AddOutput(sq),
		graph.NewOp(1, graph.ReduceMean, "").AddInput(sq).AddOutput(ms).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true),
		graph.NewOp(2, graph.Add, "").AddInput(ms).AddInput(eps).AddOutput(add),
		graph.NewOp(3, graph.Pow, "").AddInput(add).AddOutput(out).SetAttr("beta", float32(-0.5)),
	} {
		mustF64(t, g.AddOp(op))
	}
	mustF64(t, g.Finalize())
	// The native kernel's f64 epilogue takes Add and Pow(-0.5).
	cp := compileOneNative(t, g, 0, "")
	lt, err := cp.QueryLogicalTensor(out.ID)
	mustF64(t, err)
	xs := make([]float64, rows*cols)
	for i := range xs {
		xs[i] = 1 + math.Ldexp(float64(i%7), -40)
	}
	ys := make([]float64, rows)
	e := []float64{1e-12}
	xt, err := partition.NewTensor(x, xs)
	mustF64(t, err)
	et, err := partition.NewTensor(eps, e)
	mustF64(t, err)
	yt, err := partition.NewTensor(lt, ys)
	mustF64(t, err)
	ins := []partition.Tensor{xt, et}
	if cp.Inputs()[0].ID != x.ID {
		ins = []partition.Tensor{et, xt}
	}
	mustF64(t, cp.Execute(ins, []partition.Tensor{yt}))
	for r := range rows {
		s := 0.0
		for _, v := range xs[r*cols : (r+1)*cols] {
			s += v * v
		}
		want := 1 / math.Sqrt(s/cols+1e-12)
		if math.Abs(ys[r]-want) > 1e-14 {
			t.Errorf("row %d: %v, want %v", r, ys[r], want)
		}
		if ys[r] == float64(float32(ys[r])) {
			t.Errorf("row %d: %v is an f32 value", r, ys[r])
		}
	}
}

// TestF64PostOpsFused compiles ReduceSum -> Add(broadcast operand) ->
// ReLU over f64 data into one partition, which runs machine code (the
// native kernel's f64 epilogue) wherever gdnn emits any, and checks it
// against float64 arithmetic: values 2^-40 apart that f32 would merge.
func TestF64PostOpsFused(t *testing.T) {
	const rows, cols = 37, 301
	x := graph.NewLogicalTensor(0, dtypes.F64, []int64{rows, cols})
	s := graph.NewLogicalTensorAny(1, dtypes.F64, nil)
	b := graph.NewLogicalTensor(2, dtypes.F64, []int64{1})
	a := graph.NewLogicalTensorAny(3, dtypes.F64, nil)
	out := graph.NewLogicalTensorAny(4, dtypes.F64, nil)
	g := graph.New()
	for _, op := range []*graph.Op{
		graph.NewOp(0, graph.ReduceSum, "").AddInput(x).AddOutput(s).SetAttr("axes", []int64{1}),
		graph.NewOp(1, graph.Add, "").AddInput(s).AddInput(b).AddOutput(a),
		graph.NewOp(2, graph.ReLU, "").AddInput(a).AddOutput(out),
	} {
		mustF64(t, g.AddOp(op))
	}
	mustF64(t, g.Finalize())
	cp := compileOneNative(t, g, 3, "")
	lt, err := cp.QueryLogicalTensor(out.ID)
	mustF64(t, err)
	xs := make([]float64, rows*cols)
	for i := range xs {
		xs[i] = float64(i%5-2) + math.Ldexp(float64(i%7), -40)
	}
	bias := []float64{math.Ldexp(3, -40)}
	ys := make([]float64, rows)
	xt, err := partition.NewTensor(x, xs)
	mustF64(t, err)
	bt, err := partition.NewTensor(b, bias)
	mustF64(t, err)
	yt, err := partition.NewTensor(lt, ys)
	mustF64(t, err)
	ins := []partition.Tensor{xt, bt}
	if cp.Inputs()[0].ID != x.ID {
		ins = []partition.Tensor{bt, xt}
	}
	mustF64(t, cp.Execute(ins, []partition.Tensor{yt}))
	positive := 0
	for r := range rows {
		sum := 0.0
		for _, v := range xs[r*cols : (r+1)*cols] {
			sum += v
		}
		want := math.Max(sum+bias[0], 0)
		if math.Abs(ys[r]-want) > math.Ldexp(math.Abs(sum)+float64(cols), -50) {
			t.Errorf("row %d: %v, want %v", r, ys[r], want)
		}
		if want > 0 {
			positive++
		}
	}
	if positive == 0 || positive == rows {
		t.Fatalf("%d of %d rows positive: the ReLU is not exercised both ways", positive, rows)
	}
}

// TestF64ExpLogNative: an f64 max followed by Exp or Log runs as
// machine code where there is a JIT, within 2 float64 ulps (vf64.MaxULP)
// of math.Exp and math.Log of the maxima.
func TestF64ExpLogNative(t *testing.T) {
	for _, kind := range []graph.OpKind{graph.Exp, graph.Log} {
		x := graph.NewLogicalTensor(0, dtypes.F64, []int64{40, 3})
		s := graph.NewLogicalTensorAny(1, dtypes.F64, nil)
		y := graph.NewLogicalTensorAny(2, dtypes.F64, nil)
		g := graph.New()
		mustF64(t, g.AddOp(graph.NewOp(0, graph.ReduceMax, "").AddInput(x).AddOutput(s).SetAttr("axes", []int64{1})))
		mustF64(t, g.AddOp(graph.NewOp(1, kind, "").AddInput(s).AddOutput(y)))
		mustF64(t, g.Finalize())
		cp := compileOneNative(t, g, 0, kind.String())
		lt, err := cp.QueryLogicalTensor(y.ID)
		mustF64(t, err)
		xs := make([]float64, 40*3)
		for i := range xs {
			xs[i] = float64(i%11-3)*7.25 + math.Ldexp(float64(i%7), -30)
		}
		ys := make([]float64, 40)
		xt, err := partition.NewTensor(x, xs)
		mustF64(t, err)
		yt, err := partition.NewTensor(lt, ys)
		mustF64(t, err)
		mustF64(t, cp.Execute([]partition.Tensor{xt}, []partition.Tensor{yt}))
		for r := range 40 {
			m := math.Max(math.Max(xs[3*r], xs[3*r+1]), xs[3*r+2])
			want, near := math.Exp(m), vf64.ExpNear
			if kind == graph.Log {
				want, near = math.Log(m), vf64.LogNear
			}
			if d, ok := near(m, ys[r]); !ok {
				t.Errorf("%v row %d: %v, want %v (%d ulps)", kind, r, ys[r], want, d)
			}
		}
	}
}

// TestF64GELUErfNative: an f64 max followed by GELU in erf mode runs as
// machine code where there is a JIT, within vf64.PostOpNear of
// plan.EltwiseF64 (x/2 * math.Erfc(-x/sqrt 2)) of the maxima, which span
// erfc's ranges and its underflow.
func TestF64GELUErfNative(t *testing.T) {
	const rows = 64
	x := graph.NewLogicalTensor(0, dtypes.F64, []int64{rows, 4})
	s := graph.NewLogicalTensorAny(1, dtypes.F64, nil)
	y := graph.NewLogicalTensorAny(2, dtypes.F64, nil)
	g := graph.New()
	mustF64(t, g.AddOp(graph.NewOp(0, graph.ReduceMax, "").AddInput(x).AddOutput(s).SetAttr("axes", []int64{1})))
	mustF64(t, g.AddOp(graph.NewOp(1, graph.GELU, "").AddInput(s).AddOutput(y).SetAttr("mode", "gelu_erf")))
	mustF64(t, g.Finalize())
	cp := compileOneNative(t, g, 0, "")
	lt, err := cp.QueryLogicalTensor(y.ID)
	mustF64(t, err)
	xs := make([]float64, rows*4)
	for i := range xs {
		xs[i] = float64(i-2*rows)*0.33 + math.Ldexp(float64(i%5), -40)
	}
	ys := make([]float64, rows)
	xt, err := partition.NewTensor(x, xs)
	mustF64(t, err)
	yt, err := partition.NewTensor(lt, ys)
	mustF64(t, err)
	mustF64(t, cp.Execute([]partition.Tensor{xt}, []partition.Tensor{yt}))
	op := plan.PostOp{Kind: ops.GELUErf}
	for r := range rows {
		m := math.Max(math.Max(xs[4*r], xs[4*r+1]), math.Max(xs[4*r+2], xs[4*r+3]))
		if d, ok := vf64.PostOpNear(op, m, ys[r]); !ok {
			t.Errorf("row %d: GELU(%v) = %v, want %v (%d ulps)", r, m, ys[r], plan.EltwiseF64(ops.GELUErf, 0, 0, m), d)
		}
	}
}

// TestF64OperandNotFused: an f64 operand after an f32 reduction stays out
// of the partition, with the reason.
func TestF64OperandNotFused(t *testing.T) {
	x := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 4})
	m := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	b := graph.NewLogicalTensor(2, dtypes.F64, []int64{1})
	y := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
	g := graph.New()
	mustF64(t, g.AddOp(graph.NewOp(0, graph.ReduceSum, "").AddInput(x).AddOutput(m).SetAttr("axes", []int64{1})))
	mustF64(t, g.AddOp(graph.NewOp(1, graph.Add, "").AddInput(m).AddInput(b).AddOutput(y)))
	mustF64(t, g.Finalize())
	parts, err := partition.Get(g, partition.Fusion)
	mustF64(t, err)
	for _, p := range parts {
		if strings.Contains(p.Reason(), "it reads an f64 operand, and only a chain over f64 src computes in f64 (src f32)") {
			return
		}
	}
	t.Errorf("partitions %v: no reason names the f64 operand", parts)
}

// compileOneNative compiles the one supported partition that g (final)
// makes, of ops ops (0: any number), and checks that it runs as machine
// code where there is a JIT; what names the case.
func compileOneNative(t *testing.T, g *graph.Graph, ops int, what string) *partition.CompiledPartition {
	t.Helper()
	parts, err := partition.Get(g, partition.Fusion)
	mustF64(t, err)
	if len(parts) != 1 || !parts[0].IsSupported() || ops > 0 && len(parts[0].Ops()) != ops {
		t.Fatalf("%s: partitions %v, want one supported (of %d ops, 0: any)", what, parts, ops)
	}
	p := parts[0]
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	mustF64(t, err)
	if isa := jit.EffectiveISA(); isa != jit.None && cp.Impl() != "jit:"+isa.String() {
		t.Errorf("%s: impl %q (reason %q), want machine code under %v", what, cp.Impl(), cp.Reason(), isa)
	}
	return cp
}

func mustF64(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestF64LogSumExpFused compiles Exp -> ReduceSum -> Log over f64 data
// (log-sum-exp, over rows and over the non-innermost axis) into one
// partition, which runs machine code (the native kernel's f64
// log-sum-exp) wherever gdnn emits any, and checks it against float64
// arithmetic, shifted by each output's max: values near 700, whose exp
// overflows, and near 1e300, beyond the f32 range, give finite results,
// a row of -Inf gives -Inf.
func TestF64LogSumExpFused(t *testing.T) {
	const rows, cols = 7, 301
	for _, axis := range []int64{1, 0} {
		x := graph.NewLogicalTensor(0, dtypes.F64, []int64{rows, cols})
		e := graph.NewLogicalTensorAny(1, dtypes.F64, nil)
		s := graph.NewLogicalTensorAny(2, dtypes.F64, nil)
		out := graph.NewLogicalTensorAny(3, dtypes.F64, nil)
		g := graph.New()
		for _, op := range []*graph.Op{
			graph.NewOp(0, graph.Exp, "").AddInput(x).AddOutput(e),
			graph.NewOp(1, graph.ReduceSum, "").AddInput(e).AddOutput(s).SetAttr("axes", []int64{axis}),
			graph.NewOp(2, graph.Log, "").AddInput(s).AddOutput(out),
		} {
			mustF64(t, g.AddOp(op))
		}
		mustF64(t, g.Finalize())
		cp := compileOneNative(t, g, 0, fmt.Sprintf("axis %d", axis))
		lt, err := cp.QueryLogicalTensor(out.ID)
		mustF64(t, err)
		xs := make([]float64, rows*cols)
		for i := range xs {
			r, c := i/cols, i%cols
			switch r {
			case 0:
				xs[i] = 700 + float64(c%13)
			case 1:
				xs[i] = 1e300 - float64(c)*1e285
			case 2:
				xs[i] = math.Inf(-1)
			default:
				xs[i] = float64((i*37)%101)/7 - 6
			}
		}
		n := rows
		if axis == 0 {
			n = cols
		}
		ys := make([]float64, n)
		xt, err := partition.NewTensor(x, xs)
		mustF64(t, err)
		yt, err := partition.NewTensor(lt, ys)
		mustF64(t, err)
		mustF64(t, cp.Execute([]partition.Tensor{xt}, []partition.Tensor{yt}))
		for o := range n {
			var v []float64
			if axis == 1 {
				v = xs[o*cols : (o+1)*cols]
			} else {
				for r := range rows {
					v = append(v, xs[r*cols+o])
				}
			}
			m := math.Inf(-1)
			for _, x := range v {
				m = math.Max(m, x)
			}
			shift := math.Max(-math.MaxFloat64, math.Min(math.MaxFloat64, m))
			sum := 0.0
			for _, x := range v {
				sum += math.Exp(x - shift)
			}
			want := shift + math.Log(sum)
			if ys[o] != want && math.Abs(ys[o]-want) > 1e-13*math.Max(1, math.Abs(want)) {
				t.Errorf("axis %d, output %d: %v, want %v", axis, o, ys[o], want)
			}
		}
	}
}

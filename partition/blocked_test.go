package partition

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/layout"
)

// blockedGraph builds reduce(src) [-> add(operand)] with the given tensors.
func blockedGraph(t *testing.T, kind graph.OpKind, src, out graph.LogicalTensor, axes []int64, keep bool, operand *graph.LogicalTensor) *Partition {
	t.Helper()
	g := graph.New()
	red := out
	if operand != nil {
		red = graph.NewLogicalTensorAny(50, out.DataType, nil)
	}
	if err := g.AddOp(graph.NewOp(0, kind, "r").AddInput(src).AddOutput(red).
		SetAttr("axes", axes).SetAttr("keep_dims", keep)); err != nil {
		t.Fatal(err)
	}
	if operand != nil {
		if err := g.AddOp(graph.NewOp(1, graph.Add, "add").AddInput(red).AddInput(*operand).AddOutput(out)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil || len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("partitions %v, %v", parts, err)
	}
	return parts[0]
}

// TestBlockedAgainstPlain runs random reductions with a blocked src and/or
// output through Compile and Execute, and compares every logical output
// with the same partition on plain tensors; output padding must be zero
// and src padding (NaN here) must not count.
func TestBlockedAgainstPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	kinds := []graph.OpKind{graph.ReduceMean, graph.ReduceSum, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd, graph.ReduceL1, graph.ReduceL2}
	tags := []string{"abx", "aBx8b", "aBx16b", "aBx32b", "ABx16a16b", "ABx32a32b", "ABx32a16b"}
	for it := range 150 {
		rank := 2 + r.IntN(3)
		dims := make([]int64, rank)
		for i := range dims {
			dims[i] = 1 + int64(r.IntN(4))
		}
		dims[1] = 1 + int64(r.IntN(40))
		dims[0] = 1 + int64(r.IntN(20))
		var axes []int64
		for i := range rank {
			if r.IntN(2) == 0 {
				axes = append(axes, int64(i))
			}
		}
		keep := r.IntN(3) != 0
		kind := kinds[r.IntN(len(kinds))]
		dt := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[r.IntN(3)]
		stag := tags[r.IntN(len(tags))]
		dtag := tags[r.IntN(len(tags))]
		reduce := make([]bool, rank)
		for _, a := range axes {
			reduce[a] = true
		}
		odims := shape.ReduceDims(dims, reduce, keep)
		if !keep || len(odims) < 2 {
			dtag = "abx"
		}
		src := graph.NewLogicalTensorBlocked(0, dt, dims, stag)
		out := graph.NewLogicalTensorBlocked(2, dt, odims, dtag)
		plainSrc := graph.NewLogicalTensor(0, dt, dims)
		plainOut := graph.NewLogicalTensor(2, dt, odims)
		var operand *graph.LogicalTensor
		if r.IntN(3) == 0 {
			o := graph.NewLogicalTensor(3, dt, odims)
			operand = &o
		}
		sl, _ := layout.Parse(stag, rank)
		sd, err := sl.Desc(dims)
		if err != nil {
			t.Fatal(err)
		}
		dl, _ := layout.Parse(dtag, len(odims))
		dd, err := dl.Desc(odims)
		if err != nil {
			t.Fatal(err)
		}
		esz := int64(dt.Size())
		sbuf := make([]byte, sd.Span()*esz)
		pbuf := make([]byte, prodDims(dims)*esz)
		for i := range sd.Span() {
			putElem(dt, sbuf, i, math.NaN())
		}
		dense := graph.DenseStrides(dims)
		eachIndex(dims, func(idx []int64) {
			v := float64(r.IntN(7)-3) / 2
			putElem(dt, sbuf, sd.Offset(idx), v)
			putElem(dt, pbuf, dotIdx(idx, dense), v)
		})
		var obuf []byte
		if operand != nil {
			obuf = make([]byte, prodDims(odims)*esz)
			for i := range prodDims(odims) {
				putElem(dt, obuf, i, float64(r.IntN(5)))
			}
		}
		run := func(s, o graph.LogicalTensor, sb []byte, ob []byte) {
			p := blockedGraph(t, kind, s, o, axes, keep, operand)
			ins := []graph.LogicalTensor{s}
			if operand != nil {
				ins = append(ins, *operand)
			}
			cp, err := p.Compile(ins, []graph.LogicalTensor{o})
			if err != nil {
				t.Fatalf("case %d %s:%s: Compile: %v", it, stag, dtag, err)
			}
			st, err := NewTensor(s, sb)
			if err != nil {
				t.Fatal(err)
			}
			ts := []Tensor{st}
			if operand != nil {
				ot, err := NewTensor(*operand, obuf)
				if err != nil {
					t.Fatal(err)
				}
				ts = append(ts, ot)
			}
			dt, err := NewTensor(o, ob)
			if err != nil {
				t.Fatal(err)
			}
			if err := cp.Execute(ts, []Tensor{dt}); err != nil {
				t.Fatalf("case %d %s:%s: Execute: %v", it, stag, dtag, err)
			}
		}
		got := make([]byte, dd.Span()*esz)
		for i := range dd.Span() {
			putElem(dt, got, i, math.NaN())
		}
		want := make([]byte, prodDims(odims)*esz)
		run(src, out, sbuf, got)
		run(plainSrc, plainOut, pbuf, want)
		odense := graph.DenseStrides(odims)
		logical := map[int64]bool{}
		eachIndex(odims, func(idx []int64) {
			off := dd.Offset(idx)
			logical[off] = true
			g, w := getElem(dt, got, off), getElem(dt, want, dotIdx(idx, odense))
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) && math.Abs(g-w) > 1e-2*math.Abs(w) {
				t.Fatalf("case %d %v %s %v:%s -> %v:%s axes %v keep %v: out %v = %v, plain %v", it, kind, dt, dims, stag, odims, dtag, axes, keep, idx, g, w)
			}
		})
		for i := range dd.Span() {
			if !logical[i] && getElem(dt, got, i) != 0 {
				t.Fatalf("case %d %s: output padding %d = %v", it, dtag, i, getElem(dt, got, i))
			}
		}
	}
}

// TestBlockedRefusals: bad tags, rank mismatches, a blocked binary
// operand, and Execute tensors that do not match the compiled layout are
// errors with a clear status.
func TestBlockedRefusals(t *testing.T) {
	dims := []int64{2, 20, 3}
	src := graph.NewLogicalTensorBlocked(0, dtypes.F32, dims, "aBx16b")
	out := graph.NewLogicalTensor(2, dtypes.F32, []int64{2, 20, 1})
	p := blockedGraph(t, graph.ReduceSum, src, out, []int64{2}, true, nil)
	for _, c := range []struct {
		tag  string
		want error
	}{
		{"aBx16q", graph.InvalidArguments},
		{"aBcd16b", graph.InvalidArguments},
		{"any", graph.InvalidArguments},
		{"ABc4a16b4a", graph.Unimplemented},
	} {
		bad := graph.NewLogicalTensorBlocked(0, dtypes.F32, dims, c.tag)
		if _, err := p.Compile([]graph.LogicalTensor{bad}, []graph.LogicalTensor{out}); !errors.Is(err, c.want) {
			t.Errorf("tag %q: Compile: %v, want %v", c.tag, err, c.want)
		}
		if _, err := MemSize(bad); !errors.Is(err, c.want) {
			t.Errorf("tag %q: MemSize: %v, want %v", c.tag, err, c.want)
		}
	}
	if n, err := MemSize(src); err != nil || n != 2*2*3*16*4 {
		t.Errorf("MemSize = %d, %v; want %d", n, err, 2*2*3*16*4)
	}
	cp, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{out})
	if err != nil {
		t.Fatal(err)
	}
	need, _ := MemSize(src)
	if _, err := NewTensor(src, make([]byte, need-1)); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("short blocked buffer at NewTensor: %v", err)
	}
	res := make([]float32, 40)
	ot, _ := NewTensor(out, res)
	for _, other := range []graph.LogicalTensor{
		graph.NewLogicalTensorBlocked(0, dtypes.F32, dims, "aBx8b"),
		graph.NewLogicalTensor(0, dtypes.F32, dims),
	} {
		st, err := NewTensor(other, make([]byte, need))
		if err != nil {
			t.Fatal(err)
		}
		if err := cp.Execute([]Tensor{st}, []Tensor{ot}); !errors.Is(err, graph.InvalidShape) {
			t.Errorf("Execute with %v: %v, want invalid_shape", other, err)
		}
	}
	// A blocked binary operand.
	o := graph.NewLogicalTensorBlocked(3, dtypes.F32, []int64{2, 20, 1}, "aBx16b")
	q := blockedGraph(t, graph.ReduceSum, src, graph.NewLogicalTensor(4, dtypes.F32, []int64{2, 20, 1}), []int64{2}, true, &o)
	if _, err := q.Compile(q.Inputs(), q.Outputs()); !errors.Is(err, graph.Unimplemented) {
		t.Errorf("blocked operand: %v, want unimplemented", err)
	}
	// A blocked layout without a tag is refused by the graph.
	g := graph.New()
	noTag := graph.LogicalTensor{ID: 0, DataType: dtypes.F32, Dims: dims, Layout: graph.LayoutBlocked}
	if err := g.AddOp(graph.NewOp(0, graph.ReduceSum, "r").AddInput(noTag).AddOutput(out).SetAttr("axes", []int64{2}).SetAttr("keep_dims", true)); !errors.Is(err, graph.InvalidArguments) {
		t.Errorf("blocked without tag: %v", err)
	}
}

func dotIdx(a, b []int64) int64 {
	s := int64(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func eachIndex(dims []int64, f func(idx []int64)) {
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for {
		f(idx)
		i := len(dims) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

func putElem(dt dtypes.DataType, b []byte, i int64, v float64) { oracle.Put(dt, b, i, v) }

func getElem(dt dtypes.DataType, b []byte, i int64) float64 { return oracle.Get(dt, b, i) }

// TestBlockedRunTimeAxes: a blocked src with axes that arrive at execute
// time, over the padded blocked dim and over a plain one.
func TestBlockedRunTimeAxes(t *testing.T) {
	dims := []int64{2, 20, 3}
	src := graph.NewLogicalTensorBlocked(0, dtypes.F32, dims, "aBx16b")
	axes := graph.NewLogicalTensor(1, dtypes.S64, []int64{1})
	g := graph.New()
	if err := g.AddOp(graph.NewOp(0, graph.ReduceSum, "sum").AddInput(src).AddInput(axes).
		AddOutput(graph.NewLogicalTensorAny(2, dtypes.F32, nil)).SetAttr("keep_dims", true)); err != nil {
		t.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		t.Fatal(err)
	}
	parts, err := Get(g, Fusion)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := parts[0].Compile([]graph.LogicalTensor{src, axes}, parts[0].Outputs())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := layout.Parse("aBx16b", 3)
	d, _ := l.Desc(dims)
	data := make([]float32, d.Span())
	for i := range data {
		data[i] = float32(math.NaN()) // padding
	}
	eachIndex(dims, func(idx []int64) { data[d.Offset(idx)] = float32(idx[0]*100 + idx[1]*3 + idx[2]) })
	st, err := NewTensor(src, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, axis := range []int64{1, 2} {
		out, err := cp.QueryLogicalTensorWithAxes(2, []int64{axis})
		if err != nil {
			t.Fatal(err)
		}
		res := make([]float32, out.NumElements())
		at, _ := NewTensor(axes, []int64{axis})
		ot, _ := NewTensor(out, res)
		if err := cp.Execute([]Tensor{st, at}, []Tensor{ot}); err != nil {
			t.Fatal(err)
		}
		od := shape.ReduceDims(dims, []bool{false, axis == 1, axis == 2}, true)
		i := 0
		eachIndex(od, func(idx []int64) {
			want := 0.0
			for k := range dims[axis] {
				v := append([]int64(nil), idx...)
				v[axis] = k
				want += float64(v[0]*100 + v[1]*3 + v[2])
			}
			if float64(res[i]) != want {
				t.Errorf("axis %d: out %v = %v, want %v", axis, idx, res[i], want)
			}
			i++
		})
	}
}

// TestQueryWithAxesKeepsCompiledLayout: with run-time axes and an output
// compiled with unknown dims, QueryLogicalTensorWithAxes describes the
// output in the layout compile was given (a blocked tag, strides all
// given), dense only where compile left it open (any, or an unknown
// stride), and Execute writes a tensor made from that description where
// its layout says. Dims the compiled layout cannot describe are refused,
// naming why (a tag of another rank already by Compile, see
// TestCompileRefusesTagOfAnotherRank).
func TestQueryWithAxesKeepsCompiledLayout(t *testing.T) {
	u := graph.UnknownDim
	dims := []int64{2, 20, 3}
	src := graph.NewLogicalTensor(0, dtypes.F32, dims)
	axesLT := graph.NewLogicalTensor(2, dtypes.S64, []int64{1})
	p := runTimeAxesPartition(t, graph.ReduceSum, src, axesLT, true)
	data := make([]float32, 2*20*3)
	eachIndex(dims, func(idx []int64) { data[idx[0]*60+idx[1]*3+idx[2]] = float32(idx[0]*100 + idx[1]*3 + idx[2]) })
	st, err := NewTensor(src, data)
	must(t, err)
	for _, c := range []struct {
		name     string
		compiled graph.LogicalTensor
		axis     int64
		tag      string  // want blocked with this tag, or
		strides  []int64 // strided with these
	}{
		{"blocked", graph.NewLogicalTensorBlocked(1, dtypes.F32, []int64{u, u, u}, "aBx8b"), 2, "aBx8b", nil},
		{"blocked, some dims known", graph.NewLogicalTensorBlocked(1, dtypes.F32, []int64{2, u, u}, "aBx8b"), 2, "aBx8b", nil},
		{"strided", graph.NewLogicalTensorStrided(1, dtypes.F32, []int64{u, u, u}, []int64{1, 2, 40}), 1, "", []int64{1, 2, 40}},
		{"unknown stride", graph.NewLogicalTensorStrided(1, dtypes.F32, []int64{u, u, u}, []int64{1, u, 1}), 1, "", []int64{3, 3, 1}},
		{"any", graph.NewLogicalTensorAny(1, dtypes.F32, []int64{u, u, u}), 1, "", []int64{3, 3, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{c.compiled})
			must(t, err)
			out, err := cp.QueryLogicalTensorWithAxes(1, []int64{c.axis})
			must(t, err)
			od := shape.ReduceDims(dims, []bool{false, c.axis == 1, c.axis == 2}, true)
			offset := func(idx []int64) int64 {
				var o int64
				for i, s := range out.Strides {
					o += idx[i] * s
				}
				return o
			}
			if c.tag != "" {
				if out.Layout != graph.LayoutBlocked || out.Tag != c.tag || out.Strides != nil {
					t.Fatalf("got %v, want dims %v blocked %s", out, od, c.tag)
				}
				l, err := layout.Parse(c.tag, len(od))
				must(t, err)
				d, err := l.Desc(od)
				must(t, err)
				offset = d.Offset
			} else if out.Layout != graph.LayoutStrided || !slices.Equal(out.Strides, c.strides) {
				t.Fatalf("got %v, want dims %v strides %v", out, od, c.strides)
			}
			if !slices.Equal(out.Dims, od) {
				t.Fatalf("dims %v, want %v", out.Dims, od)
			}
			size, err := MemSize(out)
			must(t, err)
			res := make([]float32, size/4)
			at, err := NewTensor(axesLT, []int64{c.axis})
			must(t, err)
			ot, err := NewTensor(out, res)
			must(t, err)
			must(t, cp.Execute([]Tensor{st, at}, []Tensor{ot}))
			eachIndex(od, func(idx []int64) {
				want := float32(0)
				for k := range dims[c.axis] {
					v := slices.Clone(idx)
					v[c.axis] = k
					want += float32(v[0]*100 + v[1]*3 + v[2])
				}
				if got := res[offset(idx)]; got != want {
					t.Errorf("out %v = %v, want %v", idx, got, want)
				}
			})
		})
	}
	for _, c := range []struct {
		name     string
		compiled graph.LogicalTensor
		status   graph.Status
		msg      string
	}{
		{"overlapping strides", graph.NewLogicalTensorStrided(1, dtypes.F32, []int64{u, u, u}, []int64{1, 1, 1}),
			graph.InvalidArguments, "cannot describe: output tensor 1: strides 1x1x1 do not nest"},
	} {
		cp, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{c.compiled})
		must(t, err)
		if _, err := cp.QueryLogicalTensorWithAxes(1, []int64{1}); !errors.Is(err, c.status) || !strings.Contains(fmt.Sprint(err), c.msg) {
			t.Errorf("%s: err %v, want %v saying %q", c.name, err, c.status, c.msg)
		}
	}
}

// TestCompileRefusesTagOfAnotherRank: with run-time axes the output's
// dims are unknown at Compile, but its rank is not, so a blocked tag of
// another rank (or one blocking a dim past it) is refused there, naming
// the tag and the rank, as with known dims, instead of by every Execute
// and QueryLogicalTensorWithAxes. A tag of the right rank still compiles.
func TestCompileRefusesTagOfAnotherRank(t *testing.T) {
	u := graph.UnknownDim
	src := graph.NewLogicalTensor(0, dtypes.F32, []int64{2, 20, 3})
	axesLT := graph.NewLogicalTensor(2, dtypes.S64, []int64{1})
	for _, keep := range []bool{true, false} {
		p := runTimeAxesPartition(t, graph.ReduceSum, src, axesLT, keep)
		outDims := []int64{u, u, u}
		if !keep {
			outDims = outDims[:2]
		}
		rank := len(outDims)
		for _, c := range []struct{ tag, msg string }{
			{"abcd", fmt.Sprintf(`tensor 1: tag "abcd" describes 4 dims but the tensor has rank %d`, rank)},
			{"a", fmt.Sprintf(`tensor 1: tag "a" describes 1 dims but the tensor has rank %d`, rank)},
			{"abcD8d", fmt.Sprintf(`tensor 1: tag "abcD8d" blocks dim d, but the tensor has rank %d`, rank)},
		} {
			out := graph.NewLogicalTensorBlocked(1, dtypes.F32, outDims, c.tag)
			cp, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{out})
			if cp != nil || !errors.Is(err, graph.InvalidArguments) || !strings.Contains(fmt.Sprint(err), c.msg) {
				t.Errorf("keep_dims %v, tag %q on rank %d: Compile gave %v, %v; want InvalidArguments saying %q", keep, c.tag, rank, cp, err, c.msg)
			}
		}
		good := "abc"[:rank]
		if _, err := p.Compile([]graph.LogicalTensor{src, axesLT}, []graph.LogicalTensor{graph.NewLogicalTensorBlocked(1, dtypes.F32, outDims, good)}); err != nil {
			t.Errorf("keep_dims %v, tag %q on rank %d: %v", keep, good, rank, err)
		}
	}
}

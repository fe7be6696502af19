package partition_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/partition"
)

// advOneElt runs ReduceMax (one element: the identity) -> op on xs, and
// returns gdnn's results.
func advOneElt(t *testing.T, op *graph.Op, xs []float32) []float32 {
	t.Helper()
	n := int64(len(xs))
	g := graph.New()
	src := graph.NewLogicalTensor(1, dtypes.F32, []int64{n, 1})
	mid := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
	dst := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(g.AddOp(graph.NewOp(1, graph.ReduceMax, "").AddInput(src).AddOutput(mid).SetAttr("axes", []int64{1})))
	op.ID = 2
	op.Inputs, op.Outputs = nil, nil
	must(g.AddOp(op.AddInput(mid).AddOutput(dst)))
	must(g.Finalize())
	parts, err := partition.Get(g, partition.Fusion)
	must(err)
	if len(parts) != 1 {
		t.Fatalf("parts %v", parts)
	}
	cp, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	must(err)
	olt, _ := cp.QueryLogicalTensor(3)
	out := make([]float32, n)
	st, err := partition.NewTensor(src, xs)
	must(err)
	dt, err := partition.NewTensor(olt, out)
	must(err)
	must(cp.Execute([]partition.Tensor{st}, []partition.Tensor{dt}))
	return out
}

func TestAdvProbeTails(t *testing.T) {
	advRestoreISA(t)
	advCacheCapacity(t, 0)
	var xs []float32
	for x := float32(-120); x < -1; x += 0.25 {
		xs = append(xs, x)
	}
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.None} {
		prev := jit.SetMaxISA(isa)
		for _, op := range []*graph.Op{
			graph.NewOp(0, graph.GELU, ""),
			graph.NewOp(0, graph.GELU, "").SetAttr("mode", "gelu_tanh"),
			graph.NewOp(0, graph.Mish, ""),
			graph.NewOp(0, graph.HardSwish, ""),
			graph.NewOp(0, graph.Elu, "").SetAttr("alpha", float32(1)),
			graph.NewOp(0, graph.SoftPlus, ""),
			graph.NewOp(0, graph.Sigmoid, ""),
		} {
			got := advOneElt(t, op, xs)
			bad := 0
			for i, x := range xs {
				w := float32(advEltwise(op, float64(x)))
				if math.Float32bits(w) != math.Float32bits(got[i]) && math.Abs(float64(w-got[i])) > 4*float64(ulp32(w)) {
					if bad < 4 {
						t.Errorf("%s %s(%v) = %v (%#x), want %v (%#x)", isa, op.Kind, x, got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%s %s: %d bad", isa, op.Kind, bad)
			}
		}
		jit.SetMaxISA(prev)
	}
}

func ulp32(x float32) float32 {
	x = float32(math.Abs(float64(x)))
	return math.Nextafter32(x, float32(math.Inf(1))) - x
}

// advBuild runs a graph-building func, finalizes it and runs it through
// gdnn and the evaluator.
func advRunBoth(t *testing.T, g *graph.Graph, in map[uint64]advVal, axes map[uint64][]int64) (got, want map[uint64]advVal, parts []*partition.Partition, err error) {
	t.Helper()
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	got, parts, err = advRunGDNN(g, partition.Fusion, in, axes)
	want, werr := advEvalGraph(g, in, axes, advFusedIntermediates(parts))
	if werr != nil {
		t.Logf("op-by-op evaluation refuses the graph: %v", werr)
		want = nil
	}
	return got, want, parts, err
}

func TestAdvProbeLSE(t *testing.T) {
	advRestoreISA(t)
	advCacheCapacity(t, 0)
	inf, nan := math.Inf(1), math.NaN()
	rows := [][]float64{
		{1000, 1000, 1000, 1000},
		{-1000, -1000, -1000, -1000},
		{math.Inf(-1), math.Inf(-1), math.Inf(-1), math.Inf(-1)},
		{nan, 1, 2, 3},
		{inf, 1, 2, 3},
		{inf, math.Inf(-1), 0, 0},
		{math.Inf(-1), 5, math.Inf(-1), 6},
		{88, 89, 90, 91},
		{-100, -103, -104, -200},
		{3e38, 3e38, -3e38, 0},
		{-87.5, -87.4, -87.3, -87.2},
		{80.5, 1, 1, 1},
		{-66.5, -70, -80, -90},
		{1e-45, -1e-45, 0, math.Copysign(0, -1)},
	}
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.None} {
		prev := jit.SetMaxISA(isa)
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			for _, mode := range []string{"attr", "runtime", "runtime-keep", "transposed"} {
				n := int64(len(rows))
				dims := []int64{n, 4}
				var v []float64
				for _, r := range rows {
					v = append(v, r...)
				}
				axis := int64(1)
				if mode == "transposed" {
					dims = []int64{4, n}
					tv := make([]float64, len(v))
					for i := int64(0); i < n; i++ {
						for j := int64(0); j < 4; j++ {
							tv[j*n+i] = v[i*4+j]
						}
					}
					v, axis = tv, 0
				}
				for i := range v {
					v[i] = advRound(dt, v[i])
				}
				g := graph.New()
				src := graph.NewLogicalTensor(1, dt, dims)
				e := graph.NewLogicalTensorAny(2, dt, nil)
				s := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
				l := graph.NewLogicalTensorAny(4, dtypes.F32, nil)
				g.AddOp(graph.NewOp(1, graph.Exp, "").AddInput(src).AddOutput(e))
				red := graph.NewOp(2, graph.ReduceSum, "").AddInput(e).AddOutput(s)
				axes := map[uint64][]int64{}
				switch mode {
				case "attr", "transposed":
					red.SetAttr("axes", []int64{axis})
				case "runtime", "runtime-keep":
					red.AddInput(graph.NewLogicalTensor(5, dtypes.S64, []int64{1}))
					axes[5] = []int64{-1}
					red.SetAttr("keep_dims", mode == "runtime-keep")
				}
				if err := g.AddOp(red); err != nil {
					t.Fatal(err)
				}
				g.AddOp(graph.NewOp(3, graph.Log, "").AddInput(s).AddOutput(l))
				got, want, parts, err := advRunBoth(t, g, map[uint64]advVal{1: {dims: dims, v: v}}, axes)
				if err != nil || len(parts) != 1 {
					t.Errorf("%s %s %s: %v %v", isa, dt, mode, parts, err)
					continue
				}
				for i := range want[4].v {
					w, gv := want[4].v[i], got[4].v[i]
					if !advClose(dtypes.F32, gv, w, 1e-6, 1e-6) {
						t.Errorf("%s %s %s: row %d %v: got %v want %v", isa, dt, mode, i, rows[i], gv, w)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

func TestAdvProbeInPlace(t *testing.T) {
	advRestoreISA(t)
	advCacheCapacity(t, 0)
	type cfg struct {
		n, k   int64
		axis   int64
		accDT  dtypes.DataType
		second bool
	}
	cfgs := []cfg{
		{1 << 16, 8, 1, dtypes.F32, false},
		{4, 1 << 18, 1, dtypes.F32, false},
		{4, 1 << 18, 1, dtypes.F32, true},
		{1 << 18, 4, 1, dtypes.S32, true},
		{3, 1 << 18, 0, dtypes.F32, true}, // reduce the outer axis: [N,K] over N keeps K
		{2, 1 << 19, 1, dtypes.S32, false},
	}
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.None} {
		prev := jit.SetMaxISA(isa)
		for _, c := range cfgs {
			g := graph.New()
			x := graph.NewLogicalTensor(1, dtypes.F32, []int64{c.n, c.k})
			r := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
			outDims := []int64{c.n}
			if c.axis == 0 {
				outDims = []int64{c.k}
			}
			acc := graph.NewLogicalTensor(3, c.accDT, outDims)
			o := graph.NewLogicalTensorAny(4, c.accDT, nil)
			if c.second {
				o.DataType = dtypes.F32
			}
			g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(x).AddOutput(r).SetAttr("axes", []int64{c.axis}))
			last := o
			if c.second {
				m := graph.NewLogicalTensorAny(5, dtypes.F32, nil)
				last = graph.NewLogicalTensorAny(6, c.accDT, nil)
				g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(acc).AddOutput(m))
				g.AddOp(graph.NewOp(3, graph.Multiply, "").AddInput(acc).AddInput(m).AddOutput(last))
			} else {
				g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(acc).AddOutput(o))
			}
			if err := g.Finalize(); err != nil {
				t.Fatal(err)
			}
			parts, _ := partition.Get(g, partition.Fusion)
			p := parts[0]
			if len(parts) != 1 {
				t.Fatalf("%v", parts)
			}
			cp, err := p.Compile(p.Inputs(), p.Outputs())
			if err != nil {
				t.Fatal(err)
			}
			olt, _ := cp.QueryLogicalTensor(last.ID)
			xs := make([]float32, c.n*c.k)
			for i := range xs {
				xs[i] = float32(i%7) - 3
			}
			nacc := advNum(outDims)
			accV := make([]float64, nacc)
			for i := range accV {
				accV[i] = float64(i%11) - 5
			}
			want, _ := advEvalGraph(g, map[uint64]advVal{1: {dims: []int64{c.n, c.k}, v: func() []float64 {
				v := make([]float64, len(xs))
				for i, x := range xs {
					v[i] = float64(x)
				}
				return v
			}()}, 3: {dims: outDims, v: accV}}, nil, map[uint64]bool{2: true, 5: true})
			buf := advBytes(c.accDT, accV)
			st, _ := partition.NewTensor(x, xs)
			at, err := partition.NewTensor(p.Inputs()[1], buf)
			if err != nil {
				t.Fatal(err)
			}
			olt2 := olt
			ot, err := partition.NewTensor(olt2, buf)
			if err != nil {
				t.Fatal(err)
			}
			if err := cp.Execute([]partition.Tensor{st, at}, []partition.Tensor{ot}); err != nil {
				t.Errorf("%s %+v: %v", isa, c, err)
				continue
			}
			got := advReadStrided(olt, buf)
			bad := 0
			for i := range got.v {
				if !advClose(c.accDT, got.v[i], want[last.ID].v[i], 1e-5, 1e-5*(1+math.Abs(want[last.ID].v[i]))) {
					if bad < 3 {
						t.Errorf("%s %+v: elem %d = %v want %v", isa, c, i, got.v[i], want[last.ID].v[i])
					}
					bad++
				}
			}
			t.Logf("%s %+v: impl %s, %d bad", isa, c, cp.Impl(), bad)
		}
		jit.SetMaxISA(prev)
	}
}

func TestAdvProbeQuantSrcAsOperand(t *testing.T) {
	advCacheCapacity(t, 0)
	for _, dt := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		g := graph.New()
		x := graph.NewLogicalTensor(1, dt, []int64{4, 1})
		xf := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
		r := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
		o := graph.NewLogicalTensorAny(4, dtypes.F32, nil)
		q := graph.NewLogicalTensorAny(5, dt, nil)
		g.AddOp(graph.NewOp(1, graph.Dequantize, "").AddInput(x).AddOutput(xf).SetAttr("scales", []float32{0.5}).SetAttr("zps", []int64{3}))
		g.AddOp(graph.NewOp(2, graph.ReduceSum, "").AddInput(xf).AddOutput(r).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true))
		g.AddOp(graph.NewOp(3, graph.Add, "").AddInput(x).AddInput(r).AddOutput(o))
		g.AddOp(graph.NewOp(4, graph.Quantize, "").AddInput(o).AddOutput(q).SetAttr("scales", []float32{0.25}).SetAttr("zps", []int64{-1}))
		in := map[uint64]advVal{1: {dims: []int64{4, 1}, v: []float64{1, 7, 20, 100}}}
		got, want, parts, err := advRunBoth(t, g, in, nil)
		if err != nil || len(parts) != 1 || fmt.Sprint(got[5]) != fmt.Sprint(want[5]) {
			t.Errorf("%s: parts %v err %v\n got %v\nwant %v", dt, parts, err, got[5], want[5])
		}
	}
}

func TestAdvProbeMisaligned(t *testing.T) {
	advRestoreISA(t)
	advCacheCapacity(t, 0)
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2} {
		prev := jit.SetMaxISA(isa)
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8} {
			for _, shape := range [][]int64{{1000, 37}, {37, 1000}, {3, 5, 4096}, {70000}} {
				for _, axes := range [][]int64{{-1}, {0}} {
					for off := 1; off < 4; off++ {
						g := graph.New()
						x := graph.NewLogicalTensor(1, dt, shape)
						r := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
						o := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
						w := graph.NewLogicalTensor(4, dtypes.F32, []int64{})
						g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(x).AddOutput(r).SetAttr("axes", axes))
						g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(w).AddOutput(o))
						if err := g.Finalize(); err != nil {
							t.Fatal(err)
						}
						parts, _ := partition.Get(g, partition.Fusion)
						p := parts[0]
						cp, err := p.Compile(p.Inputs(), p.Outputs())
						if err != nil {
							t.Fatal(err)
						}
						olt, err := cp.QueryLogicalTensor(3)
						if err != nil {
							t.Fatal(err, parts)
						}
						n := advNum(shape)
						sb := make([]byte, n*int64(dt.Size())+8)[off:][:n*int64(dt.Size())]
						for i := range sb {
							sb[i] = byte(i % 3)
						}
						ob := make([]byte, olt.NumElements()*4+8)[off:][:olt.NumElements()*4]
						wb := make([]byte, 8)[off:][:4]
						st, _ := partition.NewTensor(x, sb)
						ot, _ := partition.NewTensor(olt, ob)
						wt, _ := partition.NewTensor(w, wb)
						if err := cp.Execute([]partition.Tensor{st, wt}, []partition.Tensor{ot}); err != nil {
							t.Errorf("%s %s %v %v off %d: %v", isa, dt, shape, axes, off, err)
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

func TestAdvProbeConcurrentAxes(t *testing.T) {
	g := graph.New()
	x := graph.NewLogicalTensor(1, dtypes.F32, []int64{6, 5, 4})
	a := graph.NewLogicalTensor(2, dtypes.S32, []int64{1})
	r := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
	o := graph.NewLogicalTensorAny(4, dtypes.F32, nil)
	g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(x).AddInput(a).AddOutput(r).SetAttr("keep_dims", true))
	g.AddOp(graph.NewOp(2, graph.Sqrt, "").AddInput(r).AddOutput(o))
	g.Finalize()
	parts, _ := partition.Get(g, partition.Fusion)
	p := parts[0]
	cp, err := p.Compile(p.Inputs(), p.Outputs())
	if err != nil {
		t.Fatal(err)
	}
	xs := make([]float32, 120)
	xv := make([]float64, 120)
	for i := range xs {
		xs[i] = float32(i % 13)
		xv[i] = float64(xs[i])
	}
	done := make(chan string, 16)
	for w := 0; w < 8; w++ {
		go func(w int) {
			msg := ""
			for it := 0; it < 300 && msg == ""; it++ {
				ax := int32((w + it) % 3)
				olt, err := cp.QueryLogicalTensorWithAxes(4, []int64{int64(ax)})
				if err != nil {
					msg = err.Error()
					break
				}
				out := make([]float32, olt.NumElements())
				st, _ := partition.NewTensor(x, xs)
				at, _ := partition.NewTensor(a, []int32{ax})
				ot, _ := partition.NewTensor(olt, out)
				if err := cp.Execute([]partition.Tensor{st, at}, []partition.Tensor{ot}); err != nil {
					msg = err.Error()
					break
				}
				reduce := []bool{ax == 0, ax == 1, ax == 2}
				want := advReduce(graph.ReduceSum, 0, advVal{dims: []int64{6, 5, 4}, v: xv}, reduce, true)
				for i, wv := range want.v {
					if math.Abs(float64(out[i])-math.Sqrt(wv)) > 1e-4 {
						msg = "wrong value"
					}
				}
			}
			done <- msg
		}(w)
	}
	for w := 0; w < 8; w++ {
		if m := <-done; m != "" {
			t.Error(m)
		}
	}
}

// advBlockedOff is the element offset of (n, c, w) in aBx16b for dims [N, C, W].
func advBlockedOff(dims []int64, n, c, w int64) int64 {
	cb := (dims[1] + 15) / 16
	return ((n*cb+c/16)*dims[2]+w)*16 + c%16
}

func TestAdvProbeBlocked(t *testing.T) {
	advRestoreISA(t)
	advCacheCapacity(t, 0)
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.None} {
		prev := jit.SetMaxISA(isa)
		for _, kind := range []graph.OpKind{graph.ReduceMean, graph.ReduceMax, graph.ReduceMin, graph.ReduceProd, graph.ReduceSum, graph.ReduceL2} {
			for _, axes := range [][]int64{{1}, {2}, {0, 2}, {1, 2}, {0}} {
				dims := []int64{2, 20, 3}
				g := graph.New()
				x := graph.NewLogicalTensorBlocked(1, dtypes.F32, dims, "aBx16b")
				r := graph.NewLogicalTensorBlocked(2, dtypes.F32, nil, "aBx16b")
				r.Dims = nil
				o := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
				w := graph.NewLogicalTensor(4, dtypes.F32, []int64{1, 1, 1})
				_ = o
				mustAdv(t, g.AddOp(graph.NewOp(1, kind, "").AddInput(x).AddOutput(r).SetAttr("axes", axes).SetAttr("keep_dims", true)))
				o2 := graph.NewLogicalTensorBlocked(5, dtypes.F32, nil, "aBx16b")
				mustAdv(t, g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(w).AddOutput(o2)))
				mustAdv(t, g.Finalize())
				parts, _ := partition.Get(g, partition.Fusion)
				p := parts[0]
				if len(parts) != 1 {
					t.Fatalf("%v", parts)
				}
				cp, err := p.Compile(p.Inputs(), p.Outputs())
				if err != nil {
					t.Errorf("%s %v: %v", kind, axes, err)
					continue
				}
				olt, _ := cp.QueryLogicalTensor(5)
				ssz, _ := partition.MemSize(x)
				osz, _ := partition.MemSize(olt)
				sb := make([]float32, ssz/4)
				for i := range sb {
					sb[i] = float32(math.NaN())
				}
				xv := make([]float64, advNum(dims))
				e := 0
				for n := int64(0); n < dims[0]; n++ {
					for c := int64(0); c < dims[1]; c++ {
						for ww := int64(0); ww < dims[2]; ww++ {
							v := float64((n*7+c*3+ww)%5) - 1.5
							if kind == graph.ReduceProd {
								v = 1 + float64((n+c+ww)%3)/4
							}
							xv[e] = v
							sb[advBlockedOff(dims, n, c, ww)] = float32(v)
							e++
						}
					}
				}
				ob := make([]float32, osz/4)
				for i := range ob {
					ob[i] = 7777
				}
				st, err := partition.NewTensor(x, sb)
				mustAdv(t, err)
				wt, _ := partition.NewTensor(w, []float32{0.5})
				ot, err := partition.NewTensor(olt, ob)
				mustAdv(t, err)
				if err := cp.Execute([]partition.Tensor{st, wt}, []partition.Tensor{ot}); err != nil {
					t.Errorf("%s %v: %v", kind, axes, err)
					continue
				}
				reduce := make([]bool, 3)
				for _, a := range axes {
					reduce[a] = true
				}
				want := advReduce(kind, 0, advVal{dims: dims, v: xv}, reduce, true)
				od := want.dims
				cbo := (od[1] + 15) / 16
				bad := 0
				for i := range ob {
					// which logical element, if any
					c := int64(i) % 16
					rest := int64(i) / 16
					wv := rest % od[2]
					rest /= od[2]
					cblk := rest % cbo
					n := rest / cbo
					cc := cblk*16 + c
					if cc >= od[1] {
						if ob[i] != 0 {
							bad++
							if bad < 3 {
								t.Errorf("%s %s %v: padding at %d = %v, want 0", isa, kind, axes, i, ob[i])
							}
						}
						continue
					}
					wantV := want.v[(n*od[1]+cc)*od[2]+wv] + 0.5
					if math.Abs(float64(ob[i])-wantV) > 1e-4*(1+math.Abs(wantV)) {
						bad++
						if bad < 3 {
							t.Errorf("%s %s %v: (%d,%d,%d) = %v, want %v", isa, kind, axes, n, cc, wv, ob[i], wantV)
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

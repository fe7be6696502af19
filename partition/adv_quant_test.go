package partition_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/partition"
)

func (a *advGen) quantAttrs(op *graph.Op, dims []int64, isQ bool) {
	r := a.r
	scale := func() float32 {
		s := float32(math.Round((r.Float64()*2-1)*64) / 32)
		if s == 0 && (isQ || r.IntN(3) != 0) {
			s = 0.25
		}
		return s
	}
	if len(dims) > 0 && r.IntN(2) == 0 {
		ax := r.IntN(len(dims))
		c := dims[ax]
		axis := int64(ax)
		if r.IntN(2) == 0 {
			axis -= int64(len(dims))
		}
		sc := make([]float32, c)
		zp := make([]int64, c)
		for i := range sc {
			sc[i] = scale()
			if r.IntN(2) == 0 {
				zp[i] = int64(r.IntN(9) - 4)
			}
		}
		op.SetAttr("qtype", "per_channel").SetAttr("axis", axis).SetAttr("scales", sc)
		if c > 0 {
			op.SetAttr("zps", zp)
		}
		return
	}
	op.SetAttr("scales", []float32{scale()})
	if r.IntN(2) == 0 {
		op.SetAttr("zps", []int64{int64(r.IntN(9) - 4)})
	}
}

func (a *advGen) buildQuant() error {
	r := a.r
	srcDT := dtypes.S8
	if r.IntN(2) == 0 {
		srcDT = dtypes.U8
	}
	rank := 1 + r.IntN(4)
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = int64(1 + r.IntN(5))
		if r.IntN(40) == 0 {
			dims[i] = 0
		}
	}
	kind := advRedKinds[r.IntN(len(advRedKinds))]
	a.prod = kind == graph.ReduceProd
	x := a.input(srcDT, dims, -3, 3)
	deq := graph.NewOp(a.oid(), graph.Dequantize, "dq").AddInput(x)
	a.quantAttrs(deq, dims, false)
	xf := graph.NewLogicalTensorAny(a.tid(), dtypes.F32, nil)
	deq.AddOutput(xf)
	if err := a.add(deq); err != nil {
		return err
	}
	in := xf
	if r.IntN(5) == 0 && kind != graph.ReduceProd && kind != graph.ReduceL1 && kind != graph.ReduceL2 {
		pre := []graph.OpKind{graph.Abs, graph.Square}[r.IntN(2)]
		t := graph.NewLogicalTensorAny(a.tid(), dtypes.F32, nil)
		if err := a.add(graph.NewOp(a.oid(), pre, "pre").AddInput(in).AddOutput(t)); err != nil {
			return err
		}
		in = t
	}
	axes := advRandomAxes(r, rank)
	keep := r.IntN(2) == 0
	red := graph.NewOp(a.oid(), kind, "red").AddInput(in).SetAttr("keep_dims", keep)
	if r.IntN(4) == 0 {
		at := graph.NewLogicalTensor(a.tid(), dtypes.S32, []int64{int64(len(axes))})
		a.axes[at.ID] = axes
		red.AddInput(at)
	} else {
		red.SetAttr("axes", axes)
	}
	cur := graph.NewLogicalTensorAny(a.tid(), dtypes.F32, nil)
	red.AddOutput(cur)
	if err := a.add(red); err != nil {
		return err
	}
	reduce := advReduceMask(rank, axes)
	outDims := advKeptDims(dims, reduce, keep)
	for i, n := 0, r.IntN(4); i < n; i++ {
		out := graph.NewLogicalTensorAny(a.tid(), dtypes.F32, nil)
		var op *graph.Op
		if r.IntN(2) == 0 {
			k := []graph.OpKind{graph.ReLU, graph.Abs, graph.Clamp, graph.Square, graph.Round, graph.Tanh, graph.LeakyReLU}[r.IntN(7)]
			op = graph.NewOp(a.oid(), k, "elt").AddInput(cur).AddOutput(out)
			a.eltAttrs(op)
		} else {
			k := advBinKinds[r.IntN(len(advBinKinds))]
			lo, hi := -2.0, 2.0
			if k == graph.Divide {
				lo, hi = 0.5, 2
			}
			other := a.input(dtypes.F32, a.broadcastDims(outDims), lo, hi)
			op = graph.NewOp(a.oid(), k, "bin")
			if r.IntN(4) == 0 {
				op.AddInput(other).AddInput(cur)
			} else {
				op.AddInput(cur).AddInput(other)
			}
			op.AddOutput(out)
		}
		if err := a.add(op); err != nil {
			return err
		}
		cur = out
		if b, _ := advBroadcast(outDims, advOperandDims(op, cur.ID)); b != nil {
			outDims = b
		}
	}
	if r.IntN(3) != 0 {
		qdt := dtypes.S8
		if r.IntN(2) == 0 {
			qdt = dtypes.U8
		}
		q := graph.NewOp(a.oid(), graph.Quantize, "q").AddInput(cur)
		a.quantAttrs(q, outDims, true)
		q.AddOutput(graph.NewLogicalTensorAny(a.tid(), qdt, nil))
		if err := a.add(q); err != nil {
			return err
		}
	}
	return nil
}

func TestAdvQuantGraphs(t *testing.T) {
	n := 3000
	if s := os.Getenv("ADV_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	seed0 := uint64(1)
	if s := os.Getenv("ADV_SEED"); s != "" {
		seed0, _ = strconv.ParseUint(s, 10, 64)
	}
	if s := os.Getenv("ADV_ISA"); s != "" {
		isa, _ := jit.ParseISA(s)
		defer jit.SetMaxISA(jit.SetMaxISA(isa))
	}
	verbose := os.Getenv("ADV_V") != ""
	advCacheCapacity(t, 0)
	fails, built, ran, fused, k1 := 0, 0, 0, 0, 0
	for seed := seed0; seed < seed0+uint64(n) && fails < 15; seed++ {
		a := &advGen{r: rand.New(rand.NewPCG(seed, 5)), g: graph.New(), inputs: map[uint64]advVal{}, axes: map[uint64][]int64{}}
		if err := a.buildQuant(); err != nil {
			continue
		}
		if err := a.g.Finalize(); err != nil {
			continue
		}
		built++
		if _, err := advEvalGraph(a.g, a.inputs, a.axes, nil); err != nil {
			continue
		}
		got, parts, err := advRunGDNN(a.g, partition.Fusion, a.inputs, a.axes)
		if err != nil && advEnlargeRefusal(err) {
			k1++
			continue
		}
		if err != nil {
			fails++
			t.Errorf("seed %d: gdnn failed: %v\n%s\nparts %v", seed, err, strings.Join(a.log, "\n"), parts)
			continue
		}
		ran++
		if parts[0].IsSupported() && parts[0].Ops()[0].Kind == graph.Dequantize {
			fused++
		}
		want, _ := advEvalGraph(a.g, a.inputs, a.axes, advFusedIntermediates(parts))
		scale := 1.0
		for _, v := range want {
			for _, x := range v.v {
				if !math.IsInf(x, 0) && x == x {
					scale = math.Max(scale, math.Abs(x))
				}
			}
		}
		for _, id := range advOutputs(a.g) {
			lt, _ := a.g.Tensor(id)
			w, g := want[id], got[id]
			if fmt.Sprint(w.dims) != fmt.Sprint(g.dims) {
				fails++
				t.Errorf("seed %d: tensor %d dims %v, want %v\n%s\nparts %v", seed, id, g.dims, w.dims, strings.Join(a.log, "\n"), parts)
				continue
			}
			for i := range w.v {
				if !advClose(lt.DataType, g.v[i], w.v[i], 1e-4, 1e-4*scale) {
					fails++
					t.Errorf("seed %d: tensor %d (%s) elem %d = %v, want %v\n%s\nparts %v\ninputs %v", seed, id, lt.DataType, i, g.v[i], w.v[i], strings.Join(a.log, "\n"), parts, advShort(a.inputs))
					if verbose {
						for tid := range want {
							t.Logf("t%d want %v got %v", tid, want[tid].v, got[tid].v)
						}
					}
					break
				}
			}
		}
	}
	t.Logf("built %d, ran %d (%d with a fused Dequantize), %d failures, %d execute-time shape refusals", built, ran, fused, fails, k1)
}

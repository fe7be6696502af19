package partition_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/partition"
)

// advEachISA runs f under every ISA cap this machine has (the kernel
// cache is keyed by ISA; the compiled partition cache is not consulted
// across caps because its key holds the ISA too).
func advEachISA(t *testing.T, f func(t *testing.T)) {
	advRestoreISA(t)
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.NEON, jit.None} {
		prev := jit.SetMaxISA(isa)
		if isa != jit.None && jit.EffectiveISA() != isa {
			jit.SetMaxISA(prev)
			continue
		}
		t.Run(isa.String(), f)
		jit.SetMaxISA(prev)
	}
}

// advRunF32 builds the graph with build, takes its only partition, which
// must be supported, and runs it on src (f32 or int8 data as given by the
// src logical tensor), returning the f32 output. axes, when not nil, is
// the value of run-time axes tensor axesID.
func advRunOne(t *testing.T, g *graph.Graph, inputs map[uint64]any, axesID uint64, axes []int32) ([]float32, error) {
	t.Helper()
	if err := g.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(parts) != 1 || !parts[0].IsSupported() {
		t.Fatalf("want one supported partition, got %v", parts)
	}
	p := parts[0]
	var ins []graph.LogicalTensor
	var tens []partition.Tensor
	for _, lt := range p.Inputs() {
		if lt.ID == axesID {
			lt = graph.NewLogicalTensor(lt.ID, lt.DataType, []int64{int64(len(axes))})
		}
		ins = append(ins, lt)
		data := inputs[lt.ID]
		if lt.ID == axesID {
			data = axes
		}
		tt, err := partition.NewTensor(lt, data)
		if err != nil {
			t.Fatalf("NewTensor %d: %v", lt.ID, err)
		}
		tens = append(tens, tt)
	}
	cp, err := p.Compile(ins, p.Outputs())
	if err != nil {
		return nil, err
	}
	out, err := cp.QueryLogicalTensor(p.Outputs()[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if !out.KnownDims() {
		ax := make([]int64, len(axes))
		for i, a := range axes {
			ax[i] = int64(a)
		}
		if out, err = cp.QueryLogicalTensorWithAxes(out.ID, ax); err != nil {
			t.Fatal(err)
		}
	}
	res := make([]float32, out.NumElements())
	dt, err := partition.NewTensor(out, res)
	if err != nil {
		t.Fatal(err)
	}
	return res, cp.Execute(tens, []partition.Tensor{dt})
}

// advDequantReduce builds s8 tensor 1 (dims) -> Dequantize (scale) ->
// reduction kind over axis 1 -> tensor 3, which it returns for ops to
// follow.
func advDequantReduce(t *testing.T, dims []int64, scale float32, kind graph.OpKind) (*graph.Graph, graph.LogicalTensor) {
	g := graph.New()
	x := graph.NewLogicalTensor(1, dtypes.S8, dims)
	xf := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
	r := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
	mustAdv(t, g.AddOp(graph.NewOp(1, graph.Dequantize, "dq").AddInput(x).AddOutput(xf).SetAttr("scales", []float32{scale})))
	mustAdv(t, g.AddOp(graph.NewOp(2, kind, "red").AddInput(xf).AddOutput(r).SetAttr("axes", []int64{1})))
	return g, r
}

// A Dequantize with a negative scale fused before a ReduceSum: the sum of
// (x - zp) * scale over x = [3, -3] is -3 + 3 = +0 op by op (an IEEE sum
// of values of both signs that cancel is +0, and the README's Semantics
// says sums give +0), so 1/r (Pow beta -1, fused) is +Inf. The fused
// partition computes (sum(x) - zp*N) * scale, 0 * -1 = -0, so its map
// ends in + 0.
func TestAdvDequantReduceSumZeroSign(t *testing.T) {
	advEachISA(t, func(t *testing.T) {
		g, r := advDequantReduce(t, []int64{1, 2}, -1, graph.ReduceSum)
		o := graph.NewLogicalTensorAny(4, dtypes.F32, nil)
		mustAdv(t, g.AddOp(graph.NewOp(3, graph.Pow, "inv").AddInput(r).AddOutput(o).SetAttr("beta", float32(-1))))
		got, err := advRunOne(t, g, map[uint64]any{1: []int8{3, -3}}, 0, nil)
		mustAdv(t, err)
		if !math.IsInf(float64(got[0]), 1) {
			t.Errorf("1/sum(dequantize([3, -3], scale -1)) = %v, want +Inf (the sum is +0 op by op)", got[0])
		}
	})
}

// A Dequantize with a zero scale fused before a ReduceMax over a
// zero-size axis: op by op the max over nothing is -Inf (README,
// Semantics), where the map of the max, (-Inf - zp) * 0, would be NaN:
// over nothing the partition applies no map.
func TestAdvDequantZeroScaleEmptyMax(t *testing.T) {
	advEachISA(t, func(t *testing.T) {
		g, _ := advDequantReduce(t, []int64{2, 0}, 0, graph.ReduceMax)
		got, err := advRunOne(t, g, map[uint64]any{1: []int8{}}, 0, nil)
		mustAdv(t, err)
		for i, v := range got {
			if !math.IsInf(float64(v), -1) {
				t.Errorf("max over a zero-size axis of dequantize(scale 0), output %d = %v, want -Inf", i, v)
			}
		}
	})
}

// A Dequantize whose scale is -0 fused before a max, min, sum or mean:
// op by op every value is (x - zp) * -0, -0 where x > zp and +0 where
// x < zp; the max of a mix is +0 and the min -0 (README, Semantics), and
// a sum or mean, which starts from +0, is +0. A -0 scale is negative for
// the map as any other: it turns max into min and back, and a sum's map
// ends in + 0.
func TestAdvDequantNegativeZeroScale(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		kind graph.OpKind
		x    []int8
		want float64
	}{
		{graph.ReduceMax, []int8{3, 5}, negZero},
		{graph.ReduceMax, []int8{-3, 5}, 0},
		{graph.ReduceMin, []int8{-3, 5}, negZero},
		{graph.ReduceMin, []int8{-3, -5}, 0},
		{graph.ReduceSum, []int8{3, 5}, 0},
		{graph.ReduceMean, []int8{3, 5}, 0},
	} {
		t.Run(fmt.Sprintf("%s%v", c.kind, c.x), func(t *testing.T) {
			advEachISA(t, func(t *testing.T) {
				g, _ := advDequantReduce(t, []int64{1, 2}, float32(negZero), c.kind)
				got, err := advRunOne(t, g, map[uint64]any{1: c.x}, 0, nil)
				mustAdv(t, err)
				if got[0] != 0 || math.Signbit(float64(got[0])) != math.Signbit(c.want) {
					t.Errorf("%s(dequantize(%v, scale -0)) = %v (sign bit %v), want %v", c.kind, c.x, got[0], math.Signbit(float64(got[0])), c.want)
				}
			})
		})
	}
}

// An operand whose dims are not known when partitioning fuses; if its
// dims at compile broadcast the reduction's output to larger ones, the
// graph is valid but the fused partition cannot write that shape: Compile
// says unimplemented, names the operand and says how to keep the op
// apart. Dims that do not enlarge compile and run.
func TestAdvOperandEnlargingAtCompile(t *testing.T) {
	build := func() *partition.Partition {
		g := graph.New()
		src := graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 3})
		r := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
		w := graph.NewLogicalTensorAny(4, dtypes.F32, nil)
		o := graph.NewLogicalTensorAny(5, dtypes.F32, nil)
		mustAdv(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(src).AddOutput(r).SetAttr("axes", []int64{1}).SetAttr("keep_dims", true)))
		mustAdv(t, g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(w).AddInput(r).AddOutput(o)))
		mustAdv(t, g.Finalize())
		parts, err := partition.Get(g, partition.Fusion)
		mustAdv(t, err)
		if len(parts) != 1 || !parts[0].IsSupported() {
			t.Fatalf("partitions %v, want ReduceSum -> Add fused", parts)
		}
		return parts[0]
	}
	src := graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 3})
	p := build()
	_, err := p.Compile([]graph.LogicalTensor{src, graph.NewLogicalTensor(4, dtypes.F32, []int64{4, 5})}, p.Outputs())
	if !errors.Is(err, graph.Unimplemented) || !strings.Contains(err.Error(), "tensor 4 (4x5) broadcasts the reduction's output 4x1 to 4x5") ||
		!strings.Contains(err.Error(), "partition of its own") {
		t.Errorf("Compile with an operand of 4x5 after a 4x1 reduction: %v, want unimplemented naming tensor 4", err)
	}
	p = build()
	w := graph.NewLogicalTensor(4, dtypes.F32, []int64{4, 1})
	cp, err := p.Compile([]graph.LogicalTensor{src, w}, p.Outputs())
	mustAdv(t, err)
	out, err := cp.QueryLogicalTensor(5)
	mustAdv(t, err)
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	wv, res := []float32{1, 2, 3, 4}, make([]float32, 4)
	ts, err := partition.NewTensor(src, x)
	mustAdv(t, err)
	tw, err := partition.NewTensor(w, wv)
	mustAdv(t, err)
	tr, err := partition.NewTensor(out, res)
	mustAdv(t, err)
	mustAdv(t, cp.Execute([]partition.Tensor{ts, tw}, []partition.Tensor{tr}))
	if want := []float32{7, 17, 27, 37}; !slices.Equal(res, want) {
		t.Errorf("ReduceSum -> Add with a 4x1 operand = %v, want %v", res, want)
	}
}

// auto_broadcast none requires both operands to have the same dims
// (oneDNN Graph's Add). With run-time axes the chain's dims are unknown
// when the partition is formed, so such an Add is not fused: its own
// partition says why, and the caller runs it on the dims the axes give.
// An operand that is not all ones does not fuse either: it could
// enlarge the reduction's output for some axes.
func TestAdvAutoBroadcastNoneWithRunTimeAxes(t *testing.T) {
	for _, c := range []struct {
		name, mode string
		dims       []int64
		fused      bool
		why        string
	}{
		{"none", "none", []int64{1, 1}, false, "auto_broadcast is none, and with axes given at execute time"},
		{"numpy, per row", "numpy", []int64{4, 1}, false, "could enlarge the reduction's output"},
		{"numpy, of a rank the output may not have", "numpy", []int64{1, 1, 1}, false, "could enlarge the reduction's output"},
		{"numpy, ones", "numpy", []int64{1, 1}, true, ""},
	} {
		g := graph.New()
		src := graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 3})
		ax := graph.NewLogicalTensor(2, dtypes.S32, []int64{1})
		r := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
		w := graph.NewLogicalTensor(4, dtypes.F32, c.dims)
		o := graph.NewLogicalTensorAny(5, dtypes.F32, nil)
		mustAdv(t, g.AddOp(graph.NewOp(1, graph.ReduceSum, "").AddInput(src).AddInput(ax).AddOutput(r).SetAttr("keep_dims", true)))
		mustAdv(t, g.AddOp(graph.NewOp(2, graph.Add, "").AddInput(r).AddInput(w).AddOutput(o).SetAttr("auto_broadcast", c.mode)))
		mustAdv(t, g.Finalize())
		parts, err := partition.Get(g, partition.Fusion)
		mustAdv(t, err)
		if c.fused {
			if len(parts) != 1 || !parts[0].IsSupported() {
				t.Errorf("%s: partitions %v, want the Add fused", c.name, parts)
			}
			continue
		}
		if len(parts) != 2 || parts[1].IsSupported() || !strings.Contains(parts[1].Reason(), c.why) {
			t.Errorf("%s: partitions %v, want the Add in a partition of its own saying %q", c.name, parts, c.why)
		}
	}
}

// HardSwish is src * min(max(src + 3, 0), 6) / 6 (oneDNN Graph's
// definition): for src <= -3 that is src * 0 = -0.
func TestAdvHardSwishNegativeZero(t *testing.T) {
	advEachISA(t, func(t *testing.T) {
		g := graph.New()
		x := graph.NewLogicalTensor(1, dtypes.F32, []int64{2, 1})
		r := graph.NewLogicalTensorAny(2, dtypes.F32, nil)
		o := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
		mustAdv(t, g.AddOp(graph.NewOp(1, graph.ReduceMax, "").AddInput(x).AddOutput(r).SetAttr("axes", []int64{1})))
		mustAdv(t, g.AddOp(graph.NewOp(2, graph.HardSwish, "").AddInput(r).AddOutput(o)))
		in := []float32{-3, -5}
		got, err := advRunOne(t, g, map[uint64]any{1: in}, 0, nil)
		mustAdv(t, err)
		for i, v := range got {
			if v != 0 || !math.Signbit(float64(v)) {
				t.Errorf("HardSwish(%v) = %v (sign bit %v), want -0", in[i], v, math.Signbit(float64(v)))
			}
		}
	})
}

func mustAdv(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// RMSNorm with the axes as a run-time tensor: y = x * (mean(x²) over
// axes, keep_dims)^-0.5. Op by op the Multiply broadcasts the [4,1]
// statistic over the [4,3] x. With run-time axes the partitioner cannot
// see the statistic's dims, so it fuses a binary op only where the
// operand cannot enlarge the output for any axes (all ones): here the
// Multiply stays a partition of its own, and the framework runs it.
func TestAdvRunTimeAxesRMSNormRuns(t *testing.T) {
	advCacheCapacity(t, 0)
	g := graph.New()
	x := graph.NewLogicalTensor(1, dtypes.F32, []int64{4, 3})
	ax := graph.NewLogicalTensor(2, dtypes.S32, []int64{1})
	sq := graph.NewLogicalTensorAny(3, dtypes.F32, nil)
	ms := graph.NewLogicalTensorAny(4, dtypes.F32, nil)
	rs := graph.NewLogicalTensorAny(5, dtypes.F32, nil)
	y := graph.NewLogicalTensorAny(6, dtypes.F32, nil)
	mustAdv(t, g.AddOp(graph.NewOp(1, graph.Square, "").AddInput(x).AddOutput(sq)))
	mustAdv(t, g.AddOp(graph.NewOp(2, graph.ReduceMean, "").AddInput(sq).AddInput(ax).AddOutput(ms).SetAttr("keep_dims", true)))
	mustAdv(t, g.AddOp(graph.NewOp(3, graph.Pow, "").AddInput(ms).AddOutput(rs).SetAttr("beta", float32(-0.5))))
	mustAdv(t, g.AddOp(graph.NewOp(4, graph.Multiply, "").AddInput(x).AddInput(rs).AddOutput(y)))
	mustAdv(t, g.Finalize())
	xv := advVal{dims: []int64{4, 3}, v: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
	in := map[uint64]advVal{1: xv}
	axes := map[uint64][]int64{2: {1}}
	got, parts, err := advRunGDNN(g, partition.Fusion, in, axes)
	if err != nil {
		t.Fatalf("running the partitions %v of a valid graph: %v", parts, err)
	}
	want, _ := advEvalGraph(g, in, axes, advFusedIntermediates(parts))
	for i, w := range want[6].v {
		if math.Abs(got[6].v[i]-w) > 1e-5*math.Abs(w) {
			t.Errorf("y[%d] = %v, want %v", i, got[6].v[i], w)
		}
	}
}

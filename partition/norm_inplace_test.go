package partition

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// inPlaceCase is a graph with one normalization partition, the ids of
// the inputs its outputs may be (src; a residual sum's x and skip) and of
// the outputs that may be them (dst; the kept sum).
type inPlaceCase struct {
	name     string
	g        *graph.Graph
	ins      []uint64
	outs     []uint64
	scalarIn uint64 // an epsilon tensor, filled with a valid value (0: none)
}

// normOpGraph is one normalization op over src (tensor 0) with gamma and
// beta (1, 2) when params, dst 10 (then mean 11 and variance 12 when
// stats), and with post a ReLU and an Add of tensor 5 (src's dims) after
// it (output 21).
func normOpGraph(t testing.TB, kind graph.OpKind, dims []int64, dt dtypes.DataType, params, stats, post bool, attrs ...any) *graph.Graph {
	src := graph.NewLogicalTensor(0, dt, dims)
	op := graph.NewOp(1, kind, "norm").AddInput(src)
	for i := 0; i+1 < len(attrs); i += 2 {
		op.SetAttr(attrs[i].(string), attrs[i+1])
	}
	if params {
		var pd []int64
		pd = dims[len(dims)-1:]
		if f, _ := op.Str("data_format"); kind == graph.GroupNorm && f == "NCX" {
			pd = dims[1:2]
		}
		op.AddInput(graph.NewLogicalTensor(1, dtypes.F32, pd))
		if kind != graph.RMSNorm {
			op.AddInput(graph.NewLogicalTensor(2, dtypes.F32, pd))
		}
	}
	op.AddOutput(graph.NewLogicalTensorAny(10, dt, nil))
	if stats {
		op.AddOutput(graph.NewLogicalTensorAny(11, dtypes.F32, nil)).AddOutput(graph.NewLogicalTensorAny(12, dtypes.F32, nil))
	}
	g := graph.New()
	must(t, g.AddOp(op))
	if post {
		must(t, g.AddOp(graph.NewOp(2, graph.ReLU, "relu").AddInput(graph.NewLogicalTensorAny(10, dt, nil)).AddOutput(graph.NewLogicalTensorAny(20, dt, nil))))
		must(t, g.AddOp(graph.NewOp(3, graph.Add, "add").AddInput(graph.NewLogicalTensorAny(20, dt, nil)).
			AddInput(graph.NewLogicalTensor(5, dt, dims)).AddOutput(graph.NewLogicalTensorAny(21, dt, nil))))
	}
	must(t, g.Finalize())
	return g
}

func inPlaceCases(t *testing.T) []inPlaceCase {
	f32, bf16 := dtypes.F32, dtypes.BF16
	src := []uint64{0}
	cs := []inPlaceCase{
		{"softmax/last", normOpGraph(t, graph.SoftMax, []int64{6, 300}, f32, false, false, false, "axis", int64(-1)), src, []uint64{10}, 0},
		{"softmax/long-rows-chunked", normOpGraph(t, graph.SoftMax, []int64{300, 1000}, f32, false, false, false, "axis", int64(-1)), src, []uint64{10}, 0},
		{"softmax/channels", normOpGraph(t, graph.SoftMax, []int64{2, 7, 5, 9}, bf16, false, false, false, "axis", int64(1)), src, []uint64{10}, 0},
		{"softmax/inf_as_zero-outer-chunked", normOpGraph(t, graph.SoftMax, []int64{1000, 300}, f32, false, false, false, "axis", int64(0), "mode", "inf_as_zero"), src, []uint64{10}, 0},
		{"softmax/post-ops", normOpGraph(t, graph.SoftMax, []int64{6, 40}, f32, false, false, true, "axis", int64(-1)), src, []uint64{21}, 0},
		{"logsoftmax/last", normOpGraph(t, graph.LogSoftmax, []int64{4, 2000}, f32, false, false, false, "axis", int64(-1)), src, []uint64{10}, 0},
		{"logsoftmax/outer", normOpGraph(t, graph.LogSoftmax, []int64{37, 11}, bf16, false, false, false, "axis", int64(0)), src, []uint64{10}, 0},
		{"layernorm/affine", normOpGraph(t, graph.LayerNorm, []int64{5, 3, 64}, bf16, true, false, false, "begin_norm_axis", int64(-1), "use_affine", true, "keep_stats", false), src, []uint64{10}, 0},
		{"layernorm/stats-chunked", normOpGraph(t, graph.LayerNorm, []int64{300, 1000}, f32, true, true, false, "begin_norm_axis", int64(-1), "use_affine", true, "keep_stats", true), src, []uint64{10}, 0},
		{"rmsnorm/chunked", normOpGraph(t, graph.RMSNorm, []int64{300, 1000}, bf16, true, false, false, "begin_norm_axis", int64(-1), "use_affine", true), src, []uint64{10}, 0},
		{"rmsnorm/post-ops", normOpGraph(t, graph.RMSNorm, []int64{9, 37}, f32, false, false, true, "begin_norm_axis", int64(-1), "use_affine", false), src, []uint64{21}, 0},
		{"groupnorm/stats", normOpGraph(t, graph.GroupNorm, []int64{4, 12, 500}, f32, true, true, false, "groups", int64(4), "use_affine", true, "keep_stats", true, "data_format", "NCX"), src, []uint64{10}, 0},
		{"groupnorm/nxc", normOpGraph(t, graph.GroupNorm, []int64{2, 40, 9}, bf16, true, false, false, "groups", int64(3), "use_affine", true, "keep_stats", false, "data_format", "NXC"), src, []uint64{10}, 0},
	}
	for _, pc := range patternCases() {
		if pc.want == "" {
			continue
		}
		g, y := buildPattern(t, pc, f32, true, false)
		cs = append(cs, inPlaceCase{"decomposed/" + pc.name, g, []uint64{1}, []uint64{y.ID}, 2})
	}
	for _, rg := range []residualGraph{
		{kind: graph.LayerNorm, dims: []int64{300, 1000}, dt: f32, sumDT: f32, bias: true, readSum: true},
		{kind: graph.LayerNorm, dims: []int64{9, 37}, dt: bf16, sumDT: bf16, readSum: true, relu: true},
		{kind: graph.RMSNorm, dims: []int64{300, 1000}, dt: bf16, sumDT: bf16, bias: true},
		{kind: graph.LayerNorm, dims: []int64{6, 50}, dt: f32, sumDT: f32, readSum: true, stats: true},
	} {
		out, sum := uint64(12), uint64(10)
		if rg.relu {
			out = 13
		}
		if rg.bias {
			sum = 11
		}
		cs = append(cs, inPlaceCase{"residual/" + rg.String(), rg.build(t), []uint64{1, 2}, []uint64{out, sum}, 0})
	}
	return cs
}

// TestNormInPlace runs every normalization partition with each output
// given as each input of its type, dims and strides (the same buffer),
// on every ISA cap and on 1 and 2 threads: where the output may be that
// input (src, a residual sum's x or skip) every output is bit for bit
// the out-of-place one; otherwise (a post-op's operand) Execute refuses
// it. A dst over src shifted by one element is refused too.
func TestNormInPlace(t *testing.T) {
	cases := inPlaceCases(t)
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(31, uint64(isa)))
		for _, tc := range cases {
			parts, err := Get(tc.g, Fusion)
			must(t, err)
			var p *Partition
			for _, q := range parts {
				if q.norm != nil {
					p = q
				}
			}
			if p == nil {
				t.Fatalf("%s: no normalization partition", tc.name)
			}
			data := map[uint64][]byte{}
			for _, lt := range p.Inputs() {
				n, err := MemSize(lt)
				must(t, err)
				b := make([]byte, n)
				for i := range n / int64(lt.DataType.Size()) {
					v := float32(r.Float64()*6 - 3)
					if lt.ID == tc.scalarIn {
						v = 1e-3
					}
					dtypes.StoreF32(lt.DataType, b, i, v)
				}
				data[lt.ID] = b
			}
			c, ins, outs := executable(t, p, data)
			if isa != jit.None && strings.HasPrefix(c.Impl(), "interp") {
				t.Errorf("%s: runs on %s under %v", tc.name, c.Impl(), isa)
			}
			pairs := 0
			for _, th := range []int{1, 2} {
				prev := jit.SetThreads(th)
				want := make([]Tensor, len(outs))
				for i, o := range outs {
					nt, err := NewTensor(o.lt, make([]byte, len(o.buf)))
					must(t, err)
					want[i] = nt
				}
				must(t, c.Execute(ins, want))
				for oi, olt := range c.Outputs() {
					for ii, ilt := range c.Inputs() {
						if olt.DataType != ilt.DataType || !slices.Equal(olt.Dims, ilt.Dims) || !slices.Equal(olt.Strides, ilt.Strides) {
							continue
						}
						name := fmt.Sprintf("%s: output %d as input %d, %d threads", tc.name, olt.ID, ilt.ID, th)
						ip := make([]Tensor, len(ins))
						for i, in := range ins {
							nt, err := NewTensor(in.lt, bytes.Clone(in.buf))
							must(t, err)
							ip[i] = nt
						}
						op := make([]Tensor, len(outs))
						for i, o := range outs {
							buf := make([]byte, len(o.buf))
							if i == oi {
								buf = ip[ii].buf
							}
							nt, err := NewTensor(o.lt, buf)
							must(t, err)
							op[i] = nt
						}
						err := c.Execute(ip, op)
						if !slices.Contains(tc.ins, ilt.ID) || !slices.Contains(tc.outs, olt.ID) {
							if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "runs in place only") {
								t.Errorf("%s: Execute gives %v, want the in-place refusal", name, err)
							}
							continue
						}
						pairs++
						if err != nil {
							t.Errorf("%s: %v", name, err)
							continue
						}
						for i := range op {
							if !bytes.Equal(op[i].buf, want[i].buf) {
								t.Errorf("%s (%s): output %d differs from out of place", name, c.Impl(), c.Outputs()[i].ID)
							}
						}
					}
				}
				jit.SetThreads(prev)
			}
			if pairs < 2*len(tc.ins)*len(tc.outs) && !strings.HasPrefix(tc.name, "residual/") {
				t.Errorf("%s: %d in-place runs, want %d", tc.name, pairs, 2*len(tc.ins)*len(tc.outs))
			} else if pairs == 0 {
				t.Errorf("%s: no in-place run", tc.name)
			}
			// A partial overlap: dst over src shifted by one element.
			src := ins[0]
			es := int64(src.lt.DataType.Size())
			wide := make([]byte, int64(len(src.buf))+es)
			copy(wide, src.buf)
			shifted := slices.Clone(ins)
			st, err := NewTensor(src.lt, wide[:len(src.buf)])
			must(t, err)
			shifted[0] = st
			bad := slices.Clone(outs)
			dt, err := NewTensor(outs[0].lt, wide[es:])
			must(t, err)
			bad[0] = dt
			if err := c.Execute(shifted, bad); !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "overlaps input tensor") {
				t.Errorf("%s: dst over src shifted: %v", tc.name, err)
			}
		}
	})
}

// BenchmarkNormInPlace times Execute with dst its own buffer and with
// dst the src buffer, side by side: a softmax over the last dim of
// [512, 1024] f32 (the fused kernel, which runs in place as it is) and a
// layer norm of [512, 1024] f32 keeping its statistics (the passes, whose
// last pass reads a copy of each chunk in place).
func BenchmarkNormInPlace(b *testing.B) {
	dims := []int64{512, 1024}
	for _, c := range []struct {
		name string
		g    func(t testing.TB) *graph.Graph
	}{
		{"softmax-fused", func(t testing.TB) *graph.Graph {
			return normOpGraph(t, graph.SoftMax, dims, dtypes.F32, false, false, false, "axis", int64(-1))
		}},
		{"layernorm-stats-passes", func(t testing.TB) *graph.Graph {
			return normOpGraph(t, graph.LayerNorm, dims, dtypes.F32, true, true, false,
				"begin_norm_axis", int64(-1), "use_affine", true, "keep_stats", true)
		}},
	} {
		g := c.g(b)
		p := onlySupported(b, g, Fusion)
		data := map[uint64][]byte{}
		r := rand.New(rand.NewPCG(1, 2))
		for _, lt := range p.Inputs() {
			n, err := MemSize(lt)
			must(b, err)
			buf := make([]byte, n)
			for i := range n / 4 {
				dtypes.StoreF32(dtypes.F32, buf, i, float32(r.Float64()*2-1))
			}
			data[lt.ID] = buf
		}
		cp, ins, outs := executable(b, p, data)
		if !strings.HasPrefix(cp.Impl(), "jit:") {
			b.Fatalf("%s runs on %s", c.name, cp.Impl())
		}
		inPlace := slices.Clone(outs)
		dst, err := NewTensor(outs[0].lt, ins[0].buf)
		must(b, err)
		inPlace[0] = dst
		b.Run(c.name+"/mode=out", func(b *testing.B) { executeLoop(b, cp, ins, outs) })
		b.Run(c.name+"/mode=in", func(b *testing.B) { executeLoop(b, cp, ins, inPlace) })
	}
}

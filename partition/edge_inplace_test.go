package partition

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// r1Strides returns strides for dims laid out in the dim order perm
// (perm[0] outermost) with pad extra elements after each dim's span.
func r1Strides(dims []int64, perm []int, pad int64) []int64 {
	st := make([]int64, len(dims))
	s := int64(1)
	for i := len(perm) - 1; i >= 0; i-- {
		d := perm[i]
		st[d] = s
		s = s*dims[d] + pad
	}
	return st
}

func r1Span(dims, strides []int64) int64 {
	last := int64(0)
	for i, n := range dims {
		last += (n - 1) * strides[i]
	}
	return last + 1
}

// r1Each calls f with the offset (in elements) of every element of dims
// under strides, and its row-major index.
func r1Each(dims, strides []int64, f func(idx []int64, off int64)) {
	idx := make([]int64, len(dims))
	for {
		off := int64(0)
		for i := range dims {
			off += idx[i] * strides[i]
		}
		f(idx, off)
		i := len(dims) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// r1NormOracle computes a softmax / log-softmax over axis, or a layer
// norm / RMS norm (no affine) over the last dim, in float64 from src
// (strided), giving results indexed by row-major position.
func r1NormOracle(kind graph.OpKind, dims, strides []int64, axis int, dt dtypes.DataType, src []byte, eps float64) []float64 {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	dense := graph.DenseStrides(dims)
	out := make([]float64, n)
	// Iterate over all "rows": positions with idx[axis] == 0.
	r1Each(dims, strides, func(idx []int64, off int64) {
		if idx[axis] != 0 {
			return
		}
		m := dims[axis]
		xs := make([]float64, m)
		pos := make([]int64, m)
		for k := range m {
			xs[k] = float64(dtypes.LoadF32(dt, src, off+k*strides[axis]))
			p := int64(0)
			for i := range dims {
				p += idx[i] * dense[i]
			}
			pos[k] = p + k*dense[axis]
		}
		switch kind {
		case graph.SoftMax, graph.LogSoftmax:
			mx := math.Inf(-1)
			for _, x := range xs {
				mx = math.Max(mx, x)
			}
			s := 0.0
			for _, x := range xs {
				s += math.Exp(x - mx)
			}
			for k, x := range xs {
				if kind == graph.SoftMax {
					out[pos[k]] = math.Exp(x-mx) / s
				} else {
					out[pos[k]] = x - mx - math.Log(s)
				}
			}
		case graph.LayerNorm:
			mean := 0.0
			for _, x := range xs {
				mean += x
			}
			mean /= float64(m)
			v := 0.0
			for _, x := range xs {
				v += (x - mean) * (x - mean)
			}
			v /= float64(m)
			for k, x := range xs {
				out[pos[k]] = (x - mean) / math.Sqrt(v+eps)
			}
		case graph.RMSNorm:
			ms := 0.0
			for _, x := range xs {
				ms += x * x
			}
			ms /= float64(m)
			for k, x := range xs {
				out[pos[k]] = x / math.Sqrt(ms+eps)
			}
		}
	})
	return out
}

type r1StridedCase struct {
	kind  graph.OpKind
	dt    dtypes.DataType
	dims  []int64
	perm  []int
	pad   int64
	axis  int
	attrs []any
}

func (c r1StridedCase) String() string {
	return fmt.Sprintf("%s/%s/%v/perm%v/pad%d/axis%d", c.kind, c.dt, c.dims, c.perm, c.pad, c.axis)
}

// TestNormInPlaceStrided runs normalizations over strided (permuted,
// padded) tensors with dst given as src itself, on 1 and 2 threads and
// every ISA cap, and holds the in-place result to the out-of-place one
// (bit for bit) and both to a float64 oracle.
func TestNormInPlaceStrided(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	cases := []r1StridedCase{
		{graph.SoftMax, f32, []int64{300, 1000}, []int{1, 0}, 0, 1, nil},
		{graph.SoftMax, f32, []int64{300, 1000}, []int{1, 0}, 0, 0, nil},
		{graph.SoftMax, f32, []int64{1000, 300}, []int{1, 0}, 3, 1, nil},
		{graph.SoftMax, f32, []int64{7, 300, 33}, []int{2, 0, 1}, 1, 1, nil},
		{graph.SoftMax, bf16, []int64{33, 17, 65}, []int{1, 2, 0}, 2, 2, nil},
		{graph.LogSoftmax, f32, []int64{300, 1000}, []int{1, 0}, 0, 1, nil},
		{graph.LogSoftmax, f32, []int64{5, 301, 257}, []int{2, 1, 0}, 1, 0, nil},
		{graph.LogSoftmax, bf16, []int64{513, 9}, []int{1, 0}, 1, 0, nil},
		{graph.LayerNorm, f32, []int64{300, 1000}, []int{1, 0}, 0, 1, nil},
		{graph.LayerNorm, f32, []int64{9, 300, 129}, []int{2, 0, 1}, 1, 2, nil},
		{graph.LayerNorm, bf16, []int64{257, 31}, []int{1, 0}, 3, 1, nil},
		{graph.RMSNorm, f32, []int64{300, 1000}, []int{1, 0}, 0, 1, nil},
		{graph.RMSNorm, bf16, []int64{5, 301, 67}, []int{2, 1, 0}, 1, 2, nil},
		{graph.SoftMax, f32, []int64{2, 3000, 3}, []int{0, 2, 1}, 0, 1, nil},
		{graph.SoftMax, f32, []int64{3000, 2}, []int{1, 0}, 0, 0, nil},
		{graph.LayerNorm, f32, []int64{3000, 2}, []int{1, 0}, 0, 1, nil},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(7, uint64(isa)))
		for _, tc := range cases {
			strides := r1Strides(tc.dims, tc.perm, tc.pad)
			src := graph.NewLogicalTensorStrided(0, tc.dt, tc.dims, strides)
			dst := graph.NewLogicalTensorStrided(10, tc.dt, tc.dims, strides)
			op := graph.NewOp(1, tc.kind, "norm").AddInput(src).AddOutput(dst)
			eps := 1e-5
			switch tc.kind {
			case graph.SoftMax, graph.LogSoftmax:
				op.SetAttr("axis", int64(tc.axis))
			default:
				op.SetAttr("begin_norm_axis", int64(-1)).SetAttr("use_affine", false)
				if tc.kind == graph.LayerNorm {
					op.SetAttr("keep_stats", false)
				}
				op.SetAttr("epsilon", float32(eps))
			}
			g := graph.New()
			must(t, g.AddOp(op))
			must(t, g.Finalize())
			p := onlySupported(t, g, Fusion)
			c, err := p.Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{dst})
			if err != nil {
				t.Errorf("%v: compile: %v", tc, err)
				continue
			}
			if isa != jit.None && c.Impl() == "interp" {
				t.Logf("%v: runs on %s", tc, c.Impl())
			}
			es := int64(tc.dt.Size())
			nb := r1Span(tc.dims, strides) * es
			in := make([]byte, nb)
			for i := range nb / es {
				dtypes.StoreF32(tc.dt, in, i, float32(r.Float64()*8-4))
			}
			want := r1NormOracle(tc.kind, tc.dims, strides, tc.axis, tc.dt, in, eps)
			for _, th := range []int{1, 2, 3, 7} {
				prev := jit.SetThreads(th)
				name := fmt.Sprintf("%v/%d threads (%s)", tc, th, c.Impl())
				st, _ := NewTensor(src, in)
				outBuf := make([]byte, nb)
				dt, _ := NewTensor(dst, outBuf)
				if err := c.Execute([]Tensor{st}, []Tensor{dt}); err != nil {
					t.Errorf("%s: out of place: %v", name, err)
					jit.SetThreads(prev)
					continue
				}
				ipBuf := bytes.Clone(in)
				ist, _ := NewTensor(src, ipBuf)
				idt, _ := NewTensor(dst, ipBuf)
				if err := c.Execute([]Tensor{ist}, []Tensor{idt}); err != nil {
					t.Errorf("%s: in place: %v", name, err)
					jit.SetThreads(prev)
					continue
				}
				jit.SetThreads(prev)
				bad := 0
				tol := 1e-5
				if tc.dt == bf16 {
					tol = 2e-2
				}
				if tc.kind == graph.LayerNorm && tc.dims[len(tc.dims)-1] < 8 {
					tol = 1e-2 // x - mean of two close values is ill-conditioned
				}
				dense := graph.DenseStrides(tc.dims)
				r1Each(tc.dims, strides, func(idx []int64, off int64) {
					p := int64(0)
					for i := range idx {
						p += idx[i] * dense[i]
					}
					o := float64(dtypes.LoadF32(tc.dt, outBuf, off))
					ip := float64(dtypes.LoadF32(tc.dt, ipBuf, off))
					w := want[p]
					if math.Abs(o-w) > tol*math.Max(1, math.Abs(w)) || math.IsNaN(o) {
						if bad < 3 {
							t.Errorf("%s: out of place at %v: %v, want %v", name, idx, o, w)
						}
						bad++
					}
					if math.Float64bits(o) != math.Float64bits(ip) {
						if bad < 3 {
							t.Errorf("%s: in place at %v: %v, out of place %v (oracle %v)", name, idx, ip, o, w)
						}
						bad++
					}
				})
				if bad > 0 {
					t.Errorf("%s: %d bad elements", name, bad)
				}
				// The padding between elements must be left alone.
				covered := make([]bool, nb/es)
				r1Each(tc.dims, strides, func(_ []int64, off int64) { covered[off] = true })
				for i, cv := range covered {
					if !cv && (!slices.Equal(outBuf[int64(i)*es:int64(i+1)*es], make([]byte, es)) ||
						!slices.Equal(ipBuf[int64(i)*es:int64(i+1)*es], in[int64(i)*es:int64(i+1)*es])) {
						t.Errorf("%s: padding element %d written", name, i)
						break
					}
				}
			}
		}
	})
}

// TestResidualDoubleInPlace runs residual-sum normalizations with both
// outputs in place at once (dst as x and the kept sum as skip, and the
// other way round) and with x and skip one buffer (dst or the sum being
// it), and holds every output to the out-of-place run on copies.
func TestResidualDoubleInPlace(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	rgs := []residualGraph{
		{kind: graph.LayerNorm, dims: []int64{300, 1000}, dt: f32, sumDT: f32, bias: true, readSum: true},
		{kind: graph.LayerNorm, dims: []int64{6, 50}, dt: f32, sumDT: f32, readSum: true, stats: true},
		{kind: graph.LayerNorm, dims: []int64{300, 1000}, dt: f32, sumDT: f32, readSum: true, stats: true},
		{kind: graph.RMSNorm, dims: []int64{300, 1000}, dt: bf16, sumDT: bf16, bias: true, readSum: true},
		{kind: graph.LayerNorm, dims: []int64{9, 37}, dt: bf16, sumDT: bf16, readSum: true, relu: true},
		{kind: graph.RMSNorm, dims: []int64{300, 1000}, dt: f32, sumDT: f32},
		{kind: graph.LayerNorm, dims: []int64{3000, 7}, dt: f32, sumDT: f32, readSum: true},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(9, uint64(isa)))
		for _, rg := range rgs {
			p := onlySupported(t, rg.build(t), Fusion)
			data := residualData(rg, r)
			out, sum := uint64(12), uint64(10)
			if rg.relu {
				out = 13
			}
			if rg.bias {
				sum = 11
			}
			c, ins, outs := executable(t, p, data)
			inIdx := map[uint64]int{}
			for i, lt := range c.Inputs() {
				inIdx[lt.ID] = i
			}
			outIdx := map[uint64]int{}
			for i, lt := range c.Outputs() {
				outIdx[lt.ID] = i
			}
			_, hasSum := outIdx[sum]
			type alias struct {
				name    string
				sameXS  bool              // skip is given x's buffer
				outAsIn map[uint64]uint64 // output id -> input id whose buffer it is
			}
			var as []alias
			if hasSum {
				as = append(as, alias{"dst=x,sum=skip", false, map[uint64]uint64{out: 1, sum: 2}},
					alias{"dst=skip,sum=x", false, map[uint64]uint64{out: 2, sum: 1}},
					alias{"x=skip,sum=x", true, map[uint64]uint64{sum: 1}})
			}
			as = append(as, alias{"x=skip,dst=x", true, map[uint64]uint64{out: 1}})
			for _, th := range []int{1, 2, 3, 7} {
				prev := jit.SetThreads(th)
				for _, a := range as {
					name := fmt.Sprintf("%v/%s/%d threads (%s)", rg, a.name, th, c.Impl())
					// Reference: out of place on copies.
					refIn := make([]Tensor, len(ins))
					for i, in := range ins {
						b := bytes.Clone(in.buf)
						if a.sameXS && c.Inputs()[i].ID == 2 {
							b = bytes.Clone(ins[inIdx[1]].buf)
						}
						refIn[i], _ = NewTensor(in.lt, b)
					}
					refOut := make([]Tensor, len(outs))
					for i, o := range outs {
						refOut[i], _ = NewTensor(o.lt, make([]byte, len(o.buf)))
					}
					if err := c.Execute(refIn, refOut); err != nil {
						t.Errorf("%s: out of place: %v", name, err)
						continue
					}
					ipIn := make([]Tensor, len(ins))
					for i, in := range ins {
						b := bytes.Clone(in.buf)
						if a.sameXS && c.Inputs()[i].ID == 2 {
							b = ipIn[inIdx[1]].buf
						}
						ipIn[i], _ = NewTensor(in.lt, b)
						if i > 0 && c.Inputs()[i].ID == 2 && !a.sameXS {
							continue
						}
					}
					if a.sameXS && inIdx[2] < inIdx[1] {
						t.Fatalf("x after skip in the ports")
					}
					ipOut := make([]Tensor, len(outs))
					for i, o := range outs {
						b := make([]byte, len(o.buf))
						if in, ok := a.outAsIn[c.Outputs()[i].ID]; ok {
							b = ipIn[inIdx[in]].buf
						}
						ipOut[i], _ = NewTensor(o.lt, b)
					}
					if err := c.Execute(ipIn, ipOut); err != nil {
						t.Errorf("%s: in place: %v", name, err)
						continue
					}
					for i := range outs {
						if !bytes.Equal(ipOut[i].buf, refOut[i].buf) {
							n := 0
							for k := range refOut[i].buf {
								if ipOut[i].buf[k] != refOut[i].buf[k] {
									n++
								}
							}
							t.Errorf("%s: output %d differs from out of place (%d bytes)", name, c.Outputs()[i].ID, n)
						}
					}
				}
				jit.SetThreads(prev)
			}
		}
	})
}

// TestResidualInPlaceColumnMajor is TestResidualDoubleInPlace over
// column-major x, skip, dst and sum (each row strided, the chunks of
// rows interleaved in memory): every in-place pairing against the out
// of place run, and the out-of-place dst against a float64 oracle.
func TestResidualInPlaceColumnMajor(t *testing.T) {
	f32 := dtypes.F32
	rgs := []residualGraph{
		{kind: graph.LayerNorm, dims: []int64{1000, 300}, dt: f32, sumDT: f32, readSum: true},
		{kind: graph.LayerNorm, dims: []int64{1000, 300}, dt: f32, sumDT: f32, bias: true, readSum: true, stats: true},
		{kind: graph.RMSNorm, dims: []int64{700, 129}, dt: f32, sumDT: f32, readSum: true},
		{kind: graph.RMSNorm, dims: []int64{700, 129}, dt: dtypes.BF16, sumDT: dtypes.BF16},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(13, uint64(isa)))
		for _, rg := range rgs {
			p := onlySupported(t, rg.build(t), Fusion)
			data := residualData(rg, r)
			cm := []int64{1, rg.dims[0]}
			out, sum := uint64(12), uint64(10)
			if rg.relu {
				out = 13
			}
			if rg.bias {
				sum = 11
			}
			var ins, outs []graph.LogicalTensor
			for _, lt := range p.Inputs() {
				if lt.ID == 1 || lt.ID == 2 {
					lt = graph.NewLogicalTensorStrided(lt.ID, lt.DataType, lt.Dims, cm)
				}
				ins = append(ins, lt)
			}
			for _, lt := range p.Outputs() {
				if lt.ID == out || lt.ID == sum {
					lt = graph.NewLogicalTensorStrided(lt.ID, lt.DataType, rg.dims, cm)
				} else {
					lt = graph.NewLogicalTensorAny(lt.ID, lt.DataType, nil)
				}
				outs = append(outs, lt)
			}
			c, err := p.Compile(ins, outs)
			if err != nil {
				t.Errorf("%v: compile: %v", rg, err)
				continue
			}
			inIdx, outIdx := map[uint64]int{}, map[uint64]int{}
			for i, lt := range c.Inputs() {
				inIdx[lt.ID] = i
			}
			for i, lt := range c.Outputs() {
				outIdx[lt.ID] = i
			}
			_, hasSum := outIdx[sum]
			mk := func(alias map[uint64]uint64) ([]Tensor, []Tensor) {
				it := make([]Tensor, len(c.Inputs()))
				for i, lt := range c.Inputs() {
					it[i], err = NewTensor(lt, bytes.Clone(data[lt.ID]))
					must(t, err)
				}
				ot := make([]Tensor, len(c.Outputs()))
				for i, lt := range c.Outputs() {
					n, err := MemSize(lt)
					must(t, err)
					b := make([]byte, n)
					if in, ok := alias[lt.ID]; ok {
						b = it[inIdx[in]].buf
					}
					ot[i], err = NewTensor(lt, b)
					must(t, err)
				}
				return it, ot
			}
			aliases := []map[uint64]uint64{{out: 1}, {out: 2}}
			if hasSum {
				aliases = append(aliases, map[uint64]uint64{sum: 1}, map[uint64]uint64{sum: 2}, map[uint64]uint64{out: 1, sum: 2}, map[uint64]uint64{out: 2, sum: 1})
			}
			for _, th := range []int{1, 2, 3, 7} {
				prev := jit.SetThreads(th)
				ri, ro := mk(nil)
				if err := c.Execute(ri, ro); err != nil {
					t.Errorf("%v: out of place: %v", rg, err)
					jit.SetThreads(prev)
					continue
				}
				for _, a := range aliases {
					name := fmt.Sprintf("%v/alias %v/%d threads (%s)", rg, a, th, c.Impl())
					ii, io := mk(a)
					if err := c.Execute(ii, io); err != nil {
						t.Errorf("%s: in place: %v", name, err)
						continue
					}
					for i := range io {
						if !bytes.Equal(io[i].buf, ro[i].buf) {
							t.Errorf("%s: output %d differs from out of place", name, c.Outputs()[i].ID)
						}
					}
				}
				jit.SetThreads(prev)
			}
		}
	})
}

// TestGroupNormInPlaceLarge: GroupNorm in place (channels first and
// last, large enough for chunks and passes), LayerNorm and softmax over
// axis 0 of a tall tensor (normalized dims outside the chunk dim), on 1
// and 2 threads and every ISA: bit for bit the out-of-place result.
func TestGroupNormInPlaceLarge(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	cases := []struct {
		name string
		g    func() *graph.Graph
	}{
		{"gn/ncx", func() *graph.Graph {
			return normOpGraph(t, graph.GroupNorm, []int64{4, 64, 3001}, f32, true, true, false, "groups", int64(8), "use_affine", true, "keep_stats", true, "data_format", "NCX")
		}},
		{"gn/nxc", func() *graph.Graph {
			return normOpGraph(t, graph.GroupNorm, []int64{3, 3001, 64}, f32, true, false, false, "groups", int64(8), "use_affine", true, "keep_stats", false, "data_format", "NXC")
		}},
		{"gn/nxc-bf16-stats", func() *graph.Graph {
			return normOpGraph(t, graph.GroupNorm, []int64{2, 1001, 96}, bf16, true, true, false, "groups", int64(3), "use_affine", true, "keep_stats", true, "data_format", "NXC")
		}},
		{"logsoftmax/axis0-tall", func() *graph.Graph {
			return normOpGraph(t, graph.LogSoftmax, []int64{5000, 77}, f32, false, false, false, "axis", int64(0))
		}},
		{"softmax/axis0-post", func() *graph.Graph {
			return normOpGraph(t, graph.SoftMax, []int64{3000, 129}, bf16, false, false, true, "axis", int64(0))
		}},
	}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(43, uint64(isa)))
		for _, tc := range cases {
			g := tc.g()
			var p *Partition
			parts, err := Get(g, Fusion)
			must(t, err)
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
					dtypes.StoreF32(lt.DataType, b, i, float32(r.Float64()*6-3))
				}
				data[lt.ID] = b
			}
			c, ins, outs := executable(t, p, data)
			for _, th := range []int{1, 2, 3, 7} {
				prev := jit.SetThreads(th)
				want := make([]Tensor, len(outs))
				for i, o := range outs {
					want[i], err = NewTensor(o.lt, make([]byte, len(o.buf)))
					must(t, err)
				}
				must(t, c.Execute(ins, want))
				ip := make([]Tensor, len(ins))
				for i, in := range ins {
					ip[i], err = NewTensor(in.lt, bytes.Clone(in.buf))
					must(t, err)
				}
				op := make([]Tensor, len(outs))
				for i, o := range outs {
					b := make([]byte, len(o.buf))
					if i == 0 {
						b = ip[0].buf
					}
					op[i], err = NewTensor(o.lt, b)
					must(t, err)
				}
				if err := c.Execute(ip, op); err != nil {
					t.Errorf("%s: in place: %v", tc.name, err)
				} else {
					for i := range op {
						if !bytes.Equal(op[i].buf, want[i].buf) {
							t.Errorf("%s (%s), %d threads: output %d differs from out of place", tc.name, c.Impl(), th, c.Outputs()[i].ID)
						}
					}
				}
				jit.SetThreads(prev)
			}
		}
	})
}

package normprog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/cpubench"
	"github.com/gdnn/gdnn/internal/jit"
)

// benchShapes are issue 50's anchor shapes that normprog runs: the
// normalized dims are the innermost ones but for S3's (the channels of
// NCHW).
var benchShapes = []benchShape{
	{"S1", Softmax, []int64{32, 12, 128, 128}, 1, 0, false},
	{"S1stats", Softmax, []int64{32, 12, 128, 128}, 1, 0, true},
	{"S1log", LogSoftmax, []int64{32, 12, 128, 128}, 1, 0, false},
	{"S3", Softmax, []int64{4, 21, 256, 256}, 1, 2, false},
	{"S3log", LogSoftmax, []int64{4, 21, 256, 256}, 1, 2, false},
	{"S2", Softmax, []int64{8, 32000}, 1, 0, false},
	{"S2log", LogSoftmax, []int64{8, 32000}, 1, 0, false},
	{"S4", RMSNorm, []int64{1, 4096}, 1, 0, false},
	{"S5", RMSNorm, []int64{4, 512, 4096}, 1, 0, false},
	{"S6", LayerNorm, []int64{32, 128, 768}, 1, 0, false},
	{"S6stats", LayerNorm, []int64{32, 128, 768}, 1, 0, true},
	{"S8", L2Norm, []int64{256, 384}, 1, 0, false},
}

// benchShape is one anchor shape.
type benchShape struct {
	label string
	kind  Kind
	dims  []int64
	norm  int  // how many dims are normalized
	after int  // how many kept dims follow them
	stats bool // a layer norm keeps its mean and variance, a softmax its stats
}

func benchDesc(kind Kind, dims []int64, norm, after int, dt dtypes.DataType) *Desc {
	r := len(dims)
	n := make([]bool, r)
	for i := r - after - norm; i < r-after; i++ {
		n[i] = true
	}
	s := denseStrides(dims, identity(r))
	d := &Desc{Kind: kind, SrcDT: dt, DstDT: dt, Dims: dims, Norm: n, SrcStrides: s, DstStrides: s}
	if kind == LayerNorm || kind == RMSNorm || kind == L2Norm || kind == L1Norm {
		d.Epsilon = 1e-5
	}
	if kind == LayerNorm || kind == RMSNorm {
		g := make([]int64, r) // one gamma per element of the normalized dim
		g[r-after-1] = 1
		d.Gamma = &Operand{DT: dtypes.F32, Strides: g}
	}
	return d
}

// benchShapeDesc is benchDesc of s, with its kept statistics: a mean
// and a variance (a softmax's stats) per row, dense over the dims before
// the normalized ones.
func benchShapeDesc(s benchShape, dt dtypes.DataType) *Desc {
	d := benchDesc(s.kind, s.dims, s.norm, s.after, dt)
	if s.stats {
		lead := len(s.dims) - s.after - s.norm
		st := &Operand{DT: dtypes.F32, Strides: append(denseStrides(s.dims[:lead], identity(lead)), make([]int64, s.norm+s.after)...)}
		if s.kind == Softmax {
			d.Stats = st
		} else {
			d.Mean, d.Var = st, st
		}
	}
	return d
}

// BenchmarkPrograms times each anchor shape through normprog, f32 and
// bf16 and f16; bytes are src read plus dst written.
func BenchmarkPrograms(b *testing.B) {
	for _, s := range benchShapes {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			b.Run(s.label+"/"+dt.String(), func(b *testing.B) {
				d := benchShapeDesc(s, dt)
				p, err := Compile(d)
				if err != nil {
					b.Fatal(err)
				}
				n := spanElems(d.Dims, d.SrcStrides)
				src := fill(rand.New(rand.NewPCG(1, 2)), dt, n, 4)
				dst := make([]byte, len(src))
				var gamma []byte
				if d.Gamma != nil {
					gamma = fill(rand.New(rand.NewPCG(3, 4)), dtypes.F32, d.Dims[len(d.Dims)-1], 2)
				}
				var mean, vr, stats []byte
				if d.Mean != nil {
					mean = make([]byte, 4*spanElems(d.Dims, d.Mean.Strides))
					vr = make([]byte, len(mean))
				}
				if d.Stats != nil {
					stats = make([]byte, 4*spanElems(d.Dims, d.Stats.Strides))
				}
				b.SetBytes(int64(2 * len(src)))
				b.ResetTimer()
				timed(b, func() {
					if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Mean: mean, Var: vr, Stats: stats}); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// BenchmarkSoftmaxInCache times S1's rows (128 elements) where they
// fit the L2 cache: 512 rows, so that each row's dependency chain, not
// memory, is what the time shows.
func BenchmarkSoftmaxInCache(b *testing.B) {
	for _, kind := range []Kind{Softmax, LogSoftmax} {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
			b.Run(kind.String()+"/"+dt.String(), func(b *testing.B) {
				d := benchDesc(kind, []int64{4, 128, 128}, 1, 0, dt)
				p, err := Compile(d)
				if err != nil {
					b.Fatal(err)
				}
				src := fill(rand.New(rand.NewPCG(1, 2)), dt, spanElems(d.Dims, d.SrcStrides), 4)
				dst := make([]byte, len(src))
				b.SetBytes(int64(2 * len(src)))
				b.ResetTimer()
				timed(b, func() {
					if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// BenchmarkPlainGo times the loops a Go program writes by hand for the
// same f32 shapes, on one goroutine: the baseline gdnn replaces.
func BenchmarkPlainGo(b *testing.B) {
	for _, s := range benchShapes {
		if s.after > 0 {
			continue // plainRow normalizes innermost rows
		}
		b.Run(s.label+"/f32", func(b *testing.B) {
			total := int64(1)
			for _, n := range s.dims {
				total *= n
			}
			w := int(s.dims[len(s.dims)-1])
			x := make([]float32, total)
			for i := range x {
				x[i] = rand.Float32()*8 - 4
			}
			y := make([]float32, total)
			gamma := make([]float32, w)
			for i := range gamma {
				gamma[i] = rand.Float32()
			}
			b.SetBytes(8 * total)
			b.ResetTimer()
			timed(b, func() {
				for r := 0; r < len(x); r += w {
					plainRow(s.kind, x[r:r+w], y[r:r+w], gamma)
				}
			})
		})
	}
}

// plainRow is one row of kind k as a straightforward Go loop.
func plainRow(k Kind, x, y, gamma []float32) {
	switch k {
	case Softmax, LogSoftmax:
		m := float32(math.Inf(-1))
		for _, v := range x {
			m = max(m, v)
		}
		var s float32
		for i, v := range x {
			e := float32(math.Exp(float64(v - m)))
			y[i] = e
			s += e
		}
		if k == Softmax {
			for i := range y {
				y[i] /= s
			}
			return
		}
		ls := float32(math.Log(float64(s)))
		for i, v := range x {
			y[i] = v - m - ls
		}
	case LayerNorm:
		var mean float32
		for _, v := range x {
			mean += v
		}
		mean /= float32(len(x))
		var vr float32
		for _, v := range x {
			vr += (v - mean) * (v - mean)
		}
		rstd := 1 / float32(math.Sqrt(float64(vr/float32(len(x))+1e-5)))
		for i, v := range x {
			y[i] = (v - mean) * rstd * gamma[i]
		}
	case RMSNorm:
		var ss float32
		for _, v := range x {
			ss += v * v
		}
		r := 1 / float32(math.Sqrt(float64(ss/float32(len(x))+1e-5)))
		for i, v := range x {
			y[i] = v * r * gamma[i]
		}
	case L2Norm:
		var ss float32
		for _, v := range x {
			ss += v * v
		}
		n := max(float32(math.Sqrt(float64(ss))), 1e-5)
		for i, v := range x {
			y[i] = v / n
		}
	}
}

// timed runs f b.N times and reports, beside the mean (ns/op), the
// median of the runs (med-ns/op): on a machine shared with other work
// the mean takes in the runs that were descheduled, as the median of
// oneDNN's anchor does not; and the least run (least-ns/op), the one
// that other work disturbed least, the steadier figure for comparing
// two builds of a kernel whose data stay in the cache. With the
// benchmark on one thread (-cpu 1) it also reports the process's CPU
// time per run (cpu-ns/op), which the time other processes take from
// it does not count.
func timed(b *testing.B, f func()) {
	ts := make([]time.Duration, b.N)
	c0 := cpubench.ProcessCPU()
	for i := range b.N {
		t0 := time.Now()
		f()
		ts[i] = time.Since(t0)
	}
	c := cpubench.ProcessCPU() - c0
	b.StopTimer()
	slices.Sort(ts)
	b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds()), "med-ns/op")
	b.ReportMetric(float64(ts[0].Nanoseconds()), "least-ns/op")
	if c0 != 0 {
		b.ReportMetric(float64(c.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// columnNormShapes are L2, L1, layer and RMS normalization over the
// channels of NCHW: a segmentation map's 21 channels, feature maps' 96
// (ConvNeXt's first stage, its channels-first LayerNorm) and 384.
var columnNormShapes = []benchShape{
	{"L2c21", L2Norm, []int64{4, 21, 256, 256}, 1, 2, false},
	{"L2c384", L2Norm, []int64{8, 384, 32, 32}, 1, 2, false},
	{"L1c21", L1Norm, []int64{4, 21, 256, 256}, 1, 2, false},
	{"LNc384", LayerNorm, []int64{8, 384, 32, 32}, 1, 2, false},
	{"LNc96", LayerNorm, []int64{4, 96, 56, 56}, 1, 2, false},
	{"RMSc384", RMSNorm, []int64{8, 384, 32, 32}, 1, 2, false},
}

// BenchmarkColumnsVsPasses times the anchor shapes normalized over a dim
// that is not innermost (S3: softmax over the channels of NCHW), and the
// other normalizations over channels, as the column kernel and as the
// program of passes that ran them before it, f32 and bf16; bytes are
// src read plus dst written.
func BenchmarkColumnsVsPasses(b *testing.B) {
	for _, s := range append(benchShapes[:len(benchShapes):len(benchShapes)], columnNormShapes...) {
		if s.after == 0 {
			continue
		}
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
			for _, fused := range []bool{false, true} {
				impl := "passes"
				if fused {
					impl = "columns"
				}
				b.Run(s.label+"/"+dt.String()+"/impl="+impl, func(b *testing.B) {
					useFused = fused
					p, err := Compile(benchShapeDesc(s, dt))
					useFused = true
					if err != nil {
						b.Fatal(err)
					}
					if (p.full.fused != nil) != fused {
						b.Fatalf("%s: fused kernel %v, want %v", s.label, p.full.fused != nil, fused)
					}
					src := fill(rand.New(rand.NewPCG(1, 2)), dt, spanElems(p.d.Dims, p.d.SrcStrides), 4)
					dst := make([]byte, len(src))
					var gamma []byte
					if g := p.d.Gamma; g != nil {
						gamma = fill(rand.New(rand.NewPCG(3, 4)), g.DT, spanElems(p.d.Dims, g.Strides), 2)
					}
					b.SetBytes(int64(2 * len(src)))
					b.ResetTimer()
					timed(b, func() {
						if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma}); err != nil {
							b.Fatal(err)
						}
					})
				})
			}
		}
	}
}

// BenchmarkSoftmaxTail times softmax and log-softmax rows whose length
// is not a whole number of vectors (1000: rows streamed; 100: rows held
// in registers), with logits around 0 and around 1000, where exp(-max)
// underflows: the lanes past a row's end must cost nothing.
func BenchmarkSoftmaxTail(b *testing.B) {
	for _, kind := range []Kind{Softmax, LogSoftmax} {
		for _, dims := range [][]int64{{512, 1000}, {4096, 100}} {
			for _, center := range []float64{0, 95, 1000} {
				for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
					name := fmt.Sprintf("%v/%dx%d/at%g/%v", kind, dims[0], dims[1], center, dt)
					b.Run(name, func(b *testing.B) {
						d := benchDesc(kind, dims, 1, 0, dt)
						p, err := Compile(d)
						if err != nil {
							b.Fatal(err)
						}
						src := fillAround(rand.New(rand.NewPCG(1, 2)), dt, spanElems(d.Dims, d.SrcStrides), center, 4)
						dst := make([]byte, len(src))
						b.SetBytes(int64(2 * len(src)))
						b.ResetTimer()
						timed(b, func() {
							if err := p.Run(Buffers{Src: src, Dst: dst}); err != nil {
								b.Fatal(err)
							}
						})
					})
				}
			}
		}
	}
}

// BenchmarkGroupNormThreads times S7's GroupNorm (2x320x64x64 f32, 32
// groups, gamma and beta) on NCHW and NHWC data at 1 and 2 threads:
// the second thread should help.
func BenchmarkGroupNormThreads(b *testing.B) {
	const n, c, sp, g = 2, 320, 64 * 64, 32
	for _, nhwc := range []bool{false, true} {
		for _, threads := range []int{1, 2} {
			layout := "NCHW"
			strides := []int64{c * sp, sp, 1}
			if nhwc {
				layout, strides = "NHWC", []int64{c * sp, 1, c}
			}
			b.Run(fmt.Sprintf("%s/T%d", layout, threads), func(b *testing.B) {
				d := &Desc{Kind: GroupNorm, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{n, c, sp},
					Norm: []bool{false, false, true}, SrcStrides: strides, DstStrides: strides, Epsilon: 1e-5,
					Groups: g, ChanDim: 1, Gamma: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}},
					Beta: &Operand{DT: dtypes.F32, Strides: []int64{0, 1, 0}}}
				p, err := Compile(d)
				if err != nil {
					b.Fatal(err)
				}
				src := fill(rand.New(rand.NewPCG(1, 2)), dtypes.F32, n*c*sp, 4)
				dst := make([]byte, len(src))
				gamma := fill(rand.New(rand.NewPCG(3, 4)), dtypes.F32, c, 2)
				beta := fill(rand.New(rand.NewPCG(5, 6)), dtypes.F32, c, 2)
				prev := jit.SetThreads(threads)
				defer jit.SetThreads(prev)
				b.SetBytes(int64(2 * len(src)))
				b.ResetTimer()
				timed(b, func() {
					if err := p.Run(Buffers{Src: src, Dst: dst, Gamma: gamma, Beta: beta}); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

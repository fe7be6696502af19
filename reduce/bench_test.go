package reduce

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/partition"
)

// BenchmarkAnchors compares a one-call API call with running the same
// problem's compiled jit.Kernel directly and with a cached
// partition.CompiledPartition's Execute, on anchor shapes A (6x12x10x24
// over axes 2, 3) and B (64x1024 over axis 1), f32, with the default
// thread count and with one (threads=1: every call inline, so the
// difference is the API's own cost per call). Compare the two with
//
//	go test -run - -bench Anchors -count 10 ./reduce > out.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl out.txt
func BenchmarkAnchors(b *testing.B) {
	for _, sc := range []struct {
		name string
		c    shapeCase
	}{{"A", anchorA}, {"B", anchorB}, {"tiny", shapeCase{dims: []int{2, 3}, axes: []int{1}}}} {
		for _, threads := range []int{0, 1} {
			n := 1
			for _, d := range sc.c.dims {
				n *= d
			}
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(i%7) - 3
			}
			dst := make([]float32, 1024)
			k := kernelFor(b, OpMean, sc.c)
			name := "shape=" + sc.name + "/threads=" + []string{"default", "1"}[threads]
			b.Run(name+"/impl=run", func(b *testing.B) {
				if threads == 1 {
					defer jit.SetThreads(jit.SetThreads(1))
				}
				b.SetBytes(int64(len(src)) * 4)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := k.Run(bytesOf(src), bytesOf(dst), nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			cp, ins, outs := executeFor(b, sc.c, src, dst)
			b.Run(name+"/impl=execute", func(b *testing.B) {
				if threads == 1 {
					defer jit.SetThreads(jit.SetThreads(1))
				}
				b.SetBytes(int64(len(src)) * 4)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := cp.Execute(ins, outs); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(name+"/impl=api", func(b *testing.B) {
				if threads == 1 {
					defer jit.SetThreads(jit.SetThreads(1))
				}
				b.SetBytes(int64(len(src)) * 4)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := Mean(dst, src, sc.c.dims, sc.c.axes); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// executeFor compiles c's mean as a graph partition, the way a framework
// using the graph API would, and returns it with tensors over src and dst.
func executeFor(b *testing.B, c shapeCase, src, dst []float32) (*partition.CompiledPartition, []partition.Tensor, []partition.Tensor) {
	b.Helper()
	dims := make([]int64, len(c.dims))
	for i, d := range c.dims {
		dims[i] = int64(d)
	}
	axes := make([]int64, len(c.axes))
	for i, a := range c.axes {
		axes[i] = int64(a)
	}
	in := graph.NewLogicalTensor(0, dtypes.F32, dims)
	out := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
	g := graph.New()
	if err := g.AddOp(graph.NewOp(0, graph.ReduceMean, "mean").AddInput(in).AddOutput(out).SetAttr("axes", axes)); err != nil {
		b.Fatal(err)
	}
	if err := g.Finalize(); err != nil {
		b.Fatal(err)
	}
	parts, err := partition.Get(g, partition.Fusion)
	if err != nil {
		b.Fatal(err)
	}
	cp, err := parts[0].Compile(parts[0].Inputs(), parts[0].Outputs())
	if err != nil {
		b.Fatal(err)
	}
	ol, err := cp.QueryLogicalTensor(1)
	if err != nil {
		b.Fatal(err)
	}
	st, err := partition.NewTensor(in, src)
	if err != nil {
		b.Fatal(err)
	}
	dt, err := partition.NewTensor(ol, dst[:ol.NumElements()])
	if err != nil {
		b.Fatal(err)
	}
	return cp, []partition.Tensor{st}, []partition.Tensor{dt}
}

package reduce

import (
	"testing"

	"github.com/gdnn/gdnn/jit"
)

// BenchmarkAnchors compares a one-call API call with running the same
// problem's compiled jit.Kernel directly, on anchor shapes A (6x12x10x24
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
				for b.Loop() {
					if err := k.Run(bytesOf(src), bytesOf(dst), nil); err != nil {
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
				for b.Loop() {
					if err := Mean(dst, src, sc.c.dims, sc.c.axes); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

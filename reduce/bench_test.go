package reduce

import (
	"testing"
)

// BenchmarkAnchors compares a one-call API call with running the same
// problem's compiled jit.Kernel directly, on anchor shapes A (6x12x10x24
// over axes 2, 3) and B (64x1024 over axis 1), f32, with the default
// thread count. Compare the two with
//
//	go test -run - -bench Anchors -count 10 ./reduce > out.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl out.txt
func BenchmarkAnchors(b *testing.B) {
	for _, sc := range []struct {
		name string
		c    shapeCase
	}{{"A", anchorA}, {"B", anchorB}} {
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
		b.Run("shape="+sc.name+"/impl=run", func(b *testing.B) {
			b.SetBytes(int64(len(src)) * 4)
			b.ReportAllocs()
			for b.Loop() {
				if err := k.Run(bytesOf(src), bytesOf(dst), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("shape="+sc.name+"/impl=api", func(b *testing.B) {
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

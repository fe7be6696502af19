package reduce

import (
	"fmt"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
)

// BenchmarkSmallRuns times a row sum and an ArgMax over rows of 8192 f32
// from 256 KiB to 2 MiB, and over rows of 1024 and 256, at one and two
// threads, with the runtime's default share of a thread
// (jit.ShareBytes): where two threads pay off, and that a run too small
// for them is not slower at two.
func BenchmarkSmallRuns(b *testing.B) {
	defer jit.SetShareBytes(jit.SetShareBytes(0))
	for _, c := range []struct{ kib, w int }{{256, 8192}, {512, 8192}, {640, 8192}, {768, 8192}, {1024, 8192}, {2048, 8192},
		{128, 1024}, {256, 1024}, {512, 1024}, {256, 256}, {512, 256}} {
		kib, w := c.kib, c.w
		rows := kib << 10 / (4 * w)
		x := make([]float32, rows*w)
		for i := range x {
			x[i] = float32(i*7919%100003) * 1e-3
		}
		idx, sum := make([]int64, rows), make([]float32, rows)
		dims := []int{rows, w}
		for _, c := range []struct {
			name string
			run  func() error
		}{
			{"argmax", func() error { return ArgMax(idx, x, dims, 1) }},
			{"sum", func() error { return Sum(sum, x, dims, []int{1}) }},
		} {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%dKiB/w%d/t%d", c.name, kib, w, th), func(b *testing.B) {
					defer jit.SetThreads(jit.SetThreads(th))
					if err := c.run(); err != nil {
						b.Fatal(err)
					}
					b.SetBytes(int64(4 * len(x)))
					b.ResetTimer()
					for range b.N {
						if err := c.run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

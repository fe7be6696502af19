package reduce_test

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/cpubench"
	"github.com/gdnn/gdnn/reduce"
)

// BenchmarkPooling times the sentence-embedding calls against the Go a
// framework writes by hand for them: masked mean pooling of S9
// (8x128x384, mask [8,128]) and L2 normalization of S8 (256x384).
func BenchmarkPooling(b *testing.B) {
	const batch, seq, hidden = 8, 128, 384
	x := make([]float32, batch*seq*hidden)
	for i := range x {
		x[i] = float32(i%97) / 97
	}
	mask := make([]float32, batch*seq)
	for i := range mask {
		if i%seq < seq*3/4 {
			mask[i] = 1
		}
	}
	pooled := make([]float32, batch*hidden)
	b.Run("S9/MaskedMean/gdnn", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		cpubench.Loop(b, func() error { return reduce.MaskedMean(pooled, x, mask, []int{batch, seq, hidden}, 1) })
	})
	b.Run("S9/MaskedMean/plainGo", func(b *testing.B) {
		b.SetBytes(int64(4 * len(x)))
		b.ResetTimer()
		for range b.N {
			for s := range batch {
				out := pooled[s*hidden : (s+1)*hidden]
				clear(out)
				n := float32(0)
				for t := range seq {
					m := mask[s*seq+t]
					n += m
					row := x[(s*seq+t)*hidden : (s*seq+t+1)*hidden]
					for h, v := range row {
						out[h] += v * m
					}
				}
				n = max(n, 1e-9)
				for h := range out {
					out[h] /= n
				}
			}
		}
	})
	const rows, dim = 256, 384
	e := x[:rows*dim]
	y := make([]float32, len(e))
	b.Run("S8/LpNormalize/gdnn", func(b *testing.B) {
		b.SetBytes(int64(4 * len(e)))
		b.ResetTimer()
		for range b.N {
			if err := reduce.LpNormalize(y, e, []int{rows, dim}, -1, 2, 1e-12); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("S8/LpNormalize/plainGo", func(b *testing.B) {
		b.SetBytes(int64(4 * len(e)))
		b.ResetTimer()
		for range b.N {
			for r := range rows {
				row, out := e[r*dim:(r+1)*dim], y[r*dim:(r+1)*dim]
				s := float32(0)
				for _, v := range row {
					s += v * v
				}
				n := max(float32(math.Sqrt(float64(s))), 1e-12)
				for i, v := range row {
					out[i] = v / n
				}
			}
		}
	})
}

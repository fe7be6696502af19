package reduce_test

import (
	"testing"

	"github.com/gdnn/gdnn/internal/cpubench"
	"github.com/gdnn/gdnn/reduce"
)

// BenchmarkNormCall times the one-call normalizations a framework calls
// in its hot loop, Softmax, LayerNorm, RMSNorm, LpNormalize and
// MaskedMean, f32 over a small tensor [8, 16, 64] (the last dim
// normalized; MaskedMean's mean over the 16), where the cost of a call
// beside its kernels shows: its allocations and its look-up of the
// compiled program.
func BenchmarkNormCall(b *testing.B) {
	dims := []int{8, 16, 64}
	x := make([]float32, 8*16*64)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	y := make([]float32, len(x))
	gamma, beta := make([]float32, 64), make([]float32, 64)
	for i := range gamma {
		gamma[i], beta[i] = 1, 0.5
	}
	mask := make([]float32, 8*16)
	for i := range mask {
		mask[i] = float32(i % 2)
	}
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"Softmax", func() error { return reduce.Softmax(y, x, dims, -1) }},
		{"LayerNorm", func() error { return reduce.LayerNorm(y, x, gamma, beta, dims, -1, 1e-5) }},
		{"RMSNorm", func() error { return reduce.RMSNorm(y, x, gamma, dims, -1, 1e-5) }},
		{"LpNormalize", func() error { return reduce.LpNormalize(y, x, dims, -1, 2, 1e-12) }},
		{"MaskedMean", func() error { return reduce.MaskedMean(y[:8*64], x, mask, dims, 1) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			cpubench.Loop(b, c.f)
		})
	}
}

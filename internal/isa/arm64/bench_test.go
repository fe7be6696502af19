package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkAnchors times one single-threaded call over the whole plan for
// each anchor shape and data type, NEON beside the interpreter (on arm64
// only: under qemu the figures say nothing about hardware). Bytes are
// src + dst, so MB/s reads as bandwidth.
func BenchmarkAnchors(b *testing.B) {
	kerneltest.BenchAnchors(b, targets(b), "", func(r *rand.Rand, dt dtypes.DataType, src []byte) { exactFiller{r, 1}.fill(dt, src, false) })
}

// BenchmarkEmit measures code generation (golang-asm dominates) for the
// anchor kernels and reports the code size; it runs on every GOARCH.
func BenchmarkEmit(b *testing.B) {
	for _, a := range kerneltest.Anchors {
		pl, err := plan.Canonicalize(kerneltest.DenseProblem(a.Dims, a.Axes, dtypes.BF16))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(a.Name, func(b *testing.B) {
			var n int
			for i := 0; i < b.N; i++ {
				code, err := Emit(pl)
				if err != nil {
					b.Fatal(err)
				}
				n = len(code.Text)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

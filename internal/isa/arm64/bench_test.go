package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkAnchors times one single-threaded call over the whole plan for
// each anchor shape and data type, NEON beside the interpreter (on arm64
// only: under qemu the figures say nothing about hardware). Bytes are
// src + dst, so MB/s reads as bandwidth.
func BenchmarkAnchors(b *testing.B) {
	needARM64(b)
	for _, a := range kerneltest.Anchors {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			p := kerneltest.DenseProblem(a.Dims, a.Axes, dt)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				b.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			var src, dst []byte
			alloc := func() {
				if src == nil {
					src = make([]byte, sb)
					exactFiller{rand.New(rand.NewSource(1)), 1}.fill(dt, src, false)
					dst = make([]byte, db)
				}
			}
			b.Run(a.Name+"/"+dt.String()+"/neon", func(b *testing.B) {
				alloc()
				k := compile(b, pl)
				defer k.Release()
				b.SetBytes(sb + db)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k.RunBlocks(pl, src, dst, nil, 0)
				}
			})
			b.Run(a.Name+"/"+dt.String()+"/interp", func(b *testing.B) {
				alloc()
				b.SetBytes(sb + db)
				for i := 0; i < b.N; i++ {
					if err := interp.Run(pl, src, dst, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
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

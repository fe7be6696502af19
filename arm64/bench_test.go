package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/interp"
	"github.com/gdnn/gdnn/jit/plan"
)

// anchorShapes are the perf anchor shapes (shared/anchors/run_all.sh):
// dense row-major src, the listed axes reduced.
var anchorShapes = []struct {
	name string
	dims []int64
	axes []int
}{
	{"A", []int64{6, 12, 10, 24}, []int{2, 3}},
	{"B", []int64{64, 1024}, []int{1}},
	{"C", []int64{1024, 4096}, []int{1}},
	{"D", []int64{1024, 4096}, []int{0}},
	{"E", []int64{32, 256, 56, 56}, []int{2, 3}},
	{"F", []int64{32, 56, 56, 256}, []int{1, 2}},
	{"G", []int64{64, 1048576}, []int{1}},
	{"H", []int64{16777216}, []int{0}},
	{"I", []int64{8, 512, 4096}, []int{1}},
}

// BenchmarkAnchors times one single-threaded call over the whole plan for
// each anchor shape and data type, NEON beside the interpreter (on arm64
// only: under qemu the figures say nothing about hardware). Bytes are
// src + dst, so MB/s reads as bandwidth.
func BenchmarkAnchors(b *testing.B) {
	needARM64(b)
	for _, a := range anchorShapes {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			p := denseProblem(a.dims, a.axes, dt)
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
			b.Run(a.name+"/"+dt.String()+"/neon", func(b *testing.B) {
				alloc()
				k := compile(b, pl)
				defer k.Release()
				b.SetBytes(sb + db)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k.RunBlocks(pl, src, dst, nil, 0)
				}
			})
			b.Run(a.name+"/"+dt.String()+"/interp", func(b *testing.B) {
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
	for _, a := range anchorShapes {
		pl, err := plan.Canonicalize(denseProblem(a.dims, a.axes, dtypes.BF16))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(a.name, func(b *testing.B) {
			var n int
			for i := 0; i < b.N; i++ {
				code, err := Emit(pl)
				if err != nil {
					b.Fatal(err)
				}
				n = len(code)
			}
			b.ReportMetric(float64(n), "bytes")
		})
	}
}

package kerneltest

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchAnchors times one single-threaded call over the whole plan for
// each anchor shape (Anchors) and float data type, the kernel of each
// target (sub-benchmark prefix+Name) beside the interpreter ("interp").
// Bytes are src + dst, so MB/s reads as bandwidth. fill fills src, from
// a generator of seed 1, the first time a sub-benchmark runs.
func BenchAnchors(b *testing.B, targets []Target, prefix string, fill func(r *rand.Rand, dt dtypes.DataType, src []byte)) {
	for _, a := range Anchors {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			p := DenseProblem(a.Dims, a.Axes, dt)
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
					fill(rand.New(rand.NewSource(1)), dt, src)
					dst = make([]byte, db)
				}
			}
			for _, tg := range targets {
				b.Run(a.Name+"/"+dt.String()+"/"+prefix+tg.Name, func(b *testing.B) {
					alloc()
					BenchKernel(b, tg, pl, src, dst)
				})
			}
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

// BenchKernel times calls of tg's kernel of pl over the whole plan;
// bytes are src + dst.
func BenchKernel(b *testing.B, tg Target, pl *plan.Plan, src, dst []byte) {
	k := tg.Compile(b, pl)
	defer k.Release()
	b.SetBytes(int64(len(src) + len(dst)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k.RunBlocks(pl, src, dst, nil, 0)
	}
}

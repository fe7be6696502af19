package preop

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkPooling is issue S9 (x [8,128,384] f32 times mask [8,128,1],
// mean over the tokens) as a whole Run, and its two kernels on one
// chunk each (the product into scratch, the reduction of it).
func BenchmarkPooling(b *testing.B) {
	c := tcase{dims: []int64{8, 128, 384}, opDims: []int64{8, 128, 1}, reduce: []bool{false, true, false}, keep: true,
		alg: plan.AlgMean, dts: [2]dtypes.DataType{dtypes.F32, dtypes.F32}, opDT: dtypes.F32}
	p, err := Compile(c.desc())
	if err != nil {
		b.Fatal(err)
	}
	src, op, dst := make([]byte, 4*8*128*384), make([]byte, 4*8*128), make([]byte, 4*8*384)
	scratch := make([]byte, p.full.scratch)
	b.Run("run", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ResetTimer()
		for range b.N {
			if err := p.Run(src, dst, op, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("multiply_chunk", func(b *testing.B) {
		b.SetBytes(int64(len(src)) / p.cut.N)
		b.ResetTimer()
		for range b.N {
			if err := p.full.mul.RunInline(src, scratch, [][]byte{op}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reduce_chunk", func(b *testing.B) {
		b.SetBytes(int64(len(src)) / p.cut.N)
		b.ResetTimer()
		for range b.N {
			if err := p.full.red.RunInline(scratch, dst, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package dtypes_test

import (
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// benchN is the element count of the bulk conversion benchmarks: a 16 KiB
// f32 buffer, which stays in L1/L2 so that the conversion itself is measured.
const benchN = 4096

// benchF32 returns benchN normally distributed f32 values, the kind of data
// tensors hold, with no NaN or Inf to take a slow path.
func benchF32() []float32 {
	r := rand.New(rand.NewPCG(7, 8))
	out := make([]float32, benchN)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func BenchmarkBF16ToF32Slice(b *testing.B) {
	src := make([]uint16, benchN)
	dtypes.F32ToBF16Slice(src, benchF32())
	dst := make([]float32, benchN)
	b.SetBytes(benchN * (2 + 4))
	for b.Loop() {
		dtypes.BF16ToF32Slice(dst, src)
	}
}

func BenchmarkF32ToBF16Slice(b *testing.B) {
	src := benchF32()
	dst := make([]uint16, benchN)
	b.SetBytes(benchN * (4 + 2))
	for b.Loop() {
		dtypes.F32ToBF16Slice(dst, src)
	}
}

func BenchmarkF16ToF32Slice(b *testing.B) {
	src := make([]uint16, benchN)
	dtypes.F32ToF16Slice(src, benchF32())
	dst := make([]float32, benchN)
	b.SetBytes(benchN * (2 + 4))
	for b.Loop() {
		dtypes.F16ToF32Slice(dst, src)
	}
}

func BenchmarkF32ToF16Slice(b *testing.B) {
	src := benchF32()
	dst := make([]uint16, benchN)
	b.SetBytes(benchN * (4 + 2))
	for b.Loop() {
		dtypes.F32ToF16Slice(dst, src)
	}
}

package dtypes_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// benchSizes are the element counts of the bulk conversion benchmarks: 4096
// (a 16 KiB f32 buffer, in L1/L2, so the conversion itself is measured) and
// 4 Mi (24 MiB in all, from and to memory).
var benchSizes = []int{4096, 4 << 20}

// benchF32 returns n normally distributed f32 values, the kind of data
// tensors hold, with no NaN or Inf to take a slow path.
func benchF32(n int) []float32 {
	r := rand.New(rand.NewPCG(7, 8))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

// benchConvert times convert on n elements of 6 bytes each (read plus
// written). Besides the wall-clock figures it reports the thread's CPU time
// per op and the bytes per CPU second (where the OS tells them), which stay
// meaningful on a machine shared with other work.
func benchConvert(b *testing.B, n int, convert func()) {
	b.SetBytes(int64(n) * (2 + 4))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	convert() // fault the pages in: the big sizes run only a few times
	t0 := threadCPUNanos()
	b.ResetTimer()
	for range b.N {
		convert()
	}
	if t0 >= 0 {
		ns := float64(threadCPUNanos()-t0) / float64(b.N)
		b.ReportMetric(ns, "cpu-ns/op")
		b.ReportMetric(float64(n)*6/ns, "cpu-GB/s")
	}
}

func BenchmarkBF16ToF32Slice(b *testing.B) {
	for _, n := range benchSizes {
		src := make([]uint16, n)
		dtypes.F32ToBF16Slice(src, benchF32(n))
		dst := make([]float32, n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) { benchConvert(b, n, func() { dtypes.BF16ToF32Slice(dst, src) }) })
	}
}

func BenchmarkF32ToBF16Slice(b *testing.B) {
	for _, n := range benchSizes {
		src := benchF32(n)
		dst := make([]uint16, n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) { benchConvert(b, n, func() { dtypes.F32ToBF16Slice(dst, src) }) })
	}
}

func BenchmarkF16ToF32Slice(b *testing.B) {
	for _, n := range benchSizes {
		src := make([]uint16, n)
		dtypes.F32ToF16Slice(src, benchF32(n))
		dst := make([]float32, n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) { benchConvert(b, n, func() { dtypes.F16ToF32Slice(dst, src) }) })
	}
}

func BenchmarkF32ToF16Slice(b *testing.B) {
	for _, n := range benchSizes {
		src := benchF32(n)
		dst := make([]uint16, n)
		b.Run(fmt.Sprint("n=", n), func(b *testing.B) { benchConvert(b, n, func() { dtypes.F32ToF16Slice(dst, src) }) })
	}
}

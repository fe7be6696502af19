package reduce

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/internal/jit"
)

// argBenchShapes are ArgMax's benchmark shapes: logits [8,32000] and
// the anchor shapes C and D (../shared/anchors/run_all.sh).
var argBenchShapes = []struct {
	name string
	dims []int
	axis int
}{
	{"logits8x32000", []int{8, 32000}, 1},
	{"C1024x4096ax1", []int{1024, 4096}, 1},
	{"D1024x4096ax0", []int{1024, 4096}, 0},
}

// BenchmarkArgMax measures ArgMax over f32 on the benchmark shapes
// (bytes: src read once).
func BenchmarkArgMax(b *testing.B) {
	for _, sh := range argBenchShapes {
		src, dst := argBenchData(sh.dims, sh.axis)
		b.Run(sh.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(src)))
			b.ResetTimer()
			for range b.N {
				if err := ArgMax(dst, src, sh.dims, sh.axis); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkArgMaxShortRows measures ArgMax over rows shorter than
// AVX-512's 16 f32 lanes: a classifier's 10 logits, and 8, for 65536
// samples, on one thread.
func BenchmarkArgMaxShortRows(b *testing.B) {
	defer jit.SetThreads(jit.SetThreads(1))
	for _, n := range []int{8, 10} {
		dims := []int{65536, n}
		src, dst := argBenchData(dims, 1)
		b.Run(fmt.Sprintf("rows-of-%d", n), func(b *testing.B) {
			b.SetBytes(int64(4 * len(src)))
			b.ResetTimer()
			for range b.N {
				if err := ArgMax(dst, src, dims, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkArgMaxCall measures what an ArgMax call costs apart from
// its kernel: [8,16], whose kernel runs in a few ns.
func BenchmarkArgMaxCall(b *testing.B) {
	dims := []int{8, 16}
	src, dst := argBenchData(dims, 1)
	b.ResetTimer()
	for range b.N {
		if err := ArgMax(dst, src, dims, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkArgMaxInterp is BenchmarkArgMax on the interpreter (the
// ISA capped to none), one thread, over the shapes the Go scan takes.
func BenchmarkArgMaxInterp(b *testing.B) {
	prevISA, prevThreads := jit.SetMaxISA(jit.None), jit.SetThreads(1)
	defer func() { jit.SetMaxISA(prevISA); jit.SetThreads(prevThreads) }()
	for _, sh := range argBenchShapes[:2] {
		src, dst := argBenchData(sh.dims, sh.axis)
		b.Run(sh.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(src)))
			b.ResetTimer()
			for range b.N {
				if err := ArgMax(dst, src, sh.dims, sh.axis); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkArgMaxGoScan is the hand-written Go scan ArgMax is measured
// against: the first index of the largest element of each row.
func BenchmarkArgMaxGoScan(b *testing.B) {
	for _, sh := range argBenchShapes[:2] {
		src, dst := argBenchData(sh.dims, sh.axis)
		b.Run(sh.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(src)))
			n := sh.dims[1]
			b.ResetTimer()
			for range b.N {
				for r := range sh.dims[0] {
					row := src[r*n : (r+1)*n]
					best, bi := row[0], 0
					for i, x := range row {
						if x > best {
							best, bi = x, i
						}
					}
					dst[r] = int64(bi)
				}
			}
		})
	}
}

func argBenchData(dims []int, axis int) ([]float32, []int64) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, dims[0]*dims[1])
	for i := range src {
		src[i] = r.Float32()
	}
	return src, make([]int64, dims[1-axis])
}

// BenchmarkArgMaxInt32 measures ArgMax over s32 (token ids, class
// labels) on the benchmark shapes, in machine code ("jit") and on the
// interpreter ("interp"), one after the other.
func BenchmarkArgMaxInt32(b *testing.B) {
	benchArgTyped(b, func(x float32) int32 { return int32(x * (1 << 30)) })
}

// BenchmarkArgMaxInt64 is BenchmarkArgMaxInt32 over s64 (twice the
// bytes).
func BenchmarkArgMaxInt64(b *testing.B) {
	benchArgTyped(b, func(x float32) int64 { return int64(float64(x) * (1 << 62)) })
}

// BenchmarkArgMaxFloat64 is BenchmarkArgMaxInt32 over f64.
func BenchmarkArgMaxFloat64(b *testing.B) {
	benchArgTyped(b, func(x float32) float64 { return float64(x) })
}

// benchArgTyped runs ArgMax over src elements conv makes of the f32
// benchmark data, in machine code and on the interpreter.
func benchArgTyped[E ArgSrc](b *testing.B, conv func(float32) E) {
	for _, sh := range argBenchShapes {
		f, dst := argBenchData(sh.dims, sh.axis)
		src := make([]E, len(f))
		for i, x := range f {
			src[i] = conv(x)
		}
		for _, isa := range []jit.ISA{jit.EffectiveISA(), jit.None} {
			name := "jit"
			if isa == jit.None {
				name = "interp"
			}
			b.Run(sh.name+"/"+name, func(b *testing.B) {
				prev := jit.SetMaxISA(isa)
				defer jit.SetMaxISA(prev)
				b.SetBytes(int64(unsafe.Sizeof(src[0])) * int64(len(src)))
				b.ResetTimer()
				for range b.N {
					if err := ArgMax(dst, src, sh.dims, sh.axis); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkArgMaxAscending is BenchmarkArgMax on logits [8,32000] whose
// rows ascend, so that every block of a row beats the ones before: the
// rows' kernels skip no block (kernelshape.ArgBlockSkipper), their worst
// case.
func BenchmarkArgMaxAscending(b *testing.B) {
	dims := argBenchShapes[0].dims
	src, dst := argBenchData(dims, 1)
	for i := range src {
		src[i] = float32(i % dims[1])
	}
	b.SetBytes(int64(4 * len(src)))
	b.ResetTimer()
	for range b.N {
		if err := ArgMax(dst, src, dims, 1); err != nil {
			b.Fatal(err)
		}
	}
}

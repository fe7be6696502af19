package reduce

//go:generate go run naive_gen.go

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit"
)

// naiveShapes are the anchor shapes A-I (shared/anchors/run_all.sh):
// src dims and the reduced axes, which are contiguous, so that each
// problem collapses to (outer, red, inner).
var naiveShapes = []struct {
	name string
	dims []int
	axes []int
}{
	{"A", []int{6, 12, 10, 24}, []int{2, 3}},
	{"B", []int{64, 1024}, []int{1}},
	{"C", []int{1024, 4096}, []int{1}},
	{"D", []int{1024, 4096}, []int{0}},
	{"E", []int{32, 256, 56, 56}, []int{2, 3}},
	{"F", []int{32, 56, 56, 256}, []int{1, 2}},
	{"G", []int{64, 1048576}, []int{1}},
	{"H", []int{16777216}, []int{0}},
	{"I", []int{8, 512, 4096}, []int{1}},
}

// BenchmarkInterpVsNaive times the interpreter, through the one-call API
// with the instruction set capped to none (what runs where gdnn has no
// machine code: macOS, Windows) on one thread, against the plain-Go loops
// of naive_test.go, side by side: every anchor shape, every kind, f32,
// bf16 and f16 src, f32 dst, each cell's interpreter and then its plain
// Go. The plain-Go figure is the faster of its two loop orders, rowacc
// and strided, chosen per problem by timing both first (-v logs the
// choice). One run of it is one round, about five minutes; take rounds
// as separate runs, so that each cell's pair stays moments apart:
//
//	go test -c -o /tmp/reduce.test ./reduce && cd reduce
//	for i in 1 2 3 4 5 6; do /tmp/reduce.test -test.run - -test.bench InterpVsNaive -test.benchtime 200ms; done > out.txt
//	benchstat -col /impl out.txt       # or: go run ./cmd/gdnnperf -interp out.txt
//
// (-test.bench 'InterpVsNaive/shape=B/' and the like for a part.)
func BenchmarkInterpVsNaive(b *testing.B) {
	defer jit.SetMaxISA(jit.SetMaxISA(jit.None))
	defer jit.SetThreads(jit.SetThreads(1))
	for _, sh := range naiveShapes {
		outer, red, inner := collapseAxes(sh.dims, sh.axes)
		n := outer * red * inner
		b.Run("shape="+sh.name, func(b *testing.B) {
			f32 := naiveFill(n)
			dst := make([]float32, outer*inner)
			for op := range opCount {
				name := "kind=" + op.String()
				b.Run(name+"/dt=f32", func(b *testing.B) {
					benchPair(b, op, dst, f32, sh.dims, sh.axes, naiveF32[op.String()], dtypes.F32, outer, red, inner)
				})
			}
			for _, dt := range []dtypes.DataType{dtypes.BF16, dtypes.F16} {
				u16 := make([]uint16, n)
				for i, v := range f32 {
					if dt == dtypes.BF16 {
						u16[i] = dtypes.F32ToBF16(v)
					} else {
						u16[i] = dtypes.F32ToF16(v)
					}
				}
				loops := naiveBF16
				if dt == dtypes.F16 {
					loops = naiveF16
				}
				for op := range opCount {
					b.Run("kind="+op.String()+"/dt="+dt.String(), func(b *testing.B) {
						benchPair(b, op, dst, u16, sh.dims, sh.axes, loops[op.String()], dt, outer, red, inner)
					})
				}
			}
		})
	}
}

// benchPair runs impl=interp (op through the one-call API) and
// impl=plainGo (the faster of loops) on src.
func benchPair[S float32 | uint16](b *testing.B, op Op, dst []float32, src []S, dims, axes []int,
	loops [2]naiveFunc[S], dt dtypes.DataType, outer, red, inner int) {
	bytes := int64(len(src)) * int64(dt.Size())
	b.Run("impl=interp", func(b *testing.B) {
		timed(b, bytes, func() {
			if err := Reduce(op, dst, src, dims, axes, SrcType(dt)); err != nil {
				b.Fatal(err)
			}
		})
	})
	loop := fasterOf(b, loops, dst, src, outer, red, inner)
	b.Run("impl=plainGo", func(b *testing.B) {
		timed(b, bytes, func() { loop(dst, src, outer, red, inner) })
	})
}

// timed runs f b.N times on a goroutine locked to its thread, and reports
// besides the wall-clock figures the thread's CPU time per run
// (cpu-ns/op, where the OS gives it), which other work on a shared
// machine disturbs much less: with one thread every call of the
// interpreter runs on the caller.
func timed(b *testing.B, bytes int64, f func()) {
	b.SetBytes(bytes)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f() // fault the pages in, fill the caches of compiled kernels
	t0 := threadCPUNanos()
	b.ResetTimer()
	for range b.N {
		f()
	}
	if t0 >= 0 {
		b.ReportMetric(float64(threadCPUNanos()-t0)/float64(b.N), "cpu-ns/op")
	}
}

// fasterOf returns the loop order of loops (rowacc, strided) with the
// smaller best time over a few runs of each, taken in turn.
func fasterOf[S float32 | uint16](b *testing.B, loops [2]naiveFunc[S], dst []float32, src []S, outer, red, inner int) naiveFunc[S] {
	best := [2]time.Duration{math.MaxInt64, math.MaxInt64}
	for range 3 {
		for i, f := range loops {
			t0 := time.Now()
			f(dst, src, outer, red, inner)
			best[i] = min(best[i], time.Since(t0))
		}
	}
	if best[1] < best[0] {
		b.Logf("plain Go: strided (%v against rowacc %v)", best[1], best[0])
		return loops[1]
	}
	b.Logf("plain Go: rowacc (%v against strided %v)", best[0], best[1])
	return loops[0]
}

// collapseAxes returns (outer, red, inner) for dims reduced over the
// contiguous, increasing axes.
func collapseAxes(dims, axes []int) (outer, red, inner int) {
	outer, red, inner = 1, 1, 1
	for i, d := range dims {
		switch {
		case i < axes[0]:
			outer *= d
		case i > axes[len(axes)-1]:
			inner *= d
		default:
			red *= d
		}
	}
	return outer, red, inner
}

// naiveFill returns n values uniform in [0.5, 1.5), the anchors' fill
// (gonaive's xorshift), so that no sum, product or exp overflows.
func naiveFill(n int) []float32 {
	src := make([]float32, n)
	seed := uint64(0x9E3779B97F4A7C15)
	for i := range src {
		seed ^= seed >> 12
		seed ^= seed << 25
		seed ^= seed >> 27
		src[i] = 0.5 + float32((seed*0x2545F4914F6CDD1D)>>40)/16777216
	}
	return src
}

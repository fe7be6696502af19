package reduce

import (
	"fmt"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestNormCallAllocs: a one-call normalization of a problem seen before
// allocates nothing where it runs on one thread, whether for lack of
// threads or of chunks to share ([8 16 64] is one chunk): no cache key,
// description, chunk or closure goes to the heap. Shared by two threads,
// a call allocates a fixed few objects (the pool's job and lanes, the
// workers' closures and their copy of the buffers), as many for a tensor
// of thousands of chunks as for one of a few.
func TestNormCallAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	calls := func(dims []int) map[string]func() error {
		n := dims[0] * dims[1] * dims[2]
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = float32(i%13) - 6
		}
		gamma, beta := make([]float32, dims[2]), make([]float32, dims[2])
		mask := make([]float32, dims[0]*dims[1])
		for i := range mask {
			mask[i] = float32(i % 2)
		}
		return map[string]func() error{
			"Softmax":     func() error { return Softmax(y, x, dims, -1) },
			"LayerNorm":   func() error { return LayerNorm(y, x, gamma, beta, dims, -1, 1e-5) },
			"RMSNorm":     func() error { return RMSNorm(y, x, gamma, dims, -1, 1e-5) },
			"LpNormalize": func() error { return LpNormalize(y, x, dims, -1, 2, 1e-12) },
			"MaskedMean":  func() error { return MaskedMean(y[:dims[0]*dims[2]], x, mask, dims, 1) },
		}
	}
	// A bound on the few: more would mean something per call or per chunk
	// was allocated again (a key, a description, a chunk's operand list).
	const shared = 6
	for _, threads := range []int{1, 2} {
		prev := jit.SetThreads(threads)
		small, large := calls([]int{8, 16, 64}), calls([]int{16, 64, 768})
		huge := calls([]int{64, 64, 768})
		for name, f := range small {
			allocs := func(f func() error) float64 {
				if err := f(); err != nil { // compiles
					t.Fatal(err)
				}
				return testing.AllocsPerRun(10, func() {
					if err := f(); err != nil {
						t.Fatal(err)
					}
				})
			}
			s, l, h := allocs(f), allocs(large[name]), allocs(huge[name])
			what := fmt.Sprintf("%s, %d threads", name, threads)
			wantL := 0.0
			if threads > 1 {
				wantL = shared
			}
			if s != 0 || l > wantL || h != l {
				t.Errorf("%s: %v, %v and %v allocations per call of [8 16 64], [16 64 768] and [64 64 768]; want 0, at most %v, and as many as [16 64 768]", what, s, l, h, wantL)
			}
			t.Logf("%s: %v, %v and %v allocations per call of [8 16 64], [16 64 768] and [64 64 768]", what, s, l, h)
		}
		jit.SetThreads(prev)
	}
}

// TestArgMaxCallAllocs: a cached ArgMax on one thread allocates
// nothing, and a parallel one its job, lanes and calls' closure (3). More
// would mean its key moved to the heap again or was boxed for a lookup
// (each a few hundred bytes per call), or an error wrapper's variable was
// allocated on the way out of a call that succeeded.
func TestArgMaxCallAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, threads := range []int{1, 2} {
		prev := jit.SetThreads(threads)
		for _, dims := range [][]int{{8, 16}, {8, 32000}} {
			src, dst := argBenchData(dims, 1)
			if err := ArgMax(dst, src, dims, 1); err != nil { // compiles
				t.Fatal(err)
			}
			n := testing.AllocsPerRun(10, func() {
				if err := ArgMax(dst, src, dims, 1); err != nil {
					t.Fatal(err)
				}
			})
			want := 0.0
			if threads > 1 && dims[1] > 16 {
				want = 3
			}
			if n > want {
				t.Errorf("ArgMax of %v on %d threads: %v allocations per call, want at most %v", dims, threads, n, want)
			}
			t.Logf("ArgMax of %v on %d threads: %v allocations per call", dims, threads, n)
		}
		jit.SetThreads(prev)
	}
}

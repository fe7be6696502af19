package reduce

import (
	"fmt"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestNormCallAllocs: a one-call normalization of a problem seen before
// (an ONNX node's too) allocates nothing where it runs on one thread,
// whether for lack of threads or of chunks to share ([8 16 64] is one
// chunk): no cache key, description, chunk or closure goes to the heap. Shared by two threads,
// a call allocates a fixed few objects (the closures that hand its
// chunks to the pool's workers, what they refer to, and the workers'
// list of their scratch; the pool's jobs are used again), as many for a
// tensor of thousands of chunks as for one of a few.
func TestNormCallAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	node := func(op string, opset int) ONNXNorm {
		n, err := NewONNXNorm(op, opset)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	onnxSoftmax, onnxSoftmax11, onnxLayerNorm := node("Softmax", 13), node("Softmax", 11), node("LayerNormalization", 17)
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
		chans := make([]float32, dims[1])
		return map[string]func() error{
			"Softmax":     func() error { return Softmax(y, x, dims, -1) },
			"LogSoftmax":  func() error { return LogSoftmax(y, x, dims, -1) },
			"LayerNorm":   func() error { return LayerNorm(y, x, gamma, beta, dims, -1, 1e-5) },
			"RMSNorm":     func() error { return RMSNorm(y, x, gamma, dims, -1, 1e-5) },
			"GroupNorm":   func() error { return GroupNorm(y, x, chans, chans, dims, 4, 1, 1e-5) },
			"LpNormalize": func() error { return LpNormalize(y, x, dims, -1, 2, 1e-12) },
			"MaskedMean":  func() error { return MaskedMean(y[:dims[0]*dims[2]], x, mask, dims, 1) },
			"ONNX Softmax": func() error {
				return RunONNXNorm(onnxSoftmax, y, x, []float32(nil), nil, dims)
			},
			"ONNX Softmax 11, coerced to 2-D": func() error {
				return RunONNXNorm(onnxSoftmax11, y, x, []float32(nil), nil, dims)
			},
			"ONNX LayerNormalization": func() error {
				return RunONNXNorm(onnxLayerNorm, y, x, gamma, beta, dims)
			},
		}
	}
	// A bound on the few: more would mean something per call or per chunk
	// was allocated again (a key, a description, a chunk's operand list).
	const shared = 4
	for _, threads := range []int{1, 2} {
		prev := jit.SetThreads(threads)
		small, large := calls([]int{8, 16, 64}), calls([]int{16, 64, 768})
		huge := calls([]int{64, 64, 768})
		for name, f := range small {
			allocs := func(f func() error) float64 {
				// The first call compiles; the next give the pool's
				// workers their scratch, kept for later calls.
				for range 4 {
					if err := f(); err != nil {
						t.Fatal(err)
					}
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

// TestNormCallAllocsOneThread: the normalizations that share their work
// by other means than the chunks of TestNormCallAllocs allocate nothing
// on one thread either: GroupNorm over channels-last data, which runs in
// rounds of images (shared by threads, it allocates a few objects a
// round), and a run in place that copies its whole src first (in the
// interpreter, whose passes would otherwise read what they overwrote).
func TestNormCallAllocsOneThread(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	defer jit.SetThreads(jit.SetThreads(1))
	allocs := func(name string, f func() error) {
		t.Helper()
		if err := f(); err != nil { // compiles
			t.Fatalf("%s: %v", name, err)
		}
		n := testing.AllocsPerRun(10, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%s: %v allocations per call", name, n)
		if n != 0 {
			t.Errorf("%s: %v allocations per call on one thread, want 0", name, n)
		}
	}
	for _, images := range []int{1, 64, 512} {
		dims := []int{images, 256, 64}
		x, y := make([]float32, images*256*64), make([]float32, images*256*64)
		gamma := make([]float32, 64)
		allocs(fmt.Sprintf("GroupNorm channels last %v", dims), func() error { return GroupNorm(y, x, gamma, gamma, dims, 4, -1, 1e-5) })
	}
	// An ONNX node given options: a bf16 node must name its type.
	{
		dims := []int{8, 16, 64}
		xb, yb := make([]uint16, 8*16*64), make([]uint16, 8*16*64)
		for i := range xb {
			xb[i] = 0x3f80
		}
		x, y, gamma := make([]float32, len(xb)), make([]float32, len(xb)), make([]float32, 64)
		softmax, err := NewONNXNorm("Softmax", 13)
		if err != nil {
			t.Fatal(err)
		}
		layerNorm, err := NewONNXNorm("LayerNormalization", 17)
		if err != nil {
			t.Fatal(err)
		}
		allocs("ONNX Softmax bf16, Type", func() error {
			return RunONNXNorm(softmax, yb, xb, []float32(nil), nil, dims, Type(dtypes.BF16))
		})
		// The strides made once, as a framework keeps a tensor's: a
		// literal in the call would be the caller's allocation, on the
		// heap because a Stats option's slices, which go on to the
		// kernels, share Option's pointers in escape analysis.
		strides := []int{1024, 64, 1}
		allocs("ONNX LayerNormalization, DstStrides", func() error {
			return RunONNXNorm(layerNorm, y, x, gamma, gamma, dims, DstStrides(strides))
		})
	}
	prev := jit.SetMaxISA(jit.None)
	defer jit.SetMaxISA(prev)
	dims := []int{1, 21, 64, 64}
	x, xc := make([]float32, 21*64*64), make([]float32, 21*64*64)
	for i := range x {
		x[i] = float32(i%13) - 6
	}
	allocs("LogSoftmax in place over channels, interpreted", func() error { copy(xc, x); return LogSoftmax(xc, xc, dims, 1) })
}

// TestArgMaxCallAllocs: a cached ArgMax allocates nothing, on one
// thread or two (the pool's jobs and the run's bound calls are used
// again). More would mean its key moved to the heap again or was boxed
// for a lookup (each a few hundred bytes per call), an error wrapper's
// variable was allocated on the way out of a call that succeeded, or a
// parallel run's calls were a closure made per Run.
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
			if n > 0 {
				t.Errorf("ArgMax of %v on %d threads: %v allocations per call, want none", dims, threads, n)
			}
			t.Logf("ArgMax of %v on %d threads: %v allocations per call", dims, threads, n)
		}
		jit.SetThreads(prev)
	}
}

// TestArgCutCallAllocs checks that an index reduction whose calls are
// cut (jit: an axis in pieces, the outermost loop in Go, lanes in
// blocks; a call would read more than 8 MiB an iteration) allocates
// nothing on one thread and at most one object on two (the closure of
// its pieces' or iterations' calls), whatever its size.
func TestArgCutCallAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, c := range []struct {
		name string
		dims []int
		axis int
		two  float64 // most allocations on two threads
	}{
		{"one row in pieces", []int{3 << 20}, 0, 1},
		{"rows in pieces", []int{2, 3 << 20}, 1, 1},
		{"more rows in pieces", []int{2, 6 << 20}, 1, 1},
		{"outermost loop in Go", []int{12, 40, 65536}, 1, 1},
		{"lanes in blocks", []int{40, 100003}, 0, 0},
	} {
		n := 1
		for _, d := range c.dims {
			n *= d
		}
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(i%1013) - 500
		}
		dst := make([]int64, n/c.dims[c.axis])
		for _, threads := range []int{1, 2} {
			prev := jit.SetThreads(threads)
			if err := ArgMax(dst, src, c.dims, c.axis); err != nil { // compiles
				t.Fatal(err)
			}
			got := testing.AllocsPerRun(5, func() {
				if err := ArgMax(dst, src, c.dims, c.axis); err != nil {
					t.Fatal(err)
				}
			})
			jit.SetThreads(prev)
			want := 0.0
			if threads > 1 {
				want = c.two
			}
			if got > want {
				t.Errorf("%s, %v over %d, %d threads: %v allocations per call, want at most %v", c.name, c.dims, c.axis, threads, got, want)
			}
			t.Logf("%s, %d threads: %v allocations per call", c.name, threads, got)
		}
	}
}

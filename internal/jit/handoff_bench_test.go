package jit

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkHandOffFloor times an ArgMax over [8,32000] f32 rows (1,000
// KB) on two threads as Run takes it, beside the least a hand-off
// between two goroutines can cost: a helper that spins on a line of its
// own runs the second half of the rows (one call of the same kernel)
// while the caller runs the first, and stores a flag the caller spins
// on; nothing is allocated or claimed, and the calls' description stays
// in both cores' caches from one iteration to the next. "halves" runs
// the two calls one after the other on the caller; "own" and "wait" are
// the caller's call and its wait for the helper. Two threads' time over
// half of one's is what sharing the run costs.
func BenchmarkHandOffFloor(b *testing.B) {
	dims := []int64{8, 32000}
	pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S64, Dims: dims, Axis: 1,
		SrcStrides: denseStrides(dims), DstStrides: []int64{1, 0}})
	if err != nil {
		b.Fatal(err)
	}
	k, err := CompileArg(splitInner(pl))
	if err != nil {
		b.Fatal(err)
	}
	if k.code == nil || len(k.pl.Outer) == 0 {
		b.Skipf("no one-call kernel over the rows here (%s)", k.Impl())
	}
	src, dst := make([]byte, 4*dims[0]*dims[1]), make([]byte, 8*dims[0])
	for i := 0; i < len(src); i += 4 {
		binary.LittleEndian.PutUint32(src[i:], math.Float32bits(float32(i*7919%100003)))
	}
	b.SetBytes(int64(len(src)))
	b.Run("run", func(b *testing.B) {
		withThreads(b, 2)
		for range b.N {
			if err := k.Run(src, dst); err != nil {
				b.Fatal(err)
			}
		}
	})
	halves := argCalls{k: k, src: src, dst: dst, top: k.pl.Outer[0], chunk: dims[0] / 2}
	b.Run("halves", func(b *testing.B) {
		for range b.N {
			_ = halves.call(0, 0)
			_ = halves.call(0, 1)
		}
	})
	b.Run("floor", func(b *testing.B) {
		var start, done struct {
			n atomic.Int64
			_ cpu.CacheLinePad
		}
		var stop atomic.Bool
		go func() {
			for seen := int64(0); !stop.Load(); {
				if n := start.n.Load(); n != seen {
					seen = n
					_ = halves.call(1, 1)
					done.n.Store(n)
				}
			}
		}()
		defer stop.Store(true)
		var own, wait time.Duration
		for i := range int64(b.N) {
			start.n.Store(i + 1)
			t0 := time.Now()
			_ = halves.call(0, 0)
			t1 := time.Now()
			for done.n.Load() != i+1 {
			}
			own, wait = own+t1.Sub(t0), wait+time.Since(t1)
		}
		b.ReportMetric(float64(own.Nanoseconds())/float64(b.N), "own-ns/op")
		b.ReportMetric(float64(wait.Nanoseconds())/float64(b.N), "wait-ns/op")
	})
}

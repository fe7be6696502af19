package jit

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// BenchmarkCompileNew measures compiling a kernel that is not cached:
// emission, mapping, and (the cache being disabled) unmapping again.
func BenchmarkCompileNew(b *testing.B) {
	prevE, prevB := SetCacheCapacity(0, 0)
	defer SetCacheCapacity(prevE, prevB)
	pl, err := plan.Canonicalize(&plan.Problem{SrcDT: dtypes.BF16, DstDT: dtypes.BF16,
		Dims: []int64{64, 1024}, SrcStrides: []int64{1024, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0},
		PostOps: []plan.PostOp{{Kind: ops.ReLU}}})
	if err != nil {
		b.Fatal(err)
	}
	k, err := Compile(pl)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("impl %s", k.Impl())
	b.ResetTimer()
	for range b.N {
		if _, err := Compile(pl); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunTiny measures the fixed cost of a Run: a cached kernel over
// 2x3 f32 elements, inline on the caller.
func BenchmarkRunTiny(b *testing.B) {
	pl, err := mkRowPlan(2, 3)
	if err != nil {
		b.Fatal(err)
	}
	k, err := Compile(pl)
	if err != nil {
		b.Fatal(err)
	}
	src, dst := make([]byte, 24), make([]byte, 8)
	b.Logf("impl %s", k.Impl())
	b.ResetTimer()
	for range b.N {
		if err := k.Run(src, dst, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnchors runs the anchor shapes (plain layout) for f32:f32,
// bf16:bf16 and f16:f16 with one thread and with GOMAXPROCS threads;
// SetBytes counts src plus dst bytes, as the anchor tables do.
func BenchmarkAnchors(b *testing.B) {
	threadCounts := benchThreads()
	for _, a := range kerneltest.Anchors {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			for _, th := range threadCounts {
				benchAnchor(b, a.Name, a.Dims, a.Axes, dt, th)
			}
		}
	}
}

// BenchmarkAboutOneBudget runs plans of about one call budget (1 MiB of
// f32), which splitBudget cuts into a few calls so that threads share
// them, with one thread and with GOMAXPROCS threads: blocks (rows over
// axis 1), tiles (columns over axis 0) and two stages (a full reduction).
func BenchmarkAboutOneBudget(b *testing.B) {
	threadCounts := benchThreads()
	for _, sh := range []struct {
		name string
		dims []int64
		axes []int
	}{
		{"rows", []int64{256, 1024}, []int{1}},
		{"columns", []int64{512, 512}, []int{0}},
		{"full", []int64{262144}, []int{0}},
	} {
		for _, th := range threadCounts {
			benchAnchor(b, sh.name, sh.dims, sh.axes, dtypes.F32, th)
		}
	}
}

func benchAnchor(b *testing.B, name string, dims []int64, axes []int, dt dtypes.DataType, threads int) {
	b.Run(fmt.Sprintf("%s/%v/t%d", name, dt, threads), func(b *testing.B) {
		withThreads(b, threads)
		s := spec{dims: dims, reduce: make([]bool, len(dims)), sdt: dt, ddt: dt}
		for _, ax := range axes {
			s.reduce[ax] = true
		}
		c := s.build(b, rand.New(rand.NewPCG(1, 1)))
		k := c.compile(b)
		dst := c.newDst()
		b.SetBytes(int64(len(c.src)) + c.dstN)
		b.Logf("impl %s %s", k.Impl(), k.schedule())
		b.ResetTimer()
		for range b.N {
			if err := k.Run(c.src, dst, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPostPass compares a plan whose post-op has no machine code
// (1024x4096 reduced over axis 1, then GELU, with an emitter that lacks
// the transcendental post-ops as TestPostPass's does: every ISA's emitter
// now has them) run as JIT means plus a post-op pass on the interpreter
// ("jit") with the same plan wholly on the interpreter ("interp", the ISA
// capped to none), in one run.
func BenchmarkPostPass(b *testing.B) {
	threadCounts := benchThreads()
	for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16} {
		for _, path := range []string{"jit", "interp"} {
			for _, th := range threadCounts {
				b.Run(fmt.Sprintf("GELU/%v/%s/t%d", dt, path, th), func(b *testing.B) {
					if path == "interp" {
						prev := SetMaxISA(None)
						defer SetMaxISA(prev)
					}
					withThreads(b, th)
					withoutTranscendental(b)
					s := spec{dims: []int64{1024, 4096}, reduce: []bool{false, true}, sdt: dt, ddt: dt,
						post: []plan.PostOp{{Kind: ops.GELUErf}}}
					c := s.build(b, rand.New(rand.NewPCG(1, 1)))
					k := c.compile(b)
					if path == "jit" && !k.dec.postpass {
						b.Fatalf("no post-op pass: %s, Impl %s", k.schedule(), k.Impl())
					}
					runTimed(b, c, k)
				})
			}
		}
	}
}

// BenchmarkLogPostOp runs a Log post-op after a sum (1024x4096 f32
// reduced over axis 1) and alone (an identity over 1024x1024 f32), with
// one thread and with GOMAXPROCS threads.
func BenchmarkLogPostOp(b *testing.B) {
	threadCounts := benchThreads()
	for _, s := range []struct {
		name string
		s    spec
	}{
		{"sum", spec{dims: []int64{1024, 4096}, reduce: []bool{false, true}, sdt: dtypes.F32, ddt: dtypes.F32,
			post: []plan.PostOp{{Kind: ops.Log}}}},
		{"eltwise", spec{dims: []int64{1024, 1024}, reduce: []bool{false, false}, sdt: dtypes.F32, ddt: dtypes.F32,
			post: []plan.PostOp{{Kind: ops.Log}}}},
	} {
		for _, th := range threadCounts {
			b.Run(fmt.Sprintf("%s/t%d", s.name, th), func(b *testing.B) {
				withThreads(b, th)
				c := s.s.build(b, rand.New(rand.NewPCG(1, 1)))
				k := c.compile(b)
				dst := c.newDst()
				b.SetBytes(int64(len(c.src)) + c.dstN)
				b.Logf("impl %s %s", k.Impl(), k.schedule())
				b.ResetTimer()
				for range b.N {
					if err := k.Run(c.src, dst, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkKindAnchors runs sum, max, min and mul (f32) on the anchor shapes
// where oneDNN's JIT serves them too (B, C, E, G), with one thread and
// with GOMAXPROCS threads, for side-by-side runs against oneDNN's same
// alg (../shared/anchors/onednn_reduce --alg, which reports the median
// and the minimum of per-call times: so does this, besides ns/op, whose
// mean takes in every interruption on a shared machine).
func BenchmarkKindAnchors(b *testing.B) {
	threadCounts := benchThreads()
	for _, a := range kerneltest.Anchors {
		if a.Name != "B" && a.Name != "C" && a.Name != "E" && a.Name != "G" {
			continue
		}
		kinds := []struct {
			name string
			red  plan.Reduction
		}{{"sum", plan.AlgSum.Reduction(0, 0)}, {"max", plan.AlgMax.Reduction(0, 0)}, {"min", plan.AlgMin.Reduction(0, 0)},
			{"mul", plan.AlgMul.Reduction(0, 0)}, {"logsumexp", plan.LogSumExp}}
		for _, kind := range kinds {
			for _, th := range threadCounts {
				benchReduction(b, a, kind.name, kind.red, th)
			}
		}
	}
}

// BenchmarkLogSumExpAnchors times log-sum-exp beside the sum on every
// anchor shape (f32), per call, at each of benchThreads: its cost over the
// sum's is what it adds to a read of the same bytes.
func BenchmarkLogSumExpAnchors(b *testing.B) {
	for _, a := range kerneltest.Anchors {
		for _, kind := range []struct {
			name string
			red  plan.Reduction
		}{{"sum", plan.AlgSum.Reduction(0, 0)}, {"logsumexp", plan.LogSumExp}} {
			for _, th := range benchThreads() {
				benchReduction(b, a, kind.name, kind.red, th)
			}
		}
	}
}

// benchReduction runs reduction red, named name, over anchor a (f32) at
// threads threads, reporting the median and the minimum per-call time.
func benchReduction(b *testing.B, a kerneltest.Anchor, name string, red plan.Reduction, threads int) {
	b.Run(fmt.Sprintf("%s/%s/t%d", a.Name, name, threads), func(b *testing.B) {
		withThreads(b, threads)
		s := spec{dims: a.Dims, reduce: make([]bool, len(a.Dims)), sdt: dtypes.F32, ddt: dtypes.F32}
		for _, ax := range a.Axes {
			s.reduce[ax] = true
		}
		c := s.build(b, rand.New(rand.NewPCG(1, 1)))
		c.p.Reduction = red
		runTimed(b, c, c.compile(b))
	})
}

// runTimed runs k over c's buffers in the benchmark loop, with src plus
// dst bytes per op, and reports the median and minimum per-call times.
func runTimed(b *testing.B, c *tcase, k *Kernel) {
	dst := c.newDst()
	b.SetBytes(int64(len(c.src)) + c.dstN)
	b.Logf("impl %s %s", k.Impl(), k.schedule())
	var calls []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := k.Run(c.src, dst, nil); err != nil {
			b.Fatal(err)
		}
		calls = append(calls, time.Since(t0))
	}
	reportCallTimes(b, calls)
}

// reportCallTimes reports the median and the minimum of per-call times.
func reportCallTimes(b *testing.B, calls []time.Duration) {
	if len(calls) == 0 {
		return
	}
	slices.Sort(calls)
	b.ReportMetric(float64(calls[len(calls)/2].Nanoseconds()), "p50-ns/call")
	b.ReportMetric(float64(calls[0].Nanoseconds()), "min-ns/call")
}

// benchThreads is the thread counts the benchmarks run at: one, and
// GOMAXPROCS when there is more than one.
func benchThreads() []int {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return []int{1, n}
	}
	return []int{1}
}

// BenchmarkWideLp runs f64 Lp norms (1024x1024 f64 reduced over axis 1:
// rows) of p 2 and p 3, on the machine code and on the interpreter
// (SetMaxISA(None)), at one thread: p 3's exp and log per element
// against p 2's product, and against the interpreter's math.Pow.
func BenchmarkWideLp(b *testing.B) {
	for _, p := range []float32{2, 3} {
		for _, impl := range []struct {
			name string
			isa  ISA
		}{{"jit", DetectedISA()}, {"interp", None}} {
			b.Run(fmt.Sprintf("p%g/%s", p, impl.name), func(b *testing.B) {
				withThreads(b, 1)
				s := spec{dims: []int64{1024, 1024}, reduce: []bool{false, true}, sdt: dtypes.F64, ddt: dtypes.F64}
				c := s.build(b, rand.New(rand.NewPCG(1, 1)))
				c.p.Reduction = plan.AlgNormLpSum.Reduction(p, 0)
				prev := SetMaxISA(impl.isa)
				k := c.compile(b)
				SetMaxISA(prev)
				runTimed(b, c, k)
			})
		}
	}
}

// BenchmarkWideLogSumExp runs f64 log-sum-exp over 1024x1024 f64 values
// in [-30, 60], reduced over its rows (axis 1) and over its columns
// (axis 0), on the machine code (the native kernel's two passes) and on
// the interpreter (SetMaxISA(None)), at one thread.
func BenchmarkWideLogSumExp(b *testing.B) {
	for _, axis := range []string{"rows", "columns"} {
		for _, impl := range []struct {
			name string
			isa  ISA
		}{{"jit", DetectedISA()}, {"interp", None}} {
			b.Run(axis+"/"+impl.name, func(b *testing.B) {
				withThreads(b, 1)
				red := []bool{false, true}
				if axis == "columns" {
					red = []bool{true, false}
				}
				s := spec{dims: []int64{1024, 1024}, reduce: red, sdt: dtypes.F64, ddt: dtypes.F64, lo: -30, hi: 60}
				c := s.build(b, rand.New(rand.NewPCG(1, 1)))
				c.p.Reduction = plan.LogSumExp
				prev := SetMaxISA(impl.isa)
				k := c.compile(b)
				SetMaxISA(prev)
				runTimed(b, c, k)
			})
		}
	}
}

// BenchmarkParallelHandOff measures what a parallel Run pays to share
// its calls: four calls of a fixed duration (none, or 2 µs of spinning),
// on one thread and on two. Two threads' time above half of one's is
// the hand-off: the offer, the claim and the join.
func BenchmarkParallelHandOff(b *testing.B) {
	for _, d := range []time.Duration{0, 2 * time.Microsecond} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("call=%v/threads=%d", d, threads), func(b *testing.B) {
				for range b.N {
					if err := Parallel(threads, 4, func(int, int64) error {
						for end := time.Now().Add(d); time.Now().Before(end); {
						}
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

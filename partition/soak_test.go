package partition

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
)

var (
	soakFor    = flag.Duration("soak", 0, "how long TestSoak runs (0: a short run for CI)")
	soakShapes = flag.Int("soakshapes", 0, "how many shapes TestCompileManyShapes compiles (0: the CI default)")
)

// Default sizes of the soak tests: short enough for CI on two shared
// cores, long enough to cycle every cache many times over.
const (
	ciSoak   = 3 * time.Second
	ciShapes = 100000
)

// soakCase is one compiled partition with fixed input data and the
// reference intervals of its output.
type soakCase struct {
	name string
	c    *CompiledPartition
	ins  []Tensor
	out  graph.LogicalTensor
	want []refRange
}

// soakCases compiles n random problems (dtypes, layouts, axes, post-ops
// from the FuzzJITvsInterp generator) with their data and reference.
func soakCases(t *testing.T, n int) []*soakCase {
	t.Helper()
	var cases []*soakCase
	r := newRand(2024)
	for i := 0; len(cases) < n; i++ {
		b := make([]byte, 64)
		for k := range b {
			b[k] = byte(r.IntN(256))
		}
		p := genFromBytes(&fuzzBytes{b: b}, r)
		gen := valueGen(r, i%3)
		src := fillBuffer(p.src, gen)
		var operands []buffer
		for _, o := range p.operands {
			operands = append(operands, fillBuffer(o, gen))
		}
		g, last, err := p.build()
		must(t, err)
		parts, err := Get(g, Fusion)
		must(t, err)
		ins := []graph.LogicalTensor{p.src}
		ts := []Tensor{{lt: p.src, buf: src.bytes}}
		for _, o := range operands {
			ins = append(ins, o.lt)
			ts = append(ts, Tensor{lt: o.lt, buf: o.bytes})
		}
		c, err := parts[0].Compile(ins, []graph.LogicalTensor{graph.NewLogicalTensorAny(last, p.dstDT, nil)})
		must(t, err)
		out, _ := c.QueryLogicalTensor(last)
		want, _ := kindRanges(p.kind, src, p.reduce, p.keep, p.fops(operands))
		cases = append(cases, &soakCase{name: fmt.Sprintf("%s %v axes %v post-ops %d", p.kind, p.src, p.axes, len(p.ops)),
			c: c, ins: ts, out: out, want: want})
	}
	return cases
}

// run executes the case into dst (refilled with junk first) and checks it.
func (sc *soakCase) run(dst []byte) error {
	for i := range dst {
		dst[i] = 0x7f
	}
	if err := sc.c.Execute(sc.ins, []Tensor{{lt: sc.out, buf: dst}}); err != nil {
		return fmt.Errorf("%s: %v", sc.name, err)
	}
	i := 0
	var bad error
	forEachIndex(sc.out.Dims, func(idx []int64) {
		got := load(sc.out.DataType, dst, offset(idx, sc.out.Strides))
		if bad == nil && !sc.want[i].accepts(sc.out.DataType, got) {
			bad = fmt.Errorf("%s (%s): dst%v = %g, want %s", sc.name, sc.c.Impl(), idx, got, sc.want[i])
		}
		i++
	})
	return bad
}

// gcPauseMax returns the longest stop-the-world GC pause the runtime has
// recorded (the upper bound of the highest non-empty histogram bucket).
func gcPauseMax() time.Duration {
	s := []metrics.Sample{{Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s[0].Value.Float64Histogram()
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if h.Counts[i] > 0 {
			return time.Duration(h.Buckets[i+1] * float64(time.Second))
		}
	}
	return 0
}

// heapAfterGC returns the live heap after two full collections.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSoak executes many different compiled partitions (every dtype pair,
// dense, permuted, padded and broadcast layouts, post-op chains) from
// many goroutines while other goroutines force garbage collections and
// change the thread count; every result is checked against the reference.
// At the end the goroutine count must be back to its baseline and the
// live heap within 8 MiB of it. -soak=10m runs it longer.
func TestSoak(t *testing.T) {
	d := *soakFor
	if d == 0 {
		d = ciSoak
	}
	cases := soakCases(t, 48)
	prevThreads := jit.Threads()
	defer jit.SetThreads(prevThreads)
	// Warm up: every kernel compiled and the worker pool started.
	for _, sc := range cases {
		if err := sc.run(make([]byte, len(newBuffer(sc.out, func() float64 { return 0 }).bytes))); err != nil {
			t.Fatal(err)
		}
	}
	baseG := runtime.NumGoroutine()
	baseHeap := heapAfterGC()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var execs, gcs atomic.Int64
	errs := make(chan error, 16)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bufs := map[*soakCase][]byte{}
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				sc := cases[i%len(cases)]
				dst, ok := bufs[sc]
				if !ok {
					dst = newBuffer(sc.out, func() float64 { return 0 }).bytes
					bufs[sc] = dst
				}
				if err := sc.run(dst); err != nil {
					errs <- err
					return
				}
				execs.Add(1)
			}
		}()
	}
	wg.Add(2)
	go func() { // forced collections
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			runtime.GC()
			gcs.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	go func() { // thread counts change under running executes
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				jit.SetThreads(1 + i%4)
			}
		}
	}()
	select {
	case err := <-errs:
		close(stop)
		wg.Wait()
		t.Fatal(err)
	case <-time.After(d):
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	jit.SetThreads(prevThreads)

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseG && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > baseG {
		t.Errorf("%d goroutines after the soak, %d before", g, baseG)
	}
	heap := heapAfterGC()
	const margin = 8 << 20
	if heap > baseHeap+margin {
		t.Errorf("live heap grew from %d to %d bytes (margin %d)", baseHeap, heap, margin)
	}
	st := jit.GetCacheStats()
	t.Logf("soak %v: %d executes of %d partitions, %d forced GCs, max GC pause %v; heap %d -> %d bytes; "+
		"goroutines %d -> %d; jit cache %d entries %d bytes; %d bytes executable memory mapped",
		d, execs.Load(), len(cases), gcs.Load(), gcPauseMax(), baseHeap, heap, baseG, runtime.NumGoroutine(),
		st.Entries, st.Bytes, execmem.MappedBytes())
}

// rssBytes reads the resident set size from /proc/self/statm (0 where
// there is no /proc).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestCompileManyShapes compiles many distinct shapes (each a distinct
// kernel) through two partitions with small cache bounds, executing and
// checking every 500th, and asserts that the kernel cache, the mapped
// executable memory and the compiled-partition cache stay within their
// bounds throughout and that the resident set stays within 48 MiB of
// where it stood after the first tenth. CI compiles 100,000 shapes (a
// few seconds); -soakshapes=N runs another count.
func TestCompileManyShapes(t *testing.T) {
	n := *soakShapes
	if n == 0 {
		n = ciShapes
	}
	const maxEntries, maxBytes = 64, 512 << 10
	pe, pb := jit.SetCacheCapacity(maxEntries, maxBytes)
	defer jit.SetCacheCapacity(pe, pb)
	prevCap, _ := SetCompiledPartitionCacheCapacity(32)
	defer SetCompiledPartitionCacheCapacity(prevCap)

	// Kernels the package's other tests left mapped (the index and
	// normalization kernels' caches, and jit-cache kernels their compiled
	// partitions still hold) are not this test's: what it bounds is what
	// its compiles map beyond them.
	runtime.GC()
	runtime.GC()
	outside := execmem.MappedBytes() - jit.GetCacheStats().Bytes
	var parts []*Partition
	for _, axes := range [][]int64{{0}, {1}} { // parts[a] reduces dim a
		g := graph.New()
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{-1, -1})
		must(t, g.AddOp(graph.NewOp(1, graph.ReduceMean, "").AddInput(src).
			AddOutput(graph.NewLogicalTensorAny(1, dtypes.F32, nil)).SetAttr("axes", axes)))
		must(t, g.Finalize())
		parts = append(parts, onlySupported(t, g, Fusion))
	}
	r := newRand(5)
	var rss0, peakMapped int64
	start := time.Now()
	for i := range n {
		// Distinct (rows, cols) for every i: cols cycles fastest.
		rows, cols := int64(1+i/400), int64(1+i%400)
		axis := i % 2
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{rows, cols})
		c, err := parts[axis].Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, dtypes.F32, nil)})
		if err != nil {
			t.Fatalf("shape %d (%dx%d): %v", i, rows, cols, err)
		}
		if i%500 == 0 {
			out, _ := c.QueryLogicalTensor(1)
			in := newBuffer(src, uniform(r, -1, 1))
			dst := newBuffer(out, func() float64 { return 0 })
			if err := c.Execute([]Tensor{{lt: src, buf: in.bytes}}, []Tensor{{lt: out, buf: dst.bytes}}); err != nil {
				t.Fatal(err)
			}
			reduce := []bool{axis == 0, axis == 1}
			if msg := verifyOutput(in, reduce, false, nil, dst); msg != "" {
				t.Fatalf("shape %dx%d axis %d: %s", rows, cols, axis, msg)
			}
			st := jit.GetCacheStats()
			mapped := execmem.MappedBytes()
			peakMapped = max(peakMapped, mapped)
			if st.Entries > maxEntries || st.Bytes > maxBytes || mapped > outside+maxBytes {
				t.Fatalf("after %d shapes: jit cache %d entries, %d bytes; %d bytes mapped, %d of them before (bounds %d entries, %d bytes)",
					i, st.Entries, st.Bytes, mapped, outside, maxEntries, maxBytes)
			}
			if n := compiledCache.len(); n > 32 {
				t.Fatalf("compiled partition cache holds %d, capacity 32", n)
			}
		}
		if i == n/10 {
			runtime.GC()
			rss0 = rssBytes()
		}
	}
	runtime.GC()
	rss := rssBytes()
	const margin = 48 << 20
	if rss > rss0+margin {
		t.Errorf("resident set grew from %d to %d bytes over %d compiles (margin %d)", rss0, rss, n, margin)
	}
	st := jit.GetCacheStats()
	t.Logf("%d shapes in %v: jit cache %d entries %d bytes, %d misses %d evictions; peak mapped %d bytes; RSS %d -> %d bytes",
		n, time.Since(start).Round(time.Millisecond), st.Entries, st.Bytes, st.Misses, st.Evictions, peakMapped, rss0, rss)
}

// TestDeterministicAcrossThreadCounts runs problems big enough to be split
// into many calls (blocks, and a two-stage reduction) under 1, 2, 3 and 8
// threads: the results must be bit-identical.
func TestDeterministicAcrossThreadCounts(t *testing.T) {
	prev := jit.Threads()
	defer jit.SetThreads(prev)
	cases := []struct {
		name string
		src  graph.LogicalTensor
		axes []int64
		ddt  dtypes.DataType
	}{
		{"rows", graph.NewLogicalTensor(0, dtypes.F32, []int64{64, 40000}), []int64{1}, dtypes.F32},
		{"long rows, two stages", graph.NewLogicalTensor(0, dtypes.BF16, []int64{3, 1 << 21}), []int64{1}, dtypes.BF16},
		{"columns", graph.NewLogicalTensor(0, dtypes.F16, []int64{3000, 300}), []int64{0}, dtypes.F32},
	}
	for _, isa := range isaCaps() {
		for _, c := range cases {
			t.Run(isa.String()+"/"+c.name, func(t *testing.T) {
				pi := jit.SetMaxISA(isa)
				defer jit.SetMaxISA(pi)
				ddt := kerneltest.OutputDT(c.ddt) // f32 under GDNN_TEST_OUTPUTS=f32
				g := meanGraph(t, c.src.DataType, ddt, c.src, c.axes, false)
				cp, err := onlySupported(t, g, Fusion).Compile([]graph.LogicalTensor{c.src},
					[]graph.LogicalTensor{graph.NewLogicalTensorAny(1, ddt, nil)})
				must(t, err)
				out, _ := cp.QueryLogicalTensor(1)
				in := newBuffer(c.src, uniform(newRand(11), -1, 3))
				var first []byte
				for _, th := range []int{1, 2, 3, 8} {
					jit.SetThreads(th)
					dst := newBuffer(out, func() float64 { return math.NaN() })
					must(t, cp.Execute([]Tensor{{lt: c.src, buf: in.bytes}}, []Tensor{{lt: out, buf: dst.bytes}}))
					if first == nil {
						first = dst.bytes
						reduce := make([]bool, len(c.src.Dims))
						for _, a := range c.axes {
							reduce[a] = true
						}
						if msg := verifyOutput(in, reduce, false, nil, dst); msg != "" {
							t.Fatal(msg)
						}
					} else if !slices.Equal(first, dst.bytes) {
						t.Fatalf("%d threads: results differ from 1 thread", th)
					}
				}
			})
		}
	}
}

// pauseHist reads the runtime's histogram of stop-the-world GC pauses.
func pauseHist() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// BenchmarkGCPauseDuringExecute executes a partition in a loop while
// another goroutine forces collections, and reports the longest
// stop-the-world pause seen in that time: the GC latency a long Execute
// can cause (a JIT call cannot be preempted, so the bound is one call's
// duration). A reduction of 64 MiB is cut into calls of about 1 MiB, the
// ArgMax of one row of 256 MiB into pieces of at most 8 MiB.
func BenchmarkGCPauseDuringExecute(b *testing.B) {
	for _, c := range []struct {
		name string
		op   func() *graph.Op // new for each run: AddInput adds to it
		dims []int64
		out  dtypes.DataType
	}{
		{"ReduceMean/16x1M", func() *graph.Op { return graph.NewOp(1, graph.ReduceMean, "").SetAttr("axes", []int64{1}) },
			[]int64{16, 1 << 20}, dtypes.F32},
		{"ArgMax/64M", func() *graph.Op { return graph.NewOp(1, graph.ArgMax, "").SetAttr("axis", int64(0)) },
			[]int64{64 << 20}, dtypes.S64},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := graph.NewLogicalTensor(0, dtypes.F32, c.dims)
			g := graph.New()
			if err := g.AddOp(c.op().AddInput(src).AddOutput(graph.NewLogicalTensorAny(1, c.out, nil))); err != nil {
				b.Fatal(err)
			}
			if err := g.Finalize(); err != nil {
				b.Fatal(err)
			}
			parts, err := Get(g, Fusion)
			if err != nil {
				b.Fatal(err)
			}
			cp, err := parts[0].Compile([]graph.LogicalTensor{src}, []graph.LogicalTensor{graph.NewLogicalTensorAny(1, c.out, nil)})
			if err != nil {
				b.Fatal(err)
			}
			out, _ := cp.QueryLogicalTensor(1)
			n := int64(1)
			for _, d := range c.dims {
				n *= d
			}
			in := make([]float32, n)
			for i := range in {
				in[i] = float32(i%7) - 3 // touched pages, not the shared zero page
			}
			st, err := NewTensor(src, in)
			if err != nil {
				b.Fatal(err)
			}
			dt, err := NewTensor(out, make([]byte, 16*8))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(in)) * 4)
			gcPauses(b, func() error { return cp.Execute([]Tensor{st}, []Tensor{dt}) })
		})
	}
}

// gcPauses runs run b.N times while another goroutine forces
// collections, and reports the longest stop-the-world pause in that time.
func gcPauses(b *testing.B, run func() error) {
	stop := make(chan struct{})
	done := make(chan struct{})
	before := pauseHist()
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		if err := run(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	<-done
	after := pauseHist()
	worst := 0.0
	for i := range after.Counts {
		if after.Counts[i] > before.Counts[i] {
			worst = after.Buckets[i+1]
		}
	}
	b.ReportMetric(worst*1e6, "max-gc-pause-µs")
}

package reduce

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// anchorA and anchorB are the anchor shapes: A is 6x12x10x24 over axes
// 2, 3; B is 64x1024 over axis 1; both f32.
var (
	anchorA = shapeCase{dims: []int{6, 12, 10, 24}, axes: []int{2, 3}}
	anchorB = shapeCase{dims: []int{64, 1024}, axes: []int{1}}
)

// kernelFor compiles c's problem straight through plan and jit, as a
// caller of the lower layers would.
func kernelFor(t testing.TB, op Op, c shapeCase) *jit.Kernel {
	t.Helper()
	pl, err := plan.Canonicalize(problemOf(op, c, [2]dtypes.DataType{dtypes.F32, dtypes.F32}))
	if err != nil {
		t.Fatal(err)
	}
	k, err := jit.Compile(pl)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSteadyStateAllocs checks that a call with a problem seen before
// allocates no more than the compiled kernel's own Run, on one thread
// and on the worker pool, and nothing at all when the kernel runs inline
// (one thread), scratch schedules (LogSum's post-op pass, LogSumExp)
// included.
func TestSteadyStateAllocs(t *testing.T) {
	if kerneltest.RaceDetector {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	src := make([]float32, 64*1024)
	dst := make([]float32, 1024)
	for _, c := range []shapeCase{anchorA, anchorB} {
		for op := range opCount {
			call := func() {
				if err := Reduce(op, dst, src, c.dims, c.axes); err != nil {
					t.Fatal(err)
				}
			}
			k := kernelFor(t, op, c)
			run := func() {
				if err := k.Run(bytesOf(src), bytesOf(dst), nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, threads := range []int{1, 2} {
				prev := jit.SetThreads(threads)
				api, direct := testing.AllocsPerRun(100, call), testing.AllocsPerRun(100, run)
				jit.SetThreads(prev)
				if api > direct {
					t.Errorf("%v %v %d threads: %v allocations per call, Kernel.Run %v", op, c.dims, threads, api, direct)
				}
				if threads == 1 && api != 0 {
					t.Errorf("%v %v one thread: %v allocations per call, want 0", op, c.dims, api)
				}
			}
		}
	}
}

// TestConcurrent runs 16 goroutines calling every kind over shared and
// distinct problems while the cache is small enough to evict, and checks
// every result against a sequential run. Run with -race.
func TestConcurrent(t *testing.T) {
	prev := SetCacheCapacity(5)
	defer SetCacheCapacity(prev)
	cases := []shapeCase{anchorA, {dims: []int{8, 100}, axes: []int{1}}, {dims: []int{30, 7}, axes: []int{0}},
		{dims: []int{4, 5, 6}, axes: []int{-1, 0}, keep: true}}
	r := rand.New(rand.NewPCG(5, 6))
	src := make([]float32, 17280)
	for i := range src {
		src[i] = float32(r.Float64())
	}
	type job struct {
		op   Op
		c    shapeCase
		want []float32
	}
	var jobs []job
	for op := range opCount {
		for _, c := range cases {
			want := make([]float32, 1024) // zeros past the outputs, as each goroutine's dst
			if err := Reduce(op, want, src, c.dims, c.axes, KeepDims(c.keep)); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, job{op, c, want})
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]float32, 1024)
			for i := range 200 {
				j := jobs[(g*7+i)%len(jobs)]
				clear(dst)
				if err := Reduce(j.op, dst, src, j.c.dims, j.c.axes, KeepDims(j.c.keep)); err != nil {
					errs <- err
					return
				}
				for e := range j.want {
					if dst[e] != j.want[e] && !(dst[e] != dst[e] && j.want[e] != j.want[e]) {
						errs <- fmt.Errorf("goroutine %d: %v %v: dst[%d] = %v, sequential %v", g, j.op, j.c.dims, e, dst[e], j.want[e])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := CacheLen(); n > 5 {
		t.Errorf("cache holds %d problems, bound 5", n)
	}
}

// TestCacheBound checks the bound: at most n problems kept, a lowered
// bound drops entries at once, and 0 still computes every call.
func TestCacheBound(t *testing.T) {
	prev := SetCacheCapacity(3)
	defer SetCacheCapacity(prev)
	src := make([]float32, 100)
	for i := range src {
		src[i] = 1
	}
	dst := make([]float32, 100)
	for n := 1; n <= 10; n++ {
		if err := Sum(dst, src, []int{n, 10}, []int{1}); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 10 {
			t.Fatalf("sum of %d rows: %v", n, dst[0])
		}
		if l := CacheLen(); l > 3 {
			t.Fatalf("after %d problems the cache holds %d, bound 3", n, l)
		}
	}
	if got := SetCacheCapacity(1); got != 3 {
		t.Errorf("SetCacheCapacity returned %d, want the previous bound 3", got)
	}
	if l := CacheLen(); l > 1 {
		t.Errorf("lowered bound 1: cache holds %d", l)
	}
	SetCacheCapacity(0)
	if l := CacheLen(); l != 0 {
		t.Errorf("bound 0: cache holds %d", l)
	}
	dst[0] = 0
	if err := Sum(dst, src, []int{10, 10}, []int{0}); err != nil || dst[0] != 10 || CacheLen() != 0 {
		t.Errorf("uncached sum: %v, %v, %d cached", dst[0], err, CacheLen())
	}
}

// TestArgCacheBound: ArgMax's kernels are cached under
// SetCacheCapacity's bound too: at most n of them, trimmed at once when
// it is lowered, and none at 0, where calls still give their results.
func TestArgCacheBound(t *testing.T) {
	prev := SetCacheCapacity(3)
	defer SetCacheCapacity(prev)
	src := make([]float32, 100)
	src[7] = 1
	dst := make([]int64, 100)
	for n := 1; n <= 10; n++ {
		if err := ArgMax(dst, src, []int{n, 10}, 1); err != nil {
			t.Fatal(err)
		}
		if dst[0] != 7 {
			t.Fatalf("ArgMax of %d rows: %v", n, dst[0])
		}
		if l := argCacheLen(); l > 3 {
			t.Fatalf("after %d problems %d index kernels are cached, bound 3", n, l)
		}
	}
	SetCacheCapacity(1)
	if l := argCacheLen(); l > 1 {
		t.Errorf("lowered bound 1: %d index kernels cached", l)
	}
	SetCacheCapacity(0)
	src[42] = 2
	if err := ArgMax(dst, src, []int{10, 10}, 0); err != nil || dst[2] != 4 || argCacheLen() != 0 {
		t.Errorf("uncached ArgMax: %v, %v, %d cached", dst[:10], err, argCacheLen())
	}
}

// argCacheLen returns how many index kernels the cache holds.
func argCacheLen() int {
	cache.mu.RLock()
	defer cache.mu.RUnlock()
	return len(cache.arg)
}

// TestArgCacheBoundConcurrent: goroutines missing on distinct problems
// at once never leave more index kernels cached than the bound.
func TestArgCacheBoundConcurrent(t *testing.T) {
	prev := SetCacheCapacity(4)
	defer SetCacheCapacity(prev)
	SetCacheCapacity(0)
	SetCacheCapacity(4)
	src := make([]float32, 64*64)
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]int32, 64)
			for n := 1; n <= 4; n++ {
				if err := ArgMax(dst, src, []int{g + 1, n}, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if l := argCacheLen(); l > 4 {
		t.Errorf("bound 4: %d index kernels cached", l)
	}
}

// TestISAChange checks that a cap set after a problem was cached gets a
// kernel of its own: the interpreter runs once the cap is None.
func TestISAChange(t *testing.T) {
	src := make([]float32, 64)
	dst := make([]float32, 1)
	if err := Mean(dst, src, []int{64}, []int{0}); err != nil {
		t.Fatal(err)
	}
	withISA(t, jit.None)
	if err := Mean(dst, src, []int{64}, []int{0}); err != nil {
		t.Fatal(err)
	}
	var k key
	k.op, k.srcDT, k.dstDT, k.isa = OpMean, uint16(dtypes.F32), uint16(dtypes.F32), uint8(jit.None)
	var s settings
	if err := k.setShape("test", []int{64}, []int{0}, nil, &s); err != nil {
		t.Fatal(err)
	}
	c, err := lookup(&k)
	if err != nil {
		t.Fatal(err)
	}
	if impl := c.k.Impl(); impl != "interp" {
		t.Errorf("under cap None the kernel is %s", impl)
	}
}

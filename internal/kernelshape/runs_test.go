package kernelshape

import (
	"math"
	"math/rand"
	"reflect"
	"testing"

	"github.com/gdnn/gdnn/internal/plan"
)

// loopsOf is reduced loops of the given sizes (strides do not matter to
// RunsOf).
func loopsOf(sizes []int64) []plan.Loop {
	ls := make([]plan.Loop, len(sizes))
	for i, n := range sizes {
		ls[i] = plan.Loop{Size: n, SrcStride: 1}
	}
	return ls
}

func TestRunsOf(t *testing.T) {
	for _, c := range []struct {
		name           string
		elems          int64
		outer          []int64
		iters, perIter int64
		want           Runs
	}{
		// 1000 elements: chains of up to 40 stay whole.
		{"short sweep", 1000, nil, 37, 1, Runs{Level: -1}},
		{"just too long", 1000, nil, 38, 1, Runs{Level: 0, Chunk: minRun}},
		// A row of 4096 f32 in 8 zmm accumulators: 35 adds, 52 allowed.
		{"row within the tolerance", 4096, nil, 32, 1, Runs{Level: -1}},
		// 4099 adds: K = 128 (64*64 < 4099).
		{"long sweep", 1 << 20, nil, 4096, 1, Runs{Level: 0, Chunk: 128}},
		{"two adds per iteration", 1 << 20, nil, 4096, 2, Runs{Level: 0, Chunk: 64}},
		// 3 adds per sweep, 192 in all: K = 16, 5 sweeps a run.
		{"short sweeps, long outer loop", 448, []int64{64}, 0, 1, Runs{Level: 0, Chunk: 5}},
		// 4*4 adds per iteration of the outer loop, 16000 in all: K = 128.
		{"cut at the outermost loop", 1 << 20, []int64{1000, 4}, 1, 1, Runs{Level: 0, Chunk: 8}},
		{"cut at the inner outer loop", 1 << 20, []int64{4, 1000}, 1, 1, Runs{Level: 1, Chunk: 32}},
		{"long sweep inside outer loops", 1 << 24, []int64{3, 5}, 100000, 1, Runs{Level: 2, Chunk: 2048}},
		{"sizes past int64", math.MaxInt64, []int64{1 << 40, 1 << 40}, 1 << 40, 1, Runs{Level: 2, Chunk: 1 << 20}},
	} {
		if got := RunsOf(c.elems, loopsOf(c.outer), c.iters, c.perIter); got != c.want {
			t.Errorf("%s: RunsOf(%d, %v, %d, %d) = %+v, want %+v", c.name, c.elems, c.outer, c.iters, c.perIter, got, c.want)
		}
	}
}

// TestRunsBoundChains checks what RunsOf promises on random nests: a run
// is at most about 2K adds (a whole chunk plus the leftover iterations
// that join it, plus a sweep's extra adds), and there are at most about
// 2n/K runs, K = sqrt(n) rounded up to a power of two (at least minRun),
// so neither chain (within a run, or of the running totals) is much
// longer than 2*sqrt(n).
func TestRunsBoundChains(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 20000; i++ {
		outer := make([]int64, r.Intn(4))
		for j := range outer {
			outer[j] = 1 + r.Int63n(int64(1)<<uint(r.Intn(12)))
		}
		iters := r.Int63n(int64(1) << uint(r.Intn(16)))
		perIter := 1 + r.Int63n(2)
		elems := 1 + r.Int63n(int64(1)<<uint(r.Intn(30)))
		runs := RunsOf(elems, loopsOf(outer), iters, perIter)
		// adds[j]: adds into an accumulator per iteration of loop j (j ==
		// len(outer): the sweep loop); n: adds in all.
		adds := make([]int64, len(outer)+1)
		adds[len(outer)] = perIter
		body := iters*perIter + sweepExtra
		for j := len(outer) - 1; j >= 0; j-- {
			adds[j] = body
			body *= outer[j]
		}
		n := body
		if runs.None() {
			if n > max(uncut(elems), runLength(n)+sweepExtra) {
				t.Fatalf("RunsOf(%d, %v, %d, %d): no cut for %d adds", elems, outer, iters, perIter, n)
			}
			continue
		}
		K := runLength(n)
		size := iters
		if runs.Level < len(outer) {
			size = outer[runs.Level]
		}
		longest := adds[runs.Level]*int64(2*runs.Chunk-1) + sweepExtra
		if longest > 2*K+2*sweepExtra {
			t.Fatalf("RunsOf(%v, %d, %d) = %+v: runs of up to %d adds, K = %d", outer, iters, perIter, runs, longest, K)
		}
		count := (size + int64(runs.Chunk) - 1) / int64(runs.Chunk)
		for _, s := range outer[:runs.Level] {
			count *= s
		}
		if count > 2*n/K+1 {
			t.Fatalf("RunsOf(%v, %d, %d) = %+v: %d runs for %d adds, K = %d", outer, iters, perIter, runs, count, n, K)
		}
		if limit := max(4*math.Sqrt(float64(n)), 2*minRun) + 2*sweepExtra; float64(longest) > limit || float64(count) > limit {
			t.Fatalf("RunsOf(%v, %d, %d) = %+v: runs of %d adds, %d runs, for %d adds", outer, iters, perIter, runs, longest, count, n)
		}
	}
}

func TestRunLoop(t *testing.T) {
	for _, c := range []struct {
		n     int64
		chunk int
		want  []string
	}{
		{10, 4, []string{"loop 2 {", "loop 4 {", "body", "src +4", "}", "fold", "}", "src -32", "loop 2 {", "body", "src +4", "}"}},
		{8, 4, []string{"loop 2 {", "loop 4 {", "body", "src +4", "}", "fold", "}"}},
		{5, 1, []string{"loop 5 {", "body", "fold", "src +4", "}"}},
		{3, 4, []string{"loop 3 {", "body", "src +4", "}"}},
		{10, 0, []string{"loop 10 {", "body", "src +4", "}"}},
	} {
		r := &recorder{}
		ptrs := NewPointers(1, 2, nil)
		RunLoop(r, ptrs, c.n, Steps{Src: 4}, c.chunk, func() { r.add("body") }, func() { r.add("fold") })
		if !reflect.DeepEqual(r.log, c.want) {
			t.Errorf("RunLoop(%d, %d): got %q, want %q", c.n, c.chunk, r.log, c.want)
		}
		if d := ptrs.Pending(1); d != 0 {
			t.Errorf("RunLoop(%d, %d): pointer left %d bytes off", c.n, c.chunk, d)
		}
	}
}

func TestEmitReducedRuns(t *testing.T) {
	red := []plan.Loop{{Size: 6, SrcStride: 10}, {Size: 3, SrcStride: 1}}
	for _, c := range []struct {
		runs Runs
		want []string
	}{
		{Runs{Level: -1}, []string{"loop 6 {", "loop 3 {", "sweep", "src +4", "}", "src +28", "}"}},
		{Runs{Level: 0, Chunk: 2}, []string{"loop 3 {", "loop 2 {", "loop 3 {", "sweep", "src +4", "}", "src +28", "}", "fold", "}"}},
		{Runs{Level: 1, Chunk: 3}, []string{"loop 6 {", "loop 3 {", "sweep", "src +4", "}", "fold", "src +28", "}"}},
		// The sweep's own loop is cut by the sweep (RunLoop).
		{Runs{Level: 2, Chunk: 8}, []string{"loop 6 {", "loop 3 {", "sweep", "src +4", "}", "src +28", "}"}},
	} {
		r := &recorder{}
		ptrs := NewPointers(1, 2, nil)
		EmitReducedRuns(r, ptrs, red, 4, c.runs, func() { r.add("fold") }, func() { r.add("sweep") })
		if !reflect.DeepEqual(r.log, c.want) {
			t.Errorf("EmitReducedRuns(%+v): got %q, want %q", c.runs, r.log, c.want)
		}
	}
}

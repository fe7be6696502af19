package vfn

import (
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestModelExhaustive runs the scalar model of every op of
// ExhaustiveOps (Model of each program, vexp.Model, vlog.Model) on all
// 2^32 f32 bit patterns (-vfn.all) or every N-th (-vfn.stride=N, as
// SampleInput picks them; kerneltest.ExhaustStride), in GOMAXPROCS
// goroutines, and holds each result to the contract (Check, vexp.Check,
// vlog.Check). The emitters' code gives the model's bits (package
// arm64's TestProgramsExhaustive checks NEON's on a sample; every model
// rounds an FMA once, vexp.FMA32), so this speaks for them too. It logs, per
// op, the worst error in ulps, the first inputs at it and the
// histogram. It runs only with one of the flags.
func TestModelExhaustive(t *testing.T) {
	stride := kerneltest.ExhaustStride(t, "go test ./internal/vfn -run TestModelExhaustive", "about 10 hours on one core")
	for _, op := range ExhaustiveOps() {
		t.Run(OpName(op), func(t *testing.T) {
			model, ok := ModelFor(op)
			if !ok {
				t.Fatalf("no model for %v", op)
			}
			start := time.Now()
			s := Exhaust(op, stride, runtime.GOMAXPROCS(0), 1, func(src []byte, got [][]byte) { ModelInto(model, src, got[0]) })[0]
			name := OpName(op)
			t.Logf("%s model: %d inputs (stride %d): %s; %v", name, s.N, stride, s.Summary(op), time.Since(start).Round(time.Second))
			for _, b := range s.BadLines(op) {
				t.Errorf("%s model: %s", name, b)
			}
			if s.NBad > 0 {
				t.Errorf("%s model: %d of %d results break the contract", name, s.NBad, s.N)
			}
		})
	}
}

// TestSampleInput checks that SampleInput keeps the i-th input in the
// i-th stride of the patterns, and that a sampled run meets every sign
// and exponent.
func TestSampleInput(t *testing.T) {
	for _, stride := range []uint32{1, 2, 1 << 10, 1 << 23} {
		n := uint64(1<<32) / uint64(stride)
		exps := map[uint32]bool{}
		for i := uint64(0); i < n; i += max(1, n>>12) {
			if b := SampleInput(uint32(i), stride); uint64(b/stride) != i {
				t.Fatalf("SampleInput(%d, %d) = %#x, not in [i*stride, (i+1)*stride)", i, stride, b)
			}
		}
		for i := uint64(0); i < n; i += max(1, n>>9) {
			exps[SampleInput(uint32(i), stride)>>23] = true
		}
		if len(exps) != 512 {
			t.Errorf("stride %d: %d of the 512 signs and exponents met", stride, len(exps))
		}
	}
}

// TestTallyMerge checks that tallies of two halves of some results,
// merged, are the tally of all of them.
func TestTallyMerge(t *testing.T) {
	type r struct {
		x, y uint32
		u    int64
		ok   bool
	}
	rs := []r{{1, 1, 0, true}, {2, 2, 3, true}, {3, 3, 7, false}, {4, 4, 7, false}, {5, 5, 1 << 62, false},
		{6, 6, 7, false}, {7, 0x7fc00000, math.MaxInt64, false}, {8, 8, 2, true}}
	var all, a, b Tally
	for i, c := range rs {
		all.Add(c.x, c.y, c.u, c.ok)
		all.AddDiff(c.x, c.y, 0)
		h := &a
		if i%2 == 1 {
			h = &b
		}
		h.Add(c.x, c.y, c.u, c.ok)
		h.AddDiff(c.x, c.y, 0)
	}
	b.Merge(&a)
	if !reflect.DeepEqual(all, b) {
		t.Errorf("merged %+v, want %+v", b, all)
	}
	if all.N != 8 || all.NBad != 5 || all.Worst != 1<<62 || len(all.At) != 1 || all.Hist != [6]int64{1, 0, 1, 1, 0, 4} {
		t.Errorf("tally %+v", all)
	}
}

package jit

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestFromMemoryMarks pins which schedules are marked FromMemory: every
// plan that reads the src of a problem reading 32 MiB or more of it, each
// element once, on every ISA; stage 2 of a split reduction reads partial
// results, which stay in the caches; a broadcast view reading a small
// buffer many times is not marked.
func TestFromMemoryMarks(t *testing.T) {
	f32, bf16 := dtypes.F32, dtypes.BF16
	rows := func(dt dtypes.DataType, r, n, stride int64) *plan.Plan {
		pl, err := plan.Canonicalize(&plan.Problem{SrcDT: dt, DstDT: dt, Dims: []int64{r, n}, SrcStrides: []int64{stride, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	cases := []struct {
		name string
		pl   *plan.Plan
		want bool
	}{
		{"64x1048576 f32 rows (256 MiB)", rows(f32, 64, 1<<20, 1<<20), true},
		{"16777216 f32, one output (64 MiB)", rows(f32, 1, 1<<24, 1<<24), true},
		{"8192x1024 f32 rows (32 MiB)", rows(f32, 8192, 1024, 1024), true},
		{"8191x1024 f32 rows (just under 32 MiB)", rows(f32, 8191, 1024, 1024), false},
		{"16384x1024 bf16 rows (32 MiB)", rows(bf16, 16384, 1024, 1024), true},
		{"1024x4096 f32 rows (16 MiB, in L3)", rows(f32, 1024, 4096, 4096), false},
		{"65536 rows of 4096 f32, 1024 apart (reads 1 GiB of a 256 MiB span)", rows(f32, 65536, 4096, 1024), false},
		{"8x512x4096 f32 columns (64 MiB)", middleAxis(t, f32, 8, 512, 4096), true},
	}
	for _, isa := range []ISA{None, AVX2, AVX512, NEON} {
		for _, c := range cases {
			d, err := decompose(c.pl, isa)
			if err != nil {
				t.Fatalf("%s, %s: %v", c.name, isa, err)
			}
			reads := 0
			for i, sub := range d.plans {
				partials := sub.Stage&plan.SkipTransform != 0
				mem := d.hints[i].FromMemory
				if mem && (!c.want || partials) {
					t.Errorf("%s, %s: plan %v marked FromMemory", c.name, isa, sub)
				}
				if !partials {
					reads++
					if c.want && !mem {
						t.Errorf("%s, %s: plan %v not marked FromMemory", c.name, isa, sub)
					}
				}
			}
			if reads == 0 {
				t.Fatalf("%s, %s: no plan reads the src (split %q)", c.name, isa, d.split)
			}
		}
	}
}

// TestFromMemoryRuns runs random problems with every plan marked
// FromMemory (the size bound lifted) on every ISA, with 1 and 2 threads,
// against the reference: on a paced core (AMD Zen) its row sweeps are
// then paced; elsewhere the marks must change nothing.
func TestFromMemoryRuns(t *testing.T) {
	withSizeBound(t, &fromMemoryBytes, 0)
	t.Logf("paced core: %v", cpuFeatures().zen)
	forEachISA(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(41, 42))
		for i := range 40 {
			rank := 1 + r.IntN(3)
			s := spec{sdt: floatTypes[r.IntN(3)], ddt: floatTypes[r.IntN(3)], pad: int64(r.IntN(3)), lo: -1, hi: 1}
			for j := 0; j < rank; j++ {
				s.dims = append(s.dims, int64(1+r.IntN(24)))
				s.reduce = append(s.reduce, j == rank-1 || r.IntN(3) == 0)
			}
			s.dims[rank-1] = int64(1 + r.IntN(5000))
			red := plan.Reduction{}
			if i%2 == 1 {
				red = rowByRowKinds[r.IntN(len(rowByRowKinds))]
			}
			if red.Combine == plan.CombineMul {
				s.lo, s.hi = 0.97, 1.03 // products stay near 1
			}
			c := s.build(t, r)
			c.p.Reduction = red
			k := c.compile(t)
			checkOneAndTwoThreads(t, c, k, fmt.Sprintf("case %d %v %v %v->%v pad %d", i, red, s.dims, s.sdt, s.ddt, s.pad))
		}
	})
}

// TestLogSumExpFromMemoryMarks: in a log-sum-exp over a src too large for
// the caches, the phases that read the src (the unshifted sums and the
// max) are marked FromMemory, and the sums of the exp copy Y are not:
// each chunk program's Y is small, and its Y phase has just written it.
func TestLogSumExpFromMemoryMarks(t *testing.T) {
	pl := withKind(middleAxis(t, dtypes.F32, 8, 512, 4096), plan.LogSumExp)
	for _, isa := range []ISA{None, AVX2, AVX512, NEON} {
		d, err := decompose(pl, isa)
		if err != nil {
			t.Fatalf("%s: %v", isa, err)
		}
		var src, sums int
		var walk func(phases []phase)
		walk = func(phases []phase) {
			for _, ph := range phases {
				for _, s := range ph.segs {
					for _, p := range s.progs {
						walk(p.phases)
					}
					if len(s.progs) > 0 {
						continue
					}
					sub, mem := d.plans[s.unit], d.hints[s.unit].FromMemory
					switch {
					case sub.Stage&plan.SkipTransform != 0 || sub.Reduction == plan.Copy:
					case sub.SrcDT == dtypes.F32 && len(sub.PostOps) > 0 && sub.PostOps[0].Kind == ops.Log:
						sums++
						if mem {
							t.Errorf("%s: sums of Y %v marked FromMemory", isa, sub)
						}
					default:
						src++
						if !mem {
							t.Errorf("%s: %v reads the src but is not marked FromMemory", isa, sub)
						}
					}
				}
			}
		}
		walk(d.phases)
		if src == 0 || sums == 0 {
			t.Errorf("%s: %d plans read the src, %d sum Y (split %q); want both", isa, src, sums, d.split)
		}
	}
}

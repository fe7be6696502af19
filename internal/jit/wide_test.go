package jit

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestWideSchedules runs random f64 problems through Compile and Run on
// every ISA, under budgets that take every split (blocks, tiles, two
// stages with f64 partials), against the exact oracle; and checks that
// 1 and 3 threads give the same bits, and that src, dst and operands
// placed against guard pages are never read or written past.
func TestWideSchedules(t *testing.T) {
	r := rand.New(rand.NewSource(64))
	const n = 120
	splits := map[string]bool{}
	defer func() {
		for _, s := range []string{"blocks", "tiles", "2stage"} {
			if !splits[s] {
				t.Errorf("no problem took the %s split", s)
			}
		}
	}()
	for i := range n {
		p := kerneltest.WideProblem(r, 1<<14)
		withBudget(t, []int64{1 << 20, 4096, 512}[i%3])
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src, dst0, bins := kerneltest.Buffers(t, p, 0xa5,
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, i%4 == 0) },
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, false) })
		for _, isa := range testISAs() {
			prev := SetMaxISA(isa)
			k, err := Compile(pl)
			SetMaxISA(prev)
			if err != nil {
				t.Fatalf("%v: %v", p, err)
			}
			splits[k.dec.split] = true
			if pl.Outputs > 0 {
				checkNativeImpl(t, pl, k)
			}
			var first []byte
			for _, threads := range []int{1, 3} {
				withThreads(t, threads)
				f := kerneltest.NewFence(t, i%2 == 0)
				fsrc, fdst, fbins := f.Place(src), f.Place(dst0), f.PlaceEach(bins)
				if err := k.Run(fsrc, fdst, fbins); err != nil {
					t.Fatalf("%v on %v: %v", p, isa, err)
				}
				got := append([]byte(nil), fdst...)
				f.Free()
				kerneltest.CheckWide(t, isa.String()+" "+k.Impl(), p, src, got, bins, 0xa5)
				if first == nil {
					first = got
				} else if !bytes.Equal(first, got) {
					t.Errorf("%v on %v: 1 and 3 threads differ", p, isa)
				}
			}
		}
	}
}

// TestNativeWideSchedules runs f64 sums, means, maxima, minima and
// products, of the elements and of their |x| and x*x, and the Lp norms of
// p 1, 2 and others (some over values across the f64 range), half of them with post-ops of the kinds the native kernel's
// f64 epilogue takes (the plans the native kernel takes), through
// Compile and Run on every ISA, under budgets that take every split,
// against the oracle's bounds: machine code on every ISA but the
// interpreter's, the same bits at 1 and 3 threads, guard pages after src
// and dst.
func TestNativeWideSchedules(t *testing.T) {
	checkNativeWideSchedules(t, 216)
}

// TestNativeWideFromMemory is TestNativeWideSchedules with every plan
// marked FromMemory (the size bound lifted): on a paced core (AMD Zen)
// the native kernel's f64 row sweeps are then paced, an f64 sum's runs
// in one accumulator (two on AVX2) and as many totals; elsewhere the
// marks must change nothing. 1 and 3 threads must give the same bits.
func TestNativeWideFromMemory(t *testing.T) {
	withSizeBound(t, &fromMemoryBytes, 0)
	t.Logf("paced core: %v", cpuFeatures().zen)
	checkNativeWideSchedules(t, 84)
}

// checkNativeWideSchedules is TestNativeWideSchedules over n problems.
func checkNativeWideSchedules(t *testing.T, n int) {
	r := rand.New(rand.NewSource(65))
	reds := []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), plan.AlgMax.Reduction(0, 0),
		plan.AlgMin.Reduction(0, 0), plan.AlgMul.Reduction(0, 0)}
	reds = append(append(append(reds, kerneltest.WideTransformed...), kerneltest.WideLp...), kerneltest.WideLpP...)
	splits := map[string]bool{}
	defer func() {
		for _, s := range []string{"blocks", "tiles", "2stage"} {
			if !splits[s] {
				t.Errorf("no problem took the %s split", s)
			}
		}
	}()
	draw := kerneltest.WideDraw
	draw.Kinds = kernelshape.NativeF64PostOpKinds()
	for i := range n {
		p := kerneltest.RandomProblem(r, 1<<14, draw)
		if i%2 == 0 {
			p.PostOps = nil
		}
		p.Reduction = reds[i%len(reds)]
		withBudget(t, []int64{1 << 20, 4096, 512}[i%3])
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src, dst0, bins := kerneltest.Buffers(t, p, 0xa5, func(dt dtypes.DataType, b []byte) {
			kerneltest.FillWide(r, dt, b, i%4 == 0)
			if p.Reduction.Transform == plan.TransformPow && i%3 == 0 {
				kerneltest.FillWideWide(r, b, i%4 == 0)
			}
			if p.Reduction.Combine == plan.CombineMul {
				for j := int64(0); j < int64(len(b)/8); j++ {
					plan.StoreF64(dt, b, j, 1+r.NormFloat64()/64)
				}
			}
		}, func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, false) })
		for _, isa := range testISAs() {
			prev := SetMaxISA(isa)
			k, err := Compile(pl)
			SetMaxISA(prev)
			if err != nil {
				t.Fatalf("%v: %v", p, err)
			}
			splits[k.dec.split] = true
			if pl.Outputs > 0 {
				checkNativeImpl(t, pl, k)
			}
			var first []byte
			for _, threads := range []int{1, 3} {
				withThreads(t, threads)
				f := kerneltest.NewFence(t, true)
				fsrc, fdst, fbins := f.Place(src), f.Place(dst0), f.PlaceEach(bins)
				if err := k.Run(fsrc, fdst, fbins); err != nil {
					t.Fatalf("%v on %v: %v", p, isa, err)
				}
				got := append([]byte(nil), fdst...)
				f.Free()
				kerneltest.CheckWide(t, isa.String()+" "+k.Impl(), p, src, got, bins, 0xa5)
				if first == nil {
					first = got
				} else if !bytes.Equal(first, got) {
					t.Errorf("%v on %v: 1 and 3 threads differ", p, isa)
				}
			}
		}
	}
}

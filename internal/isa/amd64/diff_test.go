package amd64

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vfn"
)

// checkProblem emits p for every ISA, runs it whole and in blocks of the
// outermost loop, and compares with the float64 reference and with the
// interpreter. Inputs are exact (see fillExact), so every comparison is
// bit for bit (any NaN matches any NaN), except the machine code's
// results of a problem ending in Exp or Log (vexp.Near).
func checkProblem(t *testing.T, r *rand.Rand, p *plan.Problem, specials bool) {
	t.Helper()
	checkProblemPaced(t, r, p, specials, false)
}

// checkProblemPaced is checkProblem; with paced, the plan is marked
// read from memory (Hints.FromMemory) and compiled with Options.Zen.
func checkProblemPaced(t *testing.T, r *rand.Rand, p *plan.Problem, specials, paced bool) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize(%+v): %v", p, err)
	}
	src, dst0, bins := buffers(t, r, p, specials)
	want, written := kerneltest.Reference(p, src, dst0, bins)

	// The interpreter is held to the same standard except for the sign
	// of a zero mean of one element, which it does not pin down.
	kerneltest.CheckInterp(t, p, pl, src, dst0, bins, want, written, true)
	for _, isa := range isas(t) {
		isa.o.Zen = paced
		blocks := []int64{0}
		if len(pl.Outer) > 0 && pl.Outer[0].Size > 1 {
			blocks = append(blocks, 1+r.Int63n(pl.Outer[0].Size))
		}
		func() {
			k := compileHinted(t, pl, kernelconf.Hints{FromMemory: paced}, isa.o)
			defer k.Release()
			kerneltest.CheckBlocks(t, isa.name, k, p, pl, src, dst0, bins, blocks, want, written, false, vfn.Tolerance(p.PostOps))
		}()
	}
}

// TestRandomPlans runs thousands of random problems: ranks 0-6, dims
// including 0 and 1 and vector-width edges, permuted and padded strides,
// every dtype pair, chains of supported post-ops with scalar, full and
// partial broadcast operands, some ending in Exp or Log.
func TestRandomPlans(t *testing.T) {
	n := 6000
	if testing.Short() {
		n = 300
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		p := withTrailingNear(r, randProblem(r, 6000))
		checkProblem(t, r, p, i%5 == 0)
	}
}

// TestEveryPostOpEmitted checks that every unary post-op kind has JIT
// code: Emit gives no Unimplemented for any of them (GELUErf, the last
// without, now has a package vfn program).
func TestEveryPostOpEmitted(t *testing.T) {
	for k := ops.Abs; k < ops.Add; k++ {
		p := &plan.Problem{SrcDT: 1, DstDT: 1, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: []plan.PostOp{{Kind: k, Alpha: 0, Beta: 1}}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		for _, o := range []Options{{}, {AVX512: true}} {
			if _, err = Emit(pl, o); err != nil {
				t.Errorf("Emit with %v, %+v: %v", k, o, err)
			}
		}
	}
}

// TestDeepPlans checks the loop-depth limits with plan.MaxBinary
// operands: a plan within them (every general register in use) runs
// correctly; one past the general registers (Covers' Registers) or past
// maxDepth is reported as Unimplemented, never miscompiled.
func TestDeepPlans(t *testing.T) {
	mk := kerneltest.DeepPlan
	r := rand.New(rand.NewSource(5))
	ok := mk(2, 3)
	sb, _ := ok.SrcBytes()
	db, _ := ok.DstBytes()
	src, want := make([]byte, sb), make([]byte, db)
	fillExact(r, ok.SrcDT, src, false, 1)
	var bins [][]byte
	for i := 0; i < plan.MaxBinary; i++ {
		bb, _ := ok.BinBytes(i)
		b := make([]byte, bb)
		fillExact(r, ok.SrcDT, b, false, 1)
		bins = append(bins, b)
	}
	if err := interp.Run(ok, src, want, bins); err != nil {
		t.Fatal(err)
	}
	written := map[int64]bool{}
	for i := int64(0); i < db/4; i++ {
		written[i] = true
	}
	for _, isa := range isas(t) {
		k := compile(t, ok, isa.o)
		got := make([]byte, db)
		k.RunBlocks(ok, src, got, bins, 0)
		k.Release()
		if d := kerneltest.CompareExact(ok.DstDT, got, want, written, true); d != "" {
			t.Errorf("%s: 2 outer, 3 reduced loops, %d operands: %s", isa.name, plan.MaxBinary, d)
		}
		for _, c := range [][2]int{{maxDepth + 1, 1}, {1, maxDepth + 1}, {maxDepth, maxDepth}, {3, 3}} {
			_, err := Emit(mk(c[0], c[1]), isa.o)
			if !errors.Is(err, status.Unimplemented) {
				t.Errorf("%s: %d outer, %d reduced loops, %d operands: got %v, want Unimplemented", isa.name, c[0], c[1], plan.MaxBinary, err)
			}
		}
	}
}

// TestConcurrentEmit emits plans from several goroutines at once (the
// kernel cache compiles concurrently) and checks each result is the
// bytes a lone Emit produces: the assembler context is per call, and the
// backend's global tables are filled once.
func TestConcurrentEmit(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	plans := kerneltest.Plans(t, 16, func() *plan.Problem { return randProblem(r, 4000) })
	kerneltest.CheckConcurrentEmit(t, plans, 8, 5, func(i int, pl *plan.Plan) (plan.Code, error) {
		return Emit(pl, Options{AVX512: i%2 == 0})
	})
}

// FuzzPlans drives the random-plan differential test from fuzzer-chosen
// seeds: go test -fuzz FuzzPlans ./amd64.
func FuzzPlans(f *testing.F) {
	for _, s := range []int64{1, 2, 3, 42} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, seed int64, specials bool) {
		r := rand.New(rand.NewSource(seed))
		checkProblem(t, r, withTrailingNear(r, randProblem(r, 6000)), specials)
		kerneltest.CheckWideEmitted(t, r, func(pl *plan.Plan) error {
			_, err := Emit(pl, Options{AVX512: seed%2 == 0})
			return err
		}, nativeTakesPlan)
	})
}

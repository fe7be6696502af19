package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/plan"
)

// Target is one configuration of an emitter under test: package amd64
// has one per ISA the CPU runs (AVX2, AVX-512, AVX-512 with BF16),
// package arm64 one (NEON).
type Target struct {
	Name string
	// Compile emits pl and maps it; a failure fails t.
	Compile func(t testing.TB, pl *plan.Plan) *Kernel
	// Options are the emitter's options of this configuration, for the
	// checks that differ by them (nil where there are none).
	Options any
}

// CheckInterp runs pl, the canonical plan of p, through the interpreter
// from dst0 and compares its dst with want (written marks the outputs;
// anyZero lets +0 match -0); a difference is fatal.
func CheckInterp(t testing.TB, p *plan.Problem, pl *plan.Plan, src, dst0 []byte, bins [][]byte, want []byte, written map[int64]bool, anyZero bool) {
	t.Helper()
	viaInterp := append([]byte(nil), dst0...)
	if err := interp.Run(pl, src, viaInterp, bins); err != nil {
		t.Fatalf("interp.Run: %v", err)
	}
	if d := CompareExact(p.DstDT, viaInterp, want, written, anyZero); d != "" {
		t.Fatalf("interpreter disagrees with the reference: %s\nproblem %+v\nplan %v", d, p, pl)
	}
}

// CheckBlocks runs k, pl's kernel under the name name, from dst0 whole
// (block 0) and in each of blocks iterations of the outermost loop
// (RunBlocks), and compares dst with want, bit for bit but for tol ulps
// (CompareNear); a difference is fatal. It returns the last run's dst.
func CheckBlocks(t testing.TB, name string, k *Kernel, p *plan.Problem, pl *plan.Plan, src, dst0 []byte, bins [][]byte, blocks []int64,
	want []byte, written map[int64]bool, anyZero bool, tol int64) []byte {
	t.Helper()
	var got []byte
	for _, blk := range blocks {
		got = append([]byte(nil), dst0...)
		k.RunBlocks(pl, src, got, bins, blk)
		if d := CompareNear(p.DstDT, got, want, written, anyZero, tol); d != "" {
			t.Fatalf("%s (blocks of %d): %s\nproblem %+v\nplan %v", name, blk, d, p, pl)
		}
	}
	return got
}

// Sweep runs pl (an identity over src, or a stage of one) through the
// kernel of each target whole and holds each one's dst to check, which
// returns the largest error (in unit), messages for the results it
// rejects (some of them) and how many it rejects.
func Sweep(t testing.TB, targets []Target, pl *plan.Plan, src []byte, unit string, check func(tg Target, got []byte) (worst int64, bad []string, nbad int)) {
	t.Helper()
	for _, tg := range targets {
		k := tg.Compile(t, pl)
		got := make([]byte, len(src))
		k.RunBlocks(pl, src, got, nil, 0)
		k.Release()
		worst, bad, nbad := check(tg, got)
		report(t, tg.Name, len(src)/4, unit, worst, bad, nbad)
	}
}

// report fails t with a sweep's results that break the contract (bad:
// up to a few described, nbad in all) and logs its largest error.
func report(t testing.TB, name string, n int, unit string, worst int64, bad []string, nbad int) {
	t.Helper()
	for _, b := range bad {
		t.Errorf("%s: %s", name, b)
	}
	if nbad > 0 {
		t.Errorf("%s: %d of %d results break the contract", name, nbad, n)
	}
	t.Logf("%s: %d inputs, largest error %d %s", name, n, worst, unit)
}

// SweepProblem is Sweep for p, the identity problem of a sweep over src,
// its errors counted in ulps.
func SweepProblem(t testing.TB, targets []Target, p *plan.Problem, src []byte, check func(got []byte) (worst int64, bad []string, nbad int)) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	Sweep(t, targets, pl, src, "ulp", func(_ Target, got []byte) (int64, []string, int) { return check(got) })
}

// CheckFenced runs pl, the canonical plan of p, through the kernel of
// each target with src0, dst0 and bins0 copied next to guard pages
// (Fence), at their end and then at their start, whole (block 0) or in
// each of blocks iterations of the outermost loop, and compares dst with
// want bit for bit (zero signs too); a difference is fatal, a read or
// write past a tensor faults. what names the problem in messages.
func CheckFenced(t testing.TB, what string, targets []Target, p *plan.Problem, pl *plan.Plan, src0, dst0 []byte, bins0 [][]byte, blocks []int64,
	want []byte, written map[int64]bool) {
	t.Helper()
	for _, atEnd := range []bool{true, false} {
		fence := NewFence(t, atEnd)
		src, dst, bins := fence.Place(src0), fence.Place(dst0), fence.PlaceEach(bins0)
		for _, tg := range targets {
			k := tg.Compile(t, pl)
			for _, blk := range blocks {
				copy(dst, dst0)
				k.RunBlocks(pl, src, dst, bins, blk)
				if d := CompareExact(p.DstDT, dst, want, written, false); d != "" {
					t.Fatalf("%s%s (blocks of %d, guard pages after %v): %s\nproblem %+v\nplan %v", what, tg.Name, blk, atEnd, d, p, pl)
				}
			}
			k.Release()
		}
		fence.Free()
	}
}

// checkRelative runs pl, the canonical plan of p, through the kernel of
// each target whole from dst0 and holds every output (written) to want
// within the relative tolerance tol; a difference is fatal, what names
// the case in its message.
func checkRelative(t testing.TB, what string, targets []Target, p *plan.Problem, pl *plan.Plan, src, dst0, want []byte, written map[int64]bool, tol float64) {
	t.Helper()
	for _, tg := range targets {
		k := tg.Compile(t, pl)
		got := append([]byte(nil), dst0...)
		k.RunBlocks(pl, src, got, nil, 0)
		k.Release()
		for i := range written {
			g, w := float64(dtypes.LoadF32(p.DstDT, got, i)), float64(dtypes.LoadF32(p.DstDT, want, i))
			if math.Abs(g-w) > tol*math.Abs(w) {
				t.Fatalf("%s %s: dst[%d] = %v, want %v (relative tolerance %.3g)", tg.Name, what, i, g, w, tol)
			}
		}
	}
}

// RunIdentity emits pl, an identity over src (f32 in and out), with
// emit, maps the code and runs it whole; it returns dst, or emit's error.
func RunIdentity(t testing.TB, pl *plan.Plan, src []byte, emit func(*plan.Plan) (plan.Code, error)) ([]byte, error) {
	t.Helper()
	b, err := emit(pl)
	if err != nil {
		return nil, err
	}
	k := Map(t, b)
	defer k.Release()
	got := make([]byte, len(src))
	k.RunBlocks(pl, src, got, nil, 0)
	return got, nil
}

// Run runs pl through tg's kernel whole (one call) on a copy of dst0
// and returns it.
func (tg Target) Run(t testing.TB, pl *plan.Plan, src, dst0 []byte, bins [][]byte) []byte {
	t.Helper()
	k := tg.Compile(t, pl)
	defer k.Release()
	got := append([]byte(nil), dst0...)
	k.RunBlocks(pl, src, got, bins, 0)
	return got
}

// CheckRealisticData runs long reductions of ordinary (inexact) values
// (fillNearOne, drawn from r) over each of shapes (dense, Dims with Axes
// reduced) for each src:dst pair under each target, and holds the
// results to the reference (Reference) within the relative tolerance
// that tol gives for the plan and dst type: an emitter's bound on its
// summation error (checkRelative).
func CheckRealisticData(t testing.TB, targets []Target, r *rand.Rand, shapes []Anchor, pairs [][2]dtypes.DataType, tol func(pl *plan.Plan, dst dtypes.DataType) float64) {
	t.Helper()
	for _, s := range shapes {
		for _, pair := range pairs {
			p := DenseProblem(s.Dims, s.Axes, pair[0])
			p.DstDT = pair[1]
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			sb, _ := p.SrcBytes()
			db, _ := p.DstBytes()
			src, dst0 := make([]byte, sb), make([]byte, db)
			fillNearOne(r, p.SrcDT, src)
			want, written := Reference(p, src, dst0, nil)
			checkRelative(t, fmt.Sprint(s.Name, " ", s.Dims, " ", s.Axes, " ", pair), targets, p, pl, src, dst0, want, written, tol(pl, p.DstDT))
		}
	}
}

package arm64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// TestExpSweep runs the Exp post-op on a sweep of the f32 bit patterns
// (vexp.Sweep, sparser than amd64's: this runs under qemu) and holds each
// result to vexp.Check: within vexp.MaxULP of float32(math.Exp(x)), +Inf
// exactly on overflow, +0 far below, the same NaN for a NaN (quietened:
// the load and the copy before the post-op quieten a signalling NaN, as
// the interpreter's conversions do). The problem is an identity over
// the inputs, so lanes, tails and the scalar path all meet specials.
func TestExpSweep(t *testing.T) {
	needARM64(t)
	xs := vexp.Sweep(1 << 14)
	if testing.Short() {
		xs = vexp.Sweep(1 << 17)
	}
	p, src := vexp.SweepProblem(xs)
	sweepNEON(t, p, src, func(got []byte) (int64, []string, int) { return vexp.CheckSweep(xs, got) })
}

// TestSumExpSweep runs the exp for sums (an unshifted log-sum-exp's
// transform) on the same sweep, one term per output, and holds each
// result to vexp.CheckSum and to vexp.SumModel's bits.
func TestSumExpSweep(t *testing.T) {
	needARM64(t)
	xs := vexp.Sweep(1 << 14)
	if testing.Short() {
		xs = vexp.Sweep(1 << 17)
	}
	pl, src, err := vexp.SumSweepPlan(xs)
	if err != nil {
		t.Fatal(err)
	}
	sweepNEONPlan(t, pl, src, "x 2^-24 of e^x", func(got []byte) (int64, []string, int) { return vexp.CheckSumModelSweep(xs, got) })
}

// TestExpOfZero runs both exps on 37 zeros of both signs (full vectors,
// a tail and the scalar path): e^0 must be exactly 1 from each, not just
// within its contract, so that a log-sum-exp of [0, -Inf, ...] is
// exactly 0.
func TestExpOfZero(t *testing.T) {
	needARM64(t)
	xs := make([]float32, 37)
	for i := range xs {
		xs[i] = float32(math.Copysign(0, float64(i%2*-2+1)))
	}
	one := func(_, got float32) (int64, bool) { return 0, math.Float32bits(got) == vexp.OneBits }
	p, src := vexp.SweepProblem(xs)
	sweepNEON(t, p, src, func(got []byte) (int64, []string, int) { return vexp.CheckSweepOf("exp", math.Exp, one, xs, got) })
	pl, src, err := vexp.SumSweepPlan(xs)
	if err != nil {
		t.Fatal(err)
	}
	sweepNEONPlan(t, pl, src, "x 2^-24 of e^x", func(got []byte) (int64, []string, int) {
		return vexp.CheckSweepOf("exp for sums", math.Exp, one, xs, got)
	})
}

// sweepNEON runs p, the identity problem of a sweep over src, and holds
// its output to check, which returns the largest error in ulps,
// messages for the results it rejects (some of them) and how many it
// rejects.
func sweepNEON(t *testing.T, p *plan.Problem, src []byte, check func(got []byte) (worst int64, bad []string, nbad int)) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	sweepNEONPlan(t, pl, src, "ulp", check)
}

// sweepNEONPlan is sweepNEON for the plan pl (of its stage), whose check
// counts its errors in unit.
func sweepNEONPlan(t *testing.T, pl *plan.Plan, src []byte, unit string, check func(got []byte) (worst int64, bad []string, nbad int)) {
	t.Helper()
	k := compile(t, pl)
	defer k.Release()
	got := make([]byte, len(src))
	k.RunBlocks(pl, src, got, nil, 0)
	worst, bad, nbad := check(got)
	for _, b := range bad {
		t.Error(b)
	}
	if nbad > 0 {
		t.Errorf("%d of %d results break the contract", nbad, len(src)/4)
	}
	t.Logf("neon: %d inputs, largest error %d %s", len(src)/4, worst, unit)
}

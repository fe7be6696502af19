package amd64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// TestExpSweep runs the Exp post-op on a dense sweep of the f32 bit
// patterns (vexp.Sweep) under every ISA this CPU has, AVX2 included on
// an AVX-512 machine, and holds each result to vexp.Check: within
// vexp.MaxULP of float32(math.Exp(x)), +Inf exactly on overflow, +0 far
// below, the same NaN for a NaN (quietened: the load and the copy
// before the post-op quieten a signalling NaN, as the interpreter's
// conversions do). The problem is an identity over the
// inputs, so lanes, tails and the scalar path all meet specials.
func TestExpSweep(t *testing.T) {
	xs := vexp.Sweep(2053)
	if testing.Short() {
		xs = vexp.Sweep(1 << 16)
	}
	p, src := vexp.SweepProblem(xs)
	sweepISAs(t, p, src, func(got []byte) (int64, []string, int) { return vexp.CheckSweep(xs, got) })
}

// TestSumExpSweep runs the exp for sums (an unshifted log-sum-exp's
// transform) on the same sweep, one term per output, under every ISA
// this CPU has, and holds each result to vexp.CheckSum; AVX2's, which
// clamps, must also be vexp.SumModel's bits.
func TestSumExpSweep(t *testing.T) {
	xs := vexp.Sweep(2053)
	if testing.Short() {
		xs = vexp.Sweep(1 << 16)
	}
	pl, src, err := vexp.SumSweepPlan(xs)
	if err != nil {
		t.Fatal(err)
	}
	sweepPlan(t, pl, src, "x 2^-24 of e^x", func(o Options, got []byte) (int64, []string, int) {
		if o.AVX512 {
			return vexp.CheckSumSweep(xs, got)
		}
		return vexp.CheckSumModelSweep(xs, got)
	})
}

// TestExpOfZero runs both exps on 37 zeros of both signs (full vectors,
// a tail and the scalar path) under every ISA this CPU has: e^0 must be
// exactly 1 from each, not just within its contract, so that a
// log-sum-exp of [0, -Inf, ...] is exactly 0.
func TestExpOfZero(t *testing.T) {
	xs := make([]float32, 37)
	for i := range xs {
		xs[i] = float32(math.Copysign(0, float64(i%2*-2+1)))
	}
	one := func(_, got float32) (int64, bool) { return 0, math.Float32bits(got) == vexp.OneBits }
	p, src := vexp.SweepProblem(xs)
	sweepISAs(t, p, src, func(got []byte) (int64, []string, int) { return vexp.CheckSweepOf("exp", math.Exp, one, xs, got) })
	pl, src, err := vexp.SumSweepPlan(xs)
	if err != nil {
		t.Fatal(err)
	}
	sweepPlan(t, pl, src, "x 2^-24 of e^x", func(_ Options, got []byte) (int64, []string, int) {
		return vexp.CheckSweepOf("exp for sums", math.Exp, one, xs, got)
	})
}

// sweepISAs runs p, the identity problem of a sweep over src, under
// every ISA this CPU has and holds each one's output to check, which
// returns the largest error in ulps, messages for the results it
// rejects (some of them) and how many it rejects.
func sweepISAs(t *testing.T, p *plan.Problem, src []byte, check func(got []byte) (worst int64, bad []string, nbad int)) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	sweepPlan(t, pl, src, "ulp", func(_ Options, got []byte) (int64, []string, int) { return check(got) })
}

// sweepPlan is sweepISAs for the plan pl (of its stage), whose check,
// given the ISA's options, counts its errors in unit.
func sweepPlan(t *testing.T, pl *plan.Plan, src []byte, unit string, check func(o Options, got []byte) (worst int64, bad []string, nbad int)) {
	t.Helper()
	for _, isa := range isas(t) {
		k := compile(t, pl, isa.o)
		got := make([]byte, len(src))
		k.RunBlocks(pl, src, got, nil, 0)
		k.Release()
		worst, bad, nbad := check(isa.o, got)
		for _, b := range bad {
			t.Errorf("%s: %s", isa.name, b)
		}
		if nbad > 0 {
			t.Errorf("%s: %d of %d results break the contract", isa.name, nbad, len(src)/4)
		}
		t.Logf("%s: %d inputs, largest error %d %s", isa.name, len(src)/4, worst, unit)
	}
}

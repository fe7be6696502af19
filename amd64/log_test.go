package amd64

import (
	"testing"

	"github.com/gdnn/gdnn/jit/plan"
	"github.com/gdnn/gdnn/jit/vlog"
)

// TestLogSweep runs the Log post-op on a dense sweep of the f32 bit
// patterns (vlog.Sweep) under every ISA this CPU has, AVX2 included on
// an AVX-512 machine, and holds each result to vlog.Check: within
// vlog.MaxULP of float32(math.Log(x)), the specials exact, the same NaN
// for a NaN (quietened, as for the exp); and to vlog.Model bit for bit,
// which both widths follow. The problem is an identity over the inputs,
// so lanes, tails and the scalar path all meet specials.
func TestLogSweep(t *testing.T) {
	xs := vlog.Sweep(4099)
	if testing.Short() {
		xs = vlog.Sweep(1 << 16)
	}
	p, src := vlog.SweepProblem(xs)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, isa := range isas(t) {
		k := compile(t, pl, isa.o)
		got := make([]byte, len(src))
		k.RunBlocks(pl, src, got, nil, 0)
		k.Release()
		worst, bad, nbad := vlog.CheckSweep(xs, got)
		for _, b := range bad {
			t.Errorf("%s: %s", isa.name, b)
		}
		if nbad > 0 {
			t.Errorf("%s: %d of %d results break the contract", isa.name, nbad, len(xs))
		}
		if d := vlog.CheckModel(xs, got); d != "" {
			t.Errorf("%s: %s", isa.name, d)
		}
		t.Logf("%s: %d inputs, largest error %d ulp", isa.name, len(xs), worst)
	}
}

package vfn

import (
	"testing"

	"github.com/gdnn/gdnn/internal/plan"
)

// TestModelSweep runs every program's Model over a sweep of the f32 bit
// patterns (Sweep) and holds each result to Check: the algorithms
// themselves meet MaxULP, whatever the emitters do.
func TestModelSweep(t *testing.T) {
	xs := Sweep(8209)
	if testing.Short() {
		xs = Sweep(1 << 16)
	}
	for _, op := range SweepOps() {
		p, ok := For(op)
		if !ok {
			t.Fatalf("no program for %v", op)
		}
		var worst int64
		nbad := 0
		for _, x := range xs {
			got := Model(p, x)
			u, ok := Check(op, x, got)
			if !ok {
				if nbad < 5 {
					t.Errorf("%v(%v) (bits %#x) = %v, want %v", op, x, bits(x), got, plan.Eltwise(op.Kind, op.Alpha, op.Beta, x))
				}
				nbad++
				continue
			}
			worst = max(worst, u)
		}
		if nbad > 0 {
			t.Errorf("%v: %d of %d results break the contract", op, nbad, len(xs))
		}
		t.Logf("%v: %d inputs, largest error %d ulp (bound %d)", op, len(xs), worst, MaxULP(op.Kind))
	}
}

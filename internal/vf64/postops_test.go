package vf64

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/plan"
)

// TestPostOpModels holds Model, the steps the machine code takes, to
// PostOpNear for every post-op of PostOpSweep on the specials, random
// bit patterns, the exp's range and the post-ops' edges.
func TestPostOpModels(t *testing.T) {
	random, moderate := 400_000, 200_000
	if testing.Short() { // the arm64 run under qemu: a quarter of each
		random, moderate = 100_000, 50_000
	}
	xs := PostOpInputs(Inputs(rand.New(rand.NewSource(2)), random))
	for i := range moderate { // moderate values, where the functions are neither 0, 1 nor x
		xs = append(xs, (float64(i)/float64(moderate)*2-1)*40)
	}
	for _, op := range PostOpSweep() {
		worst, nbad := int64(0), 0
		for _, x := range xs {
			got := Model(op, x)
			d, ok := PostOpNear(op, x, got)
			if !ok {
				if nbad++; nbad <= 5 {
					t.Errorf("%v(%v (%#x)) = %v (%#x), want %v: %d ulps off", op, x, math.Float64bits(x), got,
						math.Float64bits(got), eltwise(op, x), d)
				}
				continue
			}
			if d <= PostOpULP(op.Kind) {
				worst = max(worst, d)
			}
		}
		t.Logf("%v: %d inputs, largest error %d ulp, %d bad", op, len(xs), worst, nbad)
	}
}

func eltwise(op plan.PostOp, x float64) float64 {
	return plan.EltwiseF64(op.Kind, op.Alpha, op.Beta, x)
}

// TestPostOpTemps: no post-op takes more than MaxTemps temporaries at
// once on AVX2 (Temps), so that a kernel holding three of its eight can
// emit each. The amd64 tests emit them under such kernels too.
func TestPostOpTemps(t *testing.T) {
	for _, op := range PostOpSweep() {
		n := Temps(op)
		t.Logf("%v: %d temporaries", op.Kind, n)
		if n > MaxTemps {
			t.Errorf("%v takes %d temporaries, more than %d", op.Kind, n, MaxTemps)
		}
	}
}

package arm64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/vf64"
)

// TestWideExpLogSweep runs the f64 Exp and Log post-ops of the native
// kernel on vf64.Inputs (the specials and random bit patterns) in NEON
// code, and holds each result to the float64 oracle within vf64.MaxULP.
func TestWideExpLogSweep(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 20_000
	}
	xs := vf64.Inputs(rand.New(rand.NewSource(64)), n)
	kerneltest.CheckWideSweep(t, targets(t), ops.Exp, xs, vf64.ExpNear)
	kerneltest.CheckWideSweep(t, targets(t), ops.Log, xs, vf64.LogNear)
}

package amd64

import (
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestLogSweep runs the Log post-op on a dense sweep of the f32 bit
// patterns (vlog.Sweep) under every ISA this CPU has, AVX2 included on
// an AVX-512 machine, and holds each result to vlog.Check: within
// vlog.MaxULP of float32(math.Log(x)), the specials exact, the same NaN
// for a NaN (quietened, as for the exp); and to vlog.Model bit for bit,
// which both widths follow. The problem is an identity over the inputs,
// so lanes, tails and the scalar path all meet specials.
func TestLogSweep(t *testing.T) {
	kerneltest.CheckLogSweep(t, targets(t), 4099, 1<<16)
}

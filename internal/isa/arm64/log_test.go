package arm64

import (
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestLogSweep runs the Log post-op on a sweep of the f32 bit patterns
// (vlog.Sweep, sparser than amd64's: this runs under qemu) and holds each
// result to vlog.Check: within vlog.MaxULP of float32(math.Log(x)), the
// specials exact, the same NaN for a NaN (quietened, as for the exp);
// and to vlog.Model bit for bit, as amd64's. The problem is an identity
// over the inputs, so lanes, tails and the scalar path all meet
// specials.
func TestLogSweep(t *testing.T) {
	kerneltest.CheckLogSweep(t, targets(t), 1<<14, 1<<17)
}

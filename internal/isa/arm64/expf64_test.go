package arm64

import (
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestWideExpLogSweep runs the f64 Exp and Log post-ops of the native
// kernel on the specials and random bit patterns in NEON code
// (kerneltest.CheckWideExpLog), fewer than amd64 as qemu runs it.
func TestWideExpLogSweep(t *testing.T) {
	kerneltest.CheckWideExpLog(t, targets(t), 100_000)
}

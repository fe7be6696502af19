package amd64

import (
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestWideExpLogSweep runs the f64 Exp and Log post-ops of the native
// kernel on the specials and random bit patterns under every ISA this
// CPU has, AVX2 included on an AVX-512 machine
// (kerneltest.CheckWideExpLog).
func TestWideExpLogSweep(t *testing.T) {
	kerneltest.CheckWideExpLog(t, targets(t), 400_000)
}

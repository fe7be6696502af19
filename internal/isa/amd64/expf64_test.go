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

// TestWidePostOpSweep runs package vf64's f64 post-ops (Sigmoid, Tanh,
// Elu, SoftPlus, Mish, GELUTanh, GELUErf) under every ISA this CPU has on the specials, the
// post-ops' edges and random inputs (kerneltest.SweepWidePostOps), held
// to plan.EltwiseF64 within vf64.PostOpNear.
func TestWidePostOpSweep(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	kerneltest.SweepWidePostOps(t, targets(t), 65, n)
}

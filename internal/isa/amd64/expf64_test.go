package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vf64"
)

// TestWideExpLogSweep runs the f64 Exp and Log post-ops of the native
// kernel on vf64.Inputs (the specials and random bit patterns) under
// every ISA this CPU has, AVX2 included on an AVX-512 machine, and holds
// each result to the float64 oracle within vf64.MaxULP.
func TestWideExpLogSweep(t *testing.T) {
	n := 400_000
	if testing.Short() {
		n = 20_000
	}
	xs := vf64.Inputs(rand.New(rand.NewSource(64)), n)
	kerneltest.CheckWideSweep(t, targets(t), plan.PostOp{Kind: ops.Exp}, xs, vf64.ExpNear)
	kerneltest.CheckWideSweep(t, targets(t), plan.PostOp{Kind: ops.Log}, xs, vf64.LogNear)
}

// TestWidePostOpSweep runs package vf64's f64 post-ops (Sigmoid, Tanh,
// Elu, SoftPlus, Mish, GELUTanh) under every ISA this CPU has on the specials, the
// post-ops' edges and random inputs (kerneltest.SweepWidePostOps), held
// to plan.EltwiseF64 within vf64.PostOpNear.
func TestWidePostOpSweep(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	kerneltest.SweepWidePostOps(t, targets(t), 65, n)
}

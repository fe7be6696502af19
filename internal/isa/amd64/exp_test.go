package amd64

import (
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
)

// TestExpSweep runs the Exp post-op on a dense sweep of the f32 bit
// patterns (vexp.Sweep) under every ISA this CPU has, AVX2 included on
// an AVX-512 machine, and holds each result to vexp.Check: within
// vexp.MaxULP of float32(math.Exp(x)), +Inf exactly on overflow, +0 far
// below, the same NaN for a NaN (quietened: the load and the copy
// before the post-op quieten a signalling NaN, as the interpreter's
// conversions do). The problem is an identity over the
// inputs, so lanes, tails and the scalar path all meet specials.
func TestExpSweep(t *testing.T) {
	kerneltest.CheckExpSweep(t, targets(t), 2053, 1<<16)
}

// TestSumExpSweep runs the exp for sums (an unshifted log-sum-exp's
// transform) on the same sweep, one term per output, under every ISA
// this CPU has, and holds each result to vexp.CheckSum; AVX2's, which
// clamps, must also be vexp.SumModel's bits.
func TestSumExpSweep(t *testing.T) {
	kerneltest.CheckSumExpSweep(t, targets(t), 2053, 1<<16, func(tg kerneltest.Target) bool { return !tg.Options.(Options).AVX512 })
}

// TestExpOfZero runs both exps on 37 zeros of both signs (full vectors,
// a tail and the scalar path) under every ISA this CPU has: e^0 must be
// exactly 1 from each, not just within its contract, so that a
// log-sum-exp of [0, -Inf, ...] is exactly 0.
func TestExpOfZero(t *testing.T) {
	kerneltest.CheckExpOfZero(t, targets(t))
}

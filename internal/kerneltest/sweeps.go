package kerneltest

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vlog"
)

// The sweeps of the exp and the log that every emitter's tests run over
// its targets. step is the sweep's spacing of f32 bit patterns
// (vexp.Sweep, vlog.Sweep), short the spacing under -short: each
// emitter's own density (package arm64's runs under qemu).

// sweepStep is step, or short under -short.
func sweepStep(step, short uint32) uint32 {
	if testing.Short() {
		return short
	}
	return step
}

// CheckExpSweep runs the Exp post-op on a sweep of the f32 bit patterns
// under each target and holds each result to vexp.Check: within
// vexp.MaxULP of float32(math.Exp(x)), +Inf exactly on overflow, +0 far
// below, the same NaN for a NaN (quietened: the load and the copy
// before the post-op quieten a signalling NaN, as the interpreter's
// conversions do). The problem is an identity over the inputs, so
// lanes, tails and the scalar path all meet specials.
func CheckExpSweep(t testing.TB, targets []Target, step, short uint32) {
	t.Helper()
	xs := vexp.Sweep(sweepStep(step, short))
	p, src := vexp.SweepProblem(xs)
	SweepProblem(t, targets, p, src, func(got []byte) (int64, []string, int) { return vexp.CheckSweep(xs, got) })
}

// CheckSumExpSweep runs the exp for sums (an unshifted log-sum-exp's
// transform) on the sweep of CheckExpSweep, one term per output, under
// each target and holds each result to vexp.CheckSum, and, where
// modelBits says so for the target, to vexp.SumModel's bits.
func CheckSumExpSweep(t testing.TB, targets []Target, step, short uint32, modelBits func(Target) bool) {
	t.Helper()
	xs := vexp.Sweep(sweepStep(step, short))
	pl, src, err := vexp.SumSweepPlan(xs)
	if err != nil {
		t.Fatal(err)
	}
	Sweep(t, targets, pl, src, "x 2^-24 of e^x", func(tg Target, got []byte) (int64, []string, int) {
		if modelBits(tg) {
			return vexp.CheckSumModelSweep(xs, got)
		}
		return vexp.CheckSumSweep(xs, got)
	})
}

// CheckExpOfZero runs both exps on 37 zeros of both signs (full vectors,
// a tail and the scalar path) under each target: e^0 must be exactly 1
// from each, not just within its contract, so that a log-sum-exp of
// [0, -Inf, ...] is exactly 0.
func CheckExpOfZero(t testing.TB, targets []Target) {
	t.Helper()
	xs := make([]float32, 37)
	for i := range xs {
		xs[i] = float32(math.Copysign(0, float64(i%2*-2+1)))
	}
	one := func(_, got float32) (int64, bool) { return 0, math.Float32bits(got) == vexp.OneBits }
	p, src := vexp.SweepProblem(xs)
	SweepProblem(t, targets, p, src, func(got []byte) (int64, []string, int) { return vexp.CheckSweepOf("exp", math.Exp, one, xs, got) })
	pl, src, err := vexp.SumSweepPlan(xs)
	if err != nil {
		t.Fatal(err)
	}
	Sweep(t, targets, pl, src, "x 2^-24 of e^x", func(_ Target, got []byte) (int64, []string, int) {
		return vexp.CheckSweepOf("exp for sums", math.Exp, one, xs, got)
	})
}

// LogSumChunk is how many f32 elements a kernel given to
// CheckLogSumSweep takes per call.
const LogSumChunk = 256

// CheckLogSumSweep holds the log of a softmax's sum of exps
// (kernelshape.NormEmitter's LogSum) to the Log post-op's contract
// (vlog.Check) and to vlog.Model's bits, on the sweep's arguments such
// a sum can be and more: the positive normal numbers, +Inf and the
// quiet NaNs (a sum is never a signalling one). k maps LogSumChunk
// elements of src to dst per call, each through the log; name says
// which code it is.
func CheckLogSumSweep(t testing.TB, name string, k *Kernel, step, short uint32) {
	t.Helper()
	var xs []float32
	for _, x := range vlog.Sweep(sweepStep(step, short)) {
		if x != x && math.Float32bits(vexp.Quiet(x)) == math.Float32bits(x) || x >= 0x1p-126 {
			xs = append(xs, x)
		}
	}
	for len(xs)%LogSumChunk != 0 {
		xs = append(xs, 1)
	}
	_, src := vlog.SweepProblem(xs)
	dst := make([]byte, len(src))
	for off := int64(0); off < int64(len(src)); off += 4 * LogSumChunk {
		k.Call(src, dst, nil, 1, off, off, nil)
	}
	worst, bad, nbad := checkLogs(xs, dst)
	report(t, name, len(xs), "ulp", worst, bad, nbad)
}

// CheckLogSweep runs the Log post-op on a sweep of the f32 bit patterns
// under each target and holds each result to vlog.Check: within
// vlog.MaxULP of float32(math.Log(x)), the specials exact, the same NaN
// for a NaN (quietened, as for the exp); and to vlog.Model bit for bit.
// The problem is an identity over the inputs, so lanes, tails and the
// scalar path all meet specials.
func CheckLogSweep(t testing.TB, targets []Target, step, short uint32) {
	t.Helper()
	xs := vlog.Sweep(sweepStep(step, short))
	p, src := vlog.SweepProblem(xs)
	SweepProblem(t, targets, p, src, func(got []byte) (int64, []string, int) { return checkLogs(xs, got) })
}

// checkLogs holds dst, a log's results for xs, to vlog.CheckSweep and
// to vlog.Model's bits.
func checkLogs(xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	worst, bad, nbad = vlog.CheckSweep(xs, dst)
	if d := vlog.CheckModel(xs, dst); d != "" {
		bad, nbad = append(bad, d), nbad+1
	}
	return worst, bad, nbad
}

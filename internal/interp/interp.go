// Package interp runs canonical reduction plans in pure Go. It is the
// fallback for every plan the JIT does not compile, the whole of gdnn
// where no machine code can run (the platforms gdnn emits no code for,
// an instruction set capped to none), and the oracle the JIT's results
// are checked against. So it is checkable first, and then at least as
// fast as a plain Go loop over the same data (reduce's
// BenchmarkInterpVsNaive): each plan is walked a row of outputs at a time,
// its elements widened to f32 a run at a time and combined by typed loops
// chosen once per call (kernel.go), never through a per-element switch,
// interface or closure.
//
// Arithmetic: each src element is widened to f32 exactly, transformed and
// combined in float64 with the plan's plan.Reduction: sums and products
// in several independent chains (each sum starting at +0 as in oneDNN
// and the JIT, so a mean of -0 values is +0); maxima and minima, which
// are exact, as the sequential fold orders them (the first NaN wins, +0
// is above -0). The result is the finalize in float64 (for the mean
// float32(sum / float64(Div))) rounded once to f32, unless the plan
// writes partials; post-ops run in order in f32 (plan.Eltwise,
// plan.Binary, operands widened to f32), over a row of results at a
// time; the result is rounded to the dst data type, ties to even.
// float64 accumulation keeps a sum of 10^8 f32 values within about 1e-8
// relative of the exact sum, well inside the final f32 rounding.
//
// Plans over f64 src compute in float64 throughout, post-ops included,
// and never round to f32 on the way (wide.go).
package interp

import (
	"fmt"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Run executes pl reading src and the binary operands bins (one per binary
// post-op, in post-op order) and writing dst. Buffers hold little-endian
// elements of the plan's data types (f32, or the uint16 bits of bf16/f16)
// and start at the plan's first element; dst must not overlap src or the
// operands. Run first checks pl and that every buffer holds the span the
// plan addresses, and returns an InvalidArguments error naming the buffer
// otherwise; it never touches memory outside the buffers. Run keeps no
// state between calls and may be called concurrently.
func Run(pl *plan.Plan, src, dst []byte, bins [][]byte) error {
	if pl == nil {
		return status.Errorf(status.InvalidArguments, "interp: nil plan")
	}
	if err := pl.Validate(); err != nil {
		return err
	}
	nb := pl.BinaryCount()
	if len(bins) != nb {
		return status.Errorf(status.InvalidArguments, "interp: %d binary operand buffers given, the plan has %d binary post-ops",
			len(bins), nb)
	}
	need, err := pl.SrcBytes()
	if err != nil {
		return err
	}
	if err := checkBuf("src", src, need); err != nil {
		return err
	}
	if need, err = pl.DstBytes(); err != nil {
		return err
	}
	if err := checkBuf("dst", dst, need); err != nil {
		return err
	}
	for i, b := range bins {
		if need, err = pl.BinBytes(i); err != nil {
			return err
		}
		if int64(len(b)) < need {
			return checkBuf(fmt.Sprintf("binary operand %d", i), b, need)
		}
	}
	if plan.IsExact(pl.SrcDT, pl.Reduction) {
		runExact(pl, src, dst)
		return nil
	}
	if plan.IsWide(pl.SrcDT) {
		runWide(pl, src, dst, bins)
		return nil
	}
	e := getExec()
	defer putExec(e)
	if e.init(pl, src, dst, bins) {
		e.run()
	}
	return nil
}

// RunProblem canonicalizes p and runs the plan; see Run.
func RunProblem(p *plan.Problem, src, dst []byte, bins [][]byte) error {
	pl, err := plan.Canonicalize(p)
	if err != nil {
		return err
	}
	return Run(pl, src, dst, bins)
}

// checkBuf reports a buffer shorter than the need bytes the plan addresses.
func checkBuf(name string, b []byte, need int64) error {
	if int64(len(b)) >= need {
		return nil
	}
	if b == nil {
		return status.Errorf(status.InvalidArguments, "interp: %s buffer is nil, needs %d bytes", name, need)
	}
	return status.Errorf(status.InvalidArguments, "interp: %s buffer has %d bytes, needs %d", name, len(b), need)
}

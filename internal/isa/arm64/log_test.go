package arm64

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
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

// TestLogSumSweep runs logSum, the log of a softmax's sum of exps
// (kernelshape.NormEmitter's LogSum), on the sweep's positive normal
// numbers, +Inf and quiet NaNs, and holds it to the Log post-op's
// contract and vlog.Model's bits, as amd64's: the steps it leaves out of
// log must change nothing there.
func TestLogSumSweep(t *testing.T) {
	needARM64(t)
	n := int64(kerneltest.LogSumChunk)
	pl, err := plan.Canonicalize(&plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{1, n}, Reduce: []bool{false, true}, SrcStrides: []int64{n, 1}, DstStrides: []int64{n, 1}})
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(pl)
	g.Prologue(0)
	for off := int64(0); off < 4*n; off += 16 {
		g.LoadSrc(0, off, 4)
		g.LogSum(0)
		g.StoreDst(0, off, 4)
	}
	g.Return()
	text, err := kernelshape.Assemble(g)
	if err != nil {
		t.Fatal(err)
	}
	k := kerneltest.Map(t, plan.Code{Text: text})
	defer k.Release()
	kerneltest.CheckLogSumSweep(t, "neon", k, 1<<14, 1<<17)
}

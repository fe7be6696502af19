package amd64

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
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

// TestLogSumSweep runs logSum, the log of a softmax's sum of exps
// (kernelshape.NormEmitter's LogSum), on the sweep's positive normal
// numbers, +Inf and quiet NaNs under every ISA this CPU has, AVX2
// included on an AVX-512 machine, and holds it to the Log post-op's
// contract and vlog.Model's bits: the steps it leaves out of log must
// change nothing there.
func TestLogSumSweep(t *testing.T) {
	for _, isa := range isas(t) {
		c := Conf{Target: isa.o.Target()}
		c.f.avx512 = isa.o.AVX512
		g := newGenConf(newAsm(), normRowsPlan(t, dtypes.F32, dtypes.F32, 1, kerneltest.LogSumChunk), c)
		g.Prologue(0)
		for off := int64(0); off < 4*kerneltest.LogSumChunk; off += 4 * int64(g.V) {
			g.LoadSrc(0, off, g.V)
			g.LogSum(0)
			g.StoreDst(0, off, g.V)
		}
		g.Return()
		text, err := kernelshape.Assemble(g)
		if err != nil {
			t.Fatalf("%s: %v", isa.name, err)
		}
		k := kerneltest.Map(t, plan.Code{Text: text})
		if isa.o.AVX512 {
			k.Count = &kerneltest.AVX512Calls
		}
		kerneltest.CheckLogSumSweep(t, isa.name, k, 4099, 1<<16)
		k.Release()
	}
}

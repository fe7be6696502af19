package amd64

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gdnn/gdnn/jit/plan"
	"github.com/gdnn/gdnn/jit/vfn"
)

// TestProgramSweep runs every post-op with a package vfn program on a
// dense sweep of the f32 bit patterns (vfn.Sweep), Elu and SoftPlus with
// several parameters (vfn.SweepOps), under every ISA this CPU has,
// AVX2 included on an AVX-512 machine, and holds each result to
// vfn.Check:
// within vfn.MaxULP of plan.Eltwise, infinities exactly, the same NaN
// for a NaN. It also counts where the machine code differs from
// vfn.Model's bits (the exp's last bit may, vexp says), and fails if
// more than one input in a thousand does.
func TestProgramSweep(t *testing.T) {
	xs := vfn.Sweep(65537)
	if testing.Short() {
		xs = vfn.Sweep(1 << 20)
	}
	for _, op := range vfn.SweepOps() {
		p, src := vfn.SweepProblem(op, xs)
		prog, _ := vfn.For(op)
		sweepISAs(t, p, src, func(got []byte) (int64, []string, int) {
			worst, bad, nbad := vfn.CheckSweep(op, xs, got)
			off := 0
			for i, x := range xs {
				y := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
				if x == x && math.Float32bits(y) != math.Float32bits(vfn.Model(prog, x)) {
					off++
				}
			}
			if off > len(xs)/1000 {
				bad = append(bad, "machine code differs from vfn.Model too often")
				nbad++
			}
			t.Logf("%v: %d of %d results differ from vfn.Model's bits", op, off, len(xs))
			return worst, bad, nbad
		})
	}
}

// TestProgramTemps runs the generator over every program on both widths
// and checks that none takes more than programTemps temporaries beside
// its input: an AVX2 kernel has six, and the epilogue may hold one.
func TestProgramTemps(t *testing.T) {
	for _, avx512 := range []bool{false, true} {
		for _, op := range vfn.SweepOps() {
			p, _ := vfn.For(op)
			g := newGen(&plan.Plan{}, Options{AVX512: avx512})
			r := g.tmp()
			g.tmpPeak = g.tmpNext
			g.program(p, r)
			if used := g.tmpPeak - g.tmpNext; g.err != nil || used > programTemps {
				t.Errorf("AVX-512 %v, %v: %d temporaries beside the input (err %v), want at most %d",
					avx512, op, used, g.err, programTemps)
			}
		}
	}
}

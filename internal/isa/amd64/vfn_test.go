package amd64

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vfn"
	"github.com/gdnn/gdnn/internal/vfn/vfntest"
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
		// vfn.Model's bits once, for every target.
		model := make([]uint32, len(xs))
		for i, x := range xs {
			if x == x {
				model[i] = math.Float32bits(vfn.Model(prog, vexp.PostOpInput(x)))
			}
		}
		kerneltest.SweepProblem(t, targets(t), p, src, func(got []byte) (int64, []string, int) {
			worst, bad, nbad := vfn.CheckSweep(op, xs, got)
			off := 0
			for i, x := range xs {
				if x == x && binary.LittleEndian.Uint32(got[4*i:]) != model[i] {
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

// TestProgramZeroSigns runs every post-op of vfn.SweepOps on zeros,
// subnormals and tiny normals of both signs (vfn.SignInputs) handed to
// it as they are, -0 included (vfn.SignProblem), under every ISA this
// CPU has, and holds each result to vfn.Check, which wants a zero with
// the reference's sign.
func TestProgramZeroSigns(t *testing.T) {
	xs := vfn.SignInputs()
	for _, op := range vfn.SweepOps() {
		p, src := vfn.SignProblem(op, xs)
		kerneltest.SweepProblem(t, targets(t), p, src, func(got []byte) (int64, []string, int) { return vfn.CheckSigns(op, xs, got) })
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
			r := g.Tmp()
			g.tmpPeak = g.tmpNext
			g.program(p, r)
			if used := g.tmpPeak - g.tmpNext; g.Err() != nil || used > programTemps {
				t.Errorf("AVX-512 %v, %v: %d temporaries beside the input (err %v), want at most %d",
					avx512, op, used, g.Err(), programTemps)
			}
		}
	}
}

// TestRandomPrograms lowers random package vfn programs (vfntest.Programs:
// fixed cases for rare lowering paths, then random steps with constants
// in every operand slot, operands read twice, long live ranges up to
// and past the temporaries) in place of a kind's own, under every ISA
// this CPU has, and holds every result to vfn.Model's bits wherever the
// model's evaluation stays inside the IR's contract (vfntest.Compare);
// a program that needs more temporaries than the kernel has must be
// refused cleanly.
func TestRandomPrograms(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	xs := vfntest.Inputs(rng, 300)
	p, src := vfn.SweepProblem(plan.PostOp{Kind: vfntest.Kind}, xs)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	var cur *vfn.Program
	programFor = func(plan.PostOp) (*vfn.Program, bool) { return cur, true }
	t.Cleanup(func() { programFor = vfn.For })
	for _, isa := range isas(t) {
		t.Run(isa.name, func(t *testing.T) {
			// Up to the temporaries (AVX2's programTemps; most of
			// AVX-512's sixteen), and a few past them.
			live := programTemps
			if isa.o.AVX512 {
				live = 15
			}
			progs := vfntest.Programs(3, n, live)
			vfntest.Check(t, xs, progs, func(prog *vfn.Program) ([]byte, error) {
				cur = prog
				return kerneltest.RunIdentity(t, pl, src, func(pl *plan.Plan) (plan.Code, error) { return Emit(pl, isa.o) })
			})
		})
	}
}

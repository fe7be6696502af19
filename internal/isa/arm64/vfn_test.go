package arm64

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vfn"
	"github.com/gdnn/gdnn/internal/vfn/vfntest"
)

// TestVFNSweep runs every post-op of package vfn (vfn.SweepOps: each kind
// with a program, Elu and SoftPlus with parameters of both signs and
// several sizes) on a sweep of the f32 bit patterns (vfn.Sweep, sparser
// than amd64's: this runs under qemu) and holds each result to
// vfn.CheckSweep: within vfn.MaxULP of plan.Eltwise, the infinities
// exact, a NaN's bits kept (quietened, as for the exp). Every non-NaN
// result must also be vfn.Model's bits: each step rounds as the model
// rounds it (FMLA is the model's single-rounding FMA, and the exp's code
// gives vexp.Model's bits: both round an FMA once, vexp.FMA32).
func TestVFNSweep(t *testing.T) {
	needARM64(t)
	step := uint32(1 << 14)
	if testing.Short() {
		step = 1 << 17
	}
	xs := vfn.Sweep(step)
	for _, op := range vfn.SweepOps() {
		t.Run(fmt.Sprintf("%v(%v,%v)", op.Kind, op.Alpha, op.Beta), func(t *testing.T) {
			prog, ok := vfn.For(op)
			if !ok {
				t.Fatalf("no program for %v", op.Kind)
			}
			p, src := vfn.SweepProblem(op, xs)
			kerneltest.SweepProblem(t, targets(t), p, src, func(got []byte) (int64, []string, int) {
				worst, bad, nbad := vfn.CheckSweep(op, xs, got)
				if d := checkVFNModel(prog, xs, got); d != "" {
					bad = append(bad, d)
					nbad++
				}
				return worst, bad, nbad
			})
		})
	}
}

// TestVFNZeroSigns runs every post-op of vfn.SweepOps on zeros,
// subnormals and tiny normals of both signs (vfn.SignInputs) handed to
// it as they are, -0 included (vfn.SignProblem), and holds each result
// to vfn.Check, which wants a zero with the reference's sign.
func TestVFNZeroSigns(t *testing.T) {
	needARM64(t)
	xs := vfn.SignInputs()
	for _, op := range vfn.SweepOps() {
		p, src := vfn.SignProblem(op, xs)
		kerneltest.SweepProblem(t, targets(t), p, src, func(got []byte) (int64, []string, int) { return vfn.CheckSigns(op, xs, got) })
	}
}

// checkVFNModel compares the results got of prog over xs with
// vfn.Model's bits for every x that is not a NaN (of the x the kernel
// sees, vexp.PostOpInput); it describes the first difference and
// counts them, or returns "".
func checkVFNModel(prog *vfn.Program, xs []float32, got []byte) string {
	n, first := 0, ""
	for i, x := range xs {
		if x != x {
			continue
		}
		x = vexp.PostOpInput(x)
		y := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
		if m := vfn.Model(prog, x); math.Float32bits(m) != math.Float32bits(y) {
			if n == 0 {
				first = fmt.Sprintf("%v(%v) (bits %#x) = %v (bits %#x), vfn.Model %v (bits %#x)", prog.Kind, x,
					math.Float32bits(x), y, math.Float32bits(y), m, math.Float32bits(m))
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d results differ from vfn.Model, first %s", n, first)
}

// TestVFNRegisters emits every vfn post-op after a binary one in every
// kernel shape (the lane-by-lane epilogue of strided dsts holds a
// temporary of its own) and dtype pair: each must fit the temporaries.
// A refusal would be clean (Unimplemented), but the runtime decides the
// post-op pass by kind (Covers.PostOp), before emitting, so such a plan
// would run wholly on the interpreter.
func TestVFNRegisters(t *testing.T) {
	for _, op := range vfn.SweepOps() {
		for _, pr := range pairs {
			for _, s := range shapes(7, pr[0], pr[1], pr[0]) {
				p := s.p
				p.PostOps = append(p.PostOps, op)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Emit(pl); err != nil {
					t.Errorf("%v %v:%v %s: %v", op, pr[0], pr[1], s.name, err)
				}
			}
		}
	}
}

// TestRandomPrograms lowers random package vfn programs (vfntest.Programs:
// fixed cases for rare lowering paths, then random steps with constants
// in every operand slot, operands read twice, long live ranges up to
// and past the temporaries, and constants past the hoisted slots) in
// place of a kind's own and holds every result to vfn.Model's bits
// wherever the model's evaluation stays inside the IR's contract
// (vfntest.Compare), the exp's included; a program that needs more
// temporaries than the kernel has must be refused cleanly.
func TestRandomPrograms(t *testing.T) {
	needARM64(t)
	n := 1500
	if testing.Short() {
		n = 500
	}
	rng := rand.New(rand.NewPCG(1, 2))
	xs := vfntest.Inputs(rng, 300)
	progs := vfntest.Programs(3, n, 9) // ten temporaries
	p, src := vfn.SweepProblem(plan.PostOp{Kind: vfntest.Kind}, xs)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	var cur *vfn.Program
	programFor = func(plan.PostOp) (*vfn.Program, bool) { return cur, true }
	t.Cleanup(func() { programFor = vfn.For })
	vfntest.Check(t, xs, progs, func(prog *vfn.Program) ([]byte, error) {
		cur = prog
		return kerneltest.RunIdentity(t, pl, src, Emit)
	})
}

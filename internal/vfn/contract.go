package vfn

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/gdnn/gdnn/internal/vlog"
)

// MaxULP returns the accuracy kind k's program is held to: within this
// many f32 ulps of plan.Eltwise for every x that is not a NaN (the
// infinities exactly, a zero with plan.Eltwise's sign; a NaN x gives
// x), for every alpha and beta the APIs accept. The tests check it over
// dense sweeps of the f32 bit patterns (Sweep: every few-thousandth
// pattern, every edge of the programs and of the exp; SignInputs for the
// zeros' signs) and for the parameters of SweepOps. The amd64
// machine code (AVX-512 and AVX2) was also run on all 2^32 patterns for
// the parameters of SweepOps (package amd64's TestProgramsExhaustive,
// run with -vfn.all; docs/RELIABILITY.md) and keeps the bound on every
// input; Mish, GELUTanh and SoftPlus reach it on a few (4, 9 and 18
// inputs), which the sweeps never met. The NEON code was run under qemu
// on a sample of the patterns that meets every sign and exponent
// (package arm64's TestProgramsExhaustive with -vfn.stride), held to
// the bound and to Model's bits, and Model on a denser one
// (TestModelExhaustive). 0 for a kind with no program.
func MaxULP(k ops.Kind) int64 {
	switch k {
	case ops.Sigmoid, ops.Tanh, ops.Elu:
		return 2
	case ops.GELUErf:
		return 4
	case ops.SoftPlus, ops.Mish, ops.GELUTanh:
		return 5
	}
	return 0
}

// Tolerance returns how many f32 ulps a test that compares machine code
// with plan.Eltwise allows in the outputs of a post-op chain: the
// bound of its last op where that is near rather than exact (an Exp, a
// Log or a kind with a program here), else 0, bit for bit. Tests put
// such an op last: an op after it could magnify the difference without
// bound (a Subtract of a close operand).
func Tolerance(postOps []plan.PostOp) int64 {
	if len(postOps) == 0 {
		return 0
	}
	switch k := postOps[len(postOps)-1].Kind; {
	case k == ops.Exp:
		return vexp.MaxULP
	case k == ops.Log:
		return vlog.MaxULP
	default:
		return MaxULP(k)
	}
}

// Near reports whether kind k's machine code may give a post-op chain
// that ends in it results Tolerance apart from the reference: Exp, Log
// and the kinds with a program.
func Near(k ops.Kind) bool { return k == ops.Exp || k == ops.Log || Has(k) }

// Sweep returns inputs for a test of the programs over the f32 bit
// patterns: vexp.Sweep(step) (the specials, the exp's edges, a dense
// sweep) and the values within 16 steps of the programs' own edges.
func Sweep(step uint32) []float32 {
	xs := vexp.Sweep(step)
	edges := []float32{f32(TanhSmallBits), f32(NegLn2Bits), MishBig, MishTail, SoftPlusTail, -SoftPlusTail, 0x1p100, -0x1p100,
		GELUClamp, -GELUClamp, GELUTail, -9.01, 9.01, -88.7, 44.4, -44.4, -104, -174,
		GELUErfClamp, -GELUErfClamp, -14.2, -13.2, 2, -2}
	for _, e := range edges {
		b := bits(e)
		for d := uint32(0); d <= 16; d++ {
			xs = append(xs, f32(b+d), f32(b-d))
		}
	}
	return xs
}

// Check holds got, a result of op for x, to op's contract: a NaN x must
// come out with the same bits, an infinity exactly, a zero where
// plan.Eltwise gives a zero with its sign, and anything else within
// MaxULP(op.Kind) of plan.Eltwise. It returns the distance.
func Check(op plan.PostOp, x, got float32) (ulps int64, ok bool) {
	if x != x {
		return 0, bits(got) == bits(x)
	}
	want := plan.Eltwise(op.Kind, op.Alpha, op.Beta, x)
	if got != got {
		return math.MaxInt64, false
	}
	if math.IsInf(float64(want), 0) || math.IsInf(float64(got), 0) {
		return 0, want == got
	}
	if want == 0 && got == 0 {
		return 0, bits(want) == bits(got)
	}
	ulps = vexp.ULPs(got, want)
	return ulps, ulps <= MaxULP(op.Kind)
}

// SweepProblem returns the identity problem over xs with the one
// post-op op, as vexp.IdentityProblem does, and its src bytes.
func SweepProblem(op plan.PostOp, xs []float32) (*plan.Problem, []byte) {
	p, src := vexp.IdentityProblem(op.Kind, xs)
	p.PostOps[0] = op
	return p, src
}

// SignProblem returns SweepProblem(op, xs) with a max over one element
// in place of the mean: it hands the post-op a -0 as -0, where the mean,
// a sum from +0, hands it +0. With SignInputs it checks the sign of
// every zero a program gives. Its src bytes come with it.
func SignProblem(op plan.PostOp, xs []float32) (*plan.Problem, []byte) {
	p, src := SweepProblem(op, xs)
	p.Reduction = plan.AlgMax.Reduction(0, 0)
	return p, src
}

// SignInputs returns the zeros, subnormals and tiny normals of both
// signs, each several times so that the vector lanes and the tail meet
// them: the inputs whose results are zeros or next to them.
func SignInputs() []float32 {
	var xs []float32
	for _, b := range []uint32{0, 1, 2, 0x7fffff, 0x800000, 0x0d800000, 0x1f800000, 0x2f800000} {
		for range 3 {
			xs = append(xs, f32(b), f32(b|1<<31))
		}
	}
	return xs
}

// CheckSweep holds dst, SweepProblem(op, xs)'s output, to Check (a
// signalling NaN quietened and -0 as +0, vexp.PostOpInput). It returns
// the largest error in ulps and up to five descriptions of results that
// break the contract, with how many did.
func CheckSweep(op plan.PostOp, xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	return checkSweep(op, xs, dst, vexp.PostOpInput)
}

// CheckSigns is CheckSweep for SignProblem(op, xs)'s output, which keeps
// a -0.
func CheckSigns(op plan.PostOp, xs []float32, dst []byte) (worst int64, bad []string, nbad int) {
	return checkSweep(op, xs, dst, vexp.Quiet)
}

// checkSweep holds dst to Check for each x of xs as in(x) reaches the post-op.
func checkSweep(op plan.PostOp, xs []float32, dst []byte, in func(float32) float32) (worst int64, bad []string, nbad int) {
	for i, x := range xs {
		y := math.Float32frombits(binary.LittleEndian.Uint32(dst[4*i:]))
		x = in(x)
		u, ok := Check(op, x, y)
		if !ok {
			if nbad < 5 {
				bad = append(bad, fmt.Sprintf("%v(%v) (bits %#x) = %v (bits %#x), want %v", op, x, bits(x),
					y, bits(y), plan.Eltwise(op.Kind, op.Alpha, op.Beta, x)))
			}
			nbad++
			continue
		}
		worst = max(worst, u)
	}
	return worst, bad, nbad
}

// SweepOps returns the post-ops the sweeps run: each kind with a
// program, Elu and SoftPlus with parameters of both signs and several
// sizes (beta 1 is the APIs' default).
func SweepOps() []plan.PostOp {
	return []plan.PostOp{
		{Kind: ops.Sigmoid}, {Kind: ops.Tanh}, {Kind: ops.Mish}, {Kind: ops.GELUTanh}, {Kind: ops.GELUErf},
		{Kind: ops.Elu, Alpha: 1}, {Kind: ops.Elu, Alpha: 0.3}, {Kind: ops.Elu, Alpha: -2.5}, {Kind: ops.Elu, Alpha: 0},
		{Kind: ops.SoftPlus, Beta: 1}, {Kind: ops.SoftPlus, Beta: 0.37}, {Kind: ops.SoftPlus, Beta: -2.5},
		{Kind: ops.SoftPlus, Beta: 1e-3}, {Kind: ops.SoftPlus, Beta: 3e5},
		{Kind: ops.SoftPlus, Beta: 1e-30}, {Kind: ops.SoftPlus, Beta: -1e-38},
	}
}

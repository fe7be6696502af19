package arm64

import (
	"math"
	"math/rand"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// Random problems and exact data for the differential tests. Nothing
// here is specific to AArch64.

// kinds are the post-op kinds the emitter supports.
var kinds = []ops.Kind{
	ops.Abs, ops.Clamp, ops.HardSigmoid, ops.HardSwish, ops.LeakyReLU, ops.ReLU, ops.Round, ops.Sqrt,
	ops.Square, ops.Add, ops.Multiply, ops.Maximum, ops.Minimum, ops.Divide, ops.Subtract, ops.Pow,
}

// vfnKinds are the post-op kinds with a program of package vfn.
var vfnKinds = []ops.Kind{ops.Sigmoid, ops.Tanh, ops.Elu, ops.SoftPlus, ops.Mish, ops.GELUTanh, ops.GELUErf}

// withTrailingNear appends an Exp post-op to p one time in eight, a Log
// one time in eight and a kind of package vfn (Elu with a random alpha,
// SoftPlus with a random nonzero beta) one time in four: always last,
// where vfn.Tolerance bounds the outputs (an op after it could magnify
// the difference without bound).
func withTrailingNear(r *rand.Rand, p *plan.Problem) *plan.Problem {
	switch r.Intn(8) {
	case 0:
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: ops.Exp})
	case 1:
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: ops.Log})
	case 2, 3:
		p.PostOps = append(p.PostOps, randomVFN(r))
	}
	return p
}

// randomVFN draws a post-op of a kind with a vfn program and random
// parameters: Elu's alpha in [-3, 3], SoftPlus's beta of either sign
// and magnitudes from 2^-10 to 2^10, never 0.
func randomVFN(r *rand.Rand) plan.PostOp {
	op := plan.PostOp{Kind: vfnKinds[r.Intn(len(vfnKinds))]}
	switch op.Kind {
	case ops.Elu:
		op.Alpha = float32(r.Intn(25)-12) / 4
	case ops.SoftPlus:
		op.Beta = float32(math.Ldexp(1+r.Float64(), r.Intn(21)-10))
		if r.Intn(3) == 0 {
			op.Beta = -op.Beta
		}
	}
	return op
}

// exactFiller fills buffers with multiples of 1/4 in [-4, 4] (every f16
// and bf16 holds them exactly): sums of up to 2^20 of them are exact in
// f32 in any order, so the kernel's summation order cannot change a bit
// and results compare exactly. Half of the zeros are -0. With specials,
// one element in rate is NaN, +Inf or -Inf.
type exactFiller struct {
	r    *rand.Rand
	rate int
}

func (f exactFiller) fill(dt dtypes.DataType, b []byte, specials bool) {
	if dt.IsInt8() {
		// Any value of the type: sums of up to 2^16 of them are exact
		// in f32. Integers have no specials.
		lo, hi := kerneltest.IntRange(dt)
		kerneltest.FillInts(f.r, dt, b, lo, hi)
		return
	}
	if dt == dtypes.S32 {
		// Only operands are s32.
		kerneltest.FillS32(f.r, b)
		return
	}
	kerneltest.FillGrid(f.r, dt, b, 4, 4, specials, f.rate)
}

// dimSizes are the interesting sizes: 0, 1, around the vector width (4),
// the row grouping limit (256 elements) and the column block (64 lanes).
var dimSizes = []int64{0, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 67}

// randomProblem draws a problem of at most maxElems src elements
// (kerneltest.RandomProblem): rank 0-5, dims of dimSizes (now and then
// 100-299), permuted and padded strides, every dtype pair (8-bit integer
// src a third of the time), up to three post-ops with scalar, full and
// partially broadcast operands.
func randomProblem(r *rand.Rand, maxElems int64) *plan.Problem {
	return kerneltest.RandomProblem(r, maxElems, problemDraw)
}

// problemDraw is randomProblem's distribution.
var problemDraw = kerneltest.ProblemDraw{
	Rank: func(r *rand.Rand) int { return r.Intn(6) },
	Dim: func(r *rand.Rand) int64 {
		d := dimSizes[r.Intn(len(dimSizes))]
		if r.Intn(25) == 0 {
			d = int64(100 + r.Intn(200))
		}
		return d
	},
	Pair: func(r *rand.Rand) [2]dtypes.DataType {
		pr := pairs[r.Intn(len(pairs))]
		if r.Intn(3) == 0 {
			pr = intPairs[r.Intn(len(intPairs))]
		}
		return pr
	},
	SrcStrides: func(r *rand.Rand, dims []int64) []int64 { return stridesFor(r, dims, r.Intn(3) == 0) },
	DstStrides: func(r *rand.Rand, kd []int64) []int64 { return stridesFor(r, kd, r.Intn(5) == 0) },
	Kinds:      kinds,
	Params: func(r *rand.Rand, op *plan.PostOp) {
		switch op.Kind {
		case ops.Clamp:
			op.Alpha = float32(r.Intn(13)-8) / 4
			op.Beta = op.Alpha + float32(r.Intn(13)-2)/4
		case ops.LeakyReLU:
			op.Alpha = float32(r.Intn(17)-8) / 8
		case ops.HardSigmoid:
			op.Alpha = float32(r.Intn(17)-8) / 8
			op.Beta = float32(r.Intn(9)-4) / 8
		case ops.Pow:
			op.Beta = ops.PowBetas[r.Intn(len(ops.PowBetas))]
		}
	},
	Layout: func(r *rand.Rand, d []int64) []int64 { return stridesFor(r, d, false) },
}

// stridesFor lays dims out in a random order (plain half of the time),
// with padding between some dims and, when padded, sometimes a
// non-unit innermost stride.
func stridesFor(r *rand.Rand, dims []int64, padded bool) []int64 {
	order := r.Perm(len(dims))
	if r.Intn(2) == 0 {
		for i := range order {
			order[i] = i
		}
	}
	st := make([]int64, len(dims))
	s := int64(1)
	if padded && r.Intn(4) == 0 {
		s = 2
	}
	// One dim in a padded layout may be padded far (past the 4 KiB of a
	// 12-bit immediate), so pointer steps and offsets need more than one
	// instruction.
	far := -1
	if padded && r.Intn(6) == 0 {
		far = r.Intn(max(len(dims), 1))
	}
	for i := len(order) - 1; i >= 0; i-- {
		d := order[i]
		st[d] = s
		ext := max(dims[d], 1)
		switch {
		case i == far:
			ext += int64(1000 + r.Intn(200))
		case padded && r.Intn(3) == 0:
			ext += int64(1 + r.Intn(3))
		}
		s *= ext
	}
	return st
}

// operandStrides draws a binary operand layout over the dst dims kd:
// a scalar, a full tensor, or broadcast over a random subset of dims.
func operandStrides(r *rand.Rand, kd []int64) []int64 {
	return kerneltest.OperandStrides(r, kd, func(d []int64) []int64 { return stridesFor(r, d, false) })
}

// newRand returns a deterministic generator.
func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

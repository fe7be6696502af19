package amd64

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// The tests' reference is kerneltest.Reference: the float64 oracle
// (internal/oracle), which walks the Problem itself (not the canonical
// plan), so that canonicalisation bugs show up too.

// dtPairs are the src:dst data type pairs kernels must handle: the float
// pairs of every emitter, and f32 -> bf16/f16, what the second stage of
// a split long reduction computes (f32 partial sums in, the user's dst
// type out).
var dtPairs = append(append([][2]dtypes.DataType(nil), kerneltest.FloatPairs...),
	[2]dtypes.DataType{dtypes.F32, dtypes.BF16}, [2]dtypes.DataType{dtypes.F32, dtypes.F16})

// int8Pairs are the pairs with integer data: 8-bit src with every dst
// type, and f32 (a split reduction's partials) into the integer types.
var int8Pairs = func() [][2]dtypes.DataType {
	out := append([][2]dtypes.DataType(nil), kerneltest.Int8SrcPairs...)
	for _, d := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32} {
		out = append(out, [2]dtypes.DataType{dtypes.F32, d})
	}
	return out
}()

// allPairs are dtPairs and int8Pairs, what the random problems draw from.
var allPairs = append(append([][2]dtypes.DataType(nil), dtPairs...), int8Pairs...)

// genKinds are the post-op kinds the emitter supports.
var genKinds = []ops.Kind{
	ops.Abs, ops.Clamp, ops.HardSigmoid, ops.HardSwish, ops.LeakyReLU, ops.ReLU, ops.Round, ops.Sqrt, ops.Square,
	ops.Pow, ops.Add, ops.Multiply, ops.Maximum, ops.Minimum, ops.Divide, ops.Subtract,
}

// layout returns strides for dims laid out outermost-first in order
// perm, with random padding (and, rarely, a non-unit innermost stride).
func layout(r *rand.Rand, dims []int64, perm []int, pad bool) []int64 {
	st := make([]int64, len(dims))
	s := int64(1)
	if pad && r.Intn(8) == 0 {
		s = int64(2 + r.Intn(2))
	}
	for i := len(perm) - 1; i >= 0; i-- {
		d := perm[i]
		st[d] = s
		ext := max(dims[d], 1)
		if pad && r.Intn(4) == 0 {
			ext += int64(1 + r.Intn(3))
		}
		s *= ext
	}
	return st
}

// randDim draws a dim size: mostly small, with vector-width edges.
func randDim(r *rand.Rand) int64 {
	switch x := r.Intn(100); {
	case x < 2:
		return 0
	case x < 20:
		return 1
	case x < 55:
		return int64(2 + r.Intn(7))
	case x < 85:
		return []int64{15, 16, 17, 31, 32, 33, 7, 8, 9, 24, 48}[r.Intn(11)]
	case x < 95:
		return int64(10 + r.Intn(60))
	default:
		// Past one register block of a column kernel (16 zmm).
		return int64(250 + r.Intn(300))
	}
}

// randProblem draws a problem of at most maxElems src elements
// (kerneltest.RandomProblem): ranks 0-6, dims of randDim, any of
// allPairs, permuted and padded layouts, post-ops of genKinds.
func randProblem(r *rand.Rand, maxElems int64) *plan.Problem {
	return kerneltest.RandomProblem(r, maxElems, problemDraw)
}

// problemDraw is randProblem's distribution.
var problemDraw = kerneltest.ProblemDraw{
	Rank: func(r *rand.Rand) int { return r.Intn(7) },
	Dim:  randDim,
	Pair: func(r *rand.Rand) [2]dtypes.DataType { return allPairs[r.Intn(len(allPairs))] },
	SrcStrides: func(r *rand.Rand, dims []int64) []int64 {
		return layout(r, dims, perm(r, len(dims)), true)
	},
	DstStrides: func(r *rand.Rand, kd []int64) []int64 {
		return layout(r, kd, perm(r, len(kd)), r.Intn(4) == 0)
	},
	Kinds: genKinds,
	Params: func(r *rand.Rand, op *plan.PostOp) {
		switch op.Kind {
		case ops.Clamp:
			op.Alpha = float32(r.Intn(9)-6) / 4
			op.Beta = op.Alpha + float32(r.Intn(12))/4
		case ops.LeakyReLU:
			op.Alpha = float32(r.Intn(9)-4) / 8
		case ops.HardSigmoid:
			op.Alpha = float32(r.Intn(9)-4) / 8
			op.Beta = float32(r.Intn(9)-4) / 8
		case ops.Pow:
			op.Beta = ops.PowBetas[r.Intn(len(ops.PowBetas))]
		}
	},
	Layout: func(r *rand.Rand, d []int64) []int64 { return layout(r, d, perm(r, len(d)), false) },
}

// binStrides draws an operand layout: scalar, full, or broadcast over a
// random subset of the kept dims.
func binStrides(r *rand.Rand, p *plan.Problem) []int64 {
	return kerneltest.OperandStrides(r, kerneltest.KeptDims(p), func(d []int64) []int64 { return problemDraw.Layout(r, d) })
}

// perm is a random permutation, identity half of the time (plain layout).
func perm(r *rand.Rand, n int) []int {
	if r.Intn(2) == 0 {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	return r.Perm(n)
}

// fillExact fills a buffer of dt with multiples of 1/8 in [-8, 8]: sums
// of up to 2^17 of them are exact in f32 whatever the order, so any
// summation order gives the same bits and results can be compared
// exactly. Zeros are -0 half the time. specials sprinkles NaN and ±Inf,
// one element in rate.
//
// 8-bit integer buffers get integers instead (fillInt8).
func fillExact(r *rand.Rand, dt dtypes.DataType, b []byte, specials bool, rate int) {
	if dt.IsInt8() {
		fillInt8(r, dt, b, []int{4, 16, 255}[r.Intn(3)])
		return
	}
	if dt == dtypes.S32 {
		// Only operands are s32.
		kerneltest.FillS32(r, b)
		return
	}
	kerneltest.FillGrid(r, dt, b, 8, 8, specials, rate)
}

// fillInt8 fills an s8 or u8 buffer with integers of magnitude at most
// lim (and within the type): sums of up to 2^16 of them, and of their
// squares for lim 16, are exact in f32 in any order. Small lim keeps
// means and sums inside the 8-bit dst range, the full range reaches
// saturation.
func fillInt8(r *rand.Rand, dt dtypes.DataType, b []byte, lim int) {
	kerneltest.FillInts(r, dt, b, -lim, lim)
}

// fillPowers fills b for products: mostly ±1, now and then ±2 or ±1/2
// (and -0 or the specials), so that every partial product is a power of
// two far from f32's range limits, exact in any order.
//
// 8-bit integers have no 1/2 and no NaN: they get ±1 (1 for u8), now
// and then 2 (one in 128: a product of 6000 stays far below f32's
// range), and zeros with specials.
func fillPowers(r *rand.Rand, dt dtypes.DataType, b []byte, specials bool) {
	if dt.IsInt8() {
		for i := range b {
			v := 1
			switch x := r.Intn(128); {
			case x == 0:
				v = 2
			case x == 1 && specials:
				v = 0
			}
			if dt == dtypes.S8 && r.Intn(2) == 0 {
				v = -v
			}
			b[i] = byte(int8(v))
		}
		return
	}
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		v := float32(1)
		switch x := r.Intn(32); {
		case x < 2:
			v = 2
		case x < 4:
			v = 0.5
		case x == 4 && specials:
			v = []float32{float32(math.NaN()), float32(math.Inf(1)), 0}[r.Intn(3)]
		}
		if r.Intn(2) == 0 {
			v = -v
		}
		dtypes.StoreF32(dt, b, i, v)
	}
}

// buffers allocates src, dst and operand buffers for p, filled.
func buffers(t testing.TB, r *rand.Rand, p *plan.Problem, specials bool) (src, dst []byte, bins [][]byte) {
	t.Helper()
	fillSrc := func(dt dtypes.DataType, b []byte) {
		switch {
		case p.Combine == plan.CombineMul:
			fillPowers(r, dt, b, specials)
		case dt.IsInt8() && p.Transform == plan.TransformSquare:
			fillInt8(r, dt, b, 16)
		default:
			fillExact(r, dt, b, specials, 200)
		}
	}
	// 0xA5: a dst sentinel, distinct from any output.
	return kerneltest.Buffers(t, p, 0xA5, fillSrc, func(dt dtypes.DataType, b []byte) { fillExact(r, dt, b, specials, 8) })
}

// withTrailingNear appends, one time in four, a post-op whose machine
// code is near rather than exact: Exp, Log or a kind with a package vfn
// program, with random parameters (see vfn.Tolerance for why last).
func withTrailingNear(r *rand.Rand, p *plan.Problem) *plan.Problem {
	if r.Intn(4) == 0 {
		p.PostOps = append(p.PostOps, randomNearOp(r))
	}
	return p
}

// randomNearOp returns Exp, Log or one of vfn's kinds, with random
// parameters where it takes them.
func randomNearOp(r *rand.Rand) plan.PostOp {
	kinds := []ops.Kind{ops.Exp, ops.Log, ops.Sigmoid, ops.Tanh, ops.Elu, ops.SoftPlus, ops.Mish, ops.GELUTanh}
	op := plan.PostOp{Kind: kinds[r.Intn(len(kinds))]}
	switch op.Kind {
	case ops.Elu:
		op.Alpha = float32(r.Intn(17)-8) / 4
	case ops.SoftPlus:
		op.Beta = []float32{1, 1, 0.5, -1, 3, -0.25}[r.Intn(6)]
	}
	return op
}

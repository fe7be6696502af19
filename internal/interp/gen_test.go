package interp

import (
	"math/rand/v2"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// Random problems for the differential tests.

// dtypePairs are the src -> dst data types kernels must handle.
var dtypePairs = [][2]dtypes.DataType{
	{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.BF16, dtypes.F32},
	{dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
	// f32 -> bf16/f16: what the second stage of a split long reduction
	// computes (f32 partial sums in, the user's dst type out).
	{dtypes.F32, dtypes.BF16}, {dtypes.F32, dtypes.F16},
}

var floatTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}

// randDims returns rank dims (sizes 0..12, mostly small, 1 often) whose
// product stays at most limit.
func randDims(r *rand.Rand, rank int, limit int64) []int64 {
	for {
		dims := make([]int64, rank)
		prod := int64(1)
		for i := range dims {
			switch x := r.IntN(100); {
			case x < 2:
				dims[i] = 0
			case x < 22:
				dims[i] = 1
			case x < 85:
				dims[i] = 2 + r.Int64N(6)
			default:
				dims[i] = 8 + r.Int64N(40)
			}
			if dims[i] > 0 {
				prod *= dims[i]
			}
		}
		if prod <= limit {
			return dims
		}
	}
}

// randLayout returns strides for dims in a random dim order, with some
// dims padded (gaps after a dim's run) so rows do not merge.
func randLayout(r *rand.Rand, dims []int64, pad bool) []int64 {
	strides := make([]int64, len(dims))
	acc := int64(1)
	for _, d := range r.Perm(len(dims)) {
		strides[d] = acc
		ext := max(dims[d], 1)
		if pad && r.IntN(4) == 0 {
			ext += 1 + r.Int64N(3)
		}
		acc *= ext
	}
	return strides
}

// randEltwise returns a unary post-op with parameters in useful ranges.
func randEltwise(r *rand.Rand) plan.PostOp {
	op := plan.PostOp{Kind: ops.Abs + ops.Kind(r.IntN(int(ops.Tanh-ops.Abs+1)))}
	switch op.Kind {
	case ops.Clamp:
		op.Alpha, op.Beta = -2*r.Float32(), 3*r.Float32()
	case ops.Elu:
		op.Alpha = 2 * r.Float32()
	case ops.HardSigmoid:
		op.Alpha, op.Beta = r.Float32(), r.Float32()
	case ops.LeakyReLU:
		op.Alpha = 2*r.Float32() - 1
	case ops.SoftPlus:
		op.Beta = []float32{1, 2, 0.5, -1}[r.IntN(4)]
	case ops.Pow:
		op.Beta = ops.PowBetas[r.IntN(len(ops.PowBetas))]
	}
	return op
}

// randBinaryStrides returns operand strides over the dst view: a scalar,
// one kept dim (per-channel), or every kept dim (full, own layout).
// Reduced dims get junk strides: they must be ignored.
func randBinaryStrides(r *rand.Rand, dims []int64, reduce []bool) []int64 {
	view := make([]int64, len(dims))
	var kept []int
	for i, d := range dims {
		view[i] = 1
		if !reduce[i] {
			view[i] = d
			kept = append(kept, i)
		}
	}
	var s []int64
	switch mode := r.IntN(3); {
	case mode == 0 || len(kept) == 0:
		s = make([]int64, len(dims))
	case mode == 1:
		s = make([]int64, len(dims))
		s[kept[r.IntN(len(kept))]] = 1
	default:
		s = randLayout(r, view, true)
	}
	for i := range s {
		if reduce[i] {
			s[i] = r.Int64N(50) - 10
		}
	}
	return s
}

// randProblem returns a random valid problem with at most limit src
// elements.
func randProblem(r *rand.Rand, limit int64, withPostOps bool) *plan.Problem {
	rank := r.IntN(7)
	p := &plan.Problem{Dims: randDims(r, rank, limit), Reduce: make([]bool, rank)}
	pair := dtypePairs[r.IntN(len(dtypePairs))]
	p.SrcDT, p.DstDT = pair[0], pair[1]
	view := make([]int64, rank)
	for i, d := range p.Dims {
		p.Reduce[i] = r.IntN(2) == 0
		view[i] = d
		if p.Reduce[i] {
			view[i] = 1
		}
	}
	p.SrcStrides = randLayout(r, p.Dims, true)
	if rank > 0 && r.IntN(10) == 0 {
		p.SrcStrides[r.IntN(rank)] = 0 // a broadcast src dim
	}
	p.DstStrides = randLayout(r, view, true)
	for i := range p.DstStrides {
		if p.Reduce[i] {
			p.DstStrides[i] = r.Int64N(50) - 10 // ignored
		}
	}
	if !withPostOps {
		return p
	}
	nb := 0
	for range r.IntN(4) {
		if nb < plan.MaxBinary && r.IntN(5) < 2 {
			nb++
			p.PostOps = append(p.PostOps, plan.PostOp{
				Kind:       ops.Add + ops.Kind(r.IntN(int(ops.Subtract-ops.Add+1))),
				BinDT:      floatTypes[r.IntN(3)],
				BinStrides: randBinaryStrides(r, p.Dims, p.Reduce),
			})
		} else {
			p.PostOps = append(p.PostOps, randEltwise(r))
		}
	}
	return p
}

// dyadic returns m * 2^-e with |m| <= 255 and e in [0, 8]: exact in bf16,
// f16 and f32, and sums of thousands of them are exact in float64, so
// the interpreter's and the oracle's sums agree bit for bit whatever the
// summation order.
func dyadic(r *rand.Rand) float32 {
	return float32(r.IntN(511)-255) / float32(int(1)<<r.IntN(9))
}

// buffer returns a buffer of exactly n bytes, misaligned by one byte when
// off is set (which sends the interpreter down its byte-decoding path).
func buffer(n int64, off bool) []byte {
	if off {
		return make([]byte, n+1)[1:]
	}
	return make([]byte, n)
}

// Package plan describes one reduction problem (with its fused post-ops)
// over concrete shapes and strides, and turns it into a canonical plan: the
// loop nest that the interpreter runs and the code emitters specialise.
// It has no run-time state: it is pure description.
package plan

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/shape"
)

// MaxRank is the largest tensor rank gdnn accepts (the graph's limit).
const MaxRank = shape.MaxRank

// Problem is a reduction over src (the mean unless Reduction says
// otherwise), followed by post-ops, written to dst. All strides are in elements, not bytes. The dst has the src's rank here
// (reduced dims have size 1 in dst; their DstStrides entry is ignored);
// dropping them for keep_dims=false is the caller's view, not the kernel's.
type Problem struct {
	Reduction
	SrcDT, DstDT dtypes.DataType
	Dims         []int64 // src dims; rank 0 is a scalar
	SrcStrides   []int64 // per src dim
	Reduce       []bool  // per src dim: true where the dim is reduced
	DstStrides   []int64 // per src dim; ignored where Reduce is true
	PostOps      []PostOp
}

// PostOp is one fused op applied to the f32 result (mean, sum, ...)
// before the final
// conversion to the dst data type.
//
// Eltwise parameters: Clamp: Alpha=min, Beta=max. Elu, LeakyReLU: Alpha.
// HardSigmoid: y = max(0, min(1, Alpha*x + Beta)). SoftPlus: Beta
// (y = log(1 + exp(Beta*x)) / Beta). Pow: Beta (y = x^Beta, one of
// ops.PowBetas). Round: nearest, ties to even.
//
// Binary ops compute result OP operand (the result is always the left
// operand). The operand is addressed over the dst index space with
// BinStrides (elements, one per src dim; 0 where it is broadcast; ignored
// where the dim is reduced), so scalar, per-channel and full broadcast are
// all the same thing.
type PostOp struct {
	Kind        ops.Kind
	Alpha, Beta float32
	BinDT       dtypes.DataType
	BinStrides  []int64
}

// Loop is one level of a canonical loop nest.
type Loop struct {
	Size       int64
	SrcStride  int64   // elements
	DstStride  int64   // elements; 0 in a reduced loop
	BinStrides []int64 // one per binary post-op, in PostOps order; 0 in a reduced loop
}

// Plan is the canonical form of a Problem: size-1 dims dropped, loops
// ordered by src stride, neighbours that are both kept or both reduced and
// contiguous in every tensor merged. It runs as
//
//	for each Outer index (outermost first):
//	  for each Inner index (if HasInner):
//	    acc = combine over the Reduced loops of transform(src), from the identity
//	    dst = convert(postops(finalize(acc)))
//
// (transform, combine, identity and finalize are the Reduction's; for the
// mean: none, +, +0 and /Div).
//
// with Inner being the kept loop that has a smaller src stride than every
// reduced loop (the vector dimension of an [O,R,I] kernel). Two problems
// with equal Keys run the same code.
type Plan struct {
	Reduction
	Stage        Stage // which parts of the alg this plan applies (0: all)
	SrcDT, DstDT dtypes.DataType
	Outer        []Loop // kept loops outside the reduction, outermost first
	Reduced      []Loop // reduced loops, outermost first
	Inner        Loop   // the kept inner run; meaningful when HasInner
	HasInner     bool
	PostOps      []PostOp // BinStrides moved into the loops; nil here
	N            int64    // elements per output: product of reduced sizes (0: an empty reduction)
	Outputs      int64    // number of dst elements written (0: nothing to do)

	// Div is what the mean's finalize divides each sum by: N (Canonicalize
	// sets it so), also in a later stage of a split reduction, whose own
	// N counts partials. Other algs and plans that SkipFinalize ignore it.
	// The runtime splits long reductions into a stage that writes f32
	// partial results (SkipFinalize) and a stage that combines the
	// partials in a fixed order and finalizes (SkipTransform). The division is a true division, never a multiplication by
	// 1/N: the JIT kernels divide the f32 sum by f32(Div), as oneDNN does;
	// the interpreter divides its float64 sum and rounds once to f32.
	Div int64
}

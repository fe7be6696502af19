package graph

import "fmt"

// NormalizeAxes checks the reduction axes of op for a src of the given
// rank and returns which dims are reduced. Negative axes count from the
// end; the range is [-rank, rank-1]; an axis named twice (after
// normalisation) is an error. Empty axes reduce nothing (identity).
func NormalizeAxes(op *Op, axes []int64, rank int) ([]bool, error) {
	reduce := make([]bool, max(rank, 0))
	for i, a := range axes {
		n := a
		if n < 0 {
			n += int64(rank)
		}
		if rank <= 0 {
			return nil, Errorf(InvalidArguments, "%s: axes[%d] = %d, but %s is a scalar (rank 0): it has no dims to reduce, so its axes must be empty",
				op, i, a, srcName(op))
		}
		if n < 0 || n >= int64(rank) {
			return nil, Errorf(InvalidArguments, "%s: axes[%d] = %d is out of range [%d, %d] for %s of rank %d",
				op, i, a, -rank, rank-1, srcName(op), rank)
		}
		if reduce[n] {
			return nil, Errorf(InvalidArguments, "%s: axes[%d] = %d names dim %d twice (axes %v)", op, i, a, n, axes)
		}
		reduce[n] = true
	}
	return reduce, nil
}

// srcName names op's src tensor for a message ("the src" when op has
// none).
func srcName(op *Op) string {
	if op == nil || len(op.Inputs) == 0 {
		return "the src"
	}
	return fmt.Sprintf("src tensor %d", op.Inputs[0].ID)
}

// ReduceDims returns the dst dims of a reduction of src over the dims
// marked in reduce: 1 there with keepDims, dropped otherwise. Dims past
// the end of reduce are kept.
func ReduceDims(src []int64, reduce []bool, keepDims bool) []int64 {
	out := make([]int64, 0, len(src))
	for i, d := range src {
		switch {
		case i >= len(reduce) || !reduce[i]:
			out = append(out, d)
		case keepDims:
			out = append(out, 1)
		}
	}
	return out
}

// ReduceAxesAttr returns the axes of a reduction op that has them as an
// attribute (or neither an attribute nor an axes input: the default, empty
// axes), and false when the axes come from an input tensor. Setting both is
// an error.
func ReduceAxesAttr(op *Op) ([]int64, bool, error) {
	hasInput := len(op.Inputs) == 2
	if op.HasAttr("axes") && hasInput {
		a, _ := op.Attr("axes")
		return nil, false, Errorf(InvalidGraphOp, "%s: axes are given twice: attribute axes=%s and input tensor %d; set exactly one",
			op, a, op.Inputs[1].ID)
	}
	if hasInput {
		return nil, false, nil
	}
	axes, _ := op.Ints("axes")
	return axes, true, nil
}

// inferReduce infers the dst dims of a Reduce* op.
func inferReduce(op *Op, in []LogicalTensor) ([][]int64, error) {
	src := in[0]
	keep, _ := op.Bool("keep_dims")
	axes, fromAttr, err := ReduceAxesAttr(op)
	if err != nil {
		return nil, err
	}
	if !fromAttr {
		ax := in[1]
		if len(ax.Dims) > 1 {
			return nil, Errorf(InvalidShape, "%s: axes tensor %d has rank %d, want a 1-D tensor (or rank 0: one axis)", op, ax.ID, len(ax.Dims))
		}
		if ax.KnownDims() && src.Dims != nil && ax.NumElements() > int64(len(src.Dims)) {
			return nil, Errorf(InvalidShape, "%s: axes tensor %d holds %d axes but src tensor %d has rank %d",
				op, ax.ID, ax.NumElements(), src.ID, len(src.Dims))
		}
	}
	if src.Dims == nil {
		return [][]int64{nil}, nil
	}
	if fromAttr {
		reduce, err := NormalizeAxes(op, axes, len(src.Dims))
		if err != nil {
			return nil, err
		}
		return [][]int64{ReduceDims(src.Dims, reduce, keep)}, nil
	}
	// Axes arrive at execute time: the rank is known when keep_dims is set
	// or the number of axes is; which dims shrink is not.
	if keep {
		out := make([]int64, len(src.Dims))
		for i, d := range src.Dims {
			out[i] = UnknownDim
			if d == 1 {
				out[i] = 1
			}
		}
		return [][]int64{out}, nil
	}
	ax := in[1]
	if !ax.KnownDims() {
		return [][]int64{nil}, nil
	}
	out := make([]int64, len(src.Dims)-int(ax.NumElements()))
	for i := range out {
		out[i] = UnknownDim
	}
	return [][]int64{out}, nil
}

package graph

import "github.com/gdnn/gdnn/internal/shape"

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
		reduce, err := shape.NormalizeAxes(op, op.Inputs[0].ID, axes, len(src.Dims))
		if err != nil {
			return nil, err
		}
		return [][]int64{shape.ReduceDims(src.Dims, reduce, keep)}, nil
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

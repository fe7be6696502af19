// Package shape is the dims and axes arithmetic that graph's shape
// inference, partition's compile and execute, and gdnnbench share: which
// dims a reduction's axes name, the dims it leaves, and how dims a user gave
// merge with the dims an op computes. It imports nothing of gdnn but
// internal/status; ops appear only as the fmt.Stringer that names them in
// messages.
package shape

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// UnknownDim marks a dimension whose size is not known yet (graph.UnknownDim).
const UnknownDim int64 = -1

// MaxRank is the largest tensor rank gdnn accepts (graph.MaxRank).
const MaxRank = 12

// DimsString formats dims (or strides) as benchdnn does ("2x16x3x4"; "?"
// for UnknownDim and for oneDNN 3.x's unknown value -2^63, "scalar" for
// rank 0, "unknown-rank" for nil). Other negative values, which no valid
// tensor has, are printed as they are, so that a message shows them.
func DimsString(d []int64) string {
	if d == nil {
		return "unknown-rank"
	}
	if len(d) == 0 {
		return "scalar"
	}
	parts := make([]string, len(d))
	for i, v := range d {
		if v == UnknownDim || v == math.MinInt64 {
			parts[i] = "?"
		} else {
			parts[i] = strconv.FormatInt(v, 10)
		}
	}
	return strings.Join(parts, "x")
}

// NormalizeAxes checks the reduction axes of op, whose src tensor src has
// the given rank, and returns which dims are reduced. Negative axes count
// from the end; the range is [-rank, rank-1]; an axis named twice (after
// normalisation) is an error. Empty axes reduce nothing (identity).
func NormalizeAxes(op fmt.Stringer, src uint64, axes []int64, rank int) ([]bool, error) {
	reduce := make([]bool, max(rank, 0))
	for i, a := range axes {
		n := a
		if n < 0 {
			n += int64(rank)
		}
		if rank <= 0 {
			return nil, status.Errorf(status.InvalidArguments, "%s: axes[%d] = %d, but src tensor %d is a scalar (rank 0): it has no dims to reduce, so its axes must be empty",
				op, i, a, src)
		}
		if n < 0 || n >= int64(rank) {
			return nil, status.Errorf(status.InvalidArguments, "%s: axes[%d] = %d is out of range [%d, %d] for src tensor %d of rank %d",
				op, i, a, -rank, rank-1, src, rank)
		}
		if reduce[n] {
			return nil, status.Errorf(status.InvalidArguments, "%s: axes[%d] = %d names dim %d twice (axes %v)", op, i, a, n, axes)
		}
		reduce[n] = true
	}
	return reduce, nil
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

// MergeDims combines the dims a user gave for tensor tid, an output of op,
// with the dims inferred for it: each known value must agree; an unknown
// one takes the other's value.
func MergeDims(op fmt.Stringer, tid uint64, given, inferred []int64) ([]int64, error) {
	switch {
	case inferred == nil:
		return cloneDims(given), nil
	case given == nil:
		return cloneDims(inferred), nil
	case len(given) != len(inferred):
		return nil, status.Errorf(status.InvalidShape, "%s: output tensor %d is given as %s (rank %d) but the op computes %s (rank %d)",
			op, tid, DimsString(given), len(given), DimsString(inferred), len(inferred))
	}
	out := make([]int64, len(given))
	for i := range given {
		a, b := given[i], inferred[i]
		switch {
		case a < 0:
			out[i] = b
		case b < 0 || a == b:
			out[i] = a
		default:
			return nil, status.Errorf(status.InvalidShape, "%s: output tensor %d is given as %s but the op computes %s (dim %d: %d vs %d)",
				op, tid, DimsString(given), DimsString(inferred), i, a, b)
		}
	}
	return out, nil
}

// cloneDims copies dims keeping the nil (unknown rank) / empty (scalar)
// distinction.
func cloneDims(d []int64) []int64 {
	if d == nil {
		return nil
	}
	return append(make([]int64, 0, len(d)), d...)
}

// Package norm is gdnn's reference executor for the normalization ops:
// SoftMax, LogSoftmax, LayerNorm, RMSNorm and GroupNorm. It is pure Go,
// computes every row's statistics and results in float64 from the
// tensors' own strides, and rounds each result once to f32 and then to the
// dst type (ties to even, dtypes.StoreF32), so it is both what runs where
// no machine code does and the executor whose rules the README's
// Semantics section states.
//
// A problem is split into rows: the elements one set of statistics covers
// (the softmax axis; LayerNorm's and RMSNorm's dims from begin_norm_axis
// on; one group of channels with every spatial dim for GroupNorm). Rows
// are independent and each is computed in one fixed order, so results
// are bit-identical for any thread count.
//
// The rules that decide whether a problem has a meaning (axis ranges,
// epsilon, groups) live here too, so that the graph API and package
// reduce refuse the same things with the same words.
package norm

import (
	"fmt"
	"math"
)

// Kind is what a problem computes.
type Kind uint8

// The kinds.
const (
	Softmax    Kind = iota + 1 // exp(x - max) / sum exp(x - max) over the axis
	LogSoftmax                 // x - max - log(sum exp(x - max)) over the axis
	LayerNorm                  // (x - mean) / sqrt(var + eps) [* gamma + beta] over the trailing dims
	RMSNorm                    // x / sqrt(mean(x²) + eps) [* gamma] over the trailing dims
	GroupNorm                  // LayerNorm's formula over each group of channels and the spatial dims
)

var kindNames = [...]string{Softmax: "SoftMax", LogSoftmax: "LogSoftmax", LayerNorm: "LayerNorm", RMSNorm: "RMSNorm", GroupNorm: "GroupNorm"}

// String returns oneDNN Graph's op name of the kind.
func (k Kind) String() string {
	if k >= Softmax && k <= GroupNorm {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// HasStats reports whether the kind can write mean and variance outputs.
func (k Kind) HasStats() bool { return k == LayerNorm || k == GroupNorm }

// HasEpsilon reports whether the kind takes an epsilon.
func (k Kind) HasEpsilon() bool { return k >= LayerNorm }

// EpsilonProblem says why eps is not an epsilon a normalization can add
// to a variance, or "": it must be finite and non-negative (NaN would
// make every result NaN, a negative one can make the root of a zero
// variance NaN, +Inf every result 0).
func EpsilonProblem(eps float32) string {
	switch {
	case eps != eps:
		return "epsilon is NaN; want a finite value >= 0"
	case math.IsInf(float64(eps), 0):
		return fmt.Sprintf("epsilon is %v; want a finite value >= 0", eps)
	case eps < 0:
		return fmt.Sprintf("epsilon is %v (negative); want a finite value >= 0", eps)
	}
	return ""
}

// AxisIn returns axis counted from the front of a tensor of the given
// rank: negative axes count from the end, the range is [-rank, rank-1].
// ok is false outside it (always for rank 0).
func AxisIn(axis int64, rank int) (int, bool) {
	if axis < 0 {
		axis += int64(rank)
	}
	if axis < 0 || axis >= int64(rank) {
		return 0, false
	}
	return int(axis), true
}

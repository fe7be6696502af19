package graph

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/norm"
)

// The normalization ops, with oneDNN Graph's schemas and attribute names:
//
//	SoftMax     axis (default 1), mode ("none", the default, or "inf_as_zero")
//	LogSoftmax  axis (default -1)
//	LayerNorm   begin_norm_axis (-1), use_affine (true), keep_stats (true), epsilon (1e-5)
//	RMSNorm     begin_norm_axis (-1), use_affine (true), epsilon (1e-5)
//	GroupNorm   groups (required), use_affine (true), keep_stats (true), epsilon (1e-5),
//	            data_format ("NXC", the default: channels last; or "NCX")
//
// Inputs are src, then gamma and beta where use_affine is true (RMSNorm
// has gamma only); outputs are dst, then mean and variance where
// keep_stats is true, or SoftMax's optional stats: per row, max +
// log(sum(exp(x - max))), dims src's with the axis 1. gamma and beta
// hold one value per element of the normalized dims (LayerNorm's and
// RMSNorm's dims from begin_norm_axis on), or per channel (GroupNorm).
// Data types: src, dst, gamma and beta f32, bf16 or f16 (each its own),
// mean, variance and stats f32.

func init() {
	epsilon := attrSpec{name: "epsilon", typ: AttrF32, def: def(Attr{Type: AttrF32, F: 1e-5})}
	useAffine := attrSpec{name: "use_affine", typ: AttrBool, def: def(Attr{Type: AttrBool, B: true})}
	keepStats := attrSpec{name: "keep_stats", typ: AttrBool, def: def(Attr{Type: AttrBool, B: true})}
	beginNorm := attrSpec{name: "begin_norm_axis", typ: AttrS64, def: def(Attr{Type: AttrS64, I: -1})}
	schemas[SoftMax] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 2, strictAttrs: true,
		attrs: []attrSpec{
			{name: "axis", typ: AttrS64, def: def(Attr{Type: AttrS64, I: 1})},
			{name: "mode", typ: AttrString, def: def(Attr{Type: AttrString, S: "none"})},
		}, values: normValues, types: normTypes, infer: inferNorm}
	schemas[LogSoftmax] = &schema{minIn: 1, maxIn: 1, minOut: 1, maxOut: 1, strictAttrs: true,
		attrs:  []attrSpec{{name: "axis", typ: AttrS64, def: def(Attr{Type: AttrS64, I: -1})}},
		values: normValues, types: normTypes, infer: inferNorm}
	schemas[LayerNorm] = &schema{minIn: 1, maxIn: 3, minOut: 1, maxOut: 3, strictAttrs: true,
		attrs:  []attrSpec{keepStats, beginNorm, useAffine, epsilon},
		values: normValues, types: normTypes, infer: inferNorm}
	schemas[RMSNorm] = &schema{minIn: 1, maxIn: 2, minOut: 1, maxOut: 1, strictAttrs: true,
		attrs:  []attrSpec{beginNorm, useAffine, epsilon},
		values: normValues, types: normTypes, infer: inferNorm}
	schemas[GroupNorm] = &schema{minIn: 1, maxIn: 3, minOut: 1, maxOut: 3, strictAttrs: true,
		attrs: []attrSpec{
			{name: "groups", typ: AttrS64, required: true},
			keepStats, useAffine, epsilon,
			{name: "data_format", typ: AttrString, def: def(Attr{Type: AttrString, S: "NXC"})},
		}, values: normValues, types: normTypes, infer: inferNorm}
}

// normKinds maps the graph's normalization op kinds to the executor's.
var normKinds = map[OpKind]norm.Kind{
	SoftMax: norm.Softmax, LogSoftmax: norm.LogSoftmax, LayerNorm: norm.LayerNorm, RMSNorm: norm.RMSNorm, GroupNorm: norm.GroupNorm,
}

// normValues checks what the attributes alone decide: the mode, epsilon,
// groups, data_format, and that the inputs and outputs are those
// use_affine and keep_stats call for.
func normValues(op *Op) error {
	k := normKinds[op.Kind]
	if op.Kind == SoftMax {
		if mode, _ := op.Str("mode"); mode != "none" && mode != "inf_as_zero" {
			return Errorf(InvalidGraphOp, "%s: mode %q, want \"none\" or \"inf_as_zero\"", op, mode)
		}
	}
	if k.HasEpsilon() {
		eps, _ := op.Float("epsilon")
		if msg := norm.EpsilonProblem(eps); msg != "" {
			return Errorf(InvalidGraphOp, "%s: %s", op, msg)
		}
		affine, _ := op.Bool("use_affine")
		want := 1
		if affine {
			want = 3
			if k == norm.RMSNorm {
				want = 2
			}
		}
		if n := len(op.Inputs); n != want {
			what := "src only"
			switch {
			case affine && k == norm.RMSNorm:
				what = "src and gamma"
			case affine:
				what = "src, gamma and beta"
			}
			return Errorf(InvalidGraphOp, "%s: has %d inputs; with use_affine %v it takes %d (%s)", op, n, affine, want, what)
		}
	}
	if k.HasStats() {
		keep, _ := op.Bool("keep_stats")
		want, what := 1, "dst only"
		if keep {
			want, what = 3, "dst, mean and variance"
		}
		if n := len(op.Outputs); n != want {
			return Errorf(InvalidGraphOp, "%s: has %d outputs; with keep_stats %v (true is the default) it gives %d (%s)", op, n, keep, want, what)
		}
	}
	if k == norm.GroupNorm {
		groups, _ := op.Int("groups")
		if msg := norm.GroupsProblem(groups, -1); msg != "" {
			return Errorf(InvalidGraphOp, "%s: %s", op, msg)
		}
		if f, _ := op.Str("data_format"); f != "NXC" && f != "NCX" {
			return Errorf(InvalidGraphOp, "%s: data_format %q, want \"NXC\" (channels last) or \"NCX\" (channels second)", op, f)
		}
	}
	return nil
}

// normTypes: src, dst, gamma and beta f32, bf16 or f16, each its own
// (gdnn computes in float64 and rounds once to dst); mean, variance and
// stats f32, as oneDNN Graph keeps statistics.
func normTypes(op *Op) error {
	names := []string{"src", "gamma", "beta"}
	for i, t := range op.Inputs {
		if !t.DataType.IsFloat() {
			return Errorf(InvalidDataType, "%s: %s tensor %d is %s, want f32, bf16 or f16", op, names[i], t.ID, t.DataType)
		}
	}
	for i, t := range op.Outputs {
		switch {
		case i == 0 && !t.DataType.IsFloat():
			return Errorf(InvalidDataType, "%s: output tensor %d is %s, want f32, bf16 or f16", op, t.ID, t.DataType)
		case i > 0 && t.DataType != dtypes.F32:
			name := []string{"", "mean", "variance"}[i]
			if op.Kind == SoftMax {
				name = "stats"
			}
			return Errorf(InvalidDataType, "%s: %s tensor %d is %s, want f32", op, name, t.ID, t.DataType)
		}
	}
	return nil
}

// normAxis returns the dim a normalization op's rows are laid out from,
// counted from the front of its src of the given rank: the softmax axis,
// begin_norm_axis, or GroupNorm's channel dim (1 for data_format NCX,
// the last for NXC). It is an InvalidArguments error when out of range.
func normAxis(op *Op, rank int) (int, error) {
	var a int64
	name := "axis"
	switch op.Kind {
	case SoftMax, LogSoftmax:
		a, _ = op.Int("axis")
	case LayerNorm, RMSNorm:
		a, _ = op.Int("begin_norm_axis")
		name = "begin_norm_axis"
	case GroupNorm:
		if rank < 2 {
			return 0, Errorf(InvalidShape, "%s: src has rank %d; GroupNorm takes a batch and a channel dim at least", op, rank)
		}
		if f, _ := op.Str("data_format"); f == "NCX" {
			return 1, nil
		}
		return rank - 1, nil
	default:
		return 0, Errorf(InvalidArguments, "%s: not a normalization op", op)
	}
	ax, ok := norm.AxisIn(a, rank)
	if !ok {
		return 0, Errorf(InvalidArguments, "%s: %s %d is out of range [%d, %d] for src of rank %d", op, name, a, -rank, rank-1, rank)
	}
	return ax, nil
}

// inferNorm gives dst the src's dims and mean and variance the dims
// before the normalized ones (LayerNorm) or [N, groups] (GroupNorm),
// SoftMax's stats src's with the axis 1,
// checking the axis, the groups against the channels and gamma and beta
// against the dims they scale, where the dims are known.
func inferNorm(op *Op, in []LogicalTensor) ([][]int64, error) {
	src := in[0]
	out := make([][]int64, len(op.Outputs))
	out[0] = cloneDims(src.Dims)
	if src.Dims == nil {
		return out, nil
	}
	rank := len(src.Dims)
	axis, err := normAxis(op, rank)
	if err != nil {
		return nil, err
	}
	k := normKinds[op.Kind]
	groups, _ := op.Int("groups")
	if k == norm.GroupNorm {
		if c := src.Dims[axis]; c >= 0 {
			if msg := norm.GroupsProblem(groups, c); msg != "" {
				return nil, Errorf(InvalidShape, "%s: src tensor %d (%s): %s", op, src.ID, DimsString(src.Dims), msg)
			}
		}
	}
	params := norm.ParamDims(k, src.Dims, axis)
	for i, t := range in[1:] {
		name := []string{"gamma", "beta"}[i]
		if t.Dims == nil {
			continue
		}
		if !sameKnownDims(t.Dims, params) {
			per := "per element of the normalized dims"
			if k == norm.GroupNorm {
				per = "per channel"
			}
			return nil, Errorf(InvalidShape, "%s: %s tensor %d has dims %s; src %s wants %s (%s)",
				op, name, t.ID, DimsString(t.Dims), DimsString(src.Dims), DimsString(params), per)
		}
	}
	for i := 1; i < len(out); i++ {
		out[i] = norm.StatsDims(k, src.Dims, axis, groups)
	}
	return out, nil
}

// sameKnownDims reports whether a and b have the same rank and agree
// wherever both dims are known.
func sameKnownDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 && a[i] != b[i] {
			return false
		}
	}
	return true
}

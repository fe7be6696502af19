package graph

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
)

// Dequantize and Quantize follow oneDNN Graph's op definitions:
//
//	Dequantize: dst = (src - zp) * scale        src s8 or u8, dst f32
//	Quantize:   dst = saturate(round(src / scale + zp))   src f32, dst s8 or u8
//
// with round to nearest even (dtypes.F32ToS8, F32ToU8), computed in f32.
// Attributes, as in oneDNN Graph:
//
//	qtype   string  "per_tensor" (default) or "per_channel"
//	axis    s64     the channel dim for per_channel, in [-r, r-1]; default 1
//	scales  f32[]   required: one scale, or one per channel
//	zps     s64[]   one zero point, or one per channel; default all 0
//
// Where oneDNN Graph leaves room, gdnn decides: zps has the length of
// scales or is absent (all zero); scales are finite, and non-zero for
// Quantize (which divides by them); zero points fit in s32 (oneDNN keeps
// them as int32), so that (x - zp) is exact in f32 for 8-bit x. The
// per_group qtype of newer oneDNN versions is Unimplemented.
var quantAttrs = []attrSpec{
	{name: "qtype", typ: AttrString, def: def(Attr{Type: AttrString, S: "per_tensor"})},
	{name: "axis", typ: AttrS64, def: def(Attr{Type: AttrS64, I: 1})},
	{name: "scales", typ: AttrF32s, required: true},
	{name: "zps", typ: AttrS64s},
}

// QuantParams are the checked quantization attributes of a Dequantize or
// Quantize op.
type QuantParams struct {
	PerChannel bool
	// Axis is the channel dim, normalized to [0, rank); meaningful when
	// PerChannel.
	Axis int
	// Scales and Zps have one entry per channel (one for per_tensor);
	// Zps is all zero where the op gives none.
	Scales []float32
	Zps    []int64
}

// QuantParamsOf reads and checks op's quantization attributes for a
// tensor of rank rank (its src; the dims are checked against the channel
// count by shape inference).
func QuantParamsOf(op *Op, rank int) (QuantParams, error) {
	var q QuantParams
	if op == nil || op.Kind != Dequantize && op.Kind != Quantize {
		return q, Errorf(InvalidArguments, "QuantParamsOf: %s is not a Dequantize or Quantize op", op)
	}
	switch qt, _ := op.Str("qtype"); qt {
	case "per_tensor":
	case "per_channel":
		q.PerChannel = true
	case "per_group":
		return q, Errorf(Unimplemented, "%s: qtype per_group is a oneDNN qtype that gdnn does not implement", op)
	default:
		return q, Errorf(InvalidGraphOp, "%s: qtype %q, want per_tensor or per_channel", op, qt)
	}
	scales, _ := op.attrOrDefault("scales")
	q.Scales = append([]float32(nil), scales.Fs...)
	zps, hasZps := op.Attr("zps")
	switch {
	case len(q.Scales) == 0:
		return q, Errorf(InvalidGraphOp, "%s: scales is empty; give one scale per tensor or per channel", op)
	case !q.PerChannel && len(q.Scales) != 1:
		return q, Errorf(InvalidGraphOp, "%s: qtype per_tensor takes one scale, scales holds %d", op, len(q.Scales))
	case hasZps && len(zps.Is) != len(q.Scales):
		return q, Errorf(InvalidGraphOp, "%s: zps holds %d zero points and scales %d; give one per scale (or no zps: all 0)",
			op, len(zps.Is), len(q.Scales))
	}
	for i, s := range q.Scales {
		f := float64(s)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return q, Errorf(InvalidGraphOp, "%s: scales[%d] is %v; scales must be finite", op, i, s)
		case s == 0 && op.Kind == Quantize:
			return q, Errorf(InvalidGraphOp, "%s: scales[%d] is 0; Quantize divides by its scales", op, i)
		}
	}
	q.Zps = make([]int64, len(q.Scales))
	if hasZps {
		for i, z := range zps.Is {
			if z < math.MinInt32 || z > math.MaxInt32 {
				return q, Errorf(InvalidGraphOp, "%s: zps[%d] is %d, outside the s32 range", op, i, z)
			}
		}
		copy(q.Zps, zps.Is)
	}
	if q.PerChannel {
		ax, _ := op.Int("axis")
		if ax < -int64(rank) || ax >= int64(rank) {
			return q, Errorf(InvalidGraphOp, "%s: axis %d is out of range [%d, %d] for a rank-%d src", op, ax, -rank, rank-1, rank)
		}
		if ax < 0 {
			ax += int64(rank)
		}
		q.Axis = int(ax)
	}
	return q, nil
}

// quantTypes checks the data types and, where the src rank is known, the
// attributes (inferQuant checks the channel count against the dims).
func quantTypes(op *Op) error {
	src, dst := op.Inputs[0], op.Outputs[0]
	if op.Kind == Dequantize {
		if !src.DataType.IsInt8() {
			return Errorf(InvalidDataType, "%s: src tensor %d is %s, want s8 or u8", op, src.ID, src.DataType)
		}
		if dst.DataType != dtypes.F32 {
			return Errorf(InvalidDataType, "%s: dst tensor %d is %s, want f32", op, dst.ID, dst.DataType)
		}
	} else {
		if src.DataType != dtypes.F32 {
			return Errorf(InvalidDataType, "%s: src tensor %d is %s, want f32", op, src.ID, src.DataType)
		}
		if !dst.DataType.IsInt8() {
			return Errorf(InvalidDataType, "%s: dst tensor %d is %s, want s8 or u8", op, dst.ID, dst.DataType)
		}
	}
	rank := 1 << 16 // unknown rank: check all but the axis range
	if src.Dims != nil {
		rank = len(src.Dims)
	}
	_, err := QuantParamsOf(op, rank)
	return err
}

// inferQuant gives dst the src's dims, and checks that a per-channel op
// has one scale per element of its channel dim.
func inferQuant(op *Op, in []LogicalTensor) ([][]int64, error) {
	src := in[0]
	if src.Dims == nil {
		return [][]int64{nil}, nil
	}
	q, err := QuantParamsOf(op, len(src.Dims))
	if err != nil {
		return nil, err
	}
	if q.PerChannel {
		if c := src.Dims[q.Axis]; c >= 0 && c != int64(len(q.Scales)) {
			return nil, Errorf(InvalidShape, "%s: per_channel on axis %d of src tensor %d (%s) needs %d scales, scales holds %d",
				op, q.Axis, src.ID, DimsString(src.Dims), c, len(q.Scales))
		}
	}
	return [][]int64{cloneDims(src.Dims)}, nil
}

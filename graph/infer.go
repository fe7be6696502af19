package graph

import "github.com/gdnn/gdnn/internal/shape"

// inferSame gives the first output the first input's dims (eltwise ops,
// TypeCast, Reorder).
func inferSame(op *Op, in []LogicalTensor) ([][]int64, error) {
	out := make([][]int64, len(op.Outputs))
	out[0] = cloneDims(in[0].Dims)
	for i := 1; i < len(out); i++ {
		out[i] = cloneDims(op.Outputs[i].Dims)
	}
	return out, nil
}

// broadcastDims returns the numpy-style broadcast of a and b: right
// aligned, each pair equal or one of them 1. Unknown dims stay unknown
// unless the other side decides them.
func broadcastDims(op *Op, a, b LogicalTensor) ([]int64, error) {
	if a.Dims == nil || b.Dims == nil {
		return nil, nil
	}
	n := max(len(a.Dims), len(b.Dims))
	out := make([]int64, n)
	for i := range n {
		x, y := int64(1), int64(1)
		if j := i - (n - len(a.Dims)); j >= 0 {
			x = a.Dims[j]
		}
		if j := i - (n - len(b.Dims)); j >= 0 {
			y = b.Dims[j]
		}
		switch {
		case x == y:
			out[i] = x
		case x == 1:
			out[i] = y
		case y == 1:
			out[i] = x
		case x < 0 && y < 0:
			out[i] = UnknownDim
		case x < 0:
			out[i] = y
		case y < 0:
			out[i] = x
		default:
			return nil, Errorf(InvalidShape, "%s: tensors %d (%s) and %d (%s) do not broadcast: %d vs %d at output dim %d",
				op, a.ID, DimsString(a.Dims), b.ID, DimsString(b.Dims), x, y, i)
		}
	}
	return out, nil
}

func inferBroadcast(op *Op, in []LogicalTensor) ([][]int64, error) {
	mode, _ := op.Str("auto_broadcast")
	switch mode {
	case "numpy":
		d, err := broadcastDims(op, in[0], in[1])
		return [][]int64{d}, err
	case "none":
		a, b := in[0], in[1]
		if a.KnownDims() && b.KnownDims() && DimsString(a.Dims) != DimsString(b.Dims) {
			return nil, Errorf(InvalidShape, "%s: auto_broadcast=none but tensors %d (%s) and %d (%s) differ",
				op, a.ID, DimsString(a.Dims), b.ID, DimsString(b.Dims))
		}
		if a.Dims != nil {
			return [][]int64{cloneDims(a.Dims)}, nil
		}
		return [][]int64{cloneDims(b.Dims)}, nil
	}
	return nil, Errorf(InvalidArguments, "%s: auto_broadcast=%q, want \"numpy\" or \"none\"", op, mode)
}

func inferMatMul(op *Op, in []LogicalTensor) ([][]int64, error) {
	a, b := in[0], in[1]
	if a.Dims == nil || b.Dims == nil || len(a.Dims) < 2 || len(b.Dims) < 2 {
		// 1-D operands and unknown ranks: the output is left as given.
		return [][]int64{cloneDims(op.Outputs[0].Dims)}, nil
	}
	ta, _ := op.Bool("transpose_a")
	tb, _ := op.Bool("transpose_b")
	m, ka := a.Dims[len(a.Dims)-2], a.Dims[len(a.Dims)-1]
	if ta {
		m, ka = ka, m
	}
	kb, n := b.Dims[len(b.Dims)-2], b.Dims[len(b.Dims)-1]
	if tb {
		kb, n = n, kb
	}
	if ka >= 0 && kb >= 0 && ka != kb {
		return nil, Errorf(InvalidShape, "%s: inner dims differ: %d (tensor %d) vs %d (tensor %d)", op, ka, a.ID, kb, b.ID)
	}
	batch, err := broadcastDims(op,
		LogicalTensor{ID: a.ID, Dims: a.Dims[:len(a.Dims)-2]},
		LogicalTensor{ID: b.ID, Dims: b.Dims[:len(b.Dims)-2]})
	if err != nil {
		return nil, err
	}
	return [][]int64{append(batch, m, n)}, nil
}

func inferConv(op *Op, in []LogicalTensor) ([][]int64, error) {
	src, wei := in[0], in[1]
	if !src.KnownDims() || !wei.KnownDims() || len(src.Dims) < 3 || len(wei.Dims) != len(src.Dims) {
		return [][]int64{cloneDims(op.Outputs[0].Dims)}, nil
	}
	nsp := len(src.Dims) - 2
	strides, _ := op.Ints("strides")
	pb, _ := op.Ints("pads_begin")
	pe, _ := op.Ints("pads_end")
	dil, _ := op.Ints("dilations")
	for name, v := range map[string][]int64{"strides": strides, "pads_begin": pb, "pads_end": pe, "dilations": dil} {
		if len(v) != nsp {
			return nil, Errorf(InvalidShape, "%s: attribute %s has %d values, want %d (spatial dims of tensor %d)", op, name, len(v), nsp, src.ID)
		}
	}
	df, _ := op.Str("data_format")
	wf, _ := op.Str("weights_format")
	autoPad, _ := op.Str("auto_pad")
	var sp []int64
	var n, oc int64
	n = src.Dims[0]
	if df == "NCX" {
		sp = src.Dims[2:]
	} else {
		sp = src.Dims[1 : 1+nsp]
	}
	var k []int64
	if wf == "OIX" {
		oc, k = wei.Dims[0], wei.Dims[2:]
	} else {
		oc, k = wei.Dims[len(wei.Dims)-1], wei.Dims[:nsp]
	}
	out := make([]int64, nsp)
	for i := range nsp {
		if strides[i] <= 0 || dil[i] <= 0 {
			return nil, Errorf(InvalidArguments, "%s: strides and dilations must be positive (dim %d: %d, %d)", op, i, strides[i], dil[i])
		}
		ext := (k[i]-1)*dil[i] + 1
		switch autoPad {
		case "SAME_UPPER", "SAME_LOWER":
			out[i] = (sp[i] + strides[i] - 1) / strides[i]
		case "VALID":
			out[i] = (sp[i]-ext)/strides[i] + 1
		default:
			out[i] = (sp[i]+pb[i]+pe[i]-ext)/strides[i] + 1
		}
		if out[i] < 0 {
			return nil, Errorf(InvalidShape, "%s: output spatial dim %d would be %d", op, i, out[i])
		}
	}
	if df == "NCX" {
		return [][]int64{append([]int64{n, oc}, out...)}, nil
	}
	return [][]int64{append(append([]int64{n}, out...), oc)}, nil
}

func inferTranspose(op *Op, in []LogicalTensor) ([][]int64, error) {
	src := in[0]
	order, _ := op.Ints("order")
	if src.Dims == nil {
		return [][]int64{nil}, nil
	}
	if len(order) != len(src.Dims) {
		return nil, Errorf(InvalidShape, "%s: order has %d entries, tensor %d has rank %d", op, len(order), src.ID, len(src.Dims))
	}
	// order must be a permutation: each axis once, in range.
	if _, err := shape.NormalizeAxes(&Op{ID: op.ID, Kind: op.Kind, Name: op.Name, Inputs: in}, in[0].ID, order, len(order)); err != nil {
		return nil, err
	}
	out := make([]int64, len(order))
	for i, o := range order {
		if o < 0 {
			o += int64(len(order))
		}
		out[i] = src.Dims[o]
	}
	return [][]int64{out}, nil
}

func inferReshape(op *Op, in []LogicalTensor) ([][]int64, error) {
	src := in[0]
	shape, _ := op.Ints("shape")
	zero, _ := op.Bool("special_zero")
	out := make([]int64, len(shape))
	infer := -1
	known := int64(1)
	for i, s := range shape {
		switch {
		case s == 0 && zero:
			if src.Dims == nil || i >= len(src.Dims) {
				return nil, Errorf(InvalidShape, "%s: shape[%d]=0 copies a dim tensor %d does not have", op, i, src.ID)
			}
			out[i] = src.Dims[i]
		case s == -1:
			if infer >= 0 {
				return nil, Errorf(InvalidShape, "%s: shape %v has more than one -1", op, shape)
			}
			infer = i
			continue
		case s < 0:
			return nil, Errorf(InvalidShape, "%s: shape[%d]=%d is negative", op, i, s)
		default:
			out[i] = s
		}
		if out[i] < 0 {
			known = -1
		} else if known >= 0 {
			known *= out[i]
		}
	}
	if infer >= 0 {
		total := src.NumElements()
		if total < 0 || known <= 0 {
			out[infer] = UnknownDim
		} else {
			out[infer] = total / known
		}
	}
	return [][]int64{out}, nil
}

package reduce

import "github.com/gdnn/gdnn/internal/status"

// ONNXArgNode is an ONNX ArgMax or ArgMin node: the model's opset and
// the node's attributes. Make one with NewONNXArgNode (which sets ONNX's
// defaults: axis 0, keepdims 1, select_last_index 0), set the
// attributes the node carries, and run it with RunONNXArg. The op's
// versions are 1, 11 (negative axes), 12 (select_last_index) and 13
// (bfloat16 data, which gdnn takes at every opset); no later opset up to
// MaxONNXOpset changed them. ONNX's output is int64: pass an []int64
// dst (an []int32 one works too, as a gdnn extension).
type ONNXArgNode struct {
	Min             bool // ArgMin; false: ArgMax
	Opset           int
	Axis            int64
	KeepDims        bool // keepdims != 0
	SelectLastIndex bool // select_last_index != 0 (opset 12 on)
}

// NewONNXArgNode returns the node of op type opType ("ArgMax" or
// "ArgMin") at opset, with ONNX's default attributes. Another op type,
// or an opset below 1, is an InvalidArguments error; an opset past
// MaxONNXOpset is Unimplemented.
func NewONNXArgNode(opType string, opset int) (ONNXArgNode, error) {
	if opType != "ArgMax" && opType != "ArgMin" {
		return ONNXArgNode{}, status.Errorf(status.InvalidArguments, "reduce: %q is not ArgMax or ArgMin", opType)
	}
	n := ONNXArgNode{Min: opType == "ArgMin", Opset: opset, KeepDims: true}
	return n, n.check()
}

func (n ONNXArgNode) name() string {
	if n.Min {
		return "ArgMin"
	}
	return "ArgMax"
}

// check checks the opset and the attributes against it.
func (n ONNXArgNode) check() error {
	switch {
	case n.Opset < 1:
		return status.Errorf(status.InvalidArguments, "reduce: %s at opset %d: ONNX's opsets start at 1", n.name(), n.Opset)
	case n.Opset > MaxONNXOpset:
		return status.Errorf(status.Unimplemented, "reduce: %s at opset %d: gdnn implements opsets 1 to %d", n.name(), n.Opset, MaxONNXOpset)
	case n.Axis < 0 && n.Opset < 11:
		return status.Errorf(status.InvalidArguments, "reduce: %s at opset %d: axis %d; negative axes came with opset 11", n.name(), n.Opset, n.Axis)
	case n.SelectLastIndex && n.Opset < 12:
		return status.Errorf(status.InvalidArguments, "reduce: %s at opset %d has no select_last_index attribute (opset 12 on)", n.name(), n.Opset)
	}
	return nil
}

// RunONNXArg runs node n on src (dims) into dst. opts may name src's
// data type and strides; keepdims and select_last_index are the node's
// (a KeepDims or SelectLastIndex option is an error).
func RunONNXArg[I Index, S ArgSrc](n ONNXArgNode, dst []I, src []S, dims []int, opts ...Option) error {
	if err := n.check(); err != nil {
		return err
	}
	all := make([]Option, 0, len(opts)+2)
	for i, o := range opts {
		if o.what == optKeepDims || o.what == optSelectLast {
			return status.Errorf(status.InvalidArguments, "reduce.%s: option %d: keepdims and select_last_index are the ONNX node's attributes", n.name(), i)
		}
		all = append(all, o)
	}
	all = append(all, KeepDims(n.KeepDims), SelectLastIndex(n.SelectLastIndex))
	return argRun(n.name(), n.Min, dst, src, dims, n.Axis, all) // the int64 itself: int(n.Axis) truncates on 32-bit platforms
}

// DstDims returns the dims of node n's output for src dims: what dst
// must hold (the axis dropped, or 1 under keepdims). It refuses the
// dims and axis RunONNXArg refuses, with the same statuses: rank 0, a
// rank past graph.MaxRank, a negative dim or an empty axis
// (InvalidShape), an axis out of range (InvalidArguments).
func (n ONNXArgNode) DstDims(dims []int) ([]int, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	// RunONNXArg's own shape check: the rank limit, negative dims, the
	// axis's range and an empty axis are refused as a run refuses them.
	s := settings{index: true, keep: n.KeepDims}
	var k key
	if _, err := k.setArgShape(n.name()+".DstDims", dims, n.Axis, &s); err != nil {
		return nil, err
	}
	return dstDims(dims, k.reduce, n.KeepDims), nil
}

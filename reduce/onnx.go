package reduce

import "github.com/gdnn/gdnn/internal/status"

// ONNXNode is an ONNX Reduce* node: its op, the model's opset and the
// node's attributes. Make one with NewONNXNode (which sets ONNX's
// defaults), set the attributes the node carries, and run it with
// RunONNX. ONNX's semantics differ from gdnn's defaults exactly as ONNX
// says:
//
//   - keepdims defaults to 1 (KeepDims true);
//   - no axes, or an empty axes list, reduce every dim, unless
//     noop_with_empty_axes is set (opset 18; ReduceSum from 13): then
//     nothing is reduced and each element is transformed alone, as the
//     ONNX reference does (|x| for ReduceL1, x*x for ReduceSumSquare,
//     log x for ReduceLogSum, x for the others);
//   - axes are the "axes" attribute before opset 18 (ReduceSum: 13) and
//     the optional int64 second input from then on.
//
// Negative axes (ONNX allows them from opset 11) are taken at every
// opset. Data types follow gdnn's: f32, bf16 and f16 data, and s8 and
// u8 (which ONNX itself takes for ReduceMax and ReduceMin only).
type ONNXNode struct {
	Op                Op
	Opset             int
	Axes              []int64 // the axes attribute (opsets before axes became an input); nil: absent
	KeepDims          bool    // keepdims != 0
	NoopWithEmptyAxes bool    // noop_with_empty_axes != 0 (opsets where axes are an input)
}

// MaxONNXOpset is the newest opset whose Reduce* semantics gdnn knows:
// that of ONNX 1.22. The last changes to the ops were at opset 18 (axes
// as an input, noop_with_empty_axes) and ReduceMax/ReduceMin 20 (bool
// data, which gdnn does not take); opsets 21 to 27 changed no Reduce*
// op, so a node at any of them runs the op's version 18 or 20 (ReduceSum:
// 13), as at opset 20. A later opset is refused as Unimplemented, since
// it may change the ops in ways gdnn cannot know.
const MaxONNXOpset = 27

var onnxOps = [...]string{
	OpMean:      "ReduceMean",
	OpSum:       "ReduceSum",
	OpMax:       "ReduceMax",
	OpMin:       "ReduceMin",
	OpProd:      "ReduceProd",
	OpL1:        "ReduceL1",
	OpL2:        "ReduceL2",
	OpSumSquare: "ReduceSumSquare",
	OpLogSum:    "ReduceLogSum",
	OpLogSumExp: "ReduceLogSumExp",
}

// NewONNXNode returns the node of ONNX op type opType ("ReduceMean", ...,
// "ReduceLogSumExp") at opset, with ONNX's default attributes
// (keepdims 1, no axes, noop_with_empty_axes 0). An op type that is not a
// Reduce* op, or an opset below 1, is an InvalidArguments error; an opset
// past MaxONNXOpset is Unimplemented.
func NewONNXNode(opType string, opset int) (ONNXNode, error) {
	for op, name := range onnxOps {
		if name == opType {
			n := ONNXNode{Op: Op(op), Opset: opset, KeepDims: true}
			return n, n.check()
		}
	}
	return ONNXNode{}, status.Errorf(status.InvalidArguments, "reduce: %q is not an ONNX Reduce* op", opType)
}

// AxesInput reports whether, at the node's opset, axes are the node's
// second input (an int64 tensor) rather than an attribute.
func (n ONNXNode) AxesInput() bool {
	if n.Op == OpSum {
		return n.Opset >= 13
	}
	return n.Opset >= 18
}

// check checks the node's op and opset.
func (n ONNXNode) check() error {
	if n.Op >= opCount {
		return status.Errorf(status.InvalidArguments, "reduce: ONNX node with unknown op %v", n.Op)
	}
	if n.Opset < 1 {
		return status.Errorf(status.InvalidArguments, "reduce: %s at opset %d: ONNX's opsets start at 1", onnxOps[n.Op], n.Opset)
	}
	if n.Opset > MaxONNXOpset {
		return status.Errorf(status.Unimplemented, "reduce: %s at opset %d: gdnn implements opsets 1 to %d",
			onnxOps[n.Op], n.Opset, MaxONNXOpset)
	}
	return nil
}

// RunONNX runs node n on src (dims) into dst. axes is the node's axes
// input (nil when absent) where the opset has one; before that, axes
// come from n.Axes and the input must be nil. opts may name data types
// and strides; keepdims is the node's (a KeepDims option is an error).
func RunONNX[D Dst, S Src](n ONNXNode, dst []D, src []S, dims []int, axes []int64, opts ...Option) error {
	axes, err := n.axesOf(axes)
	if err != nil {
		return err
	}
	var s settings
	if err := s.apply(n.Op, opts, true); err != nil {
		return err
	}
	n.set(&s)
	return run(n.Op, dst, src, dims, nil, axes, &s)
}

// DstDims returns the dims of node n's dst for src dims and the node's
// axes input (as for RunONNX): what dst must hold, by ONNX's rules (no
// axes reduce every dim, unless noop_with_empty_axes; keepdims). It
// checks the node, dims and axes as RunONNX does.
func (n ONNXNode) DstDims(dims []int, axes []int64) ([]int, error) {
	axes, err := n.axesOf(axes)
	if err != nil {
		return nil, err
	}
	var s settings
	n.set(&s)
	var k key
	if err := k.setShape(onnxOps[n.Op]+".DstDims", dims, nil, axes, &s); err != nil {
		return nil, err
	}
	return dstDims(dims, k.reduce, s.keep), nil
}

// axesOf checks n and returns the axes it reduces over, given its axes
// input: the input where the opset has one, else n.Axes (and the input
// must be nil); never nil, so that the int64 path takes them.
func (n ONNXNode) axesOf(axes []int64) ([]int64, error) {
	if err := n.check(); err != nil {
		return nil, err
	}
	name := onnxOps[n.Op]
	if n.AxesInput() {
		if n.Axes != nil {
			return nil, status.Errorf(status.InvalidArguments, "reduce: %s at opset %d takes axes as an input, not an attribute", name, n.Opset)
		}
	} else {
		if axes != nil {
			return nil, status.Errorf(status.InvalidArguments, "reduce: %s at opset %d takes axes as an attribute, not an input", name, n.Opset)
		}
		if n.NoopWithEmptyAxes {
			return nil, status.Errorf(status.InvalidArguments, "reduce: %s at opset %d has no noop_with_empty_axes attribute", name, n.Opset)
		}
		axes = n.Axes
	}
	if axes == nil {
		axes = []int64{} // the int64 path, with no axes
	}
	return axes, nil
}

// set puts the node's keepdims and empty-axes rule into s.
func (n ONNXNode) set(s *settings) {
	s.keep = n.KeepDims
	s.allIfEmpty = !n.NoopWithEmptyAxes
}

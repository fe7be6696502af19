package partition

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/internal/status"
)

// maxAxesKernels bounds the kernels one compiled partition keeps for
// different run-time axes values and output layouts (the jit's own cache
// stays behind it).
const maxAxesKernels = 64

// Execute runs the compiled partition: it reads the input tensors and
// writes the output tensor. Tensors are matched to ports by id and checked
// (data type, dims, strides, buffer length, no output overlapping an
// input) before anything runs; any mismatch is an error and nothing is
// written.
//
// In place: the second operand of a fused binary post-op (Add, for
// dst = reduction + dst_before: oneDNN's sum post-op) may be the output
// tensor's own buffer, when the operand's data type has the output's
// size and its layout addresses the output's elements one for one (the
// same dims, or broadcast only where the output has size 1, and the same
// strides). Each output element's operand is then read in the same pass,
// before that element is stored. A normalization partition's output may
// be its src itself (with a residual sum before it, its dst or kept sum
// may be x or skip itself): the same buffer, data type, dims and strides,
// as oneDNN runs softmax and the normalizations in place. Any other
// sharing of memory between an output and an input is an
// InvalidArguments error. A tensor without strides (or of layout any) is read as dense
// row-major, as Compile reads one, so it matches only a dense compiled
// layout; tensors made from QueryLogicalTensor always match. Axes given as a tensor are read and checked on every call.
// Execute is safe for concurrent use.
func (c *CompiledPartition) Execute(inputs, outputs []Tensor) error {
	if err := c.usable("Execute"); err != nil {
		return err
	}
	if c.norm != nil {
		return c.executeNorm(inputs, outputs)
	}
	if c.arg != nil {
		return c.executeArg(inputs, outputs)
	}
	// Ports are few (src, axes, binary operands; one output): order
	// pointers to the given tensors in stack arrays, so that Execute
	// neither allocates nor copies tensors.
	var inBuf, outBuf [maxPorts]*Tensor
	ins, err := matchTensors("input", c.inputs, inputs, inBuf[:0])
	if err != nil {
		return err
	}
	outs, err := matchTensors("output", c.outputs, outputs, outBuf[:0])
	if err != nil {
		return err
	}
	for i, t := range ins {
		if err := checkTensor("input", &c.inputs[i], t, c.inNeed[i]); err != nil {
			return err
		}
	}
	// With run-time axes, read them first: they decide the dims the
	// output must have, and errors about the output say so.
	var ax runTimeAxes
	if !c.kern.ok() {
		if ax, err = c.readAxes(ins[c.recipe.axesPort]); err != nil {
			return err
		}
	}
	outLT, err := outputLayout(c.outputs[0], outs[0], ax)
	if err != nil {
		return err
	}
	outNeed := c.outNeed
	if outNeed < 0 {
		if outNeed, err = spanBytes(outLT); err != nil {
			return err
		}
	}
	if err := checkTensor("output", &outLT, outs[0], outNeed); err != nil {
		return err
	}
	k := c.kern
	if !k.ok() {
		kp, err := c.axesKernel(ax, outLT)
		if err != nil {
			return err
		}
		c.run.last.Store(kp)
		k = *kp
	}
	dst := outs[0].buf
	var binBuf [plan.MaxBinary][]byte
	bins := binBuf[:len(c.recipe.binPorts)]
	for i, port := range c.recipe.binPorts {
		if k := constIndex(port); k >= 0 {
			bins[i] = c.recipe.consts[k].bytes()
		} else {
			bins[i] = ins[port].buf
		}
	}
	for i, t := range ins {
		if jit.Overlap(dst, t.buf) && !inPlace(k, c.recipe.binPorts, i, dst, t.buf) {
			return status.Errorf(status.InvalidArguments, "output tensor %d overlaps input tensor %d in memory "+
				"(only the operand of a binary post-op may share the output's memory, and only as the output itself: "+
				"the same buffer, data type size and strides)", outLT.ID, c.inputs[i].ID)
		}
	}
	if err := k.Run(ins[0].buf, dst, bins); err != nil {
		return status.Errorf(status.RuntimeError, "partition %d: %v", c.p.id, err)
	}
	return nil
}

// maxPorts bounds a fused partition's ports: src, an axes tensor and one
// operand per binary post-op.
const maxPorts = 2 + plan.MaxBinary

// matchTensors orders pointers to the execute tensors like the compiled
// ports, by id, appending them to buf (which has room for maxPorts
// without allocating).
func matchTensors(what string, ports []graph.LogicalTensor, given []Tensor, buf []*Tensor) ([]*Tensor, error) {
	out := append(buf, make([]*Tensor, len(ports))...)
	for j := range given {
		t := &given[j]
		if t.lt.DataType == dtypes.Undef && t.buf == nil {
			return nil, status.Errorf(status.InvalidArguments, "%s tensor at position %d is a zero Tensor: make tensors with NewTensor", what, j)
		}
		i := portIndex(ports, t.lt.ID)
		if i < 0 {
			return nil, status.Errorf(status.InvalidArguments, "%s tensor %d is not an %s port of the partition", what, t.lt.ID, what)
		}
		if out[i] != nil {
			return nil, status.Errorf(status.InvalidArguments, "%s tensor %d is given twice", what, t.lt.ID)
		}
		out[i] = t
	}
	for i, t := range out {
		if t == nil {
			return nil, status.Errorf(status.InvalidArguments, "%s port tensor %d is not given", what, ports[i].ID)
		}
	}
	return out, nil
}

// outputLayout settles the output's concrete description: the compiled
// one, or, where compile could not know the dims (axes from a tensor),
// the tensor's own. With run-time axes, the dims must be those the axes
// give.
func outputLayout(compiled graph.LogicalTensor, t *Tensor, ax runTimeAxes) (graph.LogicalTensor, error) {
	lt := compiled
	if !compiled.KnownDims() {
		lt = t.lt.Clone()
		if lt.DataType != compiled.DataType {
			return lt, status.Errorf(status.InvalidDataType, "output tensor %d is %s, compiled as %s", lt.ID, lt.DataType, compiled.DataType)
		}
	}
	if ax.dims != nil && !slices.Equal(lt.Dims, ax.dims) {
		how := "has dims"
		if compiled.KnownDims() {
			how = "was compiled with dims"
		}
		return lt, status.Errorf(status.InvalidShape, "output tensor %d %s %s; for axes %s the partition gives %s (QueryLogicalTensorWithAxes describes it)",
			lt.ID, how, graph.DimsString(lt.Dims), axesList(ax.axes), graph.DimsString(ax.dims))
	}
	if compiled.KnownDims() {
		return compiled, nil
	}
	return lt, settleLayout(&lt)
}

// checkTensor checks an execute tensor against its compiled description,
// whose buffer must hold need bytes.
func checkTensor(what string, want *graph.LogicalTensor, t *Tensor, need int64) error {
	lt := &t.lt
	if t.buf == nil {
		return status.Errorf(status.InvalidArguments, "%s tensor %d has a nil buffer", what, want.ID)
	}
	if lt.DataType != want.DataType {
		return status.Errorf(status.InvalidDataType, "%s tensor %d is %s, compiled as %s", what, want.ID, lt.DataType, want.DataType)
	}
	if !slices.Equal(lt.Dims, want.Dims) {
		return status.Errorf(status.InvalidShape, "%s tensor %d has dims %s, compiled as %s",
			what, want.ID, graph.DimsString(lt.Dims), graph.DimsString(want.Dims))
	}
	if lt.Layout == graph.LayoutBlocked || want.Layout == graph.LayoutBlocked {
		if lt.Layout != want.Layout || lt.Tag != want.Tag {
			return status.Errorf(status.InvalidShape, "%s tensor %d has layout %s, compiled as %s", what, want.ID, layoutName(lt), layoutName(want))
		}
		if int64(len(t.buf)) < need {
			return status.Errorf(status.InvalidArguments, "%s tensor %d (%s, %s) needs %d bytes, its buffer has %d",
				what, want.ID, graph.DimsString(want.Dims), layoutName(want), need, len(t.buf))
		}
		return nil
	}
	strides, given, err := readStrides(lt)
	if err != nil {
		return status.Errorf(status.InvalidArguments, "%s tensor %d has layout %s", what, want.ID, lt.Layout)
	}
	how := ""
	if !given {
		how = " (dense: it gives no strides)"
	}
	if !slices.Equal(strides, want.Strides) {
		return status.Errorf(status.InvalidShape, "%s tensor %d has strides %s%s, compiled as %s",
			what, want.ID, graph.DimsString(strides), how, graph.DimsString(want.Strides))
	}
	if int64(len(t.buf)) < need {
		return status.Errorf(status.InvalidArguments, "%s tensor %d (%s, strides %s) needs %d bytes, its buffer has %d",
			what, want.ID, graph.DimsString(want.Dims), graph.DimsString(want.Strides), need, len(t.buf))
	}
	return nil
}

// runTimeAxes is what one execute's axes tensor says: the axes as given,
// which src dims they reduce, and the dims of the output they give.
type runTimeAxes struct {
	axes   []int64
	reduce []bool
	dims   []int64
}

// readAxes reads and checks a run-time axes tensor (s32 or s64).
func (c *CompiledPartition) readAxes(axesT *Tensor) (runTimeAxes, error) {
	axLT := c.inputs[c.recipe.axesPort]
	n := axLT.NumElements()
	axes := make([]int64, n)
	for i := range axes {
		// The axes tensor is 1-D (or a scalar): element i is at stride*i.
		// checkTensor has made sure the buffer covers every element.
		off := int64(0)
		if len(axLT.Strides) == 1 {
			off = int64(i) * axLT.Strides[0]
		}
		if axLT.DataType == dtypes.S64 {
			axes[i] = int64(binary.LittleEndian.Uint64(axesT.buf[off*8:]))
		} else {
			axes[i] = int64(int32(binary.LittleEndian.Uint32(axesT.buf[off*4:])))
		}
	}
	return c.axesFor(axes)
}

// axesFor checks axes against the src and works out the output dims.
func (c *CompiledPartition) axesFor(axes []int64) (runTimeAxes, error) {
	src := c.inputs[0]
	reduce, err := shape.NormalizeAxes(c.recipe.redOp, c.recipe.redOp.Inputs[0].ID, axes, len(src.Dims))
	if err != nil {
		return runTimeAxes{}, err
	}
	return runTimeAxes{axes: axes, reduce: reduce, dims: shape.ReduceDims(src.Dims, reduce, c.recipe.keepDims)}, nil
}

// axesList prints axes as a list, "[0 -1]".
func axesList(axes []int64) string {
	return fmt.Sprint(axes)
}

// axesKernel returns the kernel for one execute's run-time axes and
// output layout out, compiling it the first time (see axesKey).
func (c *CompiledPartition) axesKernel(ax runTimeAxes, out graph.LogicalTensor) (*kernel, error) {
	key := axesKey{layout: out.Layout, tag: out.Tag, rank: len(out.Strides)}
	for i, r := range ax.reduce {
		if r {
			key.reduce |= 1 << i
		}
	}
	copy(key.strides[:], out.Strides) // out's rank is at most src's, at most graph.MaxRank
	c.run.mu.Lock()
	k, ok := c.run.byAxes[key]
	c.run.mu.Unlock()
	if ok {
		return k, nil
	}
	nk, err := c.kernelFor(ax.reduce, out)
	if err != nil {
		return nil, err
	}
	k = &nk
	c.run.mu.Lock()
	if len(c.run.byAxes) >= maxAxesKernels {
		clear(c.run.byAxes)
	}
	c.run.byAxes[key] = k
	c.run.mu.Unlock()
	return k, nil
}

// inPlace reports whether input port i, whose buffer b overlaps dst, is
// a binary post-op's operand given as the output itself: the same first
// byte, and a kernel that reads that operand element for element at the
// output's places (jit.Kernel.InPlace). dst = result + dst_before is
// oneDNN's sum post-op; the kernel reads each operand element before it
// stores the output there, in the same pass.
// An input that is the operand of several post-ops must be in place for
// each of them.
func inPlace(k kernel, binPorts []int, i int, dst, b []byte) bool {
	found := false
	for j, port := range binPorts {
		if port == i {
			if !k.InPlace(j) {
				return false
			}
			found = true
		}
	}
	return found && sameStart(dst, b)
}

// sameStart reports whether two buffers start at the same byte: the one
// overlap in place admits, the operand being the output itself.
func sameStart(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// sameTensor reports whether output o (compiled as lo) is input i
// (compiled as li) itself: the same first byte, data type, dims and
// strides, in a layout where no two elements share memory. A
// normalization runs in place only so (see executeNorm); a reduction's
// sum post-op operand has its own rule (inPlace).
func sameTensor(o, i *Tensor, lo, li *graph.LogicalTensor) bool {
	return slices.Equal(lo.Dims, li.Dims) && jit.SameTensor(o.buf, i.buf, lo.DataType, li.DataType, lo.Dims, lo.Strides, li.Strides)
}

// layoutName names a tensor's layout in messages: the tag of a blocked
// one ("blocked aBx16b"), else the layout's name.
func layoutName(t *graph.LogicalTensor) string {
	if t.Layout == graph.LayoutBlocked {
		return "blocked " + t.Tag
	}
	return t.Layout.String()
}

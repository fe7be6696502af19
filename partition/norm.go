package partition

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/normprog"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/internal/status"
)

// A normalization partition (SoftMax, LogSoftmax, LayerNorm, RMSNorm,
// GroupNorm) is the op and the eltwise and binary ops after it, its
// post-ops (fuseChain's rules, ending in a float type, then normTail's).
// Where it keeps its statistics the post-ops map dst alone: the
// partition's outputs are the chain's dst, then the mean and variance.
// It compiles into a program of reduction kernels (internal/normprog):
// machine code where the reductions have it, Impl says which and Reason
// why the interpreter runs any of it. A problem a program cannot take
// runs on the pure-Go reference executor of package internal/norm.

// normRun is what a compiled normalization partition runs.
type normRun struct {
	op   *graph.Op
	exec *normprog.Exec
	// in[i] is the input port of the op's input i (gamma and beta may be
	// one tensor, one port).
	in       []int
	binPorts []int    // the input port of each fused binary post-op's operand, or -1-i for consts[i]
	consts   [][]byte // a fused Quantize's scale and zero point, one f32 each
	outNeed  []int64  // bytes each output's buffer must hold
	// resIn are the input ports of a residual sum's x, skip and bias
	// (-1: none, all of them without a residual sum); the sum is src
	// (in[0] is -1).
	resIn [3]int
}

// normAxis is the dim a normalization op's rows start from or run along
// (graph's rules: the softmax axis, begin_norm_axis, GroupNorm's channel
// dim by data_format), for a src of the given rank.
func normAxis(op *graph.Op, rank int) int64 {
	switch op.Kind {
	case graph.LayerNorm, graph.RMSNorm:
		a, _ := op.Int("begin_norm_axis")
		return a
	case graph.GroupNorm:
		if f, _ := op.Str("data_format"); f == "NCX" {
			return 1
		}
		return int64(rank - 1)
	}
	a, _ := op.Int("axis")
	return a
}

var normKindOf = map[graph.OpKind]norm.Kind{
	graph.SoftMax: norm.Softmax, graph.LogSoftmax: norm.LogSoftmax, graph.LayerNorm: norm.LayerNorm,
	graph.RMSNorm: norm.RMSNorm, graph.GroupNorm: norm.GroupNorm,
}

// compileNorm compiles a normalization partition: concrete inputs,
// outputs inferred (dense where their layout is any), and the executor
// for them.
func (p *Partition) compileNorm(inputs, outputs []graph.LogicalTensor) (*CompiledPartition, error) {
	op := p.norm
	ins, err := matchPorts("input", p.inputs, inputs)
	if err != nil {
		return nil, err
	}
	for i := range ins {
		if ins[i], err = concreteInput(p.inputs[i], ins[i]); err != nil {
			return nil, err
		}
		if ins[i].Layout == graph.LayoutBlocked {
			return nil, status.Errorf(status.Unimplemented, "%s: input tensor %d has blocked layout %q; gdnn's normalization ops take strided tensors", op, ins[i].ID, ins[i].Tag)
		}
	}
	outs, err := matchPorts("output", p.outputs, outputs)
	if err != nil {
		return nil, err
	}
	r := &normRun{op: op, in: make([]int, len(op.Inputs)), resIn: [3]int{-1, -1, -1}}
	opIns := make([]graph.LogicalTensor, len(op.Inputs))
	for i, t := range op.Inputs {
		r.in[i] = portIndex(p.inputs, t.ID)
		if i == 0 && p.res != nil {
			if opIns[0], err = r.residualSum(p, ins); err != nil {
				return nil, err
			}
			continue
		}
		if i == 0 && p.dq != nil {
			// The normalization's src is the dequantized 8-bit input.
			r.in[0] = portIndex(p.inputs, p.dq.Inputs[0].ID)
			opIns[0] = ins[r.in[0]]
			opIns[0].DataType = dtypes.F32
			continue
		}
		opIns[i] = ins[r.in[i]]
	}
	dims := [][]int64{opIns[0].Dims} // a decomposed normalization's output has x's dims
	if p.dec == nil {
		if dims, err = graph.InferOutputs(op, opIns); err != nil {
			return nil, err
		}
	}
	if p.res != nil && p.res.out {
		dims = append(dims, opIns[0].Dims)
	}
	for i := range outs {
		if err := settleOutput(op, &outs[i], p.outputs[i].DataType, dims[i], "normalization ops"); err != nil {
			return nil, err
		}
	}
	post, err := r.postOps(p, ins, outs[0])
	if err != nil {
		return nil, err
	}
	if p.dec != nil {
		var eps *graph.LogicalTensor
		if len(opIns) > 1 {
			eps = &opIns[1]
		}
		var dq *kernelshape.Dequant
		if p.dq != nil {
			if dq, err = p.dequantOf(); err != nil {
				return nil, err
			}
		}
		err = p.dec.compile(op, opIns[0], eps, outs[0], post, dq, ins[r.in[0]].DataType, r)
	} else {
		src := opIns[0]
		if p.res != nil && p.res.out {
			src.Strides = outs[len(outs)-1].Strides
		}
		var res *normprog.Residual
		if p.res != nil {
			if res, err = r.residualOf(p, ins, src); err != nil {
				return nil, err
			}
		}
		pIns := append([]graph.LogicalTensor{src}, opIns[1:]...)
		if p.dq != nil {
			var dq *kernelshape.Dequant
			if dq, err = p.dequantOf(); err != nil {
				return nil, err
			}
			r.exec, err = normprog.NewDequantized(normProblem(op, pIns, outs), dq, ins[r.in[0]].DataType, post, outs[0].DataType)
		} else {
			r.exec, err = normprog.NewFused(normProblem(op, pIns, outs), res, post, outs[0].DataType)
		}
	}
	if err != nil {
		return nil, opErr(op, err)
	}
	c := &CompiledPartition{p: p, inputs: ins, outputs: outs, norm: r, run: &runState{}}
	c.inNeed = make([]int64, len(ins))
	for i := range ins {
		if c.inNeed[i], err = spanBytes(ins[i]); err != nil {
			return nil, err
		}
	}
	r.outNeed = make([]int64, len(outs))
	for i := range outs {
		if r.outNeed[i], err = spanBytes(outs[i]); err != nil {
			return nil, err
		}
	}
	c.outNeed = r.outNeed[0]
	return c, nil
}

// normProblem is the problem a normalization op computes over its
// concrete inputs and outputs.
func normProblem(op *graph.Op, opIns, outs []graph.LogicalTensor) *norm.Problem {
	src := opIns[0]
	pr := &norm.Problem{
		Kind: normKindOf[op.Kind], Dims: src.Dims, Axis: normAxis(op, len(src.Dims)),
		Src: norm.Operand{DT: src.DataType, Strides: src.Strides},
		Dst: norm.Operand{DT: floatDst(outs[0].DataType), Strides: outs[0].Strides},
	}
	pr.Groups, _ = op.Int("groups")
	pr.Eps, _ = op.Float("epsilon")
	mode, _ := op.Str("mode")
	pr.InfAsZero = op.Kind == graph.SoftMax && mode == "inf_as_zero"
	if len(opIns) > 1 {
		pr.Gamma = norm.Operand{DT: opIns[1].DataType, Strides: opIns[1].Strides}
	}
	if len(opIns) > 2 {
		pr.Beta = norm.Operand{DT: opIns[2].DataType, Strides: opIns[2].Strides}
	}
	switch {
	case len(op.Outputs) == 3:
		pr.Mean = norm.Operand{DT: outs[1].DataType, Strides: outs[1].Strides}
		pr.Var = norm.Operand{DT: outs[2].DataType, Strides: outs[2].Strides}
	case op.Kind == graph.SoftMax && len(op.Outputs) == 2:
		pr.Stats = norm.Operand{DT: outs[1].DataType, Strides: outs[1].Strides}
	}
	return pr
}

// postOps are the partition's ops after the normalization as post-ops,
// binary operands broadcast numpy style onto the output (which has src's
// dims), and their ports in r.binPorts.
func (r *normRun) postOps(p *Partition, ins []graph.LogicalTensor, out graph.LogicalTensor) ([]plan.PostOp, error) {
	post, ports, consts, err := p.tailPostOps(p.ops[p.post:], p.norm.Outputs[0].ID)
	if err != nil {
		return nil, err
	}
	r.consts = consts
	same := make([]int, len(out.Dims)) // output dim i is src dim i
	for i := range same {
		same[i] = i
	}
	bin := 0
	for i := range post {
		if !post[i].Kind.IsBinary() {
			continue
		}
		port := ports[bin]
		bin++
		if port < 0 {
			post[i].BinStrides = make([]int64, len(same)) // a constant: one value for every element
			continue
		}
		operand := ins[port]
		if operand.Layout == graph.LayoutBlocked {
			return nil, status.Errorf(status.Unimplemented, "binary operand tensor %d: blocked layout %q; gdnn's normalization ops take strided tensors",
				operand.ID, operand.Tag)
		}
		if post[i].BinStrides, err = operandStrides(operand, out, same, make([]bool, len(same))); err != nil {
			return nil, err
		}
		post[i].BinDT = operand.DataType
	}
	r.binPorts = ports
	return post, nil
}

// opErr names op in an error of the executor, keeping its status.
func opErr(op *graph.Op, err error) error {
	var e *status.Error
	if errors.As(err, &e) {
		return status.Errorf(e.Status, "%s: %s", op, e.Msg)
	}
	return err
}

// executeNorm runs a compiled normalization partition (see Execute).
func (c *CompiledPartition) executeNorm(inputs, outputs []Tensor) error {
	r := c.norm
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
	for i, t := range outs {
		if err := checkTensor("output", &c.outputs[i], t, r.outNeed[i]); err != nil {
			return err
		}
	}
	// In place: dst (or a kept residual sum) may be the tensor it is
	// computed from itself (see normRun.inPlace); rows of one layout are not
	// rows of another, so any other sharing of memory is refused.
	for i, o := range outs {
		for j, t := range ins {
			if jit.Overlap(o.buf, t.buf) && !(r.inPlace(i, j) && sameTensor(o, t, &c.outputs[i], &c.inputs[j])) {
				return status.Errorf(status.InvalidArguments, "output tensor %d overlaps input tensor %d in memory; a normalization runs in place "+
					"only with its output given as its src (or a residual sum's x or skip) itself: the same buffer, data type, dims and strides",
					c.outputs[i].ID, c.inputs[j].ID)
			}
		}
		for j := range i {
			if jit.Overlap(o.buf, outs[j].buf) {
				return status.Errorf(status.InvalidArguments, "output tensors %d and %d overlap in memory", c.outputs[j].ID, c.outputs[i].ID)
			}
		}
	}
	b := norm.Buffers{Dst: outs[0].buf}
	if r.in[0] >= 0 {
		b.Src = ins[r.in[0]].buf
	}
	var eps []byte
	switch {
	case c.p.dec != nil && len(r.in) > 1:
		eps = ins[r.in[1]].buf // a decomposed normalization's inputs are x and eps
		if err := checkEps(r.op, ins[r.in[1]]); err != nil {
			return err
		}
	case c.p.dec != nil: // an L2 normalization with no eps
	case len(r.in) > 1:
		b.Gamma = ins[r.in[1]].buf
		if len(r.in) > 2 {
			b.Beta = ins[r.in[2]].buf
		}
	}
	switch {
	case len(r.op.Outputs) == 3:
		b.Mean, b.Var = outs[1].buf, outs[2].buf
	case r.op.Kind == graph.SoftMax && len(r.op.Outputs) == 2:
		b.Stats = outs[1].buf
	}
	var binBuf [plan.MaxBinary][]byte
	bins := binBuf[:len(r.binPorts)]
	for i, port := range r.binPorts {
		if port < 0 {
			bins[i] = r.consts[-1-port]
			continue
		}
		bins[i] = ins[port].buf
	}
	if err := r.run(c.p, b, eps, ins, outs, bins); err != nil {
		return status.Errorf(status.RuntimeError, "partition %d: %v", c.p.id, err)
	}
	return nil
}

// inPlace reports whether output out may be input port in itself: dst
// and src, or with a residual sum, dst or the kept sum (the last output)
// and x or skip. The executors read each of these only before they write
// the same elements (internal/normprog/inplace.go; package norm's
// reference executor gathers a row before it scatters it). The port must
// have no other role (gamma, beta, a post-op's operand, epsilon, both x
// and skip), which would be read after dst is written.
func (r *normRun) inPlace(out, in int) bool {
	roles := 0
	for _, p := range r.in {
		if p == in {
			roles++
		}
	}
	for _, p := range r.binPorts {
		if p == in {
			roles++
		}
	}
	for _, p := range r.resIn {
		if p == in {
			roles++
		}
	}
	if roles != 1 {
		return false
	}
	if r.resIn[0] < 0 {
		return out == 0 && r.in[0] == in
	}
	return (out == 0 || out == len(r.outNeed)-1 && len(r.op.Outputs) < len(r.outNeed)) && (r.resIn[0] == in || r.resIn[1] == in)
}

// reason is Reason for a normalization partition.
func (r *normRun) reason() string { return r.exec.Reason() }

// normVerboseLine describes the compile of a normalization partition:
//
//	gdnn_verbose,compile,cpu,partition,<impl>,<id>,src_<dt>:<dims>:<strides> [gamma beta] dst_... [dst_mean dst_variance],<attrs>,<op>[+<post-op>...],<ms>,<reason>
func (c *CompiledPartition) normVerboseLine(d time.Duration) string {
	var b strings.Builder
	b.WriteString("gdnn_verbose,compile,cpu,partition," + c.norm.exec.Impl() + "," + strconv.Itoa(c.p.id) + ",")
	for i, t := range c.inputs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(tensorDesc(t))
	}
	for _, t := range c.outputs {
		b.WriteString(" dst_" + tensorDesc(t))
	}
	op := c.norm.op
	b.WriteString(",")
	for i, name := range op.AttrNames() {
		if i > 0 {
			b.WriteString(" ")
		}
		a, _ := op.Attr(name)
		b.WriteString(name + ":" + a.String())
	}
	b.WriteString(",")
	if c.p.pattern != "" {
		b.WriteString(c.p.pattern + ": ")
	}
	for i, o := range c.p.ops {
		if i > 0 {
			b.WriteString("+")
		}
		b.WriteString(o.Kind.String())
	}
	b.WriteString("," + strconv.FormatFloat(d.Seconds()*1e3, 'f', 4, 64) + "," + c.norm.reason())
	return b.String()
}

// settleOutput checks the caller's output tensor o of op against the
// partition's type want and the inferred dims, and gives it its strided
// layout; what names the ops in the refusal of a blocked layout.
func settleOutput(op *graph.Op, o *graph.LogicalTensor, want dtypes.DataType, dims []int64, what string) error {
	if o.DataType != want {
		return status.Errorf(status.InvalidDataType, "output tensor %d is %s, the partition produces %s", o.ID, o.DataType, want)
	}
	var err error
	if o.Dims, err = shape.MergeDims(op, o.ID, o.Dims, dims); err != nil {
		return err
	}
	if !o.KnownDims() {
		return status.Errorf(status.InvalidShape, "output tensor %d: dims %s could not be inferred", o.ID, graph.DimsString(o.Dims))
	}
	if o.Layout == graph.LayoutBlocked {
		return status.Errorf(status.Unimplemented, "%s: output tensor %d has blocked layout %q; gdnn's %s write strided tensors", op, o.ID, o.Tag, what)
	}
	return settleLayout(o)
}

package partition

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// An index reduction partition (ArgMax, ArgMin) is the op alone, or an
// Abs before it (its pre-op: the elements compared by magnitude). Its
// output is an index, so nothing fuses after it. It compiles into one
// index kernel (jit.CompileArg): machine code where the ISA has it.

// argRun is what a compiled index reduction partition runs.
type argRun struct {
	kern *jit.ArgKernel
}

// absBeforeArg returns the ArgMax or ArgMin that op, an Abs not yet
// taken, feeds as its only consumer (its src), or nil.
func absBeforeArg(g *graph.Graph, op *graph.Op, taken *sched) *graph.Op {
	// The Abs must not round: its output has its input's type.
	if op.Kind != graph.Abs || len(op.Outputs) != 1 || op.Outputs[0].DataType != op.Inputs[0].DataType {
		return nil
	}
	cons := g.Consumers(op.Outputs[0].ID)
	if len(cons) != 1 || !cons[0].Kind.IsArg() || taken.has(cons[0]) || cons[0].Inputs[0].ID != op.Outputs[0].ID {
		return nil
	}
	return cons[0]
}

// compileArg compiles an index reduction partition: a concrete src, the
// output inferred (dense where its layout is any), and its kernel.
func (p *Partition) compileArg(inputs, outputs []graph.LogicalTensor) (*CompiledPartition, error) {
	op := p.arg
	ins, err := matchPorts("input", p.inputs, inputs)
	if err != nil {
		return nil, err
	}
	if ins[0], err = concreteInput(p.inputs[0], ins[0]); err != nil {
		return nil, err
	}
	src := ins[0]
	if src.Layout == graph.LayoutBlocked {
		return nil, status.Errorf(status.Unimplemented, "%s: input tensor %d has blocked layout %q; gdnn's index reductions take strided tensors", op, src.ID, src.Tag)
	}
	outs, err := matchPorts("output", p.outputs, outputs)
	if err != nil {
		return nil, err
	}
	opIn := src
	opIn.DataType = op.Inputs[0].DataType // an Abs before keeps the type
	dims, err := graph.InferOutputs(op, []graph.LogicalTensor{opIn})
	if err != nil {
		return nil, err
	}
	o := &outs[0]
	if err := settleOutput(op, o, p.outputs[0].DataType, dims[0], "index reductions"); err != nil {
		return nil, err
	}
	rank := len(src.Dims)
	axis, err := graph.ArgAxis(op, rank)
	if err != nil {
		return nil, err
	}
	keep, _ := op.Bool("keep_dims")
	last, _ := op.Bool("select_last_index")
	pr := &plan.ArgProblem{Min: op.Kind == graph.ArgMin, Last: last, Abs: len(p.ops) == 2,
		SrcDT: src.DataType, IdxDT: o.DataType, Dims: src.Dims, SrcStrides: src.Strides, DstStrides: make([]int64, rank)}
	pr.Axis = axis
	j := 0
	for i := range rank {
		if i == axis && !keep {
			continue
		}
		if i != axis {
			pr.DstStrides[i] = o.Strides[j]
		}
		j++
	}
	pl, err := plan.CanonicalizeArg(pr)
	if err != nil {
		return nil, opErr(op, err)
	}
	kern, err := jit.CompileArg(pl)
	if err != nil {
		return nil, opErr(op, err)
	}
	c := &CompiledPartition{p: p, inputs: ins, outputs: outs, arg: &argRun{kern: kern}, run: &runState{}}
	c.inNeed = make([]int64, 1)
	if c.inNeed[0], err = spanBytes(ins[0]); err != nil {
		return nil, err
	}
	if c.outNeed, err = spanBytes(outs[0]); err != nil {
		return nil, err
	}
	return c, nil
}

// executeArg runs a compiled index reduction partition (see Execute).
func (c *CompiledPartition) executeArg(inputs, outputs []Tensor) error {
	var inBuf, outBuf [maxPorts]*Tensor
	ins, err := matchTensors("input", c.inputs, inputs, inBuf[:0])
	if err != nil {
		return err
	}
	outs, err := matchTensors("output", c.outputs, outputs, outBuf[:0])
	if err != nil {
		return err
	}
	if err := checkTensor("input", &c.inputs[0], ins[0], c.inNeed[0]); err != nil {
		return err
	}
	if err := checkTensor("output", &c.outputs[0], outs[0], c.outNeed); err != nil {
		return err
	}
	if jit.Overlap(outs[0].buf, ins[0].buf) {
		return status.Errorf(status.InvalidArguments, "output tensor %d overlaps input tensor %d in memory; an index reduction does not run in place",
			c.outputs[0].ID, c.inputs[0].ID)
	}
	if err := c.arg.kern.Run(ins[0].buf, outs[0].buf); err != nil {
		return status.Errorf(status.RuntimeError, "partition %d: %v", c.p.id, err)
	}
	return nil
}

// reason is Reason for an index reduction partition.
func (r *argRun) reason() string {
	if why := r.kern.Why(); why != "" {
		return "interpreter: " + why
	}
	return ""
}

// argVerboseLine describes the compile of an index reduction partition:
//
//	gdnn_verbose,compile,cpu,partition,<impl>,<id>,src_<dt>:<dims>:<strides> dst_...,<attrs>,[Abs+]<op>,<ms>,<reason>
func (c *CompiledPartition) argVerboseLine(d time.Duration) string {
	var b strings.Builder
	b.WriteString("gdnn_verbose,compile,cpu,partition," + c.arg.kern.Impl() + "," + strconv.Itoa(c.p.id) + ",")
	b.WriteString("src_" + tensorDesc(c.inputs[0]) + " dst_" + tensorDesc(c.outputs[0]) + ",")
	op := c.p.arg
	for i, name := range op.AttrNames() {
		if i > 0 {
			b.WriteString(" ")
		}
		a, _ := op.Attr(name)
		b.WriteString(name + ":" + a.String())
	}
	b.WriteString(",")
	for i, o := range c.p.ops {
		if i > 0 {
			b.WriteString("+")
		}
		b.WriteString(o.Kind.String())
	}
	fmt.Fprintf(&b, ",%s,%s", strconv.FormatFloat(d.Seconds()*1e3, 'f', 4, 64), c.arg.reason())
	return b.String()
}

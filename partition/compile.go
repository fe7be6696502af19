package partition

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/internal/status"
)

// CompiledPartition is a partition compiled for concrete input shapes. It
// is immutable and safe for concurrent Execute calls.
type CompiledPartition struct {
	p       *Partition
	inputs  []graph.LogicalTensor // concrete, in port order
	outputs []graph.LogicalTensor // concrete, except dims that depend on run-time axes
	recipe  *recipe
	kern    kernel   // compiled once when the axes are known at compile time
	norm    *normRun // a normalization partition's executor (recipe and kern unused)
	arg     *argRun  // an index reduction partition's executor (recipe and kern unused)

	// Bytes each port's buffer must hold, worked out once (the overflow
	// checks divide); outNeed is -1 when the output's dims depend on
	// run-time axes.
	inNeed  []int64
	outNeed int64

	// run is what Executes keep: each CompiledPartition its own, a
	// copy for another graph's partition (see Compile) included.
	run *runState
}

// runState is a compiled partition's state at execute time: with axes
// given as a tensor, the kernels found per axes value and output layout,
// and the implementation the latest Execute used.
type runState struct {
	mu     sync.Mutex
	byAxes map[axesKey]*kernel
	// last is the kernel the latest Execute with run-time axes used, for
	// Impl and Reason. A pointer into byAxes, made once per kernel, so
	// that recording it costs Execute no allocation.
	last atomic.Pointer[kernel]
}

// axesKey identifies the kernel of one execute with run-time axes: the
// src dims the axes reduce, and the output's layout, which Execute takes
// as given where compile left the output's dims open (the kernel depends
// on nothing else that changes between executes).
type axesKey struct {
	reduce  uint64
	layout  graph.Layout
	tag     string
	rank    int
	strides [graph.MaxRank]int64
}

// recipe says how the fused ops map onto a plan.Problem.
type recipe struct {
	red      plan.Reduction
	redOp    *graph.Op // the reduction op (ops[0], or ops[1] after a pre-op)
	axesPort int       // index of the axes input port, -1 when axes are an attribute
	axes     []int64   // the attribute axes
	keepDims bool
	postOps  []plan.PostOp
	// binPorts holds the input port of each binary post-op's operand, in
	// order; a negative entry -k names consts[k-1] instead (see constIndex).
	binPorts []int
	// mask is the input port of a Multiply pre-op's broadcast operand
	// (prefuse.go; -1: none), then binPorts[0] too.
	mask   int
	consts []constOperand // operands of a Dequantize's or Quantize's maps
	quant  string         // what of them fused, for the verbose line
}

// Compile compiles a supported partition for the given input tensors
// (concrete dims; strided, with dense strides when Strides is nil) and
// output tensors (dims may be unknown and layout any: compile infers them;
// query the result with QueryLogicalTensor). An output's blocked tag is
// checked against its rank even where its dims are unknown. Tensors are
// matched to ports by id. Compiling the same partition for the same tensors again returns
// the cached CompiledPartition (see SetCompiledPartitionCacheCapacity).
// A partition of the same ops in another graph gets a CompiledPartition
// of its own (its Partition is the one compiled) with the same kernels,
// which takes the first one's place in the cache: compiling the first
// partition again after it builds another such copy.
func (p *Partition) Compile(inputs, outputs []graph.LogicalTensor) (*CompiledPartition, error) {
	if p == nil {
		return nil, status.Errorf(status.InvalidArguments, "Compile on a nil partition")
	}
	if len(p.ops) == 0 {
		return nil, status.Errorf(status.InvalidArguments, "Compile on a partition of no ops: partitions come from partition.Get")
	}
	if !p.supported {
		return nil, status.Errorf(status.Unimplemented, "partition %d is not supported: %s", p.id, p.reason)
	}
	isa, stamp := jit.ISAStamp()
	key := cacheKey(p, inputs, outputs, isa)
	if c := compiledCache.get(key); c != nil {
		if c.p != p {
			// The same ops and tensors in another graph: its own
			// partition and execute state, the same kernels. The cache
			// keeps one per ops and tensors, the latest graph's.
			cc := *c
			cc.p, cc.run = p, &runState{}
			if c.run.byAxes != nil {
				cc.run.byAxes = map[axesKey]*kernel{}
			}
			compiledCache.put(key, &cc)
			return &cc, nil
		}
		return c, nil
	}
	var t0 time.Time
	if jit.Verbose() > 0 {
		t0 = time.Now()
	}
	c, err := p.compile(inputs, outputs)
	if err != nil {
		return nil, err
	}
	// Kept only if no cap was set since the key's ISA was read: the
	// compile may have used another (jit.ISAStamp).
	if jit.CapStamp() == stamp {
		compiledCache.put(key, c)
	}
	if jit.Verbose() > 0 {
		jit.VerboseLine(c.verboseLine(time.Since(t0)))
	}
	return c, nil
}

// enlarges refuses a binary op of the chain whose other operand
// broadcasts the chain's dims (chain: the output of the op before it,
// tensor chainID) to larger ones (out): a graph may do that, but a fused
// partition writes the reduction's output shape, element for element.
// The partitioner keeps such an op apart when it knows the operand's
// dims; this one's were not known then.
func enlarges(op *graph.Op, ins []graph.LogicalTensor, chainID uint64, chain, out []int64) error {
	if !op.Kind.IsBinary() || chain == nil || slices.Equal(chain, out) {
		return nil
	}
	other := ins[0]
	if op.Inputs[0].ID == chainID {
		other = ins[1]
	}
	return status.Errorf(status.Unimplemented, "%s's operand tensor %d (%s) broadcasts the reduction's output %s to %s, "+
		"which a fused partition does not write; with tensor %d's dims known when partitioning, %s runs in a partition of its own",
		op, other.ID, graph.DimsString(other.Dims), graph.DimsString(chain), graph.DimsString(out), other.ID, op)
}

// verboseLine describes a compile in the user's terms, like ONEDNN_VERBOSE:
//
//	gdnn_verbose,compile,cpu,partition,<impl>,<id>,src_<dt>:<dims>:<strides> [operands] dst_<dt>:<dims>:<strides>,axes:<a>[ keep_dims] alg:<reduction>,<ops>,<ms>[,<reason>]
//
// <reason> is Reason, when the interpreter runs any of the kernel
// compiled here (the runtime's own lines say "fallback: <why>" per plan;
// this one says it once, for the partition the user compiled).
func (c *CompiledPartition) verboseLine(d time.Duration) string {
	if c.norm != nil {
		return c.normVerboseLine(d)
	}
	if c.arg != nil {
		return c.argVerboseLine(d)
	}
	var b strings.Builder
	b.WriteString("gdnn_verbose,compile,cpu,partition," + c.Impl() + "," + strconv.Itoa(c.p.id) + ",")
	for i, t := range c.inputs {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(tensorDesc(t))
	}
	for _, t := range c.outputs {
		b.WriteString(" dst_" + tensorDesc(t))
	}
	b.WriteString(",axes:")
	if c.recipe.axesPort >= 0 {
		b.WriteString("runtime")
	} else {
		b.WriteString(axesString(c.recipe.axes))
	}
	if c.recipe.keepDims {
		b.WriteString(" keep_dims")
	}
	// What the fused ops compute, pre-op included: "alg:abs>max".
	b.WriteString(" alg:" + c.recipe.red.String())
	if c.recipe.mask >= 0 {
		b.WriteString(" pre:multiply")
	}
	if c.recipe.quant != "" {
		b.WriteString(" " + c.recipe.quant)
	}
	names := make([]string, len(c.p.ops))
	for i, op := range c.p.ops {
		names[i] = op.Kind.String()
	}
	b.WriteString("," + strings.Join(names, "+") + "," + strconv.FormatFloat(d.Seconds()*1e3, 'f', 4, 64))
	if why := c.Reason(); why != "" {
		b.WriteString("," + why)
	}
	return b.String()
}

// axesString is the axes as the user gave them, "x"-joined like dims
// ("-1", "0x-1"), and "none" for empty axes. Not graph.DimsString: that
// prints -1 as "?" (an unknown dim), which an axis never is.
func axesString(axes []int64) string {
	if len(axes) == 0 {
		return "none"
	}
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = strconv.FormatInt(a, 10)
	}
	return strings.Join(parts, "x")
}

// tensorDesc is "<dt>:<dims>:<strides>", e.g. "f32:2x3:3x1", or
// "<dt>:<dims>:<tag>" for a blocked tensor ("f32:2x20x3:aBx16b").
func tensorDesc(t graph.LogicalTensor) string {
	if t.Layout == graph.LayoutBlocked {
		return t.DataType.String() + ":" + graph.DimsString(t.Dims) + ":" + t.Tag
	}
	return t.DataType.String() + ":" + graph.DimsString(t.Dims) + ":" + graph.DimsString(t.Strides)
}

func (p *Partition) compile(inputs, outputs []graph.LogicalTensor) (*CompiledPartition, error) {
	if p.norm != nil {
		return p.compileNorm(inputs, outputs)
	}
	if p.arg != nil {
		return p.compileArg(inputs, outputs)
	}
	ins, err := matchPorts("input", p.inputs, inputs)
	if err != nil {
		return nil, err
	}
	for i := range ins {
		if ins[i], err = concreteInput(p.inputs[i], ins[i]); err != nil {
			return nil, err
		}
	}
	outs, err := matchPorts("output", p.outputs, outputs)
	if err != nil {
		return nil, err
	}
	r, err := p.makeRecipe(ins[0].Dims)
	if err != nil {
		return nil, err
	}
	// Infer the chain's shapes from the concrete inputs.
	known := map[uint64]graph.LogicalTensor{}
	for _, t := range ins {
		known[t.ID] = t
	}
	var last []int64
	var lastID uint64
	for _, op := range p.ops {
		opIns := make([]graph.LogicalTensor, len(op.Inputs))
		for i, t := range op.Inputs {
			if k, ok := known[t.ID]; ok {
				opIns[i] = k
			} else {
				opIns[i] = t
			}
		}
		dims, err := graph.InferOutputs(op, opIns)
		if err != nil {
			return nil, err
		}
		o := op.Outputs[0].Clone()
		if o.Dims, err = shape.MergeDims(op, o.ID, o.Dims, dims[0]); err != nil {
			return nil, err
		}
		if err := enlarges(op, opIns, lastID, last, o.Dims); err != nil {
			return nil, err
		}
		known[o.ID] = o
		last, lastID = o.Dims, o.ID
	}
	out := &outs[0]
	if out.DataType != p.outputs[0].DataType {
		return nil, status.Errorf(status.InvalidDataType, "output tensor %d is %s, the partition produces %s",
			out.ID, out.DataType, p.outputs[0].DataType)
	}
	if out.Dims, err = shape.MergeDims(p.ops[len(p.ops)-1], out.ID, out.Dims, last); err != nil {
		return nil, err
	}
	c := &CompiledPartition{p: p, inputs: ins, recipe: r, run: &runState{}}
	if r.axesPort < 0 {
		if !out.KnownDims() {
			return nil, status.Errorf(status.InvalidShape, "output tensor %d: dims %s could not be inferred", out.ID, graph.DimsString(out.Dims))
		}
		if err := settleLayout(out); err != nil {
			return nil, err
		}
		reduce, err := shape.NormalizeAxes(r.redOp, r.redOp.Inputs[0].ID, r.axes, len(ins[0].Dims))
		if err != nil {
			return nil, err
		}
		if c.kern, err = c.kernelFor(reduce, *out); err != nil {
			return nil, err
		}
	} else {
		ax := ins[r.axesPort]
		if len(ax.Dims) > 1 || ax.NumElements() > int64(len(ins[0].Dims)) {
			return nil, status.Errorf(status.InvalidShape, "axes tensor %d has dims %s; want a 1-D tensor (or rank 0: one axis) of at most %d axes",
				ax.ID, graph.DimsString(ax.Dims), len(ins[0].Dims))
		}
		switch {
		case out.KnownDims():
			if err := settleLayout(out); err != nil {
				return nil, err
			}
		case out.Layout == graph.LayoutBlocked && out.Dims != nil:
			// The axes decide the dims, not the rank: a tag of another
			// rank fits no axes, so it is refused now rather than at
			// every Execute.
			if _, err := blockedLayout(*out); err != nil {
				return nil, err
			}
		}
		c.run.byAxes = map[axesKey]*kernel{}
	}
	c.outputs = outs
	if err := c.settleNeeds(); err != nil {
		return nil, err
	}
	return c, nil
}

// settleNeeds works out inNeed and outNeed.
func (c *CompiledPartition) settleNeeds() error {
	c.inNeed = make([]int64, len(c.inputs))
	for i := range c.inputs {
		n, err := spanBytes(c.inputs[i])
		if err != nil {
			return err
		}
		c.inNeed[i] = n
	}
	c.outNeed = -1
	if out := c.outputs[0]; out.KnownDims() {
		n, err := spanBytes(out)
		if err != nil {
			return err
		}
		c.outNeed = n
	}
	return nil
}

// makeRecipe reads the ops' attributes into the reduction and post-op
// descriptions.
func (p *Partition) makeRecipe(srcDims []int64) (*recipe, error) {
	dq, ops, q := splitQuant(p.ops)
	var pre *graph.Op
	red := ops[0]
	if !red.Kind.IsReduction() {
		pre, red = red, ops[1]
	}
	r := &recipe{redOp: red, axesPort: -1, mask: -1}
	first := 1
	if pre != nil {
		first = 2
	}
	var err error
	if pre != nil && pre.Kind == graph.Exp {
		// Exp -> ReduceSum -> Log (partition.go checked the three):
		// log-sum-exp, computed shifted by the max; the Log is part of it.
		r.red, first = plan.LogSumExp, 3
	} else if pre != nil && pre.Kind == graph.Multiply && !pre.IsSquare() {
		if r.red, err = reductionOf(nil, red); err != nil {
			return nil, err
		}
		r.mask = portIndex(p.inputs, otherInput(pre, p.inputs[0].ID).ID)
		r.binPorts = []int{r.mask}
	} else if r.red, err = reductionOf(pre, red); err != nil {
		return nil, err
	}
	axes, fromAttr, err := graph.ReduceAxesAttr(red)
	if err != nil {
		return nil, err
	}
	r.axes = axes
	r.keepDims, _ = red.Bool("keep_dims")
	if !fromAttr {
		r.axesPort = portIndex(p.inputs, red.Inputs[1].ID)
	}
	var ql quantLowering
	if dq != nil || q != nil {
		ctx, why := newLowerCtx(ops, srcDims)
		if why == "" {
			ql, why = lower(dq, q, ctx)
		}
		if why != "" {
			return nil, status.Errorf(status.Unimplemented, "partition %d: %s", p.id, why)
		}
		if ql.swapMinMax {
			r.red = swapMinMax(r.red)
		}
		r.quant = ql.desc
	}
	r.emit(ql.pre)
	post, ports, err := p.chainPostOps(ops[first:], ops[first-1].Outputs[0].ID)
	if err != nil {
		return nil, err
	}
	r.postOps = append(r.postOps, post...)
	r.binPorts = append(r.binPorts, ports...)
	r.emit(ql.post)
	return r, nil
}

// chainPostOps reads the fused ops of a chain as post-ops: cur is the
// chain tensor the first of them reads, and each binary op's other
// operand gives its BinDT and, in ports, its input port.
func (p *Partition) chainPostOps(ops []*graph.Op, cur uint64) (post []plan.PostOp, ports []int, err error) {
	for _, op := range ops {
		po, err := postOpOf(op)
		if err != nil {
			return nil, nil, err
		}
		if op.Kind.IsBinary() {
			other := op.Inputs[1]
			if other.ID == cur {
				other = op.Inputs[0]
			}
			po.BinDT = other.DataType
			ports = append(ports, portIndex(p.inputs, other.ID))
		}
		post = append(post, po)
		cur = op.Outputs[0].ID
	}
	return post, ports, nil
}

func portIndex(ports []graph.LogicalTensor, id uint64) int {
	for i, t := range ports {
		if t.ID == id {
			return i
		}
	}
	return -1
}

// reductionOf maps a reduction op, and the Abs or square pre-op fused
// before it (nil if none), onto what the kernel computes: the pre-op is
// the per-element transform.
func reductionOf(pre, red *graph.Op) (plan.Reduction, error) {
	r, ok := plan.OfGraphOp(red.Kind.String())
	if !ok {
		return r, status.Errorf(status.Unimplemented, "%s: %s is not a reduction gdnn compiles", red, red.Kind)
	}
	if pre == nil {
		return r, nil
	}
	if r.Transform != plan.TransformNone || r.Combine == plan.CombineMul {
		return r, status.Errorf(status.Unimplemented, "%s: a %s pre-op before %s is not one transform", pre, pre.Kind, red.Kind)
	}
	switch {
	case pre.Kind == graph.Abs:
		r.Transform = plan.TransformAbs
	case pre.IsSquare():
		r.Transform = plan.TransformSquare
	case pre.Kind == graph.Multiply:
		// A Multiply by a broadcast operand (prefuse.go) is not a
		// transform: its partitions compile without a Quantize.
		return r, status.Errorf(status.Unimplemented, "%s: a Multiply by a broadcast operand before %s fuses only without a Quantize after it", pre, red.Kind)
	default:
		return r, status.Errorf(status.Unimplemented, "%s: %s is not a pre-op gdnn fuses", pre, pre.Kind)
	}
	return r, nil
}

// postOpOf maps a graph op onto the kernel's post-op description, by
// package ops's table: the kind of its op kind and mode, its parameters
// from the attributes the table names.
func postOpOf(op *graph.Op) (plan.PostOp, error) {
	mode, _ := op.Str("mode")
	k, ok := ops.OfGraphOp(op.Kind.String(), mode)
	if !ok {
		if modes := ops.Modes(op.Kind.String()); modes != nil {
			return plan.PostOp{}, status.Errorf(status.InvalidArguments, "%s: mode %q, want %s", op, mode, ops.ModesText(op.Kind.String()))
		}
		return plan.PostOp{}, status.Errorf(status.Unimplemented, "%s: %s is not a fusible post-op", op, op.Kind)
	}
	po := plan.PostOp{Kind: k}
	if name := k.Op().Alpha; name != "" {
		po.Alpha, _ = op.Float(name)
	}
	if name := k.Op().Beta; name != "" {
		po.Beta, _ = op.Float(name)
	}
	return po, nil
}

// matchPorts orders the given tensors like the ports, matching by id.
func matchPorts(what string, ports, given []graph.LogicalTensor) ([]graph.LogicalTensor, error) {
	out := make([]graph.LogicalTensor, len(ports))
	found := make([]bool, len(ports))
	for _, t := range given {
		i := portIndex(ports, t.ID)
		if i < 0 {
			return nil, status.Errorf(status.InvalidArguments, "%s tensor %d is not an %s port of the partition", what, t.ID, what)
		}
		if found[i] {
			return nil, status.Errorf(status.InvalidArguments, "%s tensor %d is given twice", what, t.ID)
		}
		found[i] = true
		out[i] = t.Clone()
	}
	for i, ok := range found {
		if !ok {
			return nil, status.Errorf(status.InvalidArguments, "%s port tensor %d is not given", what, ports[i].ID)
		}
	}
	return out, nil
}

// concreteInput checks an input given to Compile against its port.
func concreteInput(port, t graph.LogicalTensor) (graph.LogicalTensor, error) {
	if t.DataType != port.DataType {
		return t, status.Errorf(status.InvalidDataType, "input tensor %d is %s, the partition expects %s", t.ID, t.DataType, port.DataType)
	}
	if !t.KnownDims() {
		return t, status.Errorf(status.InvalidShape, "input tensor %d has dims %s; Compile needs concrete input dims", t.ID, graph.DimsString(t.Dims))
	}
	if port.Dims != nil {
		if _, err := shape.MergeDims(&graph.Op{}, t.ID, port.Dims, t.Dims); err != nil {
			return t, status.Errorf(status.InvalidShape, "input tensor %d has dims %s, the graph says %s",
				t.ID, graph.DimsString(t.Dims), graph.DimsString(port.Dims))
		}
	}
	if err := settleLayout(&t); err != nil {
		return t, err
	}
	if _, err := spanBytes(t); err != nil {
		return t, err
	}
	return t, nil
}

// readStrides returns the strides a tensor is read with, at Compile and
// at Execute alike: its own, or dense row-major where it gives none
// (layout any or undef, or strided without strides; given false). A
// layout value that is none of oneDNN's is an error.
func readStrides(t *graph.LogicalTensor) (strides []int64, given bool, err error) {
	switch {
	case t.Layout != graph.LayoutStrided && t.Layout != graph.LayoutAny && t.Layout != graph.LayoutUndef:
		return nil, false, status.Errorf(status.InvalidArguments, "tensor %d has layout %s", t.ID, t.Layout)
	case t.Layout != graph.LayoutStrided || t.Strides == nil:
		return graph.DenseStrides(t.Dims), false, nil
	}
	return t.Strides, true, nil
}

// settleLayout gives layout-any (or stride-less) tensors dense row-major
// strides (see readStrides) and checks explicit ones. A blocked tensor
// keeps its layout; its tag is checked against its dims.
func settleLayout(t *graph.LogicalTensor) error {
	if t.Layout == graph.LayoutBlocked {
		t.Strides = nil
		_, err := spanBytes(*t)
		return err
	}
	strides, _, err := readStrides(t)
	if err != nil {
		return err
	}
	t.Layout, t.Strides = graph.LayoutStrided, strides
	if len(t.Strides) != len(t.Dims) {
		return status.Errorf(status.InvalidShape, "tensor %d has %d dims but %d strides", t.ID, len(t.Dims), len(t.Strides))
	}
	for i, s := range t.Strides {
		if s < 0 {
			why := ""
			if t.KnownDims() && t.NumElements() < 0 {
				// Dense row-major strides overflow to unknown.
				why = fmt.Sprintf(" (dims %s: more than 2^63 elements)", graph.DimsString(t.Dims))
			}
			return status.Errorf(status.InvalidShape, "tensor %d stride %d is %d; strides must be known and non-negative%s", t.ID, i, s, why)
		}
	}
	_, err = spanBytes(*t)
	return err
}

// kernelFor builds the problem for one reduce mask and output tensor and
// compiles (or finds) its kernel.
func (c *CompiledPartition) kernelFor(reduce []bool, out graph.LogicalTensor) (kernel, error) {
	src := c.inputs[0]
	r := c.recipe
	outRank := len(out.Dims)
	want := shape.ReduceDims(src.Dims, reduce, r.keepDims)
	if len(want) != outRank {
		return kernel{}, status.Errorf(status.InvalidShape, "output tensor %d has dims %s, the reduction gives %s",
			out.ID, graph.DimsString(out.Dims), graph.DimsString(want))
	}
	for i := range want {
		if want[i] != out.Dims[i] {
			return kernel{}, status.Errorf(status.InvalidShape, "output tensor %d has dims %s, the reduction gives %s",
				out.ID, graph.DimsString(out.Dims), graph.DimsString(want))
		}
	}
	blockedIO := src.Layout == graph.LayoutBlocked || out.Layout == graph.LayoutBlocked
	if !blockedIO {
		if err := checkNoSelfOverlap(out); err != nil {
			return kernel{}, err
		}
	}
	rank := len(src.Dims)
	// outDim[i] is the output dim that src dim i maps to, -1 if dropped.
	outDim := make([]int, rank)
	j := 0
	for i := range rank {
		outDim[i] = -1
		if !reduce[i] || r.keepDims {
			outDim[i] = j
			j++
		}
	}
	p := &plan.Problem{
		Reduction: r.red,
		SrcDT:     src.DataType, DstDT: out.DataType,
		Dims: append([]int64(nil), src.Dims...), SrcStrides: append([]int64(nil), src.Strides...),
		Reduce: reduce, DstStrides: make([]int64, rank),
	}
	for i := range rank {
		if !reduce[i] && !blockedIO {
			p.DstStrides[i] = out.Strides[outDim[i]]
		}
	}
	bin := 0
	if r.mask >= 0 {
		bin = 1 // binPorts[0] is the mask
	}
	for _, po := range r.postOps {
		if po.Kind.IsBinary() {
			port := r.binPorts[bin]
			bin++
			if k := constIndex(port); k >= 0 {
				po.BinStrides = r.consts[k].strides(rank)
			} else {
				operand := c.inputs[port]
				if operand.Layout == graph.LayoutBlocked {
					return kernel{}, status.Errorf(status.Unimplemented, "binary operand tensor %d: blocked layout %q; gdnn takes blocked layouts for the src and the output only",
						operand.ID, operand.Tag)
				}
				strides, err := operandStrides(operand, out, outDim, reduce)
				if err != nil {
					return kernel{}, err
				}
				po.BinStrides = strides
			}
		}
		p.PostOps = append(p.PostOps, po)
	}
	if r.mask >= 0 {
		return c.maskedKernel(p, blockedIO)
	}
	if blockedIO {
		return blockedKernel(p, src, out, outDim)
	}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		return kernel{}, err
	}
	return compileKernel(pl)
}

// operandStrides addresses a binary operand, broadcast numpy style onto
// the output, in the src dims' index space (0 where broadcast or reduced).
func operandStrides(b, out graph.LogicalTensor, outDim []int, reduce []bool) ([]int64, error) {
	off := len(out.Dims) - len(b.Dims)
	if off < 0 {
		return nil, status.Errorf(status.InvalidShape, "binary operand tensor %d has rank %d, more than the output's %d",
			b.ID, len(b.Dims), len(out.Dims))
	}
	for k, d := range b.Dims {
		if d != 1 && d != out.Dims[off+k] {
			return nil, status.Errorf(status.InvalidShape, "binary operand tensor %d (%s) does not broadcast onto output tensor %d (%s)",
				b.ID, graph.DimsString(b.Dims), out.ID, graph.DimsString(out.Dims))
		}
	}
	s := make([]int64, len(outDim))
	for i, j := range outDim {
		if j < 0 || reduce[i] {
			continue
		}
		if k := j - off; k >= 0 && b.Dims[k] != 1 {
			s[i] = b.Strides[k]
		}
	}
	return s, nil
}

// checkNoSelfOverlap rejects an output layout in which two elements share
// memory (a stride 0 on a dim of size > 1, or interleaved strides).
func checkNoSelfOverlap(t graph.LogicalTensor) error {
	if plan.SelfOverlaps(t.Dims, t.Strides) {
		return status.Errorf(status.InvalidArguments, "output tensor %d: strides %s %s",
			t.ID, graph.DimsString(t.Strides), plan.NestRule)
	}
	return nil
}

// QueryLogicalTensor returns the concrete description of a port tensor:
// for outputs, the dims and strides compile chose. Where the axes arrive
// as a tensor and the output was compiled without concrete dims, the dims
// the axes decide are graph.UnknownDim; QueryLogicalTensorWithAxes gives
// them for given axes values.
func (c *CompiledPartition) QueryLogicalTensor(id uint64) (graph.LogicalTensor, error) {
	if err := c.usable("QueryLogicalTensor"); err != nil {
		return graph.LogicalTensor{}, err
	}
	for _, ts := range [][]graph.LogicalTensor{c.inputs, c.outputs} {
		if i := portIndex(ts, id); i >= 0 {
			return ts[i].Clone(), nil
		}
	}
	return graph.LogicalTensor{}, status.Errorf(status.InvalidArguments, "tensor %d is not a port of partition %d", id, c.p.id)
}

// QueryLogicalTensorWithAxes returns the concrete description of a port
// tensor when Execute is given these values in the run-time axes tensor:
// for the output, the dims those axes give in the layout it was compiled
// with. An output compiled with concrete dims is returned as compiled.
// One compiled with unknown dims keeps what compile was told of its
// layout: a blocked output keeps its format tag, a strided one its
// strides where all were given; one compiled as layout any (or strided
// without known strides) is dense row-major. An Execute with those axes
// accepts a tensor made from it (with unknown compiled dims Execute also
// takes any other valid layout of those dims). Axes out of range or
// repeated are an error, as at Execute; so are axes that do not fit an
// output compiled with concrete dims, and dims the compiled tag or
// strides cannot describe (strides that make elements overlap, say),
// which Execute would refuse in that layout too (Compile already refuses
// a tag of another rank than the output's, which no axes could fit). A
// partition whose axes are an attribute has no run-time axes: that is an
// error too (use QueryLogicalTensor).
func (c *CompiledPartition) QueryLogicalTensorWithAxes(id uint64, axes []int64) (graph.LogicalTensor, error) {
	if err := c.usable("QueryLogicalTensorWithAxes"); err != nil {
		return graph.LogicalTensor{}, err
	}
	if c.norm != nil || c.arg != nil || c.recipe.axesPort < 0 {
		return graph.LogicalTensor{}, status.Errorf(status.InvalidArguments,
			"QueryLogicalTensorWithAxes: partition %d has its axes as an attribute, not a run-time tensor; use QueryLogicalTensor", c.p.id)
	}
	lt, err := c.QueryLogicalTensor(id)
	if err != nil || portIndex(c.outputs, id) < 0 {
		return lt, err
	}
	if n := c.inputs[c.recipe.axesPort].NumElements(); int64(len(axes)) != n {
		return graph.LogicalTensor{}, status.Errorf(status.InvalidArguments,
			"QueryLogicalTensorWithAxes: %d axes given; the axes tensor %d holds %d", len(axes), c.inputs[c.recipe.axesPort].ID, n)
	}
	ax, err := c.axesFor(slices.Clone(axes))
	if err != nil {
		return graph.LogicalTensor{}, err
	}
	if lt.KnownDims() {
		if !slices.Equal(lt.Dims, ax.dims) {
			return graph.LogicalTensor{}, status.Errorf(status.InvalidShape,
				"output tensor %d was compiled with dims %s; for axes %s the partition gives %s",
				id, graph.DimsString(lt.Dims), axesList(axes), graph.DimsString(ax.dims))
		}
		return lt, nil
	}
	// lt is a clone: it keeps the data type, the property and the layout
	// compile was given. Returning dense for a blocked or explicitly
	// strided output would describe a layout the caller never asked for
	// (Execute would take it, but the caller's other code, written for
	// the layout it compiled, would read it wrongly).
	out := lt
	out.Dims = ax.dims
	if out.Layout != graph.LayoutBlocked && !knownStrides(out.Strides) {
		out.Layout, out.Strides = graph.LayoutStrided, nil
	}
	err = settleLayout(&out)
	if err == nil && out.Layout == graph.LayoutStrided {
		err = checkNoSelfOverlap(out)
	}
	if err != nil {
		return graph.LogicalTensor{}, status.Errorf(statusOf(err), "QueryLogicalTensorWithAxes: axes %s give output tensor %d dims %s, which its compiled layout cannot describe: %s",
			axesList(axes), id, graph.DimsString(ax.dims), msgOf(err))
	}
	return out, nil
}

// knownStrides reports whether strides were given and every one is known
// (a layout compile can keep while the dims are unknown); nil or any
// UnknownDim leaves the layout open.
func knownStrides(strides []int64) bool {
	return strides != nil && !slices.ContainsFunc(strides, func(s int64) bool { return s < 0 })
}

// usable reports why c cannot be used by method what: nil, or a zero
// CompiledPartition that Compile did not make.
func (c *CompiledPartition) usable(what string) error {
	switch {
	case c == nil:
		return status.Errorf(status.InvalidArguments, "%s on a nil compiled partition", what)
	case c.p == nil || c.recipe == nil && c.norm == nil && c.arg == nil || c.run == nil:
		return status.Errorf(status.InvalidArguments, "%s on a zero CompiledPartition: get one from Partition.Compile", what)
	}
	return nil
}

// Inputs returns the compiled input tensors, in port order (none for a
// nil CompiledPartition).
func (c *CompiledPartition) Inputs() []graph.LogicalTensor {
	if c == nil {
		return nil
	}
	return cloneTensors(c.inputs)
}

// Outputs returns the compiled output tensors (none for a nil
// CompiledPartition).
func (c *CompiledPartition) Outputs() []graph.LogicalTensor {
	if c == nil {
		return nil
	}
	return cloneTensors(c.outputs)
}

// Partition returns the partition c was compiled from (nil for a nil or
// zero CompiledPartition).
func (c *CompiledPartition) Partition() *Partition {
	if c == nil {
		return nil
	}
	return c.p
}

// Impl names the implementation that runs the partition ("jit:avx512",
// "jit:avx2", "jit:neon" or "interp"): "interp" when the interpreter runs
// any part of it, such as one sub-plan of a loop nest too deep for the
// machine code, while the JIT runs the rest (Reason says why). With axes given as a tensor the
// kernel is chosen at execute time; Impl then names the one the latest
// Execute used (before any, the implementation a new kernel would get).
func (c *CompiledPartition) Impl() string {
	if c.usable("Impl") != nil {
		return defaultImpl()
	}
	if c.norm != nil {
		return c.norm.exec.Impl()
	}
	if c.arg != nil {
		return c.arg.kern.Impl()
	}
	if c.kern.ok() {
		return c.kern.Impl()
	}
	if k := c.run.last.Load(); k != nil {
		return k.Impl()
	}
	return defaultImpl()
}

// Reason says why the interpreter runs the compiled partition, or any
// part of it: "" when machine code runs all of it, otherwise
// "interpreter: " and the cause, e.g. a loop nest deeper than the JIT's
// (a high-rank tensor whose reduced and kept dims alternate), no JIT for
// the machine or under GDNN_MAX_CPU_ISA, a data type or post-op without
// JIT code. Impl alone says "interp" and not why; an interpreted post-op
// pass, which Impl does not count, is given here too. With axes given as
// a tensor it describes the kernel the latest Execute used ("" before
// any). The verbose compile line (GDNN_VERBOSE) ends with the same cause.
func (c *CompiledPartition) Reason() string {
	if c.usable("Reason") != nil {
		return ""
	}
	if c.norm != nil {
		return c.norm.reason()
	}
	if c.arg != nil {
		return c.arg.reason()
	}
	k := c.kern
	if !k.ok() {
		last := c.run.last.Load()
		if last == nil {
			return ""
		}
		k = *last
	}
	if why := k.Why(); why != "" {
		return "interpreter: " + why
	}
	return ""
}

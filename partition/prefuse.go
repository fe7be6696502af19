package partition

import (
	"fmt"
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
	"github.com/gdnn/gdnn/internal/normprog"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/preop"
	"github.com/gdnn/gdnn/internal/shape"
	"github.com/gdnn/gdnn/internal/status"
)

// A transformer block normalizes the sum of its residual connection:
//
//	h = Add(x, skip)         (or Add(Add(x, skip), bias))
//	y = RMSNorm(h, gamma)    (or LayerNorm)
//
// and reads h again as the next residual. Run op by op, that writes h
// and reads it back twice. fuseResidual makes the Add (and the bias Add)
// and the normalization one partition (ONNX Runtime's
// SkipLayerNormalization): each chunk of rows computes its sum and
// normalizes it while it is in cache (normprog.Residual). Where the
// graph reads the sum elsewhere, it is the partition's last output port.

// residual is a fused residual sum before a partition's normalization.
type residual struct {
	add  *graph.Op // Add(x, skip)
	bias *graph.Op // Add(sum, bias) after it; nil: none
	sum  graph.LogicalTensor
	out  bool // the graph reads sum elsewhere: it is an output port
}

// fuseResidual returns the group that starts at a residual Add: the Add,
// the bias Add, the LayerNorm or RMSNorm and its post-ops; nil when op
// starts none. Why an Add that feeds a normalization is not fused goes
// to notFused, and why the chain after it stops.
func fuseResidual(g *graph.Graph, op *graph.Op, taken *sched, notFused map[uint64]string) ([]*graph.Op, *residual) {
	res, nrm, why := matchResidual(g, op, taken)
	if why != "" {
		notFused[op.ID] = why
	}
	if res == nil {
		return nil, nil
	}
	ops := []*graph.Op{res.add}
	if res.bias != nil {
		ops = append(ops, res.bias)
	}
	ops = append(ops, nrm)
	ops = append(ops, normPostOps(g, nrm, taken, notFused)[1:]...)
	return ops, res
}

// matchResidual finds the LayerNorm or RMSNorm that add feeds, through a
// bias Add or directly, and checks that the group can be one partition:
// nil and why not where add feeds one but does not fuse.
func matchResidual(g *graph.Graph, add *graph.Op, taken *sched) (*residual, *graph.Op, string) {
	if add.Kind != graph.Add || len(add.Inputs) != 2 || len(add.Outputs) != 1 {
		return nil, nil, ""
	}
	res := &residual{add: add, sum: add.Outputs[0]}
	nrm := normReading(g, res.sum.ID)
	if cons := uniqueOps(g.Consumers(res.sum.ID)); nrm == nil && len(cons) >= 1 {
		for _, c := range cons {
			if c.Kind == graph.Add && len(c.Outputs) == 1 {
				if n := normReading(g, c.Outputs[0].ID); n != nil {
					res.bias, res.sum, nrm = c, c.Outputs[0], n
					break
				}
			}
		}
		if nrm != nil && len(cons) > 1 {
			return nil, nil, fmt.Sprintf("not fused before %s: the sum %d of %s is read by %d ops; only the sum after the bias %s may be read elsewhere",
				nrm, add.Outputs[0].ID, add, len(cons), res.bias)
		}
	}
	if nrm == nil {
		return nil, nil, ""
	}
	fail := func(format string, args ...any) (*residual, *graph.Op, string) {
		return nil, nil, fmt.Sprintf("not fused before %s: ", nrm) + fmt.Sprintf(format, args...)
	}
	x, skip := add.Inputs[0], add.Inputs[1]
	if !x.KnownDims() || !skip.KnownDims() || !slices.Equal(x.Dims, skip.Dims) {
		return fail("%s adds dims %s and %s; a residual Add adds two tensors of one known shape (a broadcast operand fuses as a bias Add after it)",
			add, graph.DimsString(x.Dims), graph.DimsString(skip.Dims))
	}
	ts := []graph.LogicalTensor{x, skip, add.Outputs[0], res.sum}
	if res.bias != nil {
		other := otherInput(res.bias, add.Outputs[0].ID)
		if other.ID == add.Outputs[0].ID {
			return fail("%s adds the sum to itself", res.bias)
		}
		// The fused sum is x + skip + bias in f32, rounded once to the
		// type of the sum after the bias: a narrower x + skip (bf16
		// before an f32 bias Add) would lose the rounding the ops give it.
		if mid, dt := add.Outputs[0].DataType, res.sum.DataType; mid != dtypes.F32 && mid != dt {
			return fail("the sum %d of %s is %s and the sum %d after the bias %s is %s; fused, it would not be rounded to %s",
				add.Outputs[0].ID, add, mid, res.sum.ID, res.bias, dt, mid)
		}
		if mode, _ := res.bias.Str("auto_broadcast"); !other.KnownDims() || !broadcastsOnto(other.Dims, x.Dims) ||
			mode == "none" && !slices.Equal(other.Dims, x.Dims) {
			return fail("the bias %d of %s has dims %s, which do not broadcast onto %s without enlarging it", other.ID, res.bias,
				graph.DimsString(other.Dims), graph.DimsString(x.Dims))
		}
		ts = append(ts, other)
	}
	for _, t := range ts {
		if dt := t.DataType; dt != dtypes.F32 && dt != dtypes.BF16 && dt != dtypes.F16 {
			return fail("tensor %d is %s; a fused residual sum is f32, bf16 or f16", t.ID, dt)
		}
	}
	// The group takes the Add's place in the partitions: what the bias
	// Add and the normalization read besides the sum must be ready.
	reads := slices.Clone(nrm.Inputs[1:])
	if res.bias != nil {
		reads = append(reads, res.bias.Inputs...)
	}
	for _, t := range reads {
		if t.ID == res.sum.ID {
			return fail("it reads the sum %d as its gamma or beta", t.ID)
		}
	}
	for _, t := range reads {
		if p := g.Producer(t.ID); p != add {
			if why := taken.wait(p, add.String()); why != "" {
				return fail("its input %d is produced by %s, %s", t.ID, p, why)
			}
		}
	}
	res.out = len(uniqueOps(g.Consumers(res.sum.ID))) > 1
	return res, nrm, ""
}

// normReading is the LayerNorm or RMSNorm that reads tensor id as its
// src, or nil.
func normReading(g *graph.Graph, id uint64) *graph.Op {
	for _, c := range g.Consumers(id) {
		if (c.Kind == graph.LayerNorm || c.Kind == graph.RMSNorm) && c.Inputs[0].ID == id {
			return c
		}
	}
	return nil
}

// otherInput is a binary op's input that is not tensor id (its first,
// when both are).
func otherInput(op *graph.Op, id uint64) graph.LogicalTensor {
	if op.Inputs[0].ID == id {
		return op.Inputs[1]
	}
	return op.Inputs[0]
}

// setResidual makes p, newPartition's group of fuseResidual's ops, the
// normalization partition with its residual sum in front.
func (p *Partition) setResidual(res *residual) {
	p.res = res
	p.post = 2
	if res.bias != nil {
		p.post = 3
	}
	p.norm = p.ops[p.post-1]
	p.pattern = "residual Add"
	if res.bias != nil {
		p.pattern += " and bias Add"
	}
	p.pattern += " before " + p.norm.Kind.String()
	if res.out {
		p.outputs = append(p.outputs, res.sum.Clone())
	}
	p.supported, p.reason = true, ""
}

// residualSum returns the concrete sum a compiled residual partition
// normalizes, in dense row-major layout (where it is also an output
// port, compileNorm gives it that port's layout), and the Residual that
// computes it with the operands' ports.
func (r *normRun) residualSum(p *Partition, ins []graph.LogicalTensor) (graph.LogicalTensor, error) {
	res := p.res
	r.resIn = [3]int{portIndex(p.inputs, res.add.Inputs[0].ID), portIndex(p.inputs, res.add.Inputs[1].ID), -1}
	x, skip := ins[r.resIn[0]], ins[r.resIn[1]]
	if !slices.Equal(x.Dims, skip.Dims) {
		return graph.LogicalTensor{}, status.Errorf(status.InvalidShape, "%s: its inputs %d and %d have dims %s and %s; a fused residual Add adds tensors of one shape",
			res.add, x.ID, skip.ID, graph.DimsString(x.Dims), graph.DimsString(skip.Dims))
	}
	sum := res.sum.Clone()
	sum.Dims = slices.Clone(x.Dims)
	sum.Layout, sum.Strides = graph.LayoutStrided, graph.DenseStrides(sum.Dims)
	return sum, nil
}

// residualOf is the normprog.Residual of a compiled partition whose sum
// has the concrete layout sum, kept where it is an output port.
func (r *normRun) residualOf(p *Partition, ins []graph.LogicalTensor, sum graph.LogicalTensor) (*normprog.Residual, error) {
	res := p.res
	same := make([]int, len(sum.Dims))
	for i := range same {
		same[i] = i
	}
	none := make([]bool, len(same))
	nr := &normprog.Residual{KeepSum: res.out}
	for i, o := range []*normprog.Operand{&nr.X, &nr.Skip} {
		t := ins[r.resIn[i]]
		o.DT, o.Strides = t.DataType, slices.Clone(t.Strides)
	}
	if res.bias != nil {
		b := otherInput(res.bias, res.add.Outputs[0].ID)
		r.resIn[2] = portIndex(p.inputs, b.ID)
		s, err := operandStrides(ins[r.resIn[2]], sum, same, none)
		if err != nil {
			return nil, err
		}
		nr.Bias = &normprog.Operand{DT: ins[r.resIn[2]].DataType, Strides: s}
	}
	return nr, nil
}

// run runs a compiled normalization partition's executor, eps the
// run-time epsilon of a decomposed one (else nil): with a residual sum,
// from its operands, the sum into the last output where the graph reads
// it.
func (r *normRun) run(p *Partition, b norm.Buffers, eps []byte, ins, outs []*Tensor, bins [][]byte) error {
	if p.res == nil {
		return r.exec.RunEps(b, eps, bins, jit.Threads())
	}
	if p.res.out {
		b.Src = outs[len(outs)-1].buf
	}
	var bias []byte
	if r.resIn[2] >= 0 {
		bias = ins[r.resIn[2]].buf
	}
	return r.exec.RunResidual(b, ins[r.resIn[0]].buf, ins[r.resIn[1]].buf, bias, bins)
}

// A Multiply by a broadcast operand before a ReduceSum or ReduceMean is
// masked pooling (x [B,T,H] times mask [B,T,1], averaged over T) or a
// weighted sum: the Multiply fuses as the reduction's pre-op, and the
// partition runs as an internal/preop program that multiplies and
// reduces each chunk of x in cache, so x is read from memory once and
// the product never written.

// maskFusible says why the Multiply op does not fuse before the
// reduction red, or "". One of its operands (the src) has the product's
// dims, the other (the mask) broadcasts onto it without enlarging it;
// both are known, float, and ready before the group's place in
// topological order; red is a ReduceSum or ReduceMean with its axes an
// attribute.
func maskFusible(g *graph.Graph, op, red *graph.Op, taken *sched) string {
	if red.Kind != graph.ReduceSum && red.Kind != graph.ReduceMean {
		return fmt.Sprintf("a Multiply of two tensors fuses before ReduceSum and ReduceMean only, not %s", red.Kind)
	}
	if len(red.Inputs) != 1 {
		return "a Multiply of two tensors fuses only before a reduction whose axes are an attribute"
	}
	if dt := op.Outputs[0].DataType; !dt.IsFloat() {
		return fmt.Sprintf("its output is %s, and a fused pre-op's result stays f32 (the rounding and saturation to %s would be lost)", dt, dt)
	}
	a, b := op.Inputs[0], op.Inputs[1]
	if !a.KnownDims() || !b.KnownDims() {
		return fmt.Sprintf("its operands' dims %s and %s are not known", graph.DimsString(a.Dims), graph.DimsString(b.Dims))
	}
	if !broadcastsOnto(b.Dims, a.Dims) && !broadcastsOnto(a.Dims, b.Dims) {
		return fmt.Sprintf("neither of its operands' dims %s and %s broadcasts onto the other without enlarging it; the fused Multiply reads one tensor of the product's dims",
			graph.DimsString(a.Dims), graph.DimsString(b.Dims))
	}
	// The program cuts kept dims into chunks: with none (or only dims
	// of size 1) kept, its scratch would hold the whole product.
	src := a
	if !broadcastsOnto(b.Dims, a.Dims) {
		src = b
	}
	axes, _, err := graph.ReduceAxesAttr(red)
	if err != nil {
		return err.Error()
	}
	reduce, err := shape.NormalizeAxes(red, src.ID, axes, len(src.Dims))
	if err != nil {
		return err.Error()
	}
	kept := false
	for i, n := range src.Dims {
		kept = kept || !reduce[i] && n > 1
	}
	if !kept {
		return "the reduction keeps no dim to cut into chunks; a fused Multiply would hold the whole product in scratch"
	}
	for _, t := range op.Inputs {
		if dt := t.DataType; dt != dtypes.F32 && dt != dtypes.BF16 && dt != dtypes.F16 {
			return fmt.Sprintf("its operand %d is %s; a fused Multiply reads f32, bf16 or f16", t.ID, dt)
		}
	}
	for _, t := range op.Inputs {
		p := g.Producer(t.ID)
		if why := taken.wait(p, "it"); why != "" {
			return fmt.Sprintf("its operand %d is produced by %s, %s", t.ID, p, why)
		}
	}
	return ""
}

// maskedSrcFirst makes the src of a fused Multiply by a broadcast
// operand (the operand of the product's dims) p's first input port, the
// tensor the reduction reads.
func (p *Partition) maskedSrcFirst() {
	if !p.supported || len(p.ops) < 2 || p.ops[0].Kind != graph.Multiply || p.ops[0].IsSquare() || !p.ops[1].Kind.IsReduction() {
		return
	}
	a, b := p.ops[0].Inputs[0], p.ops[0].Inputs[1]
	if !broadcastsOnto(b.Dims, a.Dims) && p.inputs[0].ID == a.ID {
		p.inputs[0], p.inputs[1] = p.inputs[1], p.inputs[0]
	}
}

// maskedKernel compiles the problem of a reduction after a Multiply by
// a broadcast operand (c.recipe.mask), its post-ops' operands in pr.
func (c *CompiledPartition) maskedKernel(pr *plan.Problem, blockedIO bool) (kernel, error) {
	src, mask := c.inputs[0], c.inputs[c.recipe.mask]
	if blockedIO || mask.Layout == graph.LayoutBlocked {
		return kernel{}, status.Errorf(status.Unimplemented, "a reduction after a fused Multiply takes strided tensors, not blocked layouts")
	}
	same := make([]int, len(src.Dims))
	for i := range same {
		same[i] = i
	}
	strides, err := operandStrides(mask, src, same, make([]bool, len(same)))
	if err != nil {
		return kernel{}, err
	}
	prog, err := preop.Compile(&preop.Desc{Problem: *pr, OpDT: mask.DataType, OpStrides: strides})
	if err != nil {
		return kernel{}, err
	}
	return kernel{m: prog}, nil
}

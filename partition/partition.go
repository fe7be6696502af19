// Package partition is gdnn's public compile-and-run API, in the style of
// oneDNN Graph: Get splits a finalized graph into partitions, a supported
// partition compiles for concrete input shapes into a CompiledPartition,
// and a CompiledPartition executes on tensors, from any number of
// goroutines at once.
//
// gdnn compiles reduction partitions: a ReduceSum, ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL1 or ReduceL2 alone, or (with the Fusion
// policy) preceded by an Abs or Square pre-op that becomes the reduction's
// per-element transform (Square -> ReduceSum is a sum of squares; a Pow
// with beta 2 or a Multiply of a tensor by itself is a Square) or by a
// Multiply by a broadcast operand (a mask; ReduceSum and ReduceMean), and
// followed by a chain of eltwise and binary post-ops. 8-bit integer data
// enters as in oneDNN Graph: a Dequantize (s8/u8 -> f32) feeding the
// reduction and a Quantize (f32 -> s8/u8) after the chain fuse into the
// same partition, which then reads and writes the 8-bit tensors with no
// f32 intermediate in memory (quant.go says what lowers and what does
// not; what does not stays a partition of its own whose Reason says
// why). The normalization ops (SoftMax, LogSoftmax, LayerNorm, RMSNorm,
// GroupNorm) compile with the eltwise and binary ops after them as their
// post-ops, then a TypeCast and its post-ops and a per-tensor Quantize
// (norm_tail.go); a residual sum Add(x, skip) [-> Add(bias)] in front of
// a LayerNorm or RMSNorm fuses into its partition (prefuse.go), and so
// does a per-tensor Dequantize of an s8 or u8 src in front of any of
// them, which the kernel applies as it loads src (dequant_norm.go). They run
// as programs of compiled reduction kernels (machine code where the
// reductions have it; Impl and Reason say). The softmax, layer norm, RMS
// norm and L2 normalization that exporters write as several ops are each
// recognized as one such partition (pattern.go, pattern_norm.go). Every other op
// becomes a partition of its own that reports it is not supported, and
// why it was not fused, so that a framework can run it itself.
//
// What each reduction computes, on an empty axis, with NaN and in which
// precision is in the README's Semantics section.
package partition

import (
	"fmt"
	"strings"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Policy selects how ops are grouped into partitions.
type Policy int

const (
	// Fusion fuses a reduction with an Abs or Square pre-op (or another
	// form of a square) and the chain of post-ops that follows it.
	Fusion Policy = iota
	// Debug puts every op in a partition of its own.
	Debug
)

// String returns "fusion" or "debug".
func (p Policy) String() string {
	switch p {
	case Fusion:
		return "fusion"
	case Debug:
		return "debug"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// Partition is a group of ops that compiles and executes as one unit.
// Its input ports are the tensors it reads from outside (the reduction's
// src, or its pre-op's; its axes tensor if any; the second operands of
// binary post-ops, in that order); its output ports are the last op's
// outputs, then a fused residual sum the graph reads elsewhere.
type Partition struct {
	id        int
	ops       []*graph.Op
	inputs    []graph.LogicalTensor
	outputs   []graph.LogicalTensor
	supported bool
	reason    string
	fpmath    string
	// norm is the normalization the partition computes (nil: none), its
	// post-ops ops[post:]: ops[0] itself, or the op a recognized pattern
	// of ops[:post] computes (pattern names it).
	norm    *graph.Op
	post    int
	pattern string
	// res is the residual sum the normalization reads (nil: none), its
	// Adds ops[:post-1]; where the graph reads the sum elsewhere, it is
	// the last output port.
	res *residual
	dec *decomposed // a decomposed normalization's (see matchPattern); nil: norm's kind
	// dq is the Dequantize before the normalization (nil: none), ops[0]:
	// norm reads the 8-bit src it dequantizes (dequant_norm.go).
	dq *graph.Op
	// arg is the index reduction the partition computes (nil: none),
	// the last of its ops; an Abs before it is its pre-op.
	arg *graph.Op
}

// The accessors take a nil *Partition as a partition of no ops: zero
// values, -1 for its ID, and Reason says it is nil (Compile refuses it).

// ID returns the partition's index in the list Get returned (-1 for nil).
func (p *Partition) ID() int {
	if p == nil {
		return -1
	}
	return p.id
}

// Ops returns the partition's ops in execution order. They belong to the
// graph: do not modify them.
func (p *Partition) Ops() []*graph.Op {
	if p == nil {
		return nil
	}
	return append([]*graph.Op(nil), p.ops...)
}

// Inputs returns the partition's input ports.
func (p *Partition) Inputs() []graph.LogicalTensor {
	if p == nil {
		return nil
	}
	return cloneTensors(p.inputs)
}

// Outputs returns the partition's output ports.
func (p *Partition) Outputs() []graph.LogicalTensor {
	if p == nil {
		return nil
	}
	return cloneTensors(p.outputs)
}

// IsSupported reports whether gdnn can compile the partition.
func (p *Partition) IsSupported() bool { return p != nil && p.supported }

// Reason says why the partition is not supported ("" when it is).
func (p *Partition) Reason() string {
	if p == nil {
		return "nil partition"
	}
	return p.reason
}

// Pattern names the fused form the partition was recognized as, or ""
// for a single op with the ops fused before and after it: a
// normalization spelled out in ops ("rmsnorm from ..."), a residual
// sum before a normalization ("residual Add before RMSNorm"), or a
// Dequantize before either ("Dequantize before LayerNorm", "Dequantize
// before rmsnorm from ..."). The verbose compile line names it too.
func (p *Partition) Pattern() string {
	if p == nil {
		return ""
	}
	return p.pattern
}

// String describes the partition, e.g. "partition 0 [Square(1) -> ReduceSum(2) -> ReLU(3)] supported".
func (p *Partition) String() string {
	if p == nil {
		return "nil partition"
	}
	names := make([]string, len(p.ops))
	for i, op := range p.ops {
		names[i] = fmt.Sprintf("%s(%d)", op.Kind, op.ID)
	}
	s := fmt.Sprintf("partition %d [%s]", p.id, strings.Join(names, " -> "))
	if p.supported {
		return s + " supported"
	}
	return s + " unsupported: " + p.reason
}

func cloneTensors(ts []graph.LogicalTensor) []graph.LogicalTensor {
	out := make([]graph.LogicalTensor, len(ts))
	for i, t := range ts {
		out[i] = t.Clone()
	}
	return out
}

// Get returns the partitions of a finalized graph in an order to execute
// them in: each reads graph inputs and outputs of partitions before it.
// Every op except End belongs to exactly one partition. Groups form in
// graph order, except that a group waits for the partitions of the ops
// that compute what it reads (order.go).
func Get(g *graph.Graph, policy Policy) ([]*Partition, error) {
	if g == nil {
		return nil, status.Errorf(status.InvalidArguments, "partition.Get: graph is nil")
	}
	if !g.Finalized() {
		return nil, status.Errorf(status.InvalidGraph, "partition.Get: the graph is not finalized; call Finalize first")
	}
	if policy != Fusion && policy != Debug {
		return nil, status.Errorf(status.InvalidArguments, "partition.Get: unknown policy %d", int(policy))
	}
	s := newSched(g, policy)
	for _, op := range g.Ops() {
		if !s.has(op) && op.Kind != graph.End {
			s.emit(op)
		}
	}
	return s.parts, nil
}

// group forms the partition that starts at op from the ops not yet
// taken, with why ops next to it were not fused in notFused. It takes
// nothing: emit decides whether the group stands or waits for the
// producer of an operand first.
func (s *sched) group(op *graph.Op, notFused map[uint64]string) *Partition {
	g, policy, taken := s.g, s.policy, s
	ops := []*graph.Op{op}
	reason := ""
	var pat *normPattern
	var res *residual
	if policy == Fusion {
		pat = matchPattern(g, op, taken)
	}
	var resOps []*graph.Op
	if policy == Fusion && pat == nil {
		resOps, res = fuseResidual(g, op, taken, notFused)
	}
	var dqNorm *graph.Op
	var dqPat *normPattern
	if policy == Fusion && pat == nil && res == nil {
		var why string
		if dqNorm, why = dequantNorm(g, op, taken); why != "" {
			notFused[op.ID] = why
		}
		if dqNorm == nil && why == "" {
			if dqPat, why = dequantPattern(g, op, taken); why != "" {
				notFused[op.ID] = why
			}
		}
	}
	if dqPat != nil {
		ops = append(append([]*graph.Op{op}, dqPat.ops...), normPostOps(g, dqPat.op, taken, notFused)[1:]...)
	} else if dqNorm != nil {
		ops = append([]*graph.Op{op}, normPostOps(g, dqNorm, taken, notFused)...)
	} else if res != nil {
		ops = resOps
	} else if pat != nil {
		// The pattern's ops, then the chain after the op it computes.
		ops = append(pat.ops, normPostOps(g, pat.op, taken, notFused)[1:]...)
	} else if policy == Fusion && op.Kind.IsNormalization() {
		// Eltwise and binary ops after a normalization are its
		// post-ops (of dst, where it keeps its statistics too).
		ops = normPostOps(g, op, taken, notFused)
	} else if arg := absBeforeArg(g, op, taken); policy == Fusion && arg != nil {
		ops = []*graph.Op{op, arg}
	} else if policy == Fusion {
		red, dq := op, (*graph.Op)(nil)
		switch {
		case op.Kind == graph.Dequantize:
			var why string
			// A reason from before a normalization (above) is
			// the one to give.
			if red, why = dequantTarget(g, op, taken); why != "" && notFused[op.ID] == "" {
				notFused[op.ID] = why
			}
			dq = op
		case !op.Kind.IsReduction():
			var why string
			if red, why = preOpTarget(g, op, taken); why != "" {
				notFused[op.ID] = why
			}
		}
		if red != nil {
			chain, stop, why := fuseChain(g, red, taken)
			for _, op := range stop {
				notFused[op.ID] = why
			}
			if red != op && dq == nil {
				chain = append([]*graph.Op{op}, chain...)
				reason = logSumExpLog(chain)
			}
			if reason == "" {
				var whyNot map[uint64]string
				chain, whyNot = fuseQuant(g, dq, chain)
				for id, why := range whyNot {
					notFused[id] = why
				}
			}
			if chain != nil {
				ops = chain
			}
		}
	}
	p := newPartition(0, ops, g.FPMath)
	if pat != nil {
		p.norm, p.post, p.pattern, p.dec = pat.op, len(pat.ops), pat.name, pat.dec
		p.supported, p.reason = true, ""
	}
	if res != nil {
		p.setResidual(res)
	}
	if dqNorm != nil {
		p.setDequant()
	}
	if dqPat != nil {
		p.dq, p.norm, p.post, p.dec = op, dqPat.op, 1+len(dqPat.ops), dqPat.dec
		p.pattern = "Dequantize before " + dqPat.name
		p.supported, p.reason = true, ""
	}
	p.maskedSrcFirst()
	if reason != "" {
		p.supported, p.reason = false, reason
	}
	return p
}

// newPartition works out the ports and whether gdnn supports the ops.
func newPartition(id int, ops []*graph.Op, fpmath string) *Partition {
	p := &Partition{id: id, ops: ops, fpmath: fpmath}
	if ops[0].Kind.IsNormalization() {
		p.norm, p.post = ops[0], 1
	}
	if last := ops[len(ops)-1]; last.Kind.IsArg() {
		p.arg = last
	}
	inside := map[uint64]bool{}
	for _, op := range ops {
		for _, t := range op.Outputs {
			inside[t.ID] = true
		}
	}
	// One port per tensor, however many ops of the group read it (an
	// operand used twice, src reused as an operand).
	for _, op := range ops {
		for _, t := range op.Inputs {
			if !inside[t.ID] && portIndex(p.inputs, t.ID) < 0 {
				p.inputs = append(p.inputs, t.Clone())
			}
		}
	}
	last := ops[len(ops)-1]
	p.outputs = cloneTensors(last.Outputs)
	for _, op := range ops {
		if op != last && op.Kind.IsNormalization() {
			// Its kept statistics (mean and variance) follow the chain's
			// dst, in the op's order: the ports a normalization with no
			// post-ops has.
			p.outputs = append(p.outputs, cloneTensors(op.Outputs[1:])...)
		}
	}
	p.supported, p.reason = supports(ops)
	return p
}

// supports decides whether a group of ops compiles, and why not.
func supports(ops []*graph.Op) (bool, string) {
	head := ops[0]
	switch {
	case ops[len(ops)-1].Kind.IsArg():
		return true, "" // alone, or after its Abs pre-op
	case head.Kind.IsReduction(), len(ops) > 1 && ops[1].Kind.IsReduction():
		return true, ""
	case head.Kind.IsNormalization():
		return true, "" // the ops after it are its fused post-ops
	case head.Kind == graph.Abs || head.IsSquare():
		return false, fmt.Sprintf("%s: gdnn compiles %s only fused with a reduction (as its pre-op or a post-op)", head, head.Kind)
	case head.Kind.IsEltwise() || head.Kind.IsBinary():
		return false, fmt.Sprintf("%s: gdnn compiles %s only as a post-op fused after a reduction", head, head.Kind)
	case head.Kind == graph.Dequantize && len(ops) > 1:
		return true, ""
	case head.Kind == graph.Dequantize:
		return false, fmt.Sprintf("%s: gdnn compiles Dequantize only fused before a reduction or a normalization (with the Fusion policy)", head)
	case head.Kind == graph.Quantize:
		return false, fmt.Sprintf("%s: gdnn compiles Quantize only fused after a reduction or a normalization (with the Fusion policy)", head)
	}
	return false, fmt.Sprintf("%s: gdnn does not compile %s; run it outside gdnn", head, head.Kind)
}

// preOpTarget returns the reduction a unary eltwise op (or a Multiply)
// feeds as a fusible pre-op, or nil, and when op feeds a reduction it is
// not fused with, why. Abs and Square fuse into a ReduceSum, ReduceMean,
// ReduceMax or ReduceMin, whose transform they become; so do the other
// ways a graph writes a square (graph.Op.IsSquare). An Exp feeding a
// ReduceSum followed by a Log is log-sum-exp, which compiles to
// plan.LogSumExp (the max-shifted, stable form), Log included. A
// Multiply by a broadcast operand fuses before a ReduceSum or ReduceMean
// (maskFusible).
func preOpTarget(g *graph.Graph, op *graph.Op, taken *sched) (*graph.Op, string) {
	if !op.Kind.IsEltwise() && op.Kind != graph.Multiply || len(op.Outputs) != 1 {
		return nil, ""
	}
	cons := g.Consumers(op.Outputs[0].ID)
	if len(cons) != 1 {
		for _, c := range cons {
			if c.Kind.IsReduction() {
				return nil, fmt.Sprintf("not fused before %s: its output has %d consumers; a fused pre-op feeds only the reduction", c, len(cons))
			}
		}
		return nil, ""
	}
	red := cons[0]
	if !red.Kind.IsReduction() {
		return nil, ""
	}
	why := ""
	switch out := op.Outputs[0].DataType; {
	case red.Inputs[0].ID != op.Outputs[0].ID:
		why = "it does not feed the reduction's src"
	case op.Kind == graph.Multiply && !op.IsSquare():
		why = maskFusible(g, op, red, taken)
		if why == "" {
			return red, ""
		}
	case !out.IsFloat() && !plan.IsWide(out):
		why = fmt.Sprintf("its output is %s, and a fused pre-op's result stays f32 (the rounding and saturation to %s would be lost)", out, out)
	case plan.IsWide(out) != plan.IsWide(op.Inputs[0].DataType):
		why = fmt.Sprintf("its input is %s and its output %s, and a fused pre-op keeps f64 data in f64 and other data out of it", op.Inputs[0].DataType, out)
	case op.Kind == graph.Exp && isLogSumExp(g, red):
		// log-sum-exp (see logSumExpLog)
	case op.Kind == graph.Exp && red.Kind == graph.ReduceSum:
		why = "Exp fuses before a ReduceSum only as log-sum-exp, with a Log as the sum's only consumer"
	case op.Kind == graph.Exp:
		why = "Exp fuses only as log-sum-exp (Exp -> ReduceSum -> Log)"
	case op.Kind == graph.Pow && !op.IsSquare():
		why = fmt.Sprintf("it is Pow with beta %v, and a Pow fuses before a reduction only as a square (beta 2)", powBeta(op))
	case op.Kind != graph.Abs && !op.IsSquare():
		why = fmt.Sprintf("%s is not a pre-op gdnn fuses (Abs and Square are, Pow with beta 2 and Multiply of a tensor by itself as squares, and Exp as log-sum-exp)", op.Kind)
	case red.Kind != graph.ReduceSum && red.Kind != graph.ReduceMean && red.Kind != graph.ReduceMax && red.Kind != graph.ReduceMin:
		why = fmt.Sprintf("%s before %s would not be one per-element transform", op.Kind, red.Kind)
	}
	if why == "" && len(red.Inputs) == 2 {
		// A group takes the pre-op's place in the partitions: the
		// reduction's axes tensor must be ready by then.
		p := g.Producer(red.Inputs[1].ID)
		if w := taken.wait(p, op.String()); w != "" {
			why = fmt.Sprintf("its axes tensor %d is produced by %s, %s", red.Inputs[1].ID, p, w)
		}
	}
	if why != "" {
		return nil, fmt.Sprintf("not fused before %s: %s", red, why)
	}
	return red, ""
}

// isLogSumExp reports whether a ReduceSum's only consumer is a Log.
func isLogSumExp(g *graph.Graph, red *graph.Op) bool {
	if red.Kind != graph.ReduceSum {
		return false
	}
	cons := g.Consumers(red.Outputs[0].ID)
	return len(cons) == 1 && cons[0].Kind == graph.Log
}

// logSumExpLog returns why a pre-op group is not supported: "" unless it
// starts Exp -> ReduceSum and its Log did not fuse into the chain (the
// log is part of log-sum-exp's stable form; see makeRecipe).
func logSumExpLog(ops []*graph.Op) string {
	if ops[0].Kind != graph.Exp || len(ops) >= 3 && ops[2].Kind == graph.Log {
		return ""
	}
	return fmt.Sprintf("%s -> %s: log-sum-exp whose Log could not be fused into the partition; gdnn computes Exp -> ReduceSum only with the Log that makes it stable", ops[0], ops[1])
}

// Package partition is gdnn's public compile-and-run API, in the style of
// oneDNN Graph: Get splits a finalized graph into partitions, a supported
// partition compiles for concrete input shapes into a CompiledPartition,
// and a CompiledPartition executes on tensors, from any number of
// goroutines at once.
//
// gdnn compiles ReduceMean partitions: a ReduceMean alone, or (with the
// Fusion policy) followed by a chain of eltwise and binary post-ops. Every
// other op becomes a partition of its own that reports it is not
// supported, so that a framework can run it itself.
package partition

import (
	"fmt"
	"strings"

	"github.com/gdnn/gdnn/graph"
)

// Policy selects how ops are grouped into partitions.
type Policy int

const (
	// Fusion fuses a ReduceMean with the chain of post-ops that follows it.
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
// Its input ports are the tensors it reads from outside (the ReduceMean's
// src, its axes tensor if any, the second operands of binary post-ops, in
// that order); its output port is the last op's output.
type Partition struct {
	id        int
	ops       []*graph.Op
	inputs    []graph.LogicalTensor
	outputs   []graph.LogicalTensor
	supported bool
	reason    string
	fpmath    string
}

// ID returns the partition's index in the list Get returned.
func (p *Partition) ID() int { return p.id }

// Ops returns the partition's ops in execution order. They belong to the
// graph: do not modify them.
func (p *Partition) Ops() []*graph.Op { return append([]*graph.Op(nil), p.ops...) }

// Inputs returns the partition's input ports.
func (p *Partition) Inputs() []graph.LogicalTensor { return cloneTensors(p.inputs) }

// Outputs returns the partition's output ports.
func (p *Partition) Outputs() []graph.LogicalTensor { return cloneTensors(p.outputs) }

// IsSupported reports whether gdnn can compile the partition.
func (p *Partition) IsSupported() bool { return p.supported }

// Reason says why the partition is not supported ("" when it is).
func (p *Partition) Reason() string { return p.reason }

// String describes the partition, e.g. "partition 0 [ReduceMean(1) -> ReLU(2)] supported".
func (p *Partition) String() string {
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

// Get returns the partitions of a finalized graph in topological order.
// Every op except End belongs to exactly one partition.
func Get(g *graph.Graph, policy Policy) ([]*Partition, error) {
	if g == nil {
		return nil, graph.Errorf(graph.InvalidArguments, "partition.Get: graph is nil")
	}
	if !g.Finalized() {
		return nil, graph.Errorf(graph.InvalidGraph, "partition.Get: the graph is not finalized; call Finalize first")
	}
	if policy != Fusion && policy != Debug {
		return nil, graph.Errorf(graph.InvalidArguments, "partition.Get: unknown policy %d", int(policy))
	}
	taken := map[uint64]bool{}
	notFused := map[uint64]string{} // why an op after a ReduceMean was not fused into its chain
	var parts []*Partition
	for _, op := range g.Ops() {
		if taken[op.ID] || op.Kind == graph.End {
			continue
		}
		ops := []*graph.Op{op}
		if op.Kind == graph.ReduceMean && policy == Fusion {
			var stop *graph.Op
			var why string
			if ops, stop, why = fuseChain(g, op, taken); stop != nil {
				notFused[stop.ID] = why
			}
		}
		for _, o := range ops {
			taken[o.ID] = true
		}
		p := newPartition(len(parts), ops, g.FPMath)
		if why := notFused[op.ID]; !p.supported && why != "" {
			p.reason += " (" + why + ")"
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// newPartition works out the ports and whether gdnn supports the ops.
func newPartition(id int, ops []*graph.Op, fpmath string) *Partition {
	p := &Partition{id: id, ops: ops, fpmath: fpmath}
	inside := map[uint64]bool{}
	for _, op := range ops {
		for _, t := range op.Outputs {
			inside[t.ID] = true
		}
	}
	for _, op := range ops {
		for _, t := range op.Inputs {
			if !inside[t.ID] {
				p.inputs = append(p.inputs, t.Clone())
			}
		}
	}
	last := ops[len(ops)-1]
	p.outputs = cloneTensors(last.Outputs)
	p.supported, p.reason = supports(ops)
	return p
}

// supports decides whether a group of ops compiles, and why not.
func supports(ops []*graph.Op) (bool, string) {
	head := ops[0]
	switch {
	case head.Kind == graph.ReduceMean:
		return true, ""
	case head.Kind.IsReduction():
		return false, fmt.Sprintf("%s: unimplemented: gdnn compiles ReduceMean only", head)
	case head.Kind.IsEltwise() || head.Kind.IsBinary():
		return false, fmt.Sprintf("%s: gdnn compiles %s only as a post-op fused after a ReduceMean", head, head.Kind)
	}
	return false, fmt.Sprintf("%s: gdnn does not compile %s; run it outside gdnn", head, head.Kind)
}

package partition

import (
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/plan"
)

// maxPostOps bounds the length of a fused chain.
const maxPostOps = 32

// fuseChain returns mean followed by the post-ops that can be fused after
// it: each next op is the single consumer of the previous output, reads it
// as its first input (or as either input of a commutative binary op), is
// an eltwise op of the reduction fusion list or a binary op whose other
// operand broadcasts onto the chain's output without changing its shape,
// and keeps the data type rule of the fused kernel (dst is src's type or f32).
// A binary op's other operand must be ready before the chain starts (a
// graph input, or the output of an op in an earlier partition, in taken):
// otherwise the fused partition could not keep its place in topological
// order.
func fuseChain(g *graph.Graph, mean *graph.Op, taken map[uint64]bool) []*graph.Op {
	chain := []*graph.Op{mean}
	srcDT := mean.Inputs[0].DataType
	cur := mean.Outputs[0]
	binaries := 0
	for len(chain) <= maxPostOps {
		cons := g.Consumers(cur.ID)
		if len(cons) != 1 {
			break
		}
		next := cons[0]
		// An End op (or a Wildcard) may consume the chain with no output
		// of its own: it ends the chain.
		if len(next.Outputs) != 1 {
			break
		}
		if next.Outputs[0].DataType != srcDT && next.Outputs[0].DataType != dtypes.F32 {
			break
		}
		if next.Kind.IsEltwise() {
			if next.Inputs[0].ID != cur.ID {
				break
			}
		} else if next.Kind.IsBinary() {
			if binaries == plan.MaxBinary || !binaryFusible(g, next, cur, taken) {
				break
			}
			binaries++
		} else {
			break
		}
		chain = append(chain, next)
		cur = next.Outputs[0]
	}
	return chain
}

// binaryFusible checks that op reads the chain tensor cur in a position
// the kernel supports, and that the other operand broadcasts onto cur
// (so the op's output has cur's shape) where the shapes are known.
func binaryFusible(g *graph.Graph, op *graph.Op, cur graph.LogicalTensor, taken map[uint64]bool) bool {
	var other graph.LogicalTensor
	switch cur.ID {
	case op.Inputs[0].ID:
		other = op.Inputs[1]
	case op.Inputs[1].ID:
		if op.Kind == graph.Subtract || op.Kind == graph.Divide {
			return false // the mean must be the left operand
		}
		other = op.Inputs[0]
	default:
		return false
	}
	if other.ID == cur.ID {
		return false
	}
	if p := g.Producer(other.ID); p != nil && !taken[p.ID] {
		return false
	}
	if mode, _ := op.Str("auto_broadcast"); mode == "none" && cur.KnownDims() && other.KnownDims() &&
		!slices.Equal(cur.Dims, other.Dims) {
		return false
	}
	return broadcastsOnto(other.Dims, cur.Dims)
}

// broadcastsOnto reports whether an operand of dims b, broadcast numpy
// style, fits a tensor of dims out without enlarging it. Unknown dims
// are given the benefit of the doubt here and checked again at compile.
func broadcastsOnto(b, out []int64) bool {
	if b == nil || out == nil {
		return true
	}
	if len(b) > len(out) {
		return false
	}
	off := len(out) - len(b)
	for i, d := range b {
		o := out[off+i]
		if d == 1 || d < 0 || o < 0 || d == o {
			continue
		}
		return false
	}
	return true
}

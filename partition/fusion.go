package partition

import (
	"fmt"
	"slices"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// maxPostOps bounds the length of a fused chain.
const maxPostOps = 32

// fuseChain returns red followed by the post-ops that can be fused after
// it: each next op is the single consumer of the previous output, reads it
// as its first input (or as either input of a commutative binary op), is
// an eltwise op of the reduction fusion list or a binary op whose other
// operand broadcasts onto the chain's output without changing its shape,
// and keeps the data type rule of the fused kernel (chainType; after a
// normalization, any float type).
// A binary op's other operand must be ready before the chain starts (a
// graph input, or the output of an op in an earlier partition): where
// its producer is not, Get partitions it first if it can (order.go). When the chain stops at eltwise or binary ops that consume its
// output, stop holds them (the one that did not fit, or each consumer of
// an output that has several) and why says what kept them out.
func fuseChain(g *graph.Graph, red *graph.Op, taken *sched) (chain, stop []*graph.Op, why string) {
	chain = []*graph.Op{red}
	srcDT := red.Inputs[0].DataType
	cur := red.Outputs[0]
	binaries := 0
	for {
		cons := uniqueOps(g.Consumers(cur.ID))
		if len(cons) > 1 {
			for _, c := range cons {
				if len(c.Outputs) == 1 && (c.Kind.IsEltwise() || c.Kind.IsBinary()) {
					stop = append(stop, c)
				}
			}
			return chain, stop, fmt.Sprintf("not fused after %s: tensor %d has %d consumers, and a fused chain keeps no intermediate result", red, cur.ID, len(cons))
		}
		if len(cons) == 0 {
			return chain, nil, ""
		}
		next := cons[0]
		// An End op (or a Wildcard) may consume the chain with no output
		// of its own: it ends the chain.
		if len(next.Outputs) != 1 || !next.Kind.IsEltwise() && !next.Kind.IsBinary() {
			return chain, nil, ""
		}
		why := ""
		switch dt := next.Outputs[0].DataType; {
		case exactReduction(red):
			why = fmt.Sprintf("%s reduces %s data exactly, in integer arithmetic, and a fused chain's post-ops compute in f32", red.Kind, srcDT)
		case cur.DataType.IsInt():
			why = fmt.Sprintf("it reads the chain's %s output, which a fused chain never rounds mid-way", cur.DataType)
		case len(chain) > maxPostOps:
			why = fmt.Sprintf("the chain already holds %d post-ops", maxPostOps)
		case !chainType(srcDT, dt) && !(normHead(red) && (dt == dtypes.F32 || dt == dtypes.BF16 || dt == dtypes.F16)):
			want := srcDT.String() + ", f32, s8, u8 or s32"
			switch {
			case srcDT == dtypes.F32:
				want = "f32, s8, u8 or s32"
			case srcDT.IsInt8():
				want = "s8, u8, s32, f32, bf16 or f16"
			case plan.IsWide(srcDT):
				want = srcDT.String() + " or f32"
			}
			why = fmt.Sprintf("its output is %s; with src %s a fused chain must end in %s", dt, srcDT, want)
		case next.Kind.IsEltwise() && next.Inputs[0].ID != cur.ID:
			why = "it does not read the chain's output as its input"
		case next.Kind == graph.Pow && !ops.IsPowBeta(powBeta(next)):
			why = fmt.Sprintf("it is Pow with beta %v, and %s", powBeta(next), ops.PowBetasText)
		case next.Kind.IsBinary() && binaries == plan.MaxBinary:
			why = fmt.Sprintf("the chain already holds %d binary post-ops", plan.MaxBinary)
		case next.Kind.IsBinary() && wideOperand(next) && !plan.IsWide(srcDT):
			why = fmt.Sprintf("it reads an f64 operand, and only a chain over f64 src computes in f64 (src %s)", srcDT)
		case next.Kind.IsBinary():
			why = binaryFusible(g, red, next, cur, taken)
		}
		if why != "" {
			return chain, []*graph.Op{next}, fmt.Sprintf("not fused after %s: %s", red, why)
		}
		if next.Kind.IsBinary() {
			binaries++
		}
		chain = append(chain, next)
		cur = next.Outputs[0]
	}
}

// exactReduction reports whether red reduces exactly (plan.IsExact): an
// integer or boolean src wider than 8 bits, or a bitwise or logical kind.
func exactReduction(red *graph.Op) bool {
	switch red.Kind {
	case graph.ReduceBitwiseAnd, graph.ReduceBitwiseOr, graph.ReduceBitwiseXor,
		graph.ReduceLogicalAnd, graph.ReduceLogicalOr, graph.ReduceLogicalXor:
		return true
	}
	return red.Kind.IsReduction() && red.Inputs[0].DataType.IsExact()
}

// powBeta is a Pow op's exponent.
func powBeta(op *graph.Op) float32 {
	b, _ := op.Float("beta")
	return b
}

// uniqueOps is ops without repeats (an op that reads a tensor twice is
// listed once per read).
func uniqueOps(ops []*graph.Op) []*graph.Op {
	var out []*graph.Op
	for _, op := range ops {
		if !slices.Contains(out, op) {
			out = append(out, op)
		}
	}
	return out
}

// chainType reports whether a fused chain over a src of type srcDT may
// produce dt: any integer type a reduction may store (s8, u8, s32), the
// post-ops computing in f32 before the final rounding; besides, the src's
// type or f32 for float data, and any float type for 8-bit integer data;
// f64 data gives f64 or f32 (plan.WideDst), and f64 comes from f64 only.
// An integer tensor ends a chain (see the loop above).
func chainType(srcDT, dt dtypes.DataType) bool {
	if plan.IsWide(srcDT) || plan.IsWide(dt) {
		return plan.WideDst(srcDT, dt) // f64 data: an f64 or f32 result
	}
	if dt.IsInt() || srcDT.IsInt8() && dt.IsFloat() {
		return true
	}
	return dt == srcDT || dt == dtypes.F32
}

// normHead reports whether a chain that op heads follows a
// normalization, whose fused post-ops may end in any float type: the
// normalization itself, or a TypeCast after its chain (normTail), the
// only place a TypeCast heads one.
func normHead(op *graph.Op) bool { return op.Kind.IsNormalization() || op.Kind == graph.TypeCast }

// wideOperand reports whether the binary op reads an f64 tensor.
func wideOperand(op *graph.Op) bool {
	return plan.IsWide(op.Inputs[0].DataType) || plan.IsWide(op.Inputs[1].DataType)
}

// normChain returns the chain fuseChain gives after a normalization op,
// cut before the first op whose output is an integer type: a fused
// normalization's post-ops end in f32, bf16 or f16 (an integer output
// comes only from the Quantize normTail adds). cut is that op, with why;
// nil when nothing was cut.
func normChain(chain []*graph.Op) (kept []*graph.Op, cut *graph.Op, why string) {
	for i, op := range chain[1:] {
		if dt := op.Outputs[0].DataType; dt.IsInt() {
			return chain[:i+1], op, fmt.Sprintf("not fused after %s: its output is %s, and a fused normalization ends in f32, bf16 or f16", chain[0], dt)
		}
	}
	return chain, nil, ""
}

// normPostOps is nrm and the post-ops fused after it (fuseChain cut by
// normChain, then the TypeCast and Quantize of normTail); why the chain
// stops goes to notFused.
func normPostOps(g *graph.Graph, nrm *graph.Op, taken *sched, notFused map[uint64]string) []*graph.Op {
	chain, stop, why := fuseChain(g, nrm, taken)
	for _, s := range stop {
		notFused[s.ID] = why
	}
	chain, cut, why := normChain(chain)
	if cut != nil {
		notFused[cut.ID] = why
	}
	return normTail(g, chain, taken, notFused)
}

// binaryFusible checks that op reads the chain tensor cur in a position
// the kernel supports, and that the other operand broadcasts onto cur
// (so the op's output has cur's shape) where the shapes are known. It
// returns why not, or "".
func binaryFusible(g *graph.Graph, red, op *graph.Op, cur graph.LogicalTensor, taken *sched) string {
	var other graph.LogicalTensor
	switch cur.ID {
	case op.Inputs[0].ID:
		other = op.Inputs[1]
	case op.Inputs[1].ID:
		if op.Kind == graph.Subtract || op.Kind == graph.Divide {
			return "the chain's output is its right operand (the kernel computes r - b and r / b of the reduction's r)"
		}
		other = op.Inputs[0]
	default:
		return "it does not read the chain's output"
	}
	if other.ID == cur.ID {
		return "both its operands are the chain's output"
	}
	p := g.Producer(other.ID)
	if p == red {
		return fmt.Sprintf("its other operand %d is another output of %s (a statistic it keeps), and a fused chain maps dst alone", other.ID, red)
	}
	mode, _ := op.Str("auto_broadcast")
	switch {
	case red.Kind.IsReduction() && len(red.Inputs) == 2:
		if why := runTimeAxesOperand(g, red, other, mode); why != "" {
			return why
		}
	case mode == "none" && cur.KnownDims() && other.KnownDims() && !slices.Equal(cur.Dims, other.Dims):
		return fmt.Sprintf("auto_broadcast is none and its other operand's dims %s differ from %s",
			graph.DimsString(other.Dims), graph.DimsString(cur.Dims))
	case !broadcastsOnto(other.Dims, cur.Dims):
		return fmt.Sprintf("its other operand's dims %s do not broadcast onto %s without enlarging it",
			graph.DimsString(other.Dims), graph.DimsString(cur.Dims))
	}
	// Last, so that Get waits for the operand's producer only where
	// nothing else keeps the op out.
	if why := taken.wait(p, "the reduction"); why != "" {
		return fmt.Sprintf("its other operand %d is produced by %s, %s", other.ID, p, why)
	}
	return ""
}

// runTimeAxesOperand says why a binary op's other operand does not fuse
// after red, whose axes arrive at Execute, or "" when it does. The
// reduction's output dims are not known before then: any dim may be
// reduced, and with keep_dims false the rank drops by the number of
// axes. So only an operand of ones, of a rank the output has whatever
// the axes, is sure not to enlarge it; anything else is left to the
// caller, whose op by op result broadcasts as the axes make it.
func runTimeAxesOperand(g *graph.Graph, red *graph.Op, other graph.LogicalTensor, mode string) string {
	if mode == "none" {
		return "auto_broadcast is none, and with axes given at execute time the reduction's dims cannot be known to equal its other operand's"
	}
	rank := -1 // the least rank the output can have; -1: unknown
	src := red.Inputs[0]
	if src.Dims == nil {
		if p := g.Producer(src.ID); p != nil && (p.Kind.IsEltwise() || p.IsSquare()) {
			src = p.Inputs[0] // a pre-op keeps its input's dims
		}
	}
	if src.Dims != nil {
		rank = len(src.Dims)
		if keep, _ := red.Bool("keep_dims"); !keep {
			ax := red.Inputs[1]
			switch {
			case len(ax.Dims) == 0 && ax.Dims != nil:
				rank-- // a scalar axes tensor: one axis
			case len(ax.Dims) == 1 && ax.Dims[0] >= 0:
				rank -= int(ax.Dims[0])
			default:
				rank = 0
			}
		}
	}
	if !other.KnownDims() || len(other.Dims) > max(rank, 0) || slices.ContainsFunc(other.Dims, func(d int64) bool { return d != 1 }) {
		return fmt.Sprintf("with axes given at execute time, its other operand's dims %s could enlarge the reduction's output: only an operand of ones, of a rank the output has whatever the axes, broadcasts onto it for every axes",
			graph.DimsString(other.Dims))
	}
	return ""
}

// broadcastsOnto reports whether an operand of dims b, broadcast numpy
// style, fits a tensor of dims out without enlarging it. Unknown dims
// are given the benefit of the doubt here and checked again at compile
// (enlarges).
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

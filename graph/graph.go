// Package graph is gdnn's logical graph, in the style of oneDNN Graph:
// logical tensors (id, data type, dims, layout, property), ops with typed
// attributes checked against per-kind schemas, and a Graph that checks
// what is added, orders it, and infers output shapes.
//
// Every op kind of oneDNN Graph's reduction fusion patterns can be
// described: the reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin,
// ReduceProd, ReduceL1, ReduceL2: axes and keep_dims attributes or an s32
// or s64 axes input; src f32, bf16 or f16 with dst the src type or f32, or, as a
// gdnn extension mirroring oneDNN's reduction primitive, src s8 or u8 with
// dst s8, u8, s32, f32, bf16 or f16; and, a gdnn extension too, src f64
// with dst f64 or f32, computed in float64), the unary eltwise and binary
// ops fused before and after them (computing in f32, or in float64 over
// f64 src; the last of a chain may store to s8, u8 or s32, rounding to
// nearest even and saturating), the
// Dequantize and Quantize ops through which 8-bit data enters and leaves
// them as oneDNN Graph takes it (see QuantParamsOf), the normalizations
// (SoftMax, LayerNorm, ...), and other kinds (MatMul, ...) that package
// partition hands back as unsupported. Graphs load from and save to oneDNN's JSON dumps.
//
// Every error is a value wrapping a Status (errors.Is(err,
// graph.InvalidShape), ...) with a message naming the op, the tensor id
// and the offending value; no input makes the package panic.
package graph

import (
	"slices"
	"sort"

	"github.com/gdnn/gdnn/internal/shape"
)

// Graph is a set of ops connected through logical tensor ids. Add ops with
// AddOp, then call Finalize once; after that the graph is read-only and
// ready to be partitioned. The zero Graph is an empty graph, as New's.
type Graph struct {
	ops       []*Op // in insertion order; topological after Finalize
	byID      map[uint64]*Op
	tensors   map[uint64]LogicalTensor // as given; inferred after Finalize
	producer  map[uint64]*Op
	consumers map[uint64][]*Op
	finalized bool
	// FPMath is oneDNN's fpmath_mode ("strict" by default; "" is strict
	// too); gdnn always computes at least as precisely as strict.
	FPMath string
}

// New returns an empty graph.
func New() *Graph {
	g := &Graph{FPMath: "strict"}
	g.init()
	return g
}

// init makes the maps of a zero Graph.
func (g *Graph) init() {
	if g.byID == nil {
		g.byID = map[uint64]*Op{}
		g.tensors = map[uint64]LogicalTensor{}
		g.producer = map[uint64]*Op{}
		g.consumers = map[uint64][]*Op{}
	}
}

// AddOp checks op against its kind's schema and the tensors already in the
// graph, and adds a copy of it. The same tensor id may appear in several
// ops only with the same contents; each tensor has at most one producer.
func (g *Graph) AddOp(op *Op) error {
	if g == nil {
		return Errorf(InvalidArguments, "AddOp on a nil graph")
	}
	if op == nil {
		return Errorf(InvalidArguments, "AddOp: op is nil")
	}
	if g.finalized {
		return Errorf(InvalidGraph, "AddOp %s: the graph is already finalized", op)
	}
	g.init()
	if prev, ok := g.byID[op.ID]; ok {
		return Errorf(InvalidGraph, "AddOp %s: op id %d is already used by %s", op, op.ID, prev)
	}
	if err := checkSchema(op); err != nil {
		return err
	}
	seen := map[uint64]bool{}
	for _, t := range op.Outputs {
		if seen[t.ID] {
			return Errorf(InvalidGraph, "%s: tensor %d is output twice", op, t.ID)
		}
		seen[t.ID] = true
		if p, ok := g.producer[t.ID]; ok {
			return Errorf(InvalidGraph, "%s: tensor %d is already produced by %s", op, t.ID, p)
		}
	}
	for _, t := range op.Inputs {
		if seen[t.ID] {
			return Errorf(InvalidGraph, "%s: tensor %d is both an input and an output (or repeated)", op, t.ID)
		}
	}
	for _, t := range append(slices.Clone(op.Inputs), op.Outputs...) {
		if prev, ok := g.tensors[t.ID]; ok && !sameContents(prev, t) {
			return Errorf(InvalidGraph, "%s: tensor id %d is %s here but %s elsewhere in the graph", op, t.ID, t, prev)
		}
	}
	c := op.Clone()
	g.ops = append(g.ops, c)
	g.byID[c.ID] = c
	for _, t := range c.Inputs {
		g.tensors[t.ID] = t.Clone()
		g.consumers[t.ID] = append(g.consumers[t.ID], c)
	}
	for _, t := range c.Outputs {
		g.tensors[t.ID] = t.Clone()
		g.producer[t.ID] = c
	}
	return nil
}

// Finalize checks the graph as a whole (not empty, no cycles), orders the
// ops topologically, and infers every output shape it can, checking it
// against the shapes the user gave. After Finalize the graph is read-only.
func (g *Graph) Finalize() error {
	if g == nil {
		return Errorf(InvalidArguments, "Finalize on a nil graph")
	}
	if g.finalized {
		return nil
	}
	if len(g.ops) == 0 {
		return Errorf(InvalidGraph, "the graph has no ops")
	}
	order, err := g.topoOrder()
	if err != nil {
		return err
	}
	g.ops = order
	if err := g.inferShapes(); err != nil {
		return err
	}
	g.finalized = true
	return nil
}

// topoOrder orders ops so that every producer precedes its consumers
// (Kahn's algorithm; ties by insertion order, so the order is stable).
func (g *Graph) topoOrder() ([]*Op, error) {
	index := map[*Op]int{}
	for i, op := range g.ops {
		index[op] = i
	}
	indeg := make([]int, len(g.ops))
	for i, op := range g.ops {
		for _, t := range op.Inputs {
			if g.producer[t.ID] != nil {
				indeg[i]++
			}
		}
	}
	var ready []int
	for i, d := range indeg {
		if d == 0 {
			ready = append(ready, i)
		}
	}
	order := make([]*Op, 0, len(g.ops))
	for len(ready) > 0 {
		sort.Ints(ready)
		i := ready[0]
		ready = ready[1:]
		op := g.ops[i]
		order = append(order, op)
		for _, t := range op.Outputs {
			for _, c := range g.consumers[t.ID] {
				j := index[c]
				indeg[j]--
				if indeg[j] == 0 {
					ready = append(ready, j)
				}
			}
		}
	}
	if len(order) != len(g.ops) {
		for i, d := range indeg {
			if d > 0 {
				return nil, Errorf(InvalidGraph, "the graph has a cycle through %s", g.ops[i])
			}
		}
	}
	return order, nil
}

// inferShapes walks ops in topological order, feeding each op the inferred
// shapes of its inputs and recording what it infers for its outputs.
func (g *Graph) inferShapes() error {
	for _, op := range g.ops {
		for i, t := range op.Inputs {
			op.Inputs[i] = g.tensors[t.ID].Clone()
		}
		outs, err := InferOutputs(op, op.Inputs)
		if err != nil {
			return err
		}
		for i := range op.Outputs {
			t := &op.Outputs[i]
			if t.Dims, err = shape.MergeDims(op, t.ID, t.Dims, outs[i]); err != nil {
				return err
			}
			if t.Layout == LayoutStrided && t.Strides == nil && t.KnownDims() {
				t.Strides = DenseStrides(t.Dims)
			}
			g.tensors[t.ID] = t.Clone()
		}
	}
	// Consumers see the inferred tensors too.
	for _, op := range g.ops {
		for i, t := range op.Inputs {
			op.Inputs[i] = g.tensors[t.ID].Clone()
		}
	}
	return nil
}

// InferOutputs returns the output dims op computes from the given inputs
// (which may be more concrete than the op's own, e.g. at compile time).
// Entries are nil where the rank is unknown, UnknownDim where a dim is.
func InferOutputs(op *Op, inputs []LogicalTensor) ([][]int64, error) {
	if op == nil {
		return nil, Errorf(InvalidArguments, "InferOutputs: op is nil")
	}
	s := schemaOf(op.Kind)
	if s == nil {
		return nil, Errorf(InvalidGraphOp, "%s: unknown op kind", op)
	}
	if len(inputs) != len(op.Inputs) {
		return nil, Errorf(InvalidArguments, "%s: %d inputs given, the op has %d", op, len(inputs), len(op.Inputs))
	}
	if s.infer == nil {
		out := make([][]int64, len(op.Outputs))
		for i, t := range op.Outputs {
			out[i] = cloneDims(t.Dims)
		}
		return out, nil
	}
	return s.infer(op, inputs)
}

// Finalized reports whether Finalize has succeeded.
func (g *Graph) Finalized() bool { return g != nil && g.finalized }

// Ops returns the graph's ops: in topological order after Finalize, in
// insertion order before. The ops belong to the graph: do not modify them.
func (g *Graph) Ops() []*Op { return slices.Clone(g.ops) }

// Op returns the op with the given id.
func (g *Graph) Op(id uint64) (*Op, bool) {
	op, ok := g.byID[id]
	return op, ok
}

// Tensor returns the logical tensor with the given id (with inferred dims
// after Finalize).
func (g *Graph) Tensor(id uint64) (LogicalTensor, bool) {
	t, ok := g.tensors[id]
	return t.Clone(), ok
}

// Producer returns the op that outputs tensor id, or nil for a graph input.
func (g *Graph) Producer(id uint64) *Op { return g.producer[id] }

// Consumers returns the ops that read tensor id, in graph order.
func (g *Graph) Consumers(id uint64) []*Op { return slices.Clone(g.consumers[id]) }

package kernelshape

import (
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/plan"
)

// Covers declares what an emitter generates code for, so that it is
// stated once, beside the code, rather than found out by generating.
type Covers struct {
	Arch      string                    // prefixes error messages ("amd64")
	PostOp    func(plan.Kind) bool      // post-op kinds it emits
	Reduction func(plan.Reduction) bool // algs (with their parameters) it emits
	MaxDepth  int                       // Outer and Reduced loops it nests (each)
}

// Check reports why an emitter that covers c cannot take pl: pl.Validate's
// error, or an error satisfying errors.Is(err, graph.Unimplemented) for an
// alg or the first post-op kind c does not cover, or for more than
// c.MaxDepth Outer or Reduced loops (each). An Unimplemented plan runs in
// the interpreter instead. Error messages start with the arch and a colon.
func Check(pl *plan.Plan, c Covers) error {
	if err := pl.Validate(); err != nil {
		return err
	}
	if !c.Reduction(pl.Reduction) {
		return graph.Errorf(graph.Unimplemented, "%s: reduction %v has no JIT code", c.Arch, pl.Reduction)
	}
	for i, op := range pl.PostOps {
		if !c.PostOp(op.Kind) {
			return graph.Errorf(graph.Unimplemented, "%s: post-op %d (%v) has no JIT code", c.Arch, i, op.Kind)
		}
	}
	if len(pl.Outer) > c.MaxDepth || len(pl.Reduced) > c.MaxDepth {
		return graph.Errorf(graph.Unimplemented, "%s: %d outer and %d reduced loops exceed the supported depth %d",
			c.Arch, len(pl.Outer), len(pl.Reduced), c.MaxDepth)
	}
	return nil
}

package kernelshape

import (
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/jit/plan"
)

// Check reports why an emitter for arch cannot take pl: pl.Validate's
// error, or an error satisfying errors.Is(err, graph.Unimplemented) for
// the first post-op kind supported rejects or for more than maxDepth
// Outer or Reduced loops (each). An Unimplemented plan runs in the
// interpreter instead. Error messages start with arch and a colon.
func Check(pl *plan.Plan, arch string, supported func(plan.Kind) bool, maxDepth int) error {
	if err := pl.Validate(); err != nil {
		return err
	}
	for i, op := range pl.PostOps {
		if !supported(op.Kind) {
			return graph.Errorf(graph.Unimplemented, "%s: post-op %d (%v) has no JIT code", arch, i, op.Kind)
		}
	}
	if len(pl.Outer) > maxDepth || len(pl.Reduced) > maxDepth {
		return graph.Errorf(graph.Unimplemented, "%s: %d outer and %d reduced loops exceed the supported depth %d",
			arch, len(pl.Outer), len(pl.Reduced), maxDepth)
	}
	return nil
}

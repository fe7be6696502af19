package graph

import (
	"testing"

	"github.com/gdnn/gdnn/internal/plan"
)

// The op table of the reductions (plan.OfGraphOp) has a row for every
// Reduce* kind and for no other kind, and each row is the kernel's.
func TestReductionTable(t *testing.T) {
	for k := OpKind(1); k < numOpKinds; k++ {
		r, ok := plan.OfGraphOp(k.String())
		if ok != k.IsReduction() {
			t.Errorf("%s: in the reduction table %v, IsReduction %v", k, ok, k.IsReduction())
		}
		if !ok {
			continue
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	want := map[OpKind]plan.Reduction{
		ReduceSum: {Finalize: plan.FinalizeNone},
		ReduceL1:  {Transform: plan.TransformAbs, Finalize: plan.FinalizeNone},
		ReduceL2:  {Transform: plan.TransformSquare, Finalize: plan.FinalizeRootAddEps, P: 2},
		ReduceMax: {Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
	}
	for k, w := range want {
		if r, _ := plan.OfGraphOp(k.String()); r != w {
			t.Errorf("%s: %+v, want %+v", k, r, w)
		}
	}
}

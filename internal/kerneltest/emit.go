package kerneltest

import (
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// DeepPlan builds an f32 plan by hand with loops that no
// canonicalisation would merge (padded strides: each loop's stride is 3
// times the inner one's): nOuter outer and nRed reduced loops of size 2,
// and plan.MaxBinary Add post-ops with full f32 operands.
func DeepPlan(nOuter, nRed int) *plan.Plan {
	pl := &plan.Plan{SrcDT: dtypes.F32, DstDT: dtypes.F32}
	nb := plan.MaxBinary
	stride := int64(1)
	for i := 0; i < nRed; i++ {
		pl.Reduced = append([]plan.Loop{{Size: 2, SrcStride: stride, BinStrides: make([]int64, nb)}}, pl.Reduced...)
		stride *= 3
	}
	dstStride := int64(1)
	for i := 0; i < nOuter; i++ {
		l := plan.Loop{Size: 2, SrcStride: stride, DstStride: dstStride, BinStrides: make([]int64, nb)}
		for j := range l.BinStrides {
			l.BinStrides[j] = dstStride
		}
		pl.Outer = append([]plan.Loop{l}, pl.Outer...)
		stride *= 3
		dstStride *= 3
	}
	for i := 0; i < nb; i++ {
		pl.PostOps = append(pl.PostOps, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32})
	}
	pl.N = 1 << nRed
	pl.Div = pl.N
	pl.Outputs = 1 << nOuter
	return pl
}

// CheckConcurrentEmit emits plans from workers goroutines at once, reps
// times each (the kernel cache compiles concurrently), and checks each
// result is the code a lone emit of the plan gives: the assembler
// context is per call, and the emitter's global tables are filled once.
// emit emits the i-th plan.
func CheckConcurrentEmit(t testing.TB, plans []*plan.Plan, workers, reps int, emit func(i int, pl *plan.Plan) (plan.Code, error)) {
	t.Helper()
	want := make([]plan.Code, len(plans))
	for i, pl := range plans {
		b, err := emit(i, pl)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			for rep := 0; rep < reps; rep++ {
				for i, pl := range plans {
					b, err := emit(i, pl)
					if err == nil && (string(b.Text) != string(want[i].Text) || b.Totals != want[i].Totals) {
						err = status.Errorf(status.RuntimeError, "plan %d: concurrent Emit gave different bytes", i)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// DeepOutputs are the dst elements DeepPlan(nOuter, _) writes: the
// offsets sum idx[i]*3^i over idx in {0, 1}^nOuter (the elements between
// them are gaps).
func DeepOutputs(nOuter int) map[int64]bool {
	outs := map[int64]bool{}
	for m := 0; m < 1<<nOuter; m++ {
		off, s := int64(0), int64(1)
		for i := 0; i < nOuter; i++ {
			off += int64(m>>i&1) * s
			s *= 3
		}
		outs[off] = true
	}
	return outs
}

// PlanMaker returns a function that canonicalizes the problem of the
// given types, dims, src strides, reduced dims, dst strides and post-ops
// (a failure fails t), for tables of hand-written plans.
func PlanMaker(t testing.TB) func(sdt, ddt dtypes.DataType, dims, ss []int64, red []bool, ds []int64, ops ...plan.PostOp) *plan.Plan {
	return func(sdt, ddt dtypes.DataType, dims, ss []int64, red []bool, ds []int64, ops ...plan.PostOp) *plan.Plan {
		t.Helper()
		pl, err := plan.Canonicalize(&plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: red, DstStrides: ds, PostOps: ops})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
}

// Plans returns the canonical plans of n problems that draw draws (a
// failure fails t).
func Plans(t testing.TB, n int, draw func() *plan.Problem) []*plan.Plan {
	t.Helper()
	var plans []*plan.Plan
	for len(plans) < n {
		pl, err := plan.Canonicalize(draw())
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, pl)
	}
	return plans
}

package kerneltest

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// UnshiftedProblem makes p an unshifted log-sum-exp's problem, as the
// runtime emits one: f32 dst, no post-ops, a float or 8-bit src.
func UnshiftedProblem(p *plan.Problem) {
	p.Reduction, p.DstDT, p.PostOps = plan.LogSumExp, dtypes.F32, nil
	if !p.SrcDT.IsFloat() && !p.SrcDT.IsInt8() {
		p.SrcDT = dtypes.F32
	}
}

// UnshiftedStages are the stages an unshifted log-sum-exp's kernels run
// in: whole, as the first of two stages (sums of exps out), and as the
// second (the log of the sum of partials).
var UnshiftedStages = []plan.Stage{plan.Unshifted, plan.Unshifted | plan.SkipFinalize, plan.Unshifted | plan.SkipTransform}

// FillUniform fills b, elements of type dt, with values drawn from
// [lo, hi) (rounded to dt).
func FillUniform(r *rand.Rand, dt dtypes.DataType, b []byte, lo, hi float64) {
	for i := int64(0); i < int64(len(b))/int64(dt.Size()); i++ {
		oracle.Put(dt, b, i, lo+(hi-lo)*r.Float64())
	}
}

// unshiftedLo and unshiftedHi bound FillUnshifted's elements.
const unshiftedLo, unshiftedHi = -4, 1

// FillUnshifted fills src for an unshifted plan of stage st: elements in
// [unshiftedLo, unshiftedHi] (u8: 0 and 1), so that every exp is a normal number and a lane of exp(0) = 1
// let in past a tail changes a sum of few elements by far more than
// CheckUnshifted's tolerance; or, for a stage that reads partials
// (SkipTransform), positive sums of exps.
func FillUnshifted(r *rand.Rand, st plan.Stage, dt dtypes.DataType, src []byte) {
	if st&plan.SkipTransform != 0 {
		FillUniform(r, dt, src, 0.25, 4.25)
		return
	}
	FillUniform(r, dt, src, unshiftedLo, unshiftedHi)
}

// CheckUnshifted compares the f32 results in got of pl, an unshifted
// log-sum-exp plan of p, with float64 at each output: with Stage
// plan.Unshifted alone the log-sum-exp, with SkipFinalize too the sum of
// exps, with SkipTransform the log of the sum of src (FillUnshifted's).
// The tolerance is the f32 error of a sum of n terms in any order, plus
// the error of each term (vexp.SumError at the largest |x| the fill
// gives, for the exp for sums; one rounding for a partial), plus the
// log's rounding.
func CheckUnshifted(t testing.TB, what string, pl *plan.Plan, p *plan.Problem, src, got []byte) {
	t.Helper()
	sum := *p
	sum.Reduction = plan.AlgSum.Reduction(0, 0)
	outs, sums := oracle.Reduce(p, src), oracle.Reduce(&sum, src)
	term := 0x1p-24 // a partial's error
	if pl.Stage&plan.SkipTransform == 0 {
		term = vexp.SumError(unshiftedLo)
	}
	for i, o := range outs {
		relSum := float64(o.N+1)*0x1p-24 + term // the sum's relative error
		want, tol := o.Value, 0.0
		switch {
		case pl.Stage&plan.SkipFinalize != 0:
			want = math.Exp(o.Value)
			tol = relSum * want
		case pl.Stage&plan.SkipTransform != 0:
			want = math.Log(sums[i].Acc)
			tol = relSum + 0x1p-23*math.Abs(want)
		default:
			tol = relSum + 0x1p-23*math.Abs(want) // the log makes it absolute
		}
		g := oracle.Get(dtypes.F32, got, o.Dst)
		if !(g == want || math.Abs(g-want) <= tol) {
			t.Fatalf("%s: output %d (dst %d, n %d) = %v, want %v (tolerance %g)\nplan %v", what, i, o.Dst, o.N, g, want, tol, pl)
		}
	}
}

// UnshiftedPlan makes p an unshifted log-sum-exp's problem
// (UnshiftedProblem) and returns its canonical plan as a kernel of stage
// st computes it: a stage keeps its alg (Canonicalize's OfOne rewrites
// whole reductions).
func UnshiftedPlan(t testing.TB, p *plan.Problem, st plan.Stage) *plan.Plan {
	t.Helper()
	UnshiftedProblem(p)
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	pl.Stage = st
	pl.Reduction = plan.LogSumExp
	return pl
}

// CheckUnshiftedBlocks runs k, the kernel named name of pl (an unshifted
// log-sum-exp plan of p), on src whole (block 0) and in each of blocks
// iterations of the outermost loop, each into a new dst of db bytes, and
// holds the results to CheckUnshifted.
func CheckUnshiftedBlocks(t testing.TB, name string, k *Kernel, pl *plan.Plan, p *plan.Problem, src []byte, db int64, blocks []int64) {
	t.Helper()
	for _, blk := range blocks {
		got := make([]byte, db)
		k.RunBlocks(pl, src, got, nil, blk)
		CheckUnshifted(t, fmt.Sprintf("%s, blocks of %d", name, blk), pl, p, src, got)
	}
}

// CheckUnshiftedFenced is CheckUnshiftedBlocks under each target with
// src0 and a dst of db bytes next to guard pages (Fence), at their end
// and then at their start: no exp may read past src, and no lane past a
// tail may be summed (exp turns its zero into a 1). what names the case.
func CheckUnshiftedFenced(t testing.TB, what string, targets []Target, pl *plan.Plan, p *plan.Problem, src0 []byte, db int64, blocks []int64) {
	t.Helper()
	for _, atEnd := range []bool{true, false} {
		fence := NewFence(t, atEnd)
		src, dst := fence.Place(src0), fence.Place(make([]byte, db))
		for _, tg := range targets {
			k := tg.Compile(t, pl)
			for _, blk := range blocks {
				k.RunBlocks(pl, src, dst, nil, blk)
				CheckUnshifted(t, fmt.Sprintf("%s%s, blocks of %d", what, tg.Name, blk), pl, p, src, dst)
			}
			k.Release()
		}
		fence.Free()
	}
}

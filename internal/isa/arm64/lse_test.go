package arm64

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// unshiftedPlan returns the canonical plan of p, made an unshifted
// log-sum-exp of stage st, and src filled for it.
func unshiftedPlan(t *testing.T, r *rand.Rand, p *plan.Problem, st plan.Stage) (*plan.Plan, []byte, int64) {
	t.Helper()
	pl := kerneltest.UnshiftedPlan(t, p, st)
	fill := func(dt dtypes.DataType, b []byte, _ bool) { kerneltest.FillUnshifted(r, st, dt, b) }
	src, dst, _ := buffersFor(t, fill, p, false, false)
	return pl, src, int64(len(dst))
}

// TestUnshiftedLogSumExp runs random unshifted log-sum-exp plans (ranks
// 0-5, dims with vector-width edges, permuted and padded strides, every
// float and 8-bit src type) whole and in blocks, and as the stages of a
// split reduction, against float64.
func TestUnshiftedLogSumExp(t *testing.T) {
	needARM64(t)
	n := 400
	if testing.Short() {
		n = 100
	}
	r := rand.New(rand.NewSource(21))
	for i := 0; i < n; i++ {
		st := kerneltest.UnshiftedStages[i%3]
		p := randomProblem(r, 3000)
		pl, src, db := unshiftedPlan(t, r, p, st)
		k := compile(t, pl)
		kerneltest.CheckUnshiftedBlocks(t, "neon", k, pl, p, src, db, []int64{0, 1 + r.Int63n(9)})
		k.Release()
	}
}

// TestUnshiftedLogSumExpGuardPages runs every kernel shape of an
// unshifted log-sum-exp with tails of 0..2V+3 next to guard pages: no exp
// may read past src, and no lane past a tail may be summed (exp turns its
// zero into a 1).
func TestUnshiftedLogSumExpGuardPages(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(22))
	for n := int64(0); n <= 2*lanes+3; n++ {
		for _, sdt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8} {
			for _, s := range shapes(n, sdt, dtypes.F32, dtypes.F32) {
				pl, src0, db := unshiftedPlan(t, r, s.p, plan.Unshifted)
				kerneltest.CheckUnshiftedFenced(t, fmt.Sprintf("%s tail %d: ", s.name, n), targets(t), pl, s.p, src0, db, []int64{0, 3})
			}
		}
	}
}

package amd64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRunsShortInnerLoop: f64 sums over two reduced loops (not
// mergeable), long enough to be cut into runs. Each output is a few 1s
// and many 2^-54s: a chain that adds each run's 2^-53 or less to a
// total of 2 or more loses it, so a kernel that folds after every pass
// of a short innermost loop leaves the oracle's bound 2^-53 (1032 +
// N/1024) of the magnitudes. The native kernel cuts its runs across the
// loops (kernelshape.CheckNativeRuns says where) and must keep the
// bound: a short innermost loop under a long one, in each shape, a long
// innermost loop cut evenly under a shorter one, and a row cut in its
// blocks under an outer loop.
func TestNativeRunsShortInnerLoop(t *testing.T) {
	isaList := isas(t)
	const a = 20000
	for _, c := range []struct {
		name string
		s    [3][]int64
	}{
		// dims, src strides, reduce: a outer reduced loop, a short inner one.
		{"column", [3][]int64{{a, 2, 2, 8}, {32, 16, 8, 1}, {1, 0, 1, 0}}},
		{"row", [3][]int64{{a, 2, 8}, {16, 8, 1}, {1, 0, 1}}},
		{"element", [3][]int64{{a, 2, 2}, {4, 2, 1}, {1, 0, 1}}},
		{"element, long inner loop", [3][]int64{{200, 1500, 2}, {3002, 2, 1}, {1, 1, 0}}},
		{"row, long inner loop", [3][]int64{{30, 2, 9000}, {18008, 9004, 1}, {1, 0, 1}}},
		{"row, cut in its blocks", [3][]int64{{4, 2, 70000}, {140008, 70004, 1}, {1, 0, 1}}},
		{"row, short rows", [3][]int64{{a, 2, 13}, {32, 16, 1}, {1, 0, 1}}},
		{"column, odd inner loop", [3][]int64{{3000, 3, 2, 9}, {64, 18, 9, 1}, {1, 1, 0, 0}}},
	} {
		p := problemOf(c.s, dtypes.F64, dtypes.F64, plan.AlgSum.Reduction(0, 0))
		sb, err := p.SrcBytes()
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, sb)
		per := sb / 8 / c.s[0][0] // elements per index of the outer reduced loop
		for i := int64(0); i < sb/8; i++ {
			v := math.Ldexp(1, -54)
			if i < per {
				v = 1
			}
			plan.StoreF64(dtypes.F64, src, i, v)
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := kerneltest.Dst(t, p, 0xa5)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		want := kerneltest.WideBounds(p, src, nil)
		kerneltest.CheckWideBounds(t, c.name+" interpreter", p, want, ref, 0xa5)
		if ran := runNative(t, isaList, p, src, func(name string, dst []byte) {
			kerneltest.CheckWideBounds(t, c.name+" "+name, p, want, dst, 0xa5)
		}); ran != len(isaList) {
			t.Fatalf("%s: %d of %d ISAs ran machine code", c.name, ran, len(isaList))
		}
	}
}

package amd64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRunsShortInnerLoop: an f64 sum whose innermost reduced loop
// is short under a long outer reduced loop (the two not mergeable). Each
// output is two 1s and many 2^-54s: a chain that adds each pass's
// 2^-53 to a total of 2 loses it. The native kernel cuts runs of the
// innermost loop only and would fold after every pass of the short one,
// leaving the oracle's bound 2^-53 (1032 + N/1024) of the magnitudes, so
// it refuses such a sum (kernelshape.CheckNativeRuns; runNative checks
// the refusal is Unimplemented) and the interpreter, whose two levels of
// 1024 keep the bound, sums it.
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
	} {
		p := problemOf(c.s, dtypes.F64, dtypes.F64, plan.AlgSum.Reduction(0, 0))
		sb, err := p.SrcBytes()
		if err != nil {
			t.Fatal(err)
		}
		src := make([]byte, sb)
		per := sb / 8 / a // elements per index of the outer reduced loop
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
		kerneltest.CheckWide(t, c.name+" interpreter", p, src, ref, nil, 0xa5)
		if ran := runNative(t, isaList, p, src, func(name string, dst []byte) {
			kerneltest.CheckWide(t, c.name+" "+name, p, src, dst, nil, 0xa5)
		}); ran != 0 {
			t.Fatalf("%s: %d ISAs ran machine code, want the refusal", c.name, ran)
		}
	}
}

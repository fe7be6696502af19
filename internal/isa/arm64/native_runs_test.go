package arm64

import (
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRunsShortInnerLoop is amd64's: f64 sums over two reduced
// loops (not mergeable), long enough to be cut into runs, each output a
// few 1s and many 2^-54s. A kernel that folds after every pass of a
// short innermost loop leaves the oracle's bound 2^-53 (1032 + N/1024)
// of the magnitudes; the native kernel cuts its runs across the loops
// (kernelshape.CheckNativeRuns) and must keep it, as the interpreter
// does.
func TestNativeRunsShortInnerLoop(t *testing.T) {
	needARM64(t)
	const a = 20000
	for _, c := range []struct {
		name       string
		dims, strd []int64
		reduce     []bool
	}{
		{"column", []int64{a, 2, 2, 8}, []int64{32, 16, 8, 1}, []bool{true, false, true, false}},
		{"row", []int64{a, 2, 8}, []int64{16, 8, 1}, []bool{true, false, true}},
		{"element", []int64{a, 2, 2}, []int64{4, 2, 1}, []bool{true, false, true}},
		{"element, long inner loop", []int64{200, 1500, 2}, []int64{3002, 2, 1}, []bool{true, true, false}},
		{"row, long inner loop", []int64{30, 2, 9000}, []int64{18008, 9004, 1}, []bool{true, false, true}},
		{"row, cut in its blocks", []int64{4, 2, 70000}, []int64{140008, 70004, 1}, []bool{true, false, true}},
		{"row, short rows", []int64{a, 2, 13}, []int64{32, 16, 1}, []bool{true, false, true}},
		{"column, odd inner loop", []int64{3000, 3, 2, 9}, []int64{64, 18, 9, 1}, []bool{true, true, false, false}},
	} {
		p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
			Dims: c.dims, SrcStrides: c.strd, Reduce: c.reduce, DstStrides: make([]int64, len(c.dims))}
		st := int64(1)
		for i := len(c.dims) - 1; i >= 0; i-- {
			if !c.reduce[i] {
				p.DstStrides[i] = st
				st *= c.dims[i]
			}
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src, dst0, _ := kerneltest.Buffers(t, p, nativeSentinel, func(dt dtypes.DataType, b []byte) {
			per := int64(len(b)) / 8 / c.dims[0]
			for i := int64(0); i < int64(len(b))/8; i++ {
				v := math.Ldexp(1, -54)
				if i < per {
					v = 1
				}
				plan.StoreF64(dtypes.F64, b, i, v)
			}
		}, nil)
		outs := runNative(t, pl, src, len(dst0), nil, []int64{0, 1})
		if outs == nil {
			t.Fatalf("%s: %v refused, want machine code", c.name, pl)
		}
		for i, dst := range outs {
			kerneltest.CheckWide(t, fmt.Sprintf("%s neon (run %d)", c.name, i), p, src, dst, nil, nativeSentinel)
		}
		ref := append([]byte(nil), dst0...)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckWide(t, c.name+" interpreter", p, src, ref, nil, nativeSentinel)
	}
}

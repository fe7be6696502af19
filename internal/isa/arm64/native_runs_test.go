package arm64

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRunsShortInnerLoop is amd64's: an f64 sum whose innermost
// reduced loop is short under a long outer reduced loop, each output two
// 1s and many 2^-54s. Cut into runs of the innermost loop only, it would
// fold after every pass and leave the oracle's bound 2^-53 (1032 +
// N/1024) of the magnitudes, so the native kernel refuses it
// (kernelshape.CheckNativeRuns; runNative checks the refusal is
// Unimplemented) and the interpreter, within the bound, sums it.
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
			per := int64(len(b)) / 8 / a
			for i := int64(0); i < int64(len(b))/8; i++ {
				v := math.Ldexp(1, -54)
				if i < per {
					v = 1
				}
				plan.StoreF64(dtypes.F64, b, i, v)
			}
		}, nil)
		if outs := runNative(t, pl, src, len(dst0), nil, []int64{0, 1}); outs != nil {
			t.Fatalf("%s: %v ran as machine code, want the refusal", c.name, pl)
		}
		ref := append([]byte(nil), dst0...)
		if err := interp.Run(pl, src, ref, nil); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckWide(t, c.name+" interpreter", p, src, ref, nil, nativeSentinel)
	}
}

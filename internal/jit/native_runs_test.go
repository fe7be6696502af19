package jit

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRunsShortInnerLoopCompiled: the f64 sum of the emitters'
// TestNativeRunsShortInnerLoop through Compile and Run at the default
// budget, one and two threads: an outer reduced loop of 20000 over an
// inner one of 2 (not mergeable), each output two 1s and 2^-54s. The
// native kernel takes it, its runs cut across both loops
// (kernelshape.CheckNativeRuns), and the result must stay within the
// oracle's bound on every ISA.
func TestNativeRunsShortInnerLoopCompiled(t *testing.T) {
	const a = 20000
	p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
		Dims: []int64{a, 2, 2}, SrcStrides: []int64{4, 2, 1}, Reduce: []bool{true, false, true}, DstStrides: []int64{0, 1, 0}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	src, dst0, _ := kerneltest.Buffers(t, p, 0xa5, func(dt dtypes.DataType, b []byte) {
		for i := int64(0); i < int64(len(b))/8; i++ {
			v := math.Ldexp(1, -54)
			if i < 4 {
				v = 1
			}
			plan.StoreF64(dtypes.F64, b, i, v)
		}
	}, nil)
	for _, isa := range testISAs() {
		prev := SetMaxISA(isa)
		k, err := Compile(pl)
		SetMaxISA(prev)
		if err != nil {
			t.Fatal(err)
		}
		if isa != None && k.Impl() == "interp" {
			t.Errorf("%v: impl %q, why %q; want the native kernel", isa, k.Impl(), k.Why())
		}
		for _, threads := range []int{1, 2} {
			withThreads(t, threads)
			dst := append([]byte(nil), dst0...)
			if err := k.Run(src, dst, nil); err != nil {
				t.Fatal(err)
			}
			kerneltest.CheckWide(t, isa.String()+" "+k.Impl()+" split "+k.dec.split, p, src, dst, nil, 0xa5)
		}
	}
}

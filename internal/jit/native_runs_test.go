package jit

import (
	"fmt"
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
	want := kerneltest.WideBounds(p, src, nil)
	nativeOnEveryISA(t, pl, src, dst0, func(what string, dst []byte) { kerneltest.CheckWideBounds(t, what, p, want, dst, 0xa5) })
}

// nativeOnEveryISA compiles pl on every ISA, which must take it in the
// native kernel (machine code, not the interpreter), runs it on one and
// two threads into a copy of dst0, and checks each result.
func nativeOnEveryISA(t *testing.T, pl *plan.Plan, src, dst0 []byte, check func(what string, dst []byte)) {
	t.Helper()
	for _, isa := range testISAs() {
		prev := SetMaxISA(isa)
		k, err := Compile(pl)
		SetMaxISA(prev)
		if err != nil {
			t.Fatal(err)
		}
		if isa != None && k.Impl() == "interp" {
			t.Errorf("%v %v: impl %q, why %q; want the native kernel", isa, pl, k.Impl(), k.Why())
		}
		for _, threads := range []int{1, 2} {
			withThreads(t, threads)
			dst := append([]byte(nil), dst0...)
			if err := k.Run(src, dst, nil); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("%v %s split %s threads %d", isa, k.Impl(), k.dec.split, threads), dst)
		}
	}
}

// TestNativeOneRunCompiled: f64 sums whose lanes' chains make one run
// (kernelshape's TestNativeOneRunWhole: longer than the chains left
// whole before, at most a run; no longer cut, so their kernels keep all
// their accumulators) through Compile and Run on every ISA, one and two
// threads, within the oracle's bound: columns of 1001 and 1024 rows
// (D's), one of 1025 (cut), and rows whose lanes take 1012 adds with 16,
// 24, 32 or 128 elements a block (NEON's, AVX2's and AVX-512's windows
// among them). Each output's values are 1 then 2^-54s, which every add
// rounds.
func TestNativeOneRunCompiled(t *testing.T) {
	for _, c := range []struct {
		dims []int64
		axis int
	}{{[]int64{1001, 40}, 0}, {[]int64{1024, 96}, 0}, {[]int64{1025, 24}, 0},
		{[]int64{2, 1012 * 16}, 1}, {[]int64{2, 1012 * 24}, 1}, {[]int64{2, 1012 * 32}, 1}, {[]int64{2, 1012 * 128}, 1}} {
		p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: c.dims,
			SrcStrides: []int64{c.dims[1], 1}, Reduce: []bool{c.axis == 0, c.axis == 1}, DstStrides: []int64{1, 1}}
		p.DstStrides[c.axis] = 0
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		src, dst0, _ := kerneltest.Buffers(t, p, 0xa5, func(dt dtypes.DataType, b []byte) {
			for i := int64(0); i < int64(len(b))/8; i++ {
				row, col := i/c.dims[1], i%c.dims[1]
				v := math.Ldexp(1, -54)
				if c.axis == 0 && row == 0 || c.axis == 1 && col == 0 {
					v = 1
				}
				plan.StoreF64(dtypes.F64, b, i, v)
			}
		}, nil)
		want := kerneltest.WideBounds(p, src, nil)
		nativeOnEveryISA(t, pl, src, dst0, func(what string, dst []byte) { kerneltest.CheckWideBounds(t, what, p, want, dst, 0xa5) })
	}
}

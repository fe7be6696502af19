package arm64_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/isa/arm64"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestRuntimeRunsNEON compiles every kernel shape for every dtype pair
// through package jit (the kernel cache, the two-stage split of long
// reductions, threading) and checks that the JIT, not the interpreter,
// runs them ("jit:neon") and that the results are the reference's.
func TestRuntimeRunsNEON(t *testing.T) {
	if runtime.GOARCH != "arm64" {
		t.Skip("the NEON backend is selected only on arm64")
	}
	if isa := jit.EffectiveISA(); isa != jit.NEON {
		t.Skipf("effective ISA is %v (GDNN_MAX_CPU_ISA caps it)", isa)
	}
	var probs []arm64.Shape
	for i, pr := range arm64.Pairs {
		bdt := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[i%3]
		probs = append(probs, arm64.Shapes(int64(5+i), pr[0], pr[1], bdt)...)
		// Long enough for the runtime to split it into two stages.
		long := &plan.Problem{SrcDT: pr[0], DstDT: pr[1], Dims: []int64{3, 200003}, SrcStrides: []int64{200003, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
		probs = append(probs, arm64.Shape{Name: "long row", P: long})
	}
	for i, s := range probs {
		pl, err := plan.Canonicalize(s.P)
		if err != nil {
			t.Fatal(err)
		}
		k, err := jit.Compile(pl)
		if err != nil {
			t.Fatalf("%s %v: Compile: %v", s.Name, pl, err)
		}
		if k.Impl() != "jit:neon" {
			t.Errorf("%s %v: Impl %q, want jit:neon (why: %s)", s.Name, pl, k.Impl(), k.Why())
		}
		src, dst, bins, want, outs := arm64.Buffers(t, int64(i), s.P)
		if err := k.Run(src, dst, bins); err != nil {
			t.Fatalf("%s: Run: %v", s.Name, err)
		}
		// Long reductions are split and their partial sums added in
		// another order; with exact data that changes no bit.
		if d := kerneltest.CompareExact(s.P.DstDT, dst, want, outs, false); d != "" {
			t.Errorf("%s %v: %s", s.Name, pl, d)
		}
	}
}

// TestRuntimeRunsNEONKinds runs every covered reduction through package
// jit on NEON: kernel shapes, a long column that the runtime splits into
// stages (SkipFinalize partials, then SkipTransform combines) and, for
// some sums, long rows, at one and two threads. With exact data every result is
// the oracle's, bit for bit, and so the same at every thread count.
func TestRuntimeRunsNEONKinds(t *testing.T) {
	if runtime.GOARCH != "arm64" {
		t.Skip("the NEON backend is selected only on arm64")
	}
	if isa := jit.EffectiveISA(); isa != jit.NEON {
		t.Skipf("effective ISA is %v (GDNN_MAX_CPU_ISA caps it)", isa)
	}
	defer jit.SetThreads(jit.SetThreads(1))
	defer jit.SetShareBytes(jit.SetShareBytes(kerneltest.SmallShare))
	for ci, c := range arm64.Reductions() {
		pr := arm64.Pairs[ci%len(arm64.Pairs)]
		bdt := []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}[ci%3]
		probs := arm64.Shapes(int64(1+ci%9), pr[0], pr[1], bdt)
		longRow := arm64.Shape{Name: "long row", P: &plan.Problem{SrcDT: pr[0], DstDT: pr[1], Dims: []int64{3, 200003},
			SrcStrides: []int64{200003, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}}
		longCol := arm64.Shape{Name: "long column", P: &plan.Problem{SrcDT: pr[0], DstDT: pr[1], Dims: []int64{100003, 7},
			SrcStrides: []int64{7, 1}, Reduce: []bool{true, false}, DstStrides: []int64{0, 1}}}
		// The long column is split into stages (partials out, then
		// in); the long row is one call per row, which only sums cut
		// into runs: some of them take it.
		long := []arm64.Shape{longCol}
		if c.R.Combine == plan.CombineAdd && ci%3 == 0 {
			long = append(long, longRow)
		}
		for i, s := range append(probs, long...) {
			s.P.Reduction = c.R
			pl, err := plan.Canonicalize(s.P)
			if err != nil {
				t.Fatal(err)
			}
			k, err := jit.Compile(pl)
			if err != nil {
				t.Fatalf("%s %s: Compile: %v", c.Name, s.Name, err)
			}
			if k.Impl() != "jit:neon" {
				t.Errorf("%s %s %v: Impl %q, want jit:neon (why: %s)", c.Name, s.Name, pl, k.Impl(), k.Why())
			}
			src, dst0, bins, want, outs := arm64.KindBuffers(t, int64(100*ci+i), s.P, i >= len(probs))
			var first []byte
			for _, th := range []int{1, 2} {
				jit.SetThreads(th)
				dst := append([]byte(nil), dst0...)
				if err := k.Run(src, dst, bins); err != nil {
					t.Fatalf("%s %s: Run: %v", c.Name, s.Name, err)
				}
				if d := kerneltest.CompareExact(s.P.DstDT, dst, want, outs, false); d != "" {
					t.Errorf("%s %s %v, %d threads: %s", c.Name, s.Name, pl, th, d)
				}
				if first == nil {
					first = dst
				} else if !bytes.Equal(first, dst) {
					t.Errorf("%s %s: 1 and 2 threads differ", c.Name, s.Name)
				}
			}
		}
	}
}

package jit

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestExactRuntime runs exact plans (integer and boolean data) through
// the runtime: its blocks and single calls, at one and two threads, with
// src and dst against guard pages, checked against the exact oracle.
// They run in the interpreter on every ISA (Why says so).
func TestExactRuntime(t *testing.T) {
	freshCache(t)
	withBudget(t, 2048) // small shapes take the blocked paths
	r := rand.New(rand.NewSource(7))
	fence := kerneltest.NewFence(t, true)
	defer fence.Free()
	for _, sdt := range kerneltest.ExactTypes {
		for range 6 {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				p := kerneltest.RandomExactProblem(r, 20000, sdt, c)
				pl, err := plan.Canonicalize(p)
				if err != nil {
					t.Fatal(err)
				}
				k, err := Compile(pl)
				if err != nil {
					t.Fatalf("%v: %v", pl, err)
				}
				if pl.Outputs > 0 && plan.IsExact(pl.SrcDT, pl.Reduction) && (k.Impl() != "interp" || k.Why() == "") {
					t.Errorf("%v: impl %q, why %q; want the interpreter, saying why", pl, k.Impl(), k.Why())
				}
				src, dst0, _ := kerneltest.Buffers(t, p, 0x5a, func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) }, nil)
				for _, threads := range []int{1, 2} {
					withThreads(t, threads)
					fs, fd := fence.Place(src), fence.Place(dst0)
					if err := k.Run(fs, fd, nil); err != nil {
						t.Fatalf("%v: %v", pl, err)
					}
					kerneltest.CheckExact(t, fmt.Sprintf("%v %v threads %d", pl, c, threads), p, src, fd, 0x5a)
				}
			}
		}
	}
}

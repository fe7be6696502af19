package jit

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestF64LogSumExpIsMachineCode: an f64 log-sum-exp through the runtime
// over rows, columns (a reduced axis that is not the innermost), both
// with odd sizes (tails), split among calls under a small budget, is
// the native kernel on every ISA, within kerneltest.LSEULP or LSEAbs of
// the interpreter and within the oracle's bounds on every kind of data
// of kerneltest.FillWideLSE, with the same bits at 1, 2 and 3 threads.
func TestF64LogSumExpIsMachineCode(t *testing.T) {
	forEachJITISA(t, func(t *testing.T, isa ISA) {
		withBudget(t, 8192)
		r := rand.New(rand.NewSource(52))
		for _, c := range []struct {
			name         string
			dims, ss, ds []int64
			red          []bool
		}{
			{"rows 37x301", []int64{37, 301}, []int64{301, 1}, []int64{1, 0}, []bool{false, true}},
			{"columns 301x37", []int64{301, 37}, []int64{37, 1}, []int64{0, 1}, []bool{true, false}},
			{"middle axis 5x41x13", []int64{5, 41, 13}, []int64{41 * 13, 13, 1}, []int64{13, 0, 1}, []bool{false, true, false}},
			{"one row of 3001", []int64{3001}, []int64{1}, []int64{0}, []bool{true}},
		} {
			for mode := range kerneltest.WideLSEModes {
				for _, dst := range []dtypes.DataType{dtypes.F64, dtypes.F32} {
					p := &plan.Problem{Reduction: plan.LogSumExp, SrcDT: dtypes.F64, DstDT: dst, Dims: c.dims,
						SrcStrides: c.ss, Reduce: c.red, DstStrides: c.ds}
					pl, err := plan.Canonicalize(p)
					if err != nil {
						t.Fatal(err)
					}
					src, want, _ := kerneltest.Buffers(t, p, 0xa5, func(_ dtypes.DataType, b []byte) { kerneltest.FillWideLSE(r, b, mode) }, nil)
					if err := interp.Run(pl, src, want, nil); err != nil {
						t.Fatal(err)
					}
					k, err := Compile(pl)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%s %s (data %d) into %v", isa, c.name, mode, dst)
					if k.Impl() != "jit:"+isa.String() || k.Why() != "" {
						t.Fatalf("%s: %s, Impl %s, Why %q: want machine code", name, k.schedule(), k.Impl(), k.Why())
					}
					var first []byte
					for _, th := range []int{1, 2, 3} {
						prev := SetThreads(th)
						got := kerneltest.Dst(t, p, 0xa5)
						err := k.Run(src, got, nil)
						SetThreads(prev)
						if err != nil {
							t.Fatal(err)
						}
						if first == nil {
							first = got
							if msg := kerneltest.WideLSEMismatch(p, got, want); msg != "" {
								t.Fatalf("%s (%s): against the interpreter: %s", name, k.schedule(), msg)
							}
							kerneltest.CheckWide(t, name, p, src, got, nil, 0xa5)
						} else if string(got) != string(first) {
							t.Fatalf("%s (%s): %d threads give other bits than 1", name, k.schedule(), th)
						}
					}
					if mode == 0 && dst == dtypes.F64 {
						t.Logf("%s: %s", name, k.schedule())
					}
				}
			}
		}
	})
}

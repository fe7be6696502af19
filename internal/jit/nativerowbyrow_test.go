package jit

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestNativeRowByRow runs f64 and exact reductions over long, wide rows
// (the size bound lifted) on every ISA, at one and two threads, with src
// and dst against guard pages: f64 against the oracle's bounds, exact
// data against the exact oracle, the two thread counts bit-identical.
// Rows of odd widths (elements past the last whole vector), padded rows
// and rows under a kept dim. AVX2 must take every kind whose partials are
// its lanes row by row in machine code, in whole rows (rows wider than
// 16 KiB of partials are not cut into strips: they are not taken), and
// no other ISA any. That the kernels then take the row-by-row code, and
// give the column blocks' bytes, is TestNativeRowByRowKernels's (package
// amd64).
func TestNativeRowByRow(t *testing.T) {
	withSizeBound(t, &rowByRowMinBytes, 0)
	withBudget(t, 64<<10) // chunks of a few rows, in two stages
	shapes := []struct {
		dims    []int64
		axis    int
		padding int64 // elements after each row
	}{
		{[]int64{300, 203}, 0, 0},
		{[]int64{2, 260, 130}, 1, 5},
		{[]int64{257, 1100}, 0, 0}, // rows of more than 1024 lanes
		{[]int64{3, 700, 67}, 1, 0},
	}
	f64Kinds := []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0),
		plan.AlgMul.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), plan.AlgNormLpSum.Reduction(1, 0),
		plan.AlgNormLpSum.Reduction(2, 0), plan.AlgNormLpPowerPSum.Reduction(2, 0)}
	freshCache(t)
	r := rand.New(rand.NewSource(91))
	taken := map[ISA]int{}
	for si, s := range shapes {
		type rbCase struct {
			sdt dtypes.DataType
			kerneltest.ExactCase
		}
		var cases []rbCase
		for j, red := range f64Kinds {
			if (si+j)%2 == 0 { // half the kinds a shape
				cases = append(cases, rbCase{dtypes.F64, kerneltest.ExactCase{Reduction: red, DstDT: dtypes.F64}})
			}
		}
		for i, sdt := range []dtypes.DataType{dtypes.S16, dtypes.U32, dtypes.S32, dtypes.S64, dtypes.U64} {
			if (si+i)%2 == 0 {
				continue // half the types a shape
			}
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				if c.Reduction.Transform == plan.TransformNonzero || c.Reduction.IsMean() {
					continue // logical reductions and means are not summed row by row
				}
				cases = append(cases, rbCase{sdt, c})
			}
		}
		for _, c := range cases {
			sdt := c.sdt
			p := kerneltest.DenseProblem(s.dims, []int{s.axis}, sdt)
			p.DstDT, p.Reduction = c.DstDT, c.Reduction
			if s.padding > 0 {
				row := s.dims[len(s.dims)-1] + s.padding
				for i := len(s.dims) - 2; i >= 0; i-- {
					p.SrcStrides[i] = row
					row *= s.dims[i]
				}
			}
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			special := r.Intn(2) == 0
			src, dst0, _ := kerneltest.Buffers(t, p, 0x5a, func(dt dtypes.DataType, b []byte) {
				if sdt == dtypes.F64 {
					kerneltest.FillWide(r, dt, b, special)
					if c.Reduction.Combine == plan.CombineMul {
						for j := int64(0); j < int64(len(b)/8); j++ {
							plan.StoreF64(dt, b, j, 1+r.NormFloat64()/64)
						}
					}
					return
				}
				kerneltest.FillExact(r, dt, b)
			}, nil)
			// The oracle's answer once, for every ISA.
			var check func(what string, got []byte)
			if sdt == dtypes.F64 {
				bounds := kerneltest.WideBounds(p, src, nil)
				check = func(what string, got []byte) { kerneltest.CheckWideBounds(t, what, p, bounds, got, 0x5a) }
			} else {
				outs := oracle.ReduceExact(p, src)
				check = func(what string, got []byte) { kerneltest.CheckExactOutputs(t, what, p, outs, got, 0x5a) }
			}
			for _, isa := range testISAs() {
				prev := SetMaxISA(isa)
				k := compileOK(t, pl)
				SetMaxISA(prev)
				what := fmt.Sprintf("%v %v %v->%v dims %v axis %d pad %d (%s)", isa, c.Reduction, sdt, c.DstDT, s.dims, s.axis, s.padding, k.schedule())
				checkNativeImpl(t, pl, k)
				byRow := false
				for u, h := range k.dec.hints {
					byRow = byRow || h.RowByRow && kernelshape.IsNative(k.dec.plans[u])
				}
				pdt, _, _ := partials(pl)
				if want := k.ISA() == AVX2 && pl.Inner.Size <= rowByRowLanes(esz(pdt)); byRow != want {
					t.Errorf("%s: row by row %v on %v", what, byRow, k.ISA())
				}
				if byRow {
					taken[isa]++
				}
				var first []byte
				for _, threads := range []int{1, 2} {
					withThreads(t, threads)
					f := kerneltest.NewFence(t, threads == 1)
					fs, fd := f.Place(src), f.Place(dst0)
					if err := k.Run(fs, fd, nil); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					got := append([]byte(nil), fd...)
					f.Free()
					if first == nil {
						first = got
						check(what, got)
					} else if !bytes.Equal(first, got) {
						t.Errorf("%s: 1 and 2 threads differ", what)
					}
				}
			}
		}
	}
	t.Logf("plans summed row by row in the native kernel, by ISA: %v", taken)
}

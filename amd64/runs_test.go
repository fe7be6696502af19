package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/kernelshape"
	"github.com/gdnn/gdnn/jit/plan"
)

// TestRunningTotals checks where kernels keep the running totals of
// sums cut into runs: registers when enough temporaries are free (the
// code then needs no LongArgs block), the LongArgs block when not, and
// no totals for chains the tolerance allows whole. Each kernel is then
// run against guard pages and checked against the reference, blocks of
// outputs included, so both kinds of totals are exercised.
func TestRunningTotals(t *testing.T) {
	const none, inRegs, inMem = 0, 1, 2
	problem := func(dims []int64, red []bool) *plan.Problem {
		p := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: dims, Reduce: red,
			SrcStrides: make([]int64, len(dims)), DstStrides: make([]int64, len(dims))}
		s, d := int64(1), int64(1)
		for i := len(dims) - 1; i >= 0; i-- {
			p.SrcStrides[i] = s
			s *= dims[i]
			if !red[i] {
				p.DstStrides[i] = d
				d *= dims[i]
			}
		}
		return p
	}
	for _, c := range []struct {
		name         string
		p            *plan.Problem
		avx512, avx2 int // where the totals are
	}{
		// 8 accumulators, one total.
		{"one long row", problem([]int64{65536}, []bool{true}), inRegs, inRegs},
		// 16 (AVX2: 8) grouped outputs, a total each.
		{"grouped rows over a long outer loop", problem([]int64{512, 16, 24}, []bool{true, false, true}), inMem, inMem},
		// AVX2: 12 accumulators, 2 temporaries left; AVX-512: 6 vectors
		// of 2 rows each.
		{"wide column block", problem([]int64{2048, 96}, []bool{true, false}), inRegs, inMem},
		// Rows of 4096: 52 adds allowed per accumulator; AVX-512 takes
		// 35, AVX2 67.
		{"rows of 4096", problem([]int64{64, 4096}, []bool{false, true}), none, inRegs},
	} {
		pl, err := plan.Canonicalize(c.p)
		if err != nil {
			t.Fatal(err)
		}
		for _, isa := range []struct {
			o    Options
			want int
		}{{Options{AVX512: true}, c.avx512}, {Options{}, c.avx2}} {
			g := newGen(pl, isa.o)
			kernelshape.Generate(pl, g)
			if g.err != nil {
				t.Fatalf("%s, %+v: %v", c.name, isa.o, g.err)
			}
			got := none
			switch {
			case g.usesTotals:
				got = inMem
			case g.cut:
				got = inRegs
			}
			if got != isa.want {
				t.Errorf("%s, %+v: totals %v (cut %v), want %v (0 none, 1 registers, 2 memory)", c.name, isa.o, got, g.cut, isa.want)
			}
		}
		runGuarded(t, rand.New(rand.NewSource(5)), c.p, isas(t), 0, 1, 3)
	}
}

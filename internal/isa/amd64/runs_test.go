package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestRunningTotals checks where kernels keep the running totals of
// sums cut into runs: registers when enough temporaries are free (the
// code then needs no LongArgs block), the LongArgs block when not, and
// no totals for chains the tolerance allows whole. Each kernel is then
// run against guard pages and checked against the reference, blocks of
// outputs included, so both kinds of totals are exercised. Each problem
// runs again with plan.MaxBinary binary operands, whose pointers leave no
// general register for the totals' address: the totals stay where they
// were, their address reached through a vector register.
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
		for _, nbin := range []int{0, plan.MaxBinary} {
			p := withOperands(c.p, nbin)
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, isa := range []struct {
				o    Options
				want int
			}{{Options{AVX512: true}, c.avx512}, {Options{}, c.avx2}} {
				g := newGen(pl, isa.o)
				kernelshape.Generate(pl, g)
				if g.Err() != nil {
					t.Fatalf("%s, %d operands, %+v: %v", c.name, nbin, isa.o, g.Err())
				}
				got := none
				switch {
				case g.usesTotals:
					got = inMem
				case g.cut:
					got = inRegs
				}
				if got != isa.want {
					t.Errorf("%s, %d operands, %+v: totals %v (cut %v), want %v (0 none, 1 registers, 2 memory)",
						c.name, nbin, isa.o, got, g.cut, isa.want)
				}
				if nbin > 0 && got != none && (g.tot != 0 || g.totArgs == 0) {
					t.Errorf("%s, %d operands, %+v: totals' address in general register %d, vector register %d; want a vector register",
						c.name, nbin, isa.o, g.tot, g.totArgs)
				}
			}
			runGuarded(t, rand.New(rand.NewSource(5)), p, isas(t), 0, 1, 3)
		}
	}
}

// withOperands returns p with nbin Add post-ops appended, of f32
// operands alternately scalar and of dst's shape.
func withOperands(p *plan.Problem, nbin int) *plan.Problem {
	q := *p
	q.PostOps = append([]plan.PostOp(nil), p.PostOps...)
	for i := range nbin {
		st := make([]int64, len(p.Dims))
		if i%2 == 1 {
			copy(st, p.DstStrides)
		}
		q.PostOps = append(q.PostOps, plan.PostOp{Kind: ops.Add, BinDT: dtypes.F32, BinStrides: st})
	}
	return &q
}

// TestRegisterBudget: Covers' Registers is the general registers newGen
// shares between operand pointers and counters, whatever the operands.
func TestRegisterBudget(t *testing.T) {
	base := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
		Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
	for nbin := 0; nbin <= plan.MaxBinary; nbin++ {
		pl, err := plan.Canonicalize(withOperands(base, nbin))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Options{{AVX512: true}, {}} {
			g := newGen(pl, o)
			if got := nbin + len(g.gprFree); got != Covers(o).Registers {
				t.Errorf("%d operands, %+v: %d operand and %d counter registers, Covers says %d", nbin, o, nbin, len(g.gprFree), Covers(o).Registers)
			}
		}
	}
}

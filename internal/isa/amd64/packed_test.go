package amd64

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestPackedBlocks checks the lane blocks that packed groups load rows
// into: after skip levels each register holds 2^skip inputs in runs of
// V>>skip lanes, every input in exactly one run.
func TestPackedBlocks(t *testing.T) {
	for _, V := range []int{8, 16} {
		for skip := 0; skip < len(transposeLevels(V)); skip++ {
			blocks, ok := packedBlocks(V, skip)
			if !ok {
				t.Fatalf("V=%d skip=%d: inputs not in contiguous runs", V, skip)
			}
			used := map[[2]int]bool{}
			for p, b := range blocks {
				if b.width != V>>skip || b.reg < 0 || b.reg >= V>>skip || b.lo%b.width != 0 || b.lo+b.width > V {
					t.Errorf("V=%d skip=%d: input %d in %+v", V, skip, p, b)
				}
				if used[[2]int{b.reg, b.lo}] {
					t.Errorf("V=%d skip=%d: two inputs in register %d at lane %d", V, skip, b.reg, b.lo)
				}
				used[[2]int{b.reg, b.lo}] = true
			}
		}
	}
}

// TestPackSkipChoice checks which row groups are packed, and how tightly.
func TestPackSkipChoice(t *testing.T) {
	avx512, avx2 := Options{AVX512: true}, Options{}
	for _, c := range []struct {
		rk     int64
		stride int64 // of the row's elements
		o      Options
		want   [3]int // f32, bf16, f16
	}{
		{2, 1, avx512, [3]int{2, 2, 2}},
		{4, 1, avx512, [3]int{2, 2, 2}},
		{5, 1, avx512, [3]int{1, 1, 1}},
		{8, 1, avx512, [3]int{1, 1, 1}},
		{9, 1, avx512, [3]int{0, 1, 0}}, // bf16: two elements per lane
		{16, 1, avx512, [3]int{0, 1, 0}},
		{17, 1, avx512, [3]int{0, 0, 0}},
		{5, 2, avx512, [3]int{0, 0, 0}}, // element mode
		{2, 1, avx2, [3]int{1, 2, 2}},   // f32: no VINSERTF128 per 4 rows
		{3, 1, avx2, [3]int{1, 1, 1}},
		{4, 1, avx2, [3]int{1, 1, 1}},
		{5, 1, avx2, [3]int{0, 0, 0}},
		{2, 3, avx2, [3]int{0, 0, 0}},
	} {
		for i, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			p := &plan.Problem{SrcDT: dt, DstDT: dt, Dims: []int64{100, c.rk}, SrcStrides: []int64{c.rk * c.stride, c.stride},
				Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
			pl, err := plan.Canonicalize(p)
			if err != nil {
				t.Fatal(err)
			}
			g := newGen(pl, c.o)
			rp := kernelshape.RowPlan{Rows: kernelshape.RowsOf(pl.Reduced, false), Group: g.V}
			if got := g.conf.packSkip(rp.Rows); got != c.want[i] {
				t.Errorf("%v rows of %d at stride %d, avx512 %v: packSkip = %d, want %d", dt, c.rk, c.stride, c.o.AVX512, got, c.want[i])
			}
		}
	}
}

// TestPackedRows runs rows of 2 to 17 elements (packed groups for up to
// 4 on AVX2, 8 on AVX-512, 16 for AVX-512 bf16) for every dtype pair:
// back to back (groups only after gather's for 2 to 4), apart (groups
// only), and under an outer reduced loop; with counts around the group
// size, whole and in blocks, and with a per-output operand and an
// eltwise chain, next to guard pages.
func TestPackedRows(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(23))
	for _, pair := range dtPairs {
		for _, rk := range []int64{2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17} {
			for _, pad := range []int64{0, 3} {
				for _, n := range []int64{2, 15, 16, 17, 37} {
					rs := rk + pad
					rows := &plan.Problem{SrcDT: pair[0], DstDT: pair[1], Dims: []int64{n, rk}, SrcStrides: []int64{rs, 1},
						Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
					// [3, n, rk] over [0, 2]: the rows' sums run over an
					// outer reduced loop, the operand per output.
					outer := &plan.Problem{SrcDT: pair[0], DstDT: pair[1], Dims: []int64{3, n, rk},
						SrcStrides: []int64{n*rs + 1, rs, 1}, Reduce: []bool{true, false, true}, DstStrides: []int64{0, 1, 0},
						PostOps: []plan.PostOp{{Kind: ops.Add, BinDT: pair[0], BinStrides: []int64{0, 1, 0}},
							{Kind: ops.HardSwish}, {Kind: ops.Clamp, Alpha: -1, Beta: 2}}}
					for name, p := range map[string]*plan.Problem{"rows": rows, "outer": outer} {
						t.Run(fmt.Sprintf("%v:%v/%s/%dx%d+%d", pair[0], pair[1], name, n, rk, pad), func(t *testing.T) {
							runGuarded(t, r, p, isaList, 0, 5, 16)
						})
					}
				}
			}
		}
	}
}

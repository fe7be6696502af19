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

// outerProblem is [O, R, W] reduced over R, dense, with an operand of
// layout bs (nil: none), optionally under a padded outer dim of 2 so that
// the O loop is not the counted one.
func outerProblem(sdt, ddt dtypes.DataType, O, R, W int64, bs []int64, nested bool) *plan.Problem {
	p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{O, R, W}, SrcStrides: []int64{R * W, W, 1},
		Reduce: []bool{false, true, false}, DstStrides: []int64{W, 0, 1}}
	if nested {
		p.Dims = append([]int64{2}, p.Dims...)
		p.SrcStrides = append([]int64{O*R*W + 5}, p.SrcStrides...)
		p.Reduce = append([]bool{false}, p.Reduce...)
		p.DstStrides = append([]int64{O*W + 3}, p.DstStrides...)
		if bs != nil {
			bs = append([]int64{O*W + 3}, bs...)
		}
	}
	if bs != nil {
		p.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: sdt, BinStrides: bs}, {Kind: ops.ReLU}}
	}
	return p
}

// TestOuterGroupChoice checks which plans flatOuter takes, and with how
// many iterations per vector.
func TestOuterGroupChoice(t *testing.T) {
	f32 := dtypes.F32
	cases := []struct {
		name    string
		p       *plan.Problem
		o       Options
		wantG   int
		counted bool
	}{
		{"2x2", outerProblem(f32, f32, 100, 2, 2, nil, false), Options{AVX512: true}, 4, true},
		{"2x2 nested", outerProblem(f32, f32, 100, 2, 2, nil, true), Options{AVX512: true}, 4, false},
		{"4x2", outerProblem(f32, f32, 100, 4, 2, nil, false), Options{AVX512: true}, 2, true},
		{"2x4", outerProblem(f32, f32, 100, 2, 4, nil, false), Options{AVX512: true}, 2, true},
		{"2x3", outerProblem(f32, f32, 100, 2, 3, nil, false), Options{AVX512: true}, 2, true},
		{"full operand", outerProblem(f32, f32, 100, 2, 2, []int64{2, 0, 1}, false), Options{AVX512: true}, 4, true},
		{"scalar operand", outerProblem(f32, f32, 100, 2, 2, []int64{0, 0, 0}, false), Options{AVX512: true}, 4, true},
		{"per-Inner operand", outerProblem(f32, f32, 100, 2, 2, []int64{0, 0, 1}, false), Options{AVX512: true}, 0, true},
		{"3x3: more than V/2 lanes", outerProblem(f32, f32, 100, 3, 3, nil, false), Options{AVX512: true}, 0, true},
		{"2x2 avx2", outerProblem(f32, f32, 100, 2, 2, nil, false), Options{}, 0, true},
	}
	for _, c := range cases {
		pl, err := plan.Canonicalize(c.p)
		if err != nil {
			t.Fatal(err)
		}
		g := newGen(pl, c.o)
		k := kernelshape.Nest{Loops: pl.Outer, Counted: len(pl.Outer) > 0}
		if got := g.conf.OuterGroup; got != c.wantG {
			t.Errorf("%s (%v): outerGroup = %d, want %d", c.name, pl, got, c.wantG)
		}
		if _, _, counted := k.SplitInnermost(); counted != c.counted {
			t.Errorf("%s (%v): innermost kept loop counted = %v, want %v", c.name, pl, counted, c.counted)
		}
	}
}

// TestGatherRowsChoice checks which row plans gather takes: rows of 2 to
// 4 back to back on AVX-512, grouped.
func TestGatherRowsChoice(t *testing.T) {
	f32, bf16, f16 := dtypes.F32, dtypes.BF16, dtypes.F16
	avx512 := Options{AVX512: true}
	cases := []struct {
		dt    dtypes.DataType
		rk    int64
		pad   int64
		group bool
		o     Options
		want  bool
	}{
		{f32, 2, 0, true, avx512, true},
		{bf16, 3, 0, true, avx512, true},
		{f16, 4, 0, true, avx512, true},
		{f32, 4, 0, true, avx512, true},
		{f32, 5, 0, true, avx512, false},
		{f32, 3, 1, true, avx512, false},  // rows not back to back
		{f32, 3, 0, false, avx512, false}, // not grouped
		{f32, 3, 0, true, Options{}, false},
	}
	for _, c := range cases {
		p := &plan.Problem{SrcDT: c.dt, DstDT: c.dt, Dims: []int64{100, c.rk}, SrcStrides: []int64{c.rk + c.pad, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		g := newGen(pl, c.o)
		rp := kernelshape.RowPlan{Rows: kernelshape.RowsOf(pl.Reduced, false), Group: 1, RowStep: pl.Outer[0].SrcStride * g.SrcSize}
		if c.group {
			rp.Group = g.V
		}
		if got := g.conf.gatherRows(rp.Rows, rp.RowStep, rp.Group); got != c.want {
			t.Errorf("%v rows of %d (pad %d, grouped %v, avx512 %v): gatherRows = %v, want %v",
				c.dt, c.rk, c.pad, c.group, c.o.AVX512, got, c.want)
		}
	}
}

// TestGatherRows runs rows of 2 to 4 (gather on AVX-512: 16 rows per
// group, the rest in the transposing groups) for every dtype pair and
// every supported post-op, with counts around multiples of 16, whole and
// in blocks, next to guard pages; gather's index registers (6 for rows
// of 3) must leave every epilogue enough temporaries (Emit fails
// otherwise).
func TestGatherRows(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(19))
	op := func(k ops.Kind) plan.PostOp {
		o := plan.PostOp{Kind: k}
		switch k {
		case ops.Clamp:
			o.Alpha, o.Beta = -1, 2
		case ops.LeakyReLU:
			o.Alpha = 0.1
		case ops.HardSigmoid:
			o.Alpha, o.Beta = 0.2, 0.5
		}
		if k.IsBinary() {
			o.BinDT, o.BinStrides = dtypes.F32, []int64{1, 0}
		}
		return o
	}
	for _, pair := range dtPairs {
		for _, rk := range []int64{2, 3, 4} {
			for _, n := range []int64{15, 16, 17, 31, 48, 53} {
				p := &plan.Problem{SrcDT: pair[0], DstDT: pair[1], Dims: []int64{n, rk}, SrcStrides: []int64{rk, 1},
					Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
				runGuarded(t, r, p, isaList, 0, 5, 16)
			}
			for _, k := range genKinds {
				p := &plan.Problem{SrcDT: pair[0], DstDT: pair[1], Dims: []int64{37, rk}, SrcStrides: []int64{rk, 1},
					Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: []plan.PostOp{op(k), op(ops.HardSwish)}}
				runGuarded(t, r, p, isaList, 0, 7)
			}
		}
	}
}

// TestFlatOuter runs the shapes flatSums takes (flatOuter), and their
// neighbours that it does not, for every dtype pair, iteration counts
// around multiples of the group, whole and in runtime-sized blocks (so
// that the counted loop ends in a moved-back group or in single
// iterations), next to guard pages, against the reference.
func TestFlatOuter(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(13))
	// W = 1 is a row shape after canonicalisation (rows of 2 to 4 are
	// gathered, of 8 summed in groups); 3x3 is too wide.
	shapes := [][2]int64{{2, 1}, {3, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}, {2, 3}, {2, 4}, {3, 3}}
	for _, pair := range dtPairs {
		for _, rw := range shapes {
			R, W := rw[0], rw[1]
			G := int64(16) / (R * W)
			for _, O := range []int64{1, 2, max(G-1, 1), G, G + 1, 3*G + 2, 37} {
				for _, nested := range []bool{false, true} {
					for _, bs := range [][]int64{nil, {W, 0, 1}, {0, 0, 0}, {0, 0, 1}} {
						p := outerProblem(pair[0], pair[1], O, R, W, bs, nested)
						t.Run(fmt.Sprintf("%v:%v/%dx%dx%d/nested=%v/bin=%v", pair[0], pair[1], O, R, W, nested, bs), func(t *testing.T) {
							runGuarded(t, r, p, isaList, 0, 1, 3, G+1)
						})
					}
				}
			}
		}
	}
}

package amd64

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/kernelshape"
	"github.com/gdnn/gdnn/jit/plan"
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
		p.PostOps = []plan.PostOp{{Kind: plan.Add, BinDT: sdt, BinStrides: bs}, {Kind: plan.ReLU}}
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
		if got := g.outerGroup(k, pl.Reduced, false); got != c.wantG {
			t.Errorf("%s (%v): outerGroup = %d, want %d", c.name, pl, got, c.wantG)
		}
		if _, _, counted := k.SplitInnermost(); counted != c.counted {
			t.Errorf("%s (%v): innermost kept loop counted = %v, want %v", c.name, pl, counted, c.counted)
		}
	}
}

// TestFlatOuter runs the shapes flatOuter takes, and their neighbours
// that it does not, for every dtype pair, iteration counts around
// multiples of the group, whole and in runtime-sized blocks (so that the
// counted loop ends in a moved-back group or in single iterations), next
// to guard pages, against the reference.
func TestFlatOuter(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(13))
	// W = 1 is a row shape after canonicalisation, 3x3 too wide: both
	// are neighbours flatOuter must leave alone.
	shapes := [][2]int64{{2, 1}, {8, 1}, {2, 2}, {4, 2}, {2, 3}, {2, 4}, {3, 3}}
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

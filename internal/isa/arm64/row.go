package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// The row shape is kernelshape.Row's; these are its NEON primitives.
// A vector row is loaded four vectors per LD1 with a partial tail, an
// element lands in lane 0; a group of V outputs keeps one or two
// accumulators each (four for pairwise 8-bit sums), and three FADDPs turn
// the four outputs' accumulators into one vector holding the four sums.

// Row emits the row and element shapes.
func (g *gen) Row(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	kernelshape.Row(g, k, red, zeroSum, g.conf.Group)
}

// Lanes is V.
func (g *gen) Lanes() int { return lanes }

// RowAccs lays the accumulators out: U of them per output, one output
// (single) or V.
func (g *gen) RowAccs(single bool, n int) kernelshape.RowAccs {
	U, rows := g.conf.RowU, 1
	if !single {
		// Unused outputs' accumulators stay at the identity.
		U, rows = g.conf.GroupU, lanes
	}
	acc := func(row, u int) int { return row*U + u }
	return kernelshape.RowAccs{U: U, Acc: acc, Init: rows * U, Groups: kernelshape.Groups(rows, U, acc)}
}

// Transpose leaves output j of a group in lane j (transpose4).
func (g *gen) Transpose(a kernelshape.RowAccs) int {
	var heads [lanes]int
	for row := range heads {
		heads[row] = a.Acc(row, 0)
	}
	return g.transpose4(heads)
}

// AddElement adds one src element into lane 0.
func (g *gen) AddElement(acc int, off int64) { g.accum(g.SrcDT, acc, at(rSrc, off), 1, false) }

package arm64

import (
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The column shape is kernelshape.Column's; these are its NEON
// primitives. A block adds a row's full vectors four per LD1 and its
// partial vector lane by lane; a flat stream loads whole vectors (V is a
// multiple of every W it takes).

// Column emits the kept loops k around the column shape.
func (g *gen) Column(k kernelshape.Nest, red []plan.Loop, zeroSum bool) {
	c := kernelshape.ColumnConf{Flat: g.conf.Shape == kernelconf.FlatColumn, BlockVecs: nacc}
	k.Emit(g, func() { kernelshape.Column(g, c, g.pl.Inner, red, zeroSum) })
}

// colBlock is the NEON lowering of one column block.
type colBlock struct {
	g *gen
	u int
	l kernelshape.BlockLayout
}

// ColumnBlock configures a block of nv full vectors and a tail.
func (g *gen) ColumnBlock(nv, tail int) kernelshape.ColumnBlock {
	return &colBlock{g: g, u: g.conf.colBlockU(nv, tail)}
}

func (b *colBlock) U() int                          { return b.u }
func (b *colBlock) Begin(l kernelshape.BlockLayout) { b.l = l }

// AddRow adds row u at byte offset off: the full vectors as runs, then
// the partial one.
func (b *colBlock) AddRow(u int, off int64, _ bool) {
	g, l := b.g, b.l
	accs := make([]int, l.NV)
	for k := range accs {
		accs[k] = l.Acc(k, u)
	}
	g.accumRun(g.SrcDT, accs, at(rSrc, off), false)
	if l.Tail > 0 {
		// Lanes past the tail are never outputs, and a column never
		// mixes lanes: no identity fill needed.
		g.accum(g.SrcDT, l.Acc(l.NV, u), at(rSrc, off+int64(l.NV)*lanes*g.SrcSize), l.Tail, false)
	}
}

// NEON blocks need nothing around their rows.
func (b *colBlock) LoopTop()  {}
func (b *colBlock) Swept()    {}
func (b *colBlock) Combined() {}
func (b *colBlock) End()      {}

// FlatLanes is V: the W a flat stream takes divide it.
func (g *gen) FlatLanes(int64) int64 { return lanes }

// FlatU is the flat stream's accumulators.
func (g *gen) FlatU() int { return g.conf.FlatU }

// AddVectors adds whole vectors, four per LD1.
func (g *gen) AddVectors(accs []int, off int64, m int, mix bool) {
	if m != lanes {
		g.Fail(status.Errorf(status.RuntimeError, "arm64: run of %d-lane vectors", m))
	}
	g.accumRun(g.SrcDT, accs, at(rSrc, off), mix)
}

// AddPartial adds n lanes, the rest filled with the identity.
func (g *gen) AddPartial(acc int, off int64, n int) { g.accum(g.SrcDT, acc, at(rSrc, off), n, true) }

// Fold combines lanes l + j*w (j < q) into lane l, for l < w, halving
// q with a rotation and a combine each time; q = V/w is 4 or 2.
func (g *gen) Fold(r, w, q int) {
	mk := g.Mark()
	defer g.Release(mk)
	t := g.Tmp()
	for ; q > 1; q /= 2 {
		g.rotate(t, r, (q/2)*w)
		g.combine(r, t)
	}
}

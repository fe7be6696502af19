package arm64

import (
	"fmt"
	"strings"

	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// Decide, then lower: Choose is every choice the generator makes about a
// plan, made before it emits anything (as amd64.Choose). This file
// decides and never emits; the shapes (row.go, col.go) read the Conf.
// NEON has one table (neonTuning): no core family has been measured
// apart.

// tuning is the figures the choices read.
type tuning struct {
	// groupMax is the longest rows (elements) summed V outputs at once,
	// transposed by three FADDPs, rather than one output at a time.
	groupMax int64
	// rowAccumulators is how many accumulators one output's row sweep
	// adds into (LD1 takes four vectors at a time).
	rowAccumulators int64
	// chainTarget is how many independent add chains a column loop body
	// should have to cover the FP add latency.
	chainTarget int
}

// neonTuning is the one NEON table; its figures were chosen with the
// amd64 ones in mind and checked under qemu for correctness only.
var neonTuning = tuning{groupMax: 256, rowAccumulators: 8, chainTarget: 8}

// Conf is a kernel's whole configuration: what Choose decided.
type Conf struct {
	Target kernelconf.Target
	Shape  kernelconf.Shape

	// PairSums: 8-bit data summed pairwise in integers (SADDLP/UADDLP)
	// before the conversion to f32, where an output's lanes are mixed
	// anyway (accumQuads).
	PairSums bool

	// The row shape.
	Group  int // outputs summed at once: 1 or V
	GroupU int // accumulators per output of a group
	RowU   int // accumulators of one output (vector or element unroll)

	// The column shape.
	FlatU int // the flat column's accumulators (kernelshape.Column)

	tune tuning
	lay  kernelshape.Layout
	pl   *plan.Plan
}

// Choose returns the configuration of pl's kernel. It is pure.
func Choose(pl *plan.Plan) Conf {
	c := Conf{Target: kernelconf.Target{ISA: kernelconf.NEON}, tune: neonTuning, pl: pl, lay: kernelshape.LayoutOf(pl)}
	c.PairSums = pl.SrcDT.IsInt8() && pl.Combine == plan.CombineAdd &&
		(pl.Transform == plan.TransformNone || pl.Stage&plan.SkipTransform != 0)
	switch {
	case !c.lay.Work:
		c.Shape = kernelconf.Empty
	case c.lay.Column:
		c.chooseColumn()
	default:
		c.chooseRow()
	}
	return c
}

// chooseRow decides the row and element shapes.
func (c *Conf) chooseRow() {
	rows := kernelshape.RowsOf(c.lay.Reduced, c.lay.ZeroSum)
	c.Shape = kernelconf.Element
	if rows.Vec {
		c.Shape = kernelconf.Row
	}
	c.Group = 1
	if n := len(c.lay.Kept); n > 0 {
		L := c.lay.Kept[n-1]
		if rows.Vec && rows.Len <= c.tune.groupMax && L.Size >= lanes/2 {
			c.Group = lanes
		}
	}
	// A group's outputs take one accumulator each, two from rows of two
	// vectors, four for pairwise 8-bit sums, which take 16 bytes (four
	// vectors) at once.
	c.GroupU = 1
	if rows.Len >= 2*lanes {
		c.GroupU = 2
	}
	if rows.Len >= 4*lanes && c.PairSums {
		c.GroupU = 4
	}
	switch {
	case rows.Vec:
		c.RowU = int(min(c.tune.rowAccumulators, max(1, ceilDiv(rows.Len, lanes))))
	case rows.Elem != nil:
		c.RowU = int(min(4, max(1, rows.Elem.Size)))
	default:
		c.RowU = 1
	}
}

// chooseColumn decides the column shapes: a narrow Inner (at most V/2
// lanes) whose rows are back to back is one flat stream.
func (c *Conf) chooseColumn() {
	red := c.lay.Reduced
	n := len(red)
	W := c.pl.Inner.Size
	c.Shape = kernelconf.Column
	if !c.lay.ZeroSum && n > 0 && W <= lanes/2 && red[n-1].SrcStride == W {
		c.Shape = kernelconf.FlatColumn
		nfull := red[n-1].Size * W / lanes
		c.FlatU = int(max(1, min(int64(c.tune.chainTarget), nfull)))
	}
}

// colBlockU is how many rows a column block of nv full vectors and a
// tail of tail lanes unrolls into separate accumulators: enough chains
// for chainTarget, as many as the accumulators hold.
func (c *Conf) colBlockU(nv, tail int) int {
	if c.lay.ZeroSum {
		return 1
	}
	K := nv
	if tail > 0 {
		K++
	}
	rows := int64(1)
	if n := len(c.lay.Reduced); n > 0 {
		rows = c.lay.Reduced[n-1].Size
	}
	return max(1, min(nacc/K, (c.tune.chainTarget+K-1)/K, int(min(rows, 64))))
}

// String is the Conf in one line, for GDNN_VERBOSE=2.
func (c Conf) String() string {
	var b strings.Builder
	b.WriteString(c.Target.String() + " " + c.Shape.String())
	switch c.Shape {
	case kernelconf.Row, kernelconf.Element:
		if c.Group > 1 {
			fmt.Fprintf(&b, " group=%d gu=%d", c.Group, c.GroupU)
		}
		fmt.Fprintf(&b, " u=%d", c.RowU)
	case kernelconf.FlatColumn:
		fmt.Fprintf(&b, " u=%d", c.FlatU)
	case kernelconf.Column:
		W := c.pl.Inner.Size
		per := int64(nacc * lanes)
		m := min(W, per)
		fmt.Fprintf(&b, " block=%dv%d:u%d", m/lanes, m%lanes, c.colBlockU(int(m/lanes), int(m%lanes)))
		if last := W % per; W > per && last != 0 {
			fmt.Fprintf(&b, " block=%dv%d:u%d", last/lanes, last%lanes, c.colBlockU(int(last/lanes), int(last%lanes)))
		}
	}
	if c.PairSums {
		b.WriteString(" pair-sums")
	}
	return b.String()
}

package bench

import (
	"fmt"
	"math"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/partition"
)

// The graph driver's partitions of ops the partitioner fuses in front of
// a reduction or a normalization: a Multiply by a mask before a
// ReduceSum or ReduceMean (masked pooling), and a residual sum before a
// LayerNorm or RMSNorm.

// maskedSrc is the src of a masked reduction times its mask, as the
// reduction reads it, in float64 and dense: what refReduce reduces. The
// mask broadcasts onto src (the partitioner fuses no other Multiply).
func (b *built) maskedSrc() (buffer, []int64) {
	dims, mask := b.srcLT.Dims, b.opLTs[0]
	prod := buffer{dt: dtypes.F64, f64: make([]float64, max(b.srcLT.NumElements(), 0))}
	forEachIndex(dims, [][]int64{b.srcLT.Strides, alignedView(mask.Dims, mask.Strides, dims)}, func(pos int64, offs []int64) {
		prod.f64[pos] = b.src.get(offs[0]) * b.operands[0].get(offs[1])
	})
	return prod, graph.DenseStrides(dims)
}

// residualOps is how many of p's ops are a residual sum fused before its
// normalization (partition.Partition.Pattern says "residual Add [and
// bias Add] before ..."): the Add and the bias Add, or none.
func residualOps(p *partition.Partition) int {
	switch pat := p.Pattern(); {
	case strings.HasPrefix(pat, "residual Add and bias Add before ") && len(p.Ops()) > 2:
		return 2
	case strings.HasPrefix(pat, "residual Add before ") && len(p.Ops()) > 1:
		return 1
	}
	return 0
}

// normResidual is a residual sum fused before a normalization partition's
// LayerNorm or RMSNorm: Add(x, skip) [, Add(sum, bias)]. x is the
// graphNorm's src.
type normResidual struct {
	add, bias *graph.Op // bias nil: none
	// Indexes into the graphNorm's ins (skip, bias; -1: absent) and
	// outs (sum, where the graph reads the sum elsewhere; -1: not a port).
	skip, biasIn, sum int
}

// newNormResidual reads the residual sum of ops, residualOps' ops.
func newNormResidual(ops []*graph.Op) *normResidual {
	r := &normResidual{add: ops[0], skip: -1, biasIn: -1, sum: -1}
	if len(ops) > 1 {
		r.bias = ops[1]
	}
	return r
}

// sumOp is the op that writes the sum the normalization reads.
func (r *normResidual) sumOp() *graph.Op {
	if r.bias != nil {
		return r.bias
	}
	return r.add
}

// sumID is the id of the sum the normalization reads; for no residual,
// an id no tensor has.
func (r *normResidual) sumID() uint64 {
	if r == nil {
		return math.MaxUint64
	}
	return r.sumOp().Outputs[0].ID
}

// biasID is the id of the bias Add's operand, or an id no tensor has.
func (r *normResidual) biasID() uint64 {
	if r.bias == nil {
		return math.MaxUint64
	}
	mid := r.add.Outputs[0].ID
	for _, t := range r.bias.Inputs {
		if t.ID != mid {
			return t.ID
		}
	}
	return math.MaxUint64
}

// port records input port i, tensor id, where it is skip or the bias.
func (r *normResidual) port(id uint64, i int) {
	switch id {
	case r.add.Inputs[1].ID:
		r.skip = i
	case r.biasID():
		r.biasIn = i
	}
}

// check says why gdnnbench does not check the residual sum whose x is
// input src, or "".
func (r *normResidual) check(src int) string {
	switch {
	case r == nil:
		return ""
	case r.skip < 0 || r.bias != nil && r.biasIn < 0:
		return fmt.Sprintf("the partition does not read the operands of %s", r.sumOp())
	case r.skip == src || r.biasIn == src || r.biasIn >= 0 && r.biasIn == r.skip:
		return fmt.Sprintf("%s adds a tensor to itself; gdnnbench fills x, skip and bias apart", r.sumOp())
	}
	return ""
}

// fills reports whether input i is skip or the bias, which split fills.
func (r *normResidual) fills(i int) bool {
	return r != nil && (i == r.skip || i == r.biasIn)
}

// narrowest is the type of the fewest digits among the sum's operands
// and results: the statistics fill of its digits keeps each value
// exactly in all of them (see split).
func (r *normResidual) narrowest(n *graphNorm) dtypes.DataType {
	dt := n.ins[n.src].DataType
	for _, c := range []dtypes.DataType{n.ins[r.skip].DataType, r.add.Outputs[0].DataType, r.sumOp().Outputs[0].DataType} {
		if digitsOf(c) < digitsOf(dt) {
			dt = c
		}
	}
	if r.biasIn >= 0 && digitsOf(n.ins[r.biasIn].DataType) < digitsOf(dt) {
		dt = n.ins[r.biasIn].DataType
	}
	return dt
}

// biasView is the bias's strides over the sum's dims (0 where it
// broadcasts) in the layout strides gives it.
func (r *normResidual) biasView(n *graphNorm, strides []int64) []int64 {
	return alignedView(n.ins[r.biasIn].Dims, strides, n.ins[n.src].Dims)
}

// split fills x, skip and bias so that their sum is sum (residualSplit).
func (r *normResidual) split(n *graphNorm, sum []float64, seed uint64) {
	xt, st := n.ins[n.src], n.ins[r.skip]
	var biasDims []int64
	if r.biasIn >= 0 {
		biasDims = n.ins[r.biasIn].Dims
	}
	x, skip, bias := residualSplit(sum, xt.Dims, biasDims, seed)
	storeLogical(n.inBufs[n.src], xt.Dims, xt.Strides, x)
	storeLogical(n.inBufs[r.skip], st.Dims, st.Strides, skip)
	if r.biasIn >= 0 {
		bt := n.ins[r.biasIn]
		storeLogical(n.inBufs[r.biasIn], bt.Dims, bt.Strides, bias)
	}
}

// residualSplit splits sum (logical order over dims), the normalization's
// statistics fill over the narrowest type of the residual, into x, skip
// and a bias of biasDims (nil: none) that add up to it: skip takes small
// multiples of 1/4, the bias smaller ones, and x = sum - skip - bias.
// The statistics fill's values are multiples of a power of two within
// the digits of their type, with room to spare; x and x + skip take only
// a few digits more, which every type they may have holds. So every
// partial sum is exact, x + skip + bias is sum whether rounded once (the
// fused partition) or after each Add (the ops), and the normalization
// reads the values whose mean and variance the fill made exact.
func residualSplit(sum []float64, dims, biasDims []int64, seed uint64) (x, skip, bias []float64) {
	skip, x = make([]float64, len(sum)), make([]float64, len(sum))
	for i := range skip {
		skip[i] = float64(int64(unit(seed+1, int64(i))*17)-8) / 4
		x[i] = sum[i] - skip[i]
	}
	if biasDims != nil {
		bias = make([]float64, rows(biasDims))
		for i := range bias {
			bias[i] = float64(int64(unit(seed+2, int64(i))*9)-4) / 4
		}
		forEachIndex(dims, [][]int64{alignedView(biasDims, graph.DenseStrides(biasDims), dims)}, func(pos int64, offs []int64) {
			x[pos] -= bias[offs[0]]
		})
	}
	return x, skip, bias
}

// sumValues is the residual sum of the inputs as the ops compute it:
// x + skip in f32 rounded to the Add's type, then + bias in f32 rounded
// to the bias Add's. The fused partition rounds once, to the last type;
// split's fill makes the two the same.
func (r *normResidual) sumValues(n *graphNorm) []float64 {
	xt, st := n.ins[n.src], n.ins[r.skip]
	x := loadLogical(n.inBufs[n.src], xt.Dims, xt.Strides)
	skip := loadLogical(n.inBufs[r.skip], st.Dims, st.Strides)
	mid := r.add.Outputs[0].DataType
	for i := range x {
		x[i] = roundTo(mid, float64(float32(x[i]+skip[i])))
	}
	if r.biasIn >= 0 {
		bt, dt := n.ins[r.biasIn], r.bias.Outputs[0].DataType
		forEachIndex(xt.Dims, [][]int64{r.biasView(n, bt.Strides)}, func(pos int64, offs []int64) {
			x[pos] = roundTo(dt, float64(float32(x[pos]+n.inBufs[r.biasIn].get(offs[0]))))
		})
	}
	return x
}

// compareResidualSum compares a residual sum kept as an output port with
// sum, its reference, exactly: split's fill makes every partial sum
// exact, so the fused sum, rounded once, is the ops' to the bit.
func (r *runner) compareResidualSum(n *graphNorm, sum []float64) *result {
	if n.res == nil || n.res.sum < 0 {
		return nil
	}
	lt := n.outs[n.res.sum]
	c := compareOutput(n.outBufs[0][n.res.sum], lt.Dims, lt.Strides, sum, make([]float64, len(sum)), nil)
	if r.g.verbose >= 1 {
		fmt.Fprintf(r.out, "[SUM] outputs:%d max_err/allowed:%.3g\n", c.total, c.worst)
	}
	if c.errors == 0 {
		return nil
	}
	for i, l := range c.lines {
		c.lines[i] = strings.Replace(l, "[DST]", "[SUM]", 1) // compareOutput names the output it usually checks
	}
	return &result{state: "FAILED", reason: fmt.Sprintf("SUM errors:%d total:%d", c.errors, c.total), detail: c.lines}
}

package kerneltest

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// ProblemDraw is an emitter's tests' distribution of random problems:
// what RandomProblem draws each part of a problem with. The emitters draw
// their own (ranks, dim sizes around their vector widths and blocks,
// layouts, post-op parameters) and keep their own seeded sequences.
type ProblemDraw struct {
	Rank func(r *rand.Rand) int
	Dim  func(r *rand.Rand) int64
	Pair func(r *rand.Rand) [2]dtypes.DataType
	// SrcStrides lays out dims, DstStrides the dst dims kd (the reduced
	// ones 1; RandomProblem zeroes their strides after).
	SrcStrides, DstStrides func(r *rand.Rand, dims []int64) []int64
	// Kinds are the post-op kinds drawn from, Params draws op's
	// parameters by its kind.
	Kinds  []ops.Kind
	Params func(r *rand.Rand, op *plan.PostOp)
	// Layout lays out a binary operand's dims (OperandStrides).
	Layout func(r *rand.Rand, dims []int64) []int64
}

// RandomProblem draws a problem of at most maxElems src elements by d:
// its rank and dims (drawn again until they are small enough), which
// dims it reduces (each half of the time), its data types and layouts,
// and up to three post-ops, at most plan.MaxBinary of them binary with
// an operand of any of OperandTypes laid out by OperandStrides.
func RandomProblem(r *rand.Rand, maxElems int64, d ProblemDraw) *plan.Problem {
	rank := d.Rank(r)
	dims := make([]int64, rank)
	for {
		total := int64(1)
		for i := range dims {
			dims[i] = d.Dim(r)
			total *= max(dims[i], 1)
		}
		if total <= maxElems {
			break
		}
	}
	p := &plan.Problem{Dims: dims, Reduce: make([]bool, rank)}
	for i := range p.Reduce {
		p.Reduce[i] = r.Intn(2) == 0
	}
	pair := d.Pair(r)
	p.SrcDT, p.DstDT = pair[0], pair[1]
	p.SrcStrides = d.SrcStrides(r, dims)
	kd := KeptDims(p)
	p.DstStrides = d.DstStrides(r, kd)
	for i := range p.DstStrides {
		if p.Reduce[i] {
			p.DstStrides[i] = 0
		}
	}
	nbin := 0
	for range r.Intn(4) {
		op := plan.PostOp{Kind: d.Kinds[r.Intn(len(d.Kinds))]}
		d.Params(r, &op)
		if op.Kind.IsBinary() {
			if nbin == plan.MaxBinary {
				continue
			}
			nbin++
			op.BinDT = OperandTypes[r.Intn(len(OperandTypes))]
			op.BinStrides = OperandStrides(r, kd, func(dims []int64) []int64 { return d.Layout(r, dims) })
		}
		p.PostOps = append(p.PostOps, op)
	}
	return p
}

// DensePlan canonicalises the problem that reduces src dims (element
// strides ss) of type dt over red by r into a dense dst of type dt over
// the kept dims, innermost last: the plans the emitters' choice and
// disassembly tests name by their shape alone.
func DensePlan(t testing.TB, dt dtypes.DataType, dims, ss []int64, red []bool, r plan.Reduction) *plan.Plan {
	t.Helper()
	ds := make([]int64, len(dims))
	s := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		if !red[i] {
			ds[i] = s
			s *= dims[i]
		}
	}
	pl, err := plan.Canonicalize(&plan.Problem{SrcDT: dt, DstDT: dt, Dims: dims, SrcStrides: ss, Reduce: red, DstStrides: ds, Reduction: r})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

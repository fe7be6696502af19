package jit

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The post-op pass. An emitter may have no vector code for some
// post-ops (today's have code for every kind: the transcendental ones
// from package vfn's programs), and amd64 has too few general
// registers for six operands' pointers beside a deep loop nest
// (kernelshape.Covers.Registers): today the latter is what sends a plan
// here. Running such a plan wholly in the
// interpreter would run its reduction, by far the larger part of the
// work, at interpreter speed. Instead the plan is run as two phases:
//
//	A (results): the plan without post-ops, dst f32, alg kept, writing
//	  its results (means, sums, maxima, ...) densely into an f32 scratch
//	  buffer; machine code.
//	B (post-op pass): a copy plan (AlgCopy: no reduced loops, N = 1)
//	  from that scratch to the caller's dst and binary operands, applying
//	  the post-ops and the dst conversion; the interpreter runs it (or
//	  machine code, should the emitter cover it).
//
// Both phases go through the ordinary decomposition (blocks, tiles, two
// stages), so both are bounded per call, threaded, and independent of
// the thread count.
//
// Semantics: B applies plan.Eltwise / plan.Binary in f32 to the f32
// result, exactly as a fully interpreted plan does. What differs is the
// result itself: the machine code sums in f32 (in fixed blocks) and, for
// a mean, divides in f32, where the interpreter sums in float64; the two
// results differ by a few f32 ulps of the sum's magnitude, the same
// difference as between any JIT kernel and the interpreter (max and min
// are exact on both). A post-op scales that by its condition number
// (|x f'(x) / f(x)|), which for these post-ops is small except near their
// zeros (Log near 1, Tanh, GELU and Mish near 0, where the absolute error
// stays that of the result).

// wantPostPass reports whether pl should run as results + post-op pass
// on isa: the emitter declares that it does not cover pl but covers it
// without its post-ops, and the results' scratch stays within
// maxScratchBytes.
func wantPostPass(pl *plan.Plan, isa ISA) bool {
	if isa == None || len(pl.PostOps) == 0 {
		return false
	}
	c := coverage(isa)
	if kernelshape.Check(pl, c) == nil {
		return false
	}
	means, _, ok := meansPlan(pl)
	return ok && kernelshape.Check(means, c) == nil
}

// keptLoops returns pl's kept loops, outermost first (Outer, then Inner),
// and the dense element strides of a tensor laid out in that order. ok is
// false when the outputs' f32 bytes exceed maxScratchBytes (more than
// 2^28 outputs).
func keptLoops(pl *plan.Plan) (kept []plan.Loop, dense []int64, ok bool) {
	kept = append(kept, pl.Outer...)
	if pl.HasInner {
		kept = append(kept, pl.Inner)
	}
	dense = make([]int64, len(kept))
	n := int64(1)
	for i := len(kept) - 1; i >= 0; i-- {
		dense[i] = n
		n = plan.MulSat(n, kept[i].Size)
	}
	return kept, dense, plan.MulSat(n, 4) <= maxScratchBytes
}

// meansPlan returns phase A of pl: its loops with dense f32 dst strides,
// no post-ops and no binary strides, Div kept. outputs is the number of
// results written; ok is false when their scratch would be too large.
func meansPlan(pl *plan.Plan) (a *plan.Plan, outputs int64, ok bool) {
	_, dense, ok := keptLoops(pl)
	if !ok {
		return nil, 0, false
	}
	a = pl.Clone()
	a.DstDT, a.PostOps = plan.PartialType(pl.SrcDT), nil
	outputs = 1
	for i := range a.Outer {
		a.Outer[i].DstStride, a.Outer[i].BinStrides = dense[i], nil
		outputs *= a.Outer[i].Size
	}
	for i := range a.Reduced {
		a.Reduced[i].BinStrides = nil
	}
	if a.HasInner {
		a.Inner.DstStride, a.Inner.BinStrides = 1, nil
		outputs *= a.Inner.Size
	}
	counts(a)
	return a, outputs, true
}

// postPassPlan returns phase B of pl: a copy (plan.AlgCopy) over pl's kept
// loops reading the dense f32 results and writing pl's dst with pl's
// post-ops and binary operands. Its innermost loop becomes Inner, so
// that the interpreter handles it a row at a time.
func postPassPlan(pl *plan.Plan) *plan.Plan {
	kept, dense, _ := keptLoops(pl)
	b := &plan.Plan{Reduction: plan.Copy, SrcDT: plan.PartialType(pl.SrcDT), DstDT: pl.DstDT, PostOps: pl.PostOps, Div: 1}
	for i, l := range kept {
		l.SrcStride = dense[i]
		if i == len(kept)-1 {
			b.Inner, b.HasInner = l, true
			break
		}
		b.Outer = append(b.Outer, l)
	}
	counts(b)
	return b.Clone() // own every slice: the caller's plan stays untouched
}

// postPass adds phase A of pl (from srcBuf into a new scratch buffer) and
// phase B (from that scratch into dstBuf), and marks B's sub-plans as the
// post-op pass.
func (dc *decomposer) postPass(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	a, outputs, ok := meansPlan(pl)
	if !ok {
		// wantPostPass checked the same bound.
		return status.Errorf(status.OutOfMemory, "jit: the results of %v need more than %d bytes of scratch", pl, int64(maxScratchBytes))
	}
	sbuf := bufScratch + len(dc.d.scratch)
	dc.d.scratch = append(dc.d.scratch, outputs*esz(plan.PartialType(pl.SrcDT)))
	dc.d.postpass = true
	if err := dc.add(a, srcBuf, sbuf, depth); err != nil {
		return err
	}
	return dc.addPostOps(pl, sbuf, dstBuf, depth)
}

// addPostOps adds phase B of pl, from the dense f32 results in sbuf into
// dstBuf, and marks its sub-plans as the post-op pass.
func (dc *decomposer) addPostOps(pl *plan.Plan, sbuf, dstBuf, depth int) error {
	// The split names how the reduction was scheduled; the post-op
	// pass's own blocks do not change it.
	split, first := dc.d.split, len(dc.d.phases)
	// Phase B reads the means phase A wrote, from the caches.
	if err := dc.withMem(false, func() error { return dc.addSplit(postPassPlan(pl), sbuf, dstBuf, depth) }); err != nil {
		return err
	}
	dc.d.split = split
	for _, ph := range dc.d.phases[first:] {
		for _, s := range ph.segs {
			dc.d.post[s.unit] = true
		}
	}
	return nil
}

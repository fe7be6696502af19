package arm64

import (
	"math"

	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// The reduction's parts (plan.Reduction) as NEON code, in the three
// places oneDNN's reduction kernels have them: the accumulators start at
// the combine's identity (InitAcc), each loaded vector is transformed and
// combined into an accumulator (transform, combine), and the epilogue
// finalizes (finalize). Every place that merges partial results (the
// accumulate, trees across accumulators, horizontal and pairwise
// reductions, transposes, folds) goes through combine or pairwise, so a
// new combine is one row of combineOps.

// combineOps are the instructions of one combine: vert sets
// Vd = Vn op Vm lane by lane; pair is the pairwise form over the
// concatenation Vn:Vm (0 where AArch64 has none: there is no FMULP).
// FMAX and FMIN (and FMAXP, FMINP; not the NM forms) give NaN when either
// side is NaN and order -0 below +0, which is plan.CombineF64's max and
// min, so no result depends on the order of the elements.
type combineOps struct {
	vert, pair uint32
}

var combineTable = [...]combineOps{
	plan.CombineAdd: {opFADD, opFADDP},
	plan.CombineMul: {opFMUL, 0},
	plan.CombineMax: {opFMAX, opFMAXP},
	plan.CombineMin: {opFMIN, opFMINP},
}

// isAdd reports whether the plan sums: the only combine for which +0
// fills unused lanes harmlessly and whose long chains are cut into runs.
func (g *gen) isAdd() bool { return g.pl.Combine == plan.CombineAdd }

// InitAcc sets accumulator r to the combine's identity: +0 for sums (an
// EOR), else a copy of the hoisted constant.
func (g *gen) InitAcc(r int) {
	id := g.pl.Identity()
	if id == 0 && !math.Signbit(float64(id)) {
		g.zero(r)
		return
	}
	mk := g.Mark()
	c := g.vconst(math.Float32bits(id))
	g.vmov(r, c)
	g.Release(mk)
}

// vmov sets d = s.
func (g *gen) vmov(d, s int) { g.vop(arm64.AVORR, arr16B, d, s, s) }

// combine sets r = r op s; a copy (CombineFirst, no reduced loops) just
// takes s.
func (g *gen) combine(r, s int) {
	if g.pl.Combine == plan.CombineFirst {
		g.vmov(r, s)
		return
	}
	g.fop(combineTable[g.pl.Combine].vert, r, r, s)
}

// pairwise sets d to the combine of neighbouring lanes of n:m:
// d = [n0 op n1, n2 op n3, m0 op m1, m2 op m3]. Where NEON has no
// pairwise form the lanes are first separated with UZP1/UZP2 (even and
// odd lanes of n:m).
func (g *gen) pairwise(d, n, m int) {
	if op := combineTable[g.pl.Combine].pair; op != 0 {
		g.fop(op, d, n, m)
		return
	}
	mk := g.Mark()
	ev, od := g.Tmp(), g.Tmp()
	g.vop(arm64.AVUZP1, arr4S, ev, n, m)
	g.vop(arm64.AVUZP2, arr4S, od, n, m)
	g.fop(combineTable[g.pl.Combine].vert, d, ev, od)
	g.Release(mk)
}

// transform applies the per-element transform to a freshly loaded
// vector, unless src holds an earlier stage's (transformed) partials.
func (g *gen) transform(r int) {
	if g.pl.Stage&plan.SkipTransform != 0 {
		return
	}
	switch g.pl.Transform {
	case plan.TransformAbs:
		g.word(rr(opFABS, r, r))
	case plan.TransformSquare:
		g.fop(opFMUL, r, r, r)
	case plan.TransformExp:
		g.expForSum(r)
	}
}

// transformCombine sets acc = acc op transform(t), clobbering t; a sum
// of exps takes its terms with expForSumInto's fused add.
func (g *gen) transformCombine(acc, t int) {
	if g.expTransform() && g.isAdd() {
		g.expForSumInto(t, acc)
		return
	}
	g.transform(t)
	g.combine(acc, t)
}

// expTransform reports whether loaded vectors go through exp (an
// unshifted log-sum-exp's first stage).
func (g *gen) expTransform() bool {
	return g.pl.Transform == plan.TransformExp && g.pl.Stage&plan.SkipTransform == 0
}

// zeroIsIdentity reports whether the +0 a partial load leaves in its
// upper lanes is still the identity after the transform: sums, unless
// the transform is exp (exp(0) is 1).
func (g *gen) zeroIsIdentity() bool { return g.isAdd() && !g.expTransform() }

// fillIdentity sets lanes n..V-1 of r to the identity, so that a partial
// vector (n valid lanes, +0 loaded above them) can be combined with
// lanes that are later mixed (horizontal reductions, folds). Most sums
// need nothing: +0 is their identity (zeroIsIdentity).
func (g *gen) fillIdentity(r, n int) {
	if g.zeroIsIdentity() || n >= lanes {
		return
	}
	mk := g.Mark()
	c := g.vconst(math.Float32bits(g.pl.Identity()))
	for j := n; j < lanes; j++ {
		g.op(arm64.AVMOV, velem(c, arm64.ARNG_S, 0), velem(r, arm64.ARNG_S, j))
	}
	g.Release(mk)
}

// Finalize turns the combined values in r into the reduction's results,
// unless the plan writes partials for a later stage: the mean's true f32
// division by Div; max(eps, x) with FMAX (NaN-propagating, as math.Max)
// or eps + x; then the root, FSQRT for P 2 (P 1 has none).
func (g *gen) Finalize(r int) {
	if g.pl.Stage&plan.SkipFinalize != 0 {
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	eps := func() int { return g.vconst(math.Float32bits(g.pl.Eps)) }
	switch g.pl.Finalize {
	case plan.FinalizeMean:
		g.fop(opFDIV, r, r, g.vconst(math.Float32bits(float32(g.pl.Div))))
		return
	case plan.FinalizeMaxEps, plan.FinalizeRootMaxEps:
		g.fop(opFMAX, r, r, eps())
	case plan.FinalizeAddEps, plan.FinalizeRootAddEps:
		g.fop(opFADD, r, r, eps())
	case plan.FinalizeLog:
		g.log(r)
		return
	}
	if (g.pl.Finalize == plan.FinalizeRootMaxEps || g.pl.Finalize == plan.FinalizeRootAddEps) && g.pl.P == 2 {
		g.word(rr(opFSQRT, r, r))
	}
}

// InitAccs sets accumulators 0..n-1 to the combine's identity.
func (g *gen) InitAccs(n int) {
	for i := 0; i < n; i++ {
		g.InitAcc(i)
	}
}

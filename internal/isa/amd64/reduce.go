package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The reduction hooks: everything the kernel shapes need to know about
// what they reduce, in the manner of oneDNN's init_acc, compute_op and
// finalize. The shapes start accumulators with InitAcc, take elements in
// with accum, merge partial results (horizontal reductions, transposes,
// folds, trees) with combine, and end in the epilogue's finalize; a new
// reduction is a case in these functions, not a new shape.
//
// Some shapes have tricks that hold for plain sums only (see plainSum):
// zero-filled lanes that are added harmlessly, bf16 pair loads that add
// two elements' halves into different lanes, memory-operand adds, the
// two-level summation cut. They check plainSum or g.add before using them.

// plainSum reports whether the kernel adds src elements as they are.
func (g *gen) plainSum() bool { return g.add && g.red.Transform == plan.TransformNone }

// plainProduct reports whether the kernel multiplies src elements as
// they are.
func (g *gen) plainProduct() bool {
	return g.red.Combine == plan.CombineMul && g.red.Transform == plan.TransformNone
}

// rangeFromMemory reports whether the kernel takes the max (or, in
// NaN-free code, the min) of src elements as they are with AVX-512's
// VRANGEPS (see rangeExact and rangeFast; exact min keeps its VMINPS
// form, see minMax).
func (g *gen) rangeFromMemory() bool {
	c := g.red.Combine
	return g.avx512 && g.red.Transform == plan.TransformNone && (c == plan.CombineMax || g.nanFree && c == plan.CombineMin)
}

// rangeKind is the binary op of a max or min combine.
func (g *gen) rangeKind() ops.Kind {
	if g.red.Combine == plan.CombineMin {
		return ops.Minimum
	}
	return ops.Maximum
}

// InitAcc sets accumulator r to the reduction's identity.
func (g *gen) InitAcc(r int) { g.constF32(r, g.red.Identity()) }

// InitAccs sets accumulators 0..n-1 to the identity: a zero is one
// instruction each, another identity is built once and copied.
func (g *gen) InitAccs(n int) {
	for i := 0; i < n; i++ {
		if i == 0 || g.red.Identity() == 0 {
			g.InitAcc(i)
		} else {
			g.op(x86.AVMOVAPS, g.vr(0), g.vr(i))
		}
	}
}

// combine sets r = r ⊕ s with the reduction's combine. s may be clobbered.
func (g *gen) combine(r, s int) {
	x, y := g.vr(r), g.vr(s)
	switch g.red.Combine {
	case plan.CombineAdd:
		g.op(x86.AVADDPS, y, x, x)
	case plan.CombineMul:
		g.op(x86.AVMULPS, y, x, x)
	case plan.CombineMax, plan.CombineMin:
		// plan.Binary's Maximum and Minimum have the reduction's
		// semantics: NaN wins, +0 above -0.
		if g.nanFree && g.avx512 {
			g.rangeFast(g.rangeKind(), y, x, nil)
			return
		}
		if g.nanFree {
			g.maxFast(r, s)
			return
		}
		g.Binary(g.rangeKind(), r, s)
	case plan.CombineFirst:
		g.op(x86.AVMOVAPS, y, x)
	}
}

// CombineAcc sets r = r ⊕ s where s holds combined values only (another
// accumulator, lanes of one or of r itself), never src that no combine
// has taken yet. NaN-free code then needs no check: a NaN in s was
// flagged when its src came in (combine's checks are for src), so a max
// or min is the one instruction.
func (g *gen) CombineAcc(r, s int) {
	if !g.nanFree {
		g.combine(r, s)
		return
	}
	x, y := g.vr(r), g.vr(s)
	if g.avx512 {
		g.op(x86.AVRANGEPS, imm(rangeCtl(g.rangeKind())), y, x, x)
		return
	}
	g.op(x86.AVMAXPS, y, x, x) // AVX2 speculates max only
}

// combineTo sets dst = a ⊕ b of combined values, as CombineAcc; a and b
// may be clobbered.
func (g *gen) combineTo(dst, a, b int) {
	switch g.red.Combine {
	case plan.CombineAdd:
		g.op(x86.AVADDPS, g.vr(b), g.vr(a), g.vr(dst))
	case plan.CombineMul:
		g.op(x86.AVMULPS, g.vr(b), g.vr(a), g.vr(dst))
	default:
		if dst != a {
			g.op(x86.AVMOVAPS, g.vr(a), g.vr(dst))
		}
		g.CombineAcc(dst, b)
	}
}

// transform applies the per-element transform to r, unless the plan's src
// holds partials (g.red has none then). |x| clears the sign bit by two
// shifts, which needs no constant register in the loop; exp (an
// unshifted log-sum-exp's, the exp for sums) takes two temporaries.
func (g *gen) transform(r int) {
	switch g.red.Transform {
	case plan.TransformAbs:
		g.op(x86.AVPSLLD, imm(1), g.vr(r), g.vr(r))
		g.op(x86.AVPSRLD, imm(1), g.vr(r), g.vr(r))
	case plan.TransformSquare:
		g.op(x86.AVMULPS, g.vr(r), g.vr(r), g.vr(r))
	case plan.TransformExp:
		g.expForSum(r)
	}
}

// transformCombine sets acc = acc ⊕ transform(t), clobbering t; a sum
// of exps takes its terms with expForSumInto's fused add.
func (g *gen) transformCombine(acc, t int) {
	if g.red.Transform == plan.TransformExp && g.add {
		g.expForSumInto(t, acc)
		return
	}
	g.transform(t)
	g.combine(acc, t)
}

// zeroIsIdentity reports whether the +0 a partial load leaves in its
// unused lanes is still the identity after the transform: sums, unless
// the transform is exp (exp(0) is 1).
func (g *gen) zeroIsIdentity() bool { return g.add && g.red.Transform != plan.TransformExp }

// accum takes n elements of src type dt at addr into accumulator acc
// (n as for load: bcast, V, or 0 < n < V lanes), transformed and
// combined. A partial load leaves lanes n and up untouched in acc: a sum
// adds the zeros the load leaves there (zeroIsIdentity), other combines
// take only the first n lanes. Plain f32 sums add straight from memory.
func (g *gen) accum(dt dtypes.DataType, acc int, addr obj.Addr, n int) {
	if g.plainSum() && dt == dtypes.F32 && n == g.V {
		g.op(x86.AVADDPS, addr, g.vr(acc), g.vr(acc))
		return
	}
	if g.absMask > 0 && dt == dtypes.F32 && n == g.V {
		// |x| from memory in one AND with the sign mask (holdAbsMask).
		mk := g.Mark()
		t := g.Tmp()
		g.op(g.pand(), addr, g.vr(g.absMask), g.vr(t))
		g.vadd(acc, t)
		g.Release(mk)
		return
	}
	if g.plainSum() && dt == dtypes.F32 && g.avx512 && n > 0 && n < g.V {
		// Merge-masking: masked-off lanes keep acc and are not read.
		g.op(x86.AVADDPS, addr, g.vr(acc), g.vmask(n), g.vr(acc))
		return
	}
	if g.plainProduct() && dt == dtypes.F32 && (n == g.V || g.avx512 && n > 0 && n < g.V) {
		// Products straight from memory too: the load was half of the
		// loop's instructions. A tail is merge-masked (AVX-512 only: AVX2's
		// zero-filled lanes would zero the product).
		if n == g.V {
			g.op(x86.AVMULPS, addr, g.vr(acc), g.vr(acc))
		} else {
			g.op(x86.AVMULPS, addr, g.vr(acc), g.vmask(n), g.vr(acc))
		}
		return
	}
	if g.nanFree && !g.avx512 && n == g.V {
		g.maxPaired(dt, acc, addr) // AVX2 speculates max only
		return
	}
	if g.rangeFromMemory() && dt == dtypes.F32 && n > 0 && n <= g.V {
		// Max or min of f32 straight from memory, as the sums; a tail
		// is read under its mask and the lanes past it keep acc.
		var mask *obj.Addr
		if n < g.V {
			m := g.vmask(n)
			mask = &m
		}
		if g.nanFree && n == g.V {
			g.rangePaired(acc, addr)
			return
		}
		if g.nanFree {
			g.rangeFast(g.rangeKind(), addr, g.vr(acc), mask)
			return
		}
		g.rangeExact(ops.Maximum, addr, g.vr(acc), mask)
		return
	}
	mk := g.Mark()
	t := g.Tmp()
	g.load(dt, t, addr, n)
	if n == bcast || n == g.V || g.zeroIsIdentity() || g.red.Combine == plan.CombineFirst {
		g.transformCombine(acc, t)
	} else {
		g.transform(t)
		g.combineLanes(acc, t, n)
	}
	g.Release(mk)
}

// holdAbsMask puts the sign mask 0x7FFFFFFF into a temporary and keeps
// it in g.absMask, for an f32 L1 sum (Conf.AbsMask) to take each whole
// vector's |x| from memory in one AND (accum) instead of a load and two
// shifts. Its caller resets g.absMask where it releases the temporary.
// Nothing is held for other reductions, or where fewer than three
// temporaries are left (the kernel would run out of them).
func (g *gen) holdAbsMask() {
	if !g.conf.AbsMask || g.absMask > 0 || g.tmpHi-g.tmpNext < 3 {
		return
	}
	g.absMask = g.Tmp()
	g.constant(g.absMask, 0x7fffffff)
}

// combineLanes combines the first n lanes of t into acc and leaves the
// others: the combine into a copy, then a masked move (AVX-512) or a
// blend (AVX2) back.
func (g *gen) combineLanes(acc, t, n int) {
	u := g.Tmp()
	g.op(x86.AVMOVAPS, g.vr(acc), g.vr(u))
	g.combine(u, t)
	if g.avx512 {
		g.op(x86.AVMOVAPS, g.vr(u), g.vmask(n), g.vr(acc))
		return
	}
	g.op(x86.AVBLENDVPS, g.vmask(n), g.vr(u), g.vr(acc), g.vr(acc))
}

// Finalize applies the reduction's finalize to r, unless the plan writes
// partials: the mean's true f32 division by Div, the Lp norms' eps (added,
// or taken as a floor with NaN winning, as math.Max does) and root.
func (g *gen) Finalize(r int) {
	if g.pl.Stage&plan.SkipFinalize != 0 {
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	red := g.pl.Reduction
	switch red.Finalize {
	case plan.FinalizeMean:
		t := g.Tmp()
		g.constF32(t, float32(g.pl.Div))
		g.op(x86.AVDIVPS, g.vr(t), g.vr(r), g.vr(r))
		return
	case plan.FinalizeAddEps, plan.FinalizeRootAddEps:
		t := g.Tmp()
		g.constF32(t, red.Eps)
		g.op(x86.AVADDPS, g.vr(t), g.vr(r), g.vr(r))
	case plan.FinalizeMaxEps, plan.FinalizeRootMaxEps:
		t := g.Tmp()
		g.constF32(t, red.Eps)
		g.Binary(ops.Maximum, r, t)
	case plan.FinalizeLog:
		g.log(r)
		return
	}
	if (red.Finalize == plan.FinalizeRootAddEps || red.Finalize == plan.FinalizeRootMaxEps) && red.P == 2 {
		g.op(x86.AVSQRTPS, g.vr(r), g.vr(r))
	}
}

// finalizeNeedsTemps reports whether pl's finalize needs more than one
// temporary (a NaN-propagating max of eps, a log).
func finalizeNeedsTemps(pl *plan.Plan) bool {
	f := pl.Finalize
	return pl.Stage&plan.SkipFinalize == 0 && (f == plan.FinalizeMaxEps || f == plan.FinalizeRootMaxEps || f == plan.FinalizeLog)
}

package arm64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Native reductions (kernelshape.Native): f64 and exact data in lanes of
// their own type, as amd64's. Accumulator u is v<u> (v0..v15),
// temporaries v16..v25, and the constants held for the whole kernel
// (the identity, a byte of 1 in every lane, the mean's divisor, an Lp
// norm's eps) are the constant pool's (vconst64), as every kernel's.
// A 128-bit register holds 2 lanes of 64 bits, 4 of 32, 8 of 16 or 16
// bytes.
//
// What NEON lacks: a 64-bit integer max and min (SMAX, UMAX stop at
// 32-bit lanes), taken as CMGT or CMHI and a bit insert; and a 64-bit
// lane multiply, taken as 32-bit multiplies of the halves (mul64).
// FMAX and FMIN (not the NM forms) are plan.CombineF64's f64 max and
// min: a NaN on either side gives NaN, and -0 is below +0.

// nativeGen is the generator of one native kernel.
type nativeGen struct {
	*gen
	k     kernelshape.NativeKind
	lanes int   // V in the kind's lanes
	size  int64 // log2 of the lane's bytes: the size field of the integer ops
	id    int   // the combine's identity in every lane
	ones  int   // 1 in every byte (truths), where stored
	div   int   // the mean's divisor in both f64 lanes, of a mean
	nan   int   // the interpreter's NaN in both f64 lanes, of an empty integer mean
	eps   int   // an Lp norm's eps in both f64 lanes, of one
	pairs int   // Halves: the accumulators, each v<u> and its high half's v<u+pairs>
	sign  int   // an s64 mean: the sign bit in both lanes
	low   int   // a 64-bit mean: the low 32 bits of both lanes
	k32   int   // a 64-bit mean: 2^32 in both f64 lanes
	// A log-sum-exp (nativelse.go): its kind (k is the pass's), the
	// identities of its passes, its shift slots' first register and the
	// slot in use.
	lse          kernelshape.NativeKind
	idMax, idSum int
	shifts       int
	shift        int
}

// nativeTakes reports why NEON cannot take kind k, or nil: it takes
// every kind.
func nativeTakes(kernelshape.NativeKind) error { return nil }

// emitNative returns the native kernel of pl, or an Unimplemented error
// for a plan it does not take.
func emitNative(pl *plan.Plan) (plan.Code, error) {
	k, err := kernelshape.CheckNative(pl, kernelshape.NativeISA{Arch: "arm64", MaxDepth: maxDepth, VectorBytes: 16,
		Accs: nativeAccs, Takes: nativeTakes})
	if err != nil {
		return plan.Code{}, err
	}
	// The loops' generator, made for an f32 max of the same loops: the
	// native kernel uses its loops, pointers and registers only.
	like := pl.Clone()
	like.SrcDT, like.DstDT, like.PostOps = dtypes.F32, dtypes.F32, nil
	like.Reduction, like.Stage = plan.AlgMax.Reduction(0, 0), 0
	g := newGen(like)
	g.withPlan(pl)
	n := &nativeGen{gen: g, k: k, lanes: 16 / k.LaneBytes()}
	if k.LSE {
		// Half the accumulators' registers hold the shifts.
		n.lse, n.shifts = k, nacc/2
		n.shift = n.shifts
	}
	if k.Halves() {
		n.pairs = nacc / 2
	}
	for b := k.LaneBytes(); b > 1; b >>= 1 {
		n.size++
	}
	kernelshape.Native(pl, k, n)
	text, err := kernelshape.Assemble(g)
	if err != nil {
		return plan.Code{}, err
	}
	return plan.Code{Text: text}, nil
}

// NativeLanes is V in the kind's lanes.
func (n *nativeGen) NativeLanes() int { return n.lanes }

// NativeAccs is nativeAccs, halved where each accumulator is a pair
// (Halves).
func (n *nativeGen) NativeAccs(column bool) int {
	if n.pairs != 0 {
		return nativeAccs(column) / 2
	}
	return n.k.Accs(nativeAccs)(column)
}

// nativeAccs is every accumulator register for columns (each block
// stores its outputs whole), half of them for rows, whose blocks of U*V
// elements would otherwise leave long tails.
func nativeAccs(column bool) int {
	if column {
		return nacc
	}
	return nacc / 2
}

// Prologue loads src, the binary operands, Count and dst, and sets the
// constants held for the kernel.
func (n *nativeGen) Prologue(cnt int16) {
	n.op(arm64.AMOVD, mem(rArgs, plan.ArgSrc), reg(rSrc))
	for i := 0; i < n.NBin; i++ {
		n.op(arm64.AMOVD, mem(rArgs, plan.ArgBins+8*int64(i)), reg(n.binReg[i]))
	}
	if cnt != 0 {
		n.op(arm64.AMOVD, mem(rArgs, plan.ArgCount), reg(cnt))
	}
	n.op(arm64.AMOVD, mem(rArgs, plan.ArgDst), reg(rDst))
	n.pro = n.Add(&obj.Prog{As: obj.ANOP})
	n.id = n.vconst64(n.k.IdentityPattern())
	if n.k.LSE {
		n.idSum, n.idMax = n.id, n.vconst64(n.k.LSEMax().IdentityPattern())
	}
	if n.k.Store == kernelshape.StoreTruth {
		n.ones = n.vconst64(0x0101010101010101)
	}
	if n.k.Mean {
		n.div = n.vconst64(math.Float64bits(float64(n.pl.Div)))
		if !n.k.Float && n.pl.Div == 0 {
			n.nan = n.vconst64(math.Float64bits(math.NaN()))
		}
	}
	if n.k.Eps != kernelshape.NativeNoEps {
		n.eps = n.vconst64(math.Float64bits(n.k.EpsValue))
	}
	if n.pairs != 0 {
		n.low = n.vconst64(math.MaxUint32)
		n.k32 = n.vconst64(math.Float64bits(0x1p32))
		if n.k.Signed {
			n.sign = n.vconst64(1 << 63)
		}
	}
}

// NativeInit sets accumulator u to the identity.
func (n *nativeGen) NativeInit(u int) {
	n.vmov(u, n.id)
	if n.pairs != 0 {
		n.vmov(u+n.pairs, n.id)
	}
}

// NativeLoad combines a whole vector, or one element into lane 0 (the
// other lanes kept), into accumulator u.
func (n *nativeGen) NativeLoad(u int, off int64, cnt int) {
	mk := n.Mark()
	defer n.Release(mk)
	x := n.Tmp()
	if n.pairs != 0 {
		n.loadHalves(u, x, off, cnt)
		return
	}
	if cnt == n.lanes {
		n.fpMem(true, int64(cnt*n.k.Bytes), x, at(rSrc, off))
		n.widen(x)
		n.truth(x)
		kernelshape.NativeTransformF64(n, n.k, x)
		n.combine(u, x)
		return
	}
	// The element alone (zeros above it) combined with a copy of u,
	// whose lane 0 then goes back into u.
	n.fpMem(true, int64(n.k.Bytes), x, at(rSrc, off))
	n.widen(x)
	n.truth(x)
	kernelshape.NativeTransformF64(n, n.k, x)
	t := n.Tmp()
	n.vmov(t, u)
	n.combine(t, x)
	ea := [...]int16{arm64.ARNG_B, arm64.ARNG_H, arm64.ARNG_S, arm64.ARNG_D}[n.size]
	n.op(arm64.AVMOV, velem(t, ea, 0), velem(u, ea, 0))
}

// loadHalves adds both 64-bit elements at off, or the one into lane 0,
// to accumulator pair u through x: their low 32 bits to u's lanes, their
// high 32 to u+pairs's, a signed element biased by 2^63 first (its sign
// bit flipped) so that both halves are unsigned. One element is added to
// copies of the pair, whose lane 0 then goes back (the bias would reach
// the other lane).
func (n *nativeGen) loadHalves(u, x int, off int64, cnt int) {
	h := n.Tmp()
	n.fpMem(true, int64(cnt*n.k.Bytes), x, at(rSrc, off))
	if n.k.Signed {
		n.fop(opEOR, x, x, n.sign)
	}
	n.word(ushr2D(h, x, 32))
	n.fop(opAND, x, x, n.low)
	add := intOp(opADDB, 3)
	if cnt == n.lanes {
		n.fop(add, u, u, x)
		n.fop(add, u+n.pairs, u+n.pairs, h)
		return
	}
	for _, p := range [][2]int{{u, x}, {u + n.pairs, h}} {
		n.fop(add, p[1], p[1], p[0])
		n.op(arm64.AVMOV, velem(p[1], arm64.ARNG_D, 0), velem(p[0], arm64.ARNG_D, 0))
	}
}

// widen sign- or zero-extends the elements of an integer mean, loaded
// into the low bytes of x, to 64-bit lanes: SXTL or UXTL, twice for
// 16-bit data.
func (n *nativeGen) widen(x int) {
	if !n.k.Mean || n.k.Float {
		return
	}
	s := map[bool][2]uint32{true: {opSXTL16, opSXTL32}, false: {opUXTL16, opUXTL32}}[n.k.Signed]
	if n.k.Bytes == 2 {
		n.word(rr(s[0], x, x))
	}
	n.word(rr(s[1], x, x))
}

// truth turns a loaded vector of a logical xor into each byte's truth,
// all ones where the byte is nonzero; the others combine the data.
func (n *nativeGen) truth(x int) {
	if n.k.Op == kernelshape.NativeOdd {
		n.word(rrr(opCMTST16B, x, x, x))
	}
}

// F64Abs clears r's sign bits.
func (n *nativeGen) F64Abs(r int) { n.word(rr(opFABS2D, r, r)) }

// F64Square squares r.
func (n *nativeGen) F64Square(r int) { n.fop(opFMUL2D, r, r, r) }

// F64MaxEps sets r to max(eps, r) (FMAX: NaN where r is NaN).
func (n *nativeGen) F64MaxEps(r int) { n.fop(opFMAX2D, r, n.eps, r) }

// F64AddEps adds eps to r.
func (n *nativeGen) F64AddEps(r int) { n.fop(opFADD2D, r, n.eps, r) }

// F64Sqrt sets r to its square root.
func (n *nativeGen) F64Sqrt(r int) { n.word(rr(opFSQRT2D, r, r)) }

// F64Exp sets r to e^r (vf64.Exp's steps).
func (n *nativeGen) F64Exp(r int) { n.expF64(r) }

// F64Log sets r to log(r) (vf64.Log's steps).
func (n *nativeGen) F64Log(r int) { n.logF64(r) }

// F64Mul multiplies r by c, loaded into a temporary.
func (n *nativeGen) F64Mul(r int, c float64) {
	mk := n.Mark()
	defer n.Release(mk)
	n.fop(opFMUL2D, r, r, n.f64In(c, n.Tmp()))
}

// NativeCombine combines accumulator from into u.
func (n *nativeGen) NativeCombine(u, from int) {
	if n.pairs != 0 {
		n.fop(intOp(opADDB, 3), u, u, from)
		n.fop(intOp(opADDB, 3), u+n.pairs, u+n.pairs, from+n.pairs)
		return
	}
	n.combine(u, from)
}

// combine sets u = u op x lane by lane; x is kept.
func (n *nativeGen) combine(u, x int) {
	k := n.k
	if k.Float {
		op := map[kernelshape.NativeOp]uint32{kernelshape.NativeAdd: opFADD2D, kernelshape.NativeMul: opFMUL2D,
			kernelshape.NativeMax: opFMAX2D, kernelshape.NativeMin: opFMIN2D}[k.Op]
		n.fop(op, u, u, x)
		return
	}
	switch k.Op {
	case kernelshape.NativeAdd:
		n.fop(intOp(opADDB, n.size), u, u, x)
	case kernelshape.NativeMul:
		if k.Bytes == 8 {
			n.mul64(u, x)
			return
		}
		n.fop(intOp(opMULB, n.size), u, u, x)
	case kernelshape.NativeMax, kernelshape.NativeMin:
		if k.Bytes == 8 {
			n.minMax64(u, x)
			return
		}
		op := map[[2]bool]uint32{{true, true}: opSMAXB, {true, false}: opSMINB,
			{false, true}: opUMAXB, {false, false}: opUMINB}[[2]bool{k.Signed, k.Op == kernelshape.NativeMax}]
		n.fop(intOp(op, n.size), u, u, x)
	case kernelshape.NativeAnd:
		n.fop(opAND, u, u, x)
	case kernelshape.NativeOr:
		n.fop(opORR, u, u, x)
	case kernelshape.NativeXor, kernelshape.NativeOdd:
		n.fop(opEOR, u, u, x)
	case kernelshape.NativeAll:
		n.fop(intOp(opUMINB, 0), u, u, x)
	case kernelshape.NativeAny:
		n.fop(intOp(opUMAXB, 0), u, u, x)
	}
}

// mul64 sets u = u * x (x kept) in 64-bit integer lanes, the low 64
// bits of the product: with u = uh:ul and x = xh:xl in 32-bit halves,
// ul*xl + (uh*xl + ul*xh)<<32 modulo 2^64 (uh*xh is shifted out). MUL
// of u with x's halves swapped gives both cross products in 32-bit
// lanes, UADDLP adds each pair, SHL moves the sum up and UMLAL adds the
// widened ul*xl.
func (n *nativeGen) mul64(u, x int) {
	mk := n.Mark()
	defer n.Release(mk)
	cross, ul, xl := n.Tmp(), n.Tmp(), n.Tmp()
	n.word(rr(opREV644S, cross, x))
	n.word(rr(opXTN2D, ul, u))
	n.word(rr(opXTN2D, xl, x))
	n.fop(intOp(opMULB, 2), cross, cross, u)
	n.word(rr(opUADDLP4S, u, cross))
	n.word(rr(opSHL2D32, u, u))
	n.word(rrr(opUMLAL2S, u, ul, xl))
}

// minMax64 sets u = u max/min x in 64-bit integer lanes: m marks the
// lanes where x wins (x > u for max, u > x for min; CMGT signed, CMHI
// unsigned), and BIT inserts x there.
func (n *nativeGen) minMax64(u, x int) {
	mk := n.Mark()
	defer n.Release(mk)
	m := n.Tmp()
	op := uint32(opCMGT2D)
	if !n.k.Signed {
		op = opCMHI2D
	}
	if n.k.Op == kernelshape.NativeMax {
		n.fop(op, m, x, u)
	} else {
		n.fop(op, m, u, x)
	}
	n.vop(arm64.AVBIT, arr16B, u, x, m)
}

// finalize turns the lanes of r into results: an f64 mean divided by
// Div, an Lp norm's eps and root, a truth made 0 or 1 (the unsigned min
// with 1).
func (n *nativeGen) finalize(r int) {
	switch {
	case n.k.FinalizesF64():
		kernelshape.NativeFinalizeF64(n, n.k, r)
	case n.k.Mean && !n.k.Float:
		n.intMean(r)
	case n.k.Mean:
		n.fop(opFDIV2D, r, r, n.div)
	case n.k.Store == kernelshape.StoreTruth:
		n.fop(intOp(opUMINB, 0), r, r, n.ones)
	}
}

// intMean turns r's 64-bit integer sums into their mean: SCVTF (rounded
// once) and FDIV by Div; for an integer dst (StoreTrunc) FCVTZS or
// FCVTZU (toward zero, saturating, NaN as 0) and the saturating narrows
// to the src's width. An empty reduction (Div 0) gives the
// interpreter's NaN (0/0 would give the default NaN), 0 in an integer
// dst.
func (n *nativeGen) intMean(r int) {
	if n.pairs == 0 {
		n.word(rr(opSCVTF2D, r, r)) // else joinHalves has converted the sum
	}
	n.fop(opFDIV2D, r, r, n.div)
	if n.k.Store != kernelshape.StoreTrunc {
		if n.nan != 0 {
			n.vmov(r, n.nan)
		}
		return
	}
	cvt, narrow := uint32(opFCVTZU2D), [2]uint32{opUQXTN2D, opUQXTN16}
	if n.k.Signed {
		cvt, narrow = opFCVTZS2D, [2]uint32{opSQXTN2D, opSQXTN16}
	}
	n.word(rr(cvt, r, r))
	if n.k.Bytes == 8 {
		return
	}
	n.word(rr(narrow[0], r, r))
	if n.k.Bytes == 2 {
		n.word(rr(narrow[1], r, r))
	}
}

// joinHalves sets l to the sum of the pair l, h (Halves: the sums of
// the elements' low and high 32-bit halves), as f64 rounded once; h is
// clobbered. As amd64's: the low sums' carries go into the high word H,
// less Div*2^31 for the bias of signed elements, so that the sum is
// H*2^32 + L, H signed and L below 2^32; H rounds to a, r = H - a comes
// exactly from H's high and low 32 bits as f64, and the sum is
// a*2^32 + (r*2^32 + L), the bracket exact, one rounding in all.
func (n *nativeGen) joinHalves(l, h int) {
	mk := n.Mark()
	defer n.Release(mk)
	c, hl, a := n.Tmp(), n.Tmp(), n.Tmp()
	add := intOp(opADDB, 3)
	n.word(ushr2D(c, l, 32))
	n.fop(add, h, h, c)
	n.fop(opAND, l, l, n.low)
	if n.k.Signed {
		n.fop(add, h, h, n.vconst64(-uint64(n.pl.Div)<<31))
	}
	n.word(sshr2D(c, h, 32))
	n.word(rr(opSCVTF2D, c, c))
	n.fop(opFMUL2D, c, c, n.k32) // H's high 32 bits, times 2^32
	n.fop(opAND, hl, h, n.low)
	n.word(rr(opSCVTF2D, hl, hl))
	n.word(rr(opSCVTF2D, l, l))
	n.fop(opFADD2D, a, c, hl) // a = round(H)
	n.fop(opFSUB2D, c, c, a)  // exact
	n.fop(opFADD2D, c, c, hl) // r = H - a, exact
	n.fop(opFMLA2D, l, c, n.k32)
	n.fop(opFMLA2D, l, a, n.k32)
}

// storeBytes is how many bytes NativeStoreColumn stores: V elements of
// the dst.
func (n *nativeGen) storeBytes() int64 {
	if n.k.Store == kernelshape.StoreF32 {
		return int64(4 * n.lanes)
	}
	return int64(n.pl.DstDT.Size() * n.lanes)
}

// NativeStoreColumn finalizes a copy of accumulator u and stores its V
// lanes: 16 bytes, or 8 of f32 results, through the f64 epilogue where
// there are post-ops. Lanes stored as they are need no copy.
func (n *nativeGen) NativeStoreColumn(u int, lm kernelshape.LaneMap) {
	off := lm.DstOff
	if n.k.PostOps {
		mk := n.Mark()
		t := n.Tmp()
		n.vmov(t, u)
		n.epilogue(t, lm)
		n.Release(mk)
		return
	}
	if !n.k.Mean && !n.k.FinalizesF64() && n.k.Store == kernelshape.StoreLane {
		n.fpMem(false, 16, u, at(rDst, off))
		return
	}
	mk := n.Mark()
	defer n.Release(mk)
	t := n.Tmp()
	n.vmov(t, u)
	if n.pairs != 0 {
		h := n.Tmp()
		n.vmov(h, u+n.pairs)
		n.joinHalves(t, h)
	}
	n.finalize(t)
	if n.k.Store == kernelshape.StoreF32 {
		n.word(rr(opFCVTN2D, t, t))
	}
	n.fpMem(false, n.storeBytes(), t, at(rDst, off))
}

// NativeStoreFirst combines accumulator 0's lanes (a butterfly of
// rotations by half the register, a quarter, ..., one lane: afterwards
// every lane holds the combine of all), finalizes lane 0 and stores it,
// through the f64 epilogue where there are post-ops.
func (n *nativeGen) NativeStoreFirst() {
	mk := n.Mark()
	defer n.Release(mk)
	r, t := n.Tmp(), n.Tmp()
	n.vmov(r, 0)
	if n.pairs != 0 {
		// Each half's two lanes added on its own, then joined.
		h := n.Tmp()
		n.vmov(h, n.pairs)
		for _, x := range []int{r, h} {
			n.word(ext(t, x, x, 8))
			n.fop(intOp(opADDB, 3), x, x, t)
		}
		n.joinHalves(r, h)
	}
	for b := 8; n.pairs == 0 && b >= n.k.LaneBytes(); b /= 2 {
		n.word(ext(t, r, r, b))
		n.combine(r, t)
	}
	if n.k.PostOps {
		n.epilogue(r, kernelshape.LaneMap{N: kernelshape.Bcast})
		return
	}
	n.finalize(r)
	if n.k.Store == kernelshape.StoreF32 {
		n.word(rr(opFCVTN2D, r, r))
		n.fpMem(false, 4, r, at(rDst, 0))
		return
	}
	n.fpMem(false, int64(n.pl.DstDT.Size()), r, at(rDst, 0))
}

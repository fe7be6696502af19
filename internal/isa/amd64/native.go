package amd64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Native reductions (kernelshape.Native): f64 and exact data in lanes of
// their own type. Accumulator u is vector register u (AVX-512: 16 of
// them, AVX2: 8), temporaries above them. The lanes are 8, 16, 32 or 64
// bits wide: V is the vector's bytes over the lane's.
//
// What AVX2 lacks: a 64-bit integer max and min (VPMAXSQ, VPMAXUQ are
// AVX-512), taken as VPCMPGTQ and a blend, the unsigned ones with the
// sign bits flipped first; and a 64-bit multiply (VPMULLQ is
// AVX512DQ), taken as three 32x32->64 VPMULUDQ (mul64).

// nativeGen is the generator of one native kernel.
type nativeGen struct {
	*gen
	k     kernelshape.NativeKind
	lanes int // V in the kind's lanes
	accs  int
	pairs int // Halves: the accumulators, each register u and its high half's u+pairs
	ones  int // a temporary holding 1 in every byte (logical xor, truths), held for the kernel
	sign  int // AVX2 u64 max, min and an s64 mean: the sign bits, held for the kernel
	low   int // a 64-bit mean: the low 32 bits of every lane, held for the kernel
	abs   int // f64 |x|: all bits but the sign's, held for the kernel
	// A log-sum-exp (nativelse.go): its kind (k is the pass's), its
	// shift slots' first register and the slot in use.
	lse    kernelshape.NativeKind
	shifts int
	shift  int
	byRow  bool // the runtime hinted the plan RowByRow (nativerowbyrow.go)
	// The run of accumulators NativeInit set last.
	initRun initRun
}

// initRun is a run of accumulators first..reg set to the identity, the
// last of whose instructions is last: while it is the list's last, no
// code has run between them, and first still holds the identity.
type initRun struct {
	last       *obj.Prog
	first, reg int
}

// nativeTakes reports why the instruction set (avx512 or AVX2) cannot
// take kind k, or nil.
func nativeTakes(k kernelshape.NativeKind, avx512 bool) error {
	if k.Op == kernelshape.NativeMul && !k.Float && k.Bytes == 1 {
		return status.Errorf(status.Unimplemented, "amd64: no byte multiply")
	}
	return nil
}

// nativeISA is what kernelshape.CheckNative needs of the instruction
// set o: AVX-512 has 16 accumulators of 64 bytes, AVX2 8 of 32.
func nativeISA(o Options) kernelshape.NativeISA {
	isa := kernelshape.NativeISA{Arch: "amd64", MaxDepth: maxDepth, VectorBytes: 32,
		Takes: func(k kernelshape.NativeKind) error { return nativeTakes(k, o.AVX512) }}
	accs := 8
	if o.AVX512 {
		isa.VectorBytes, accs = 64, 16
	}
	isa.Accs = func(bool) int { return accs }
	return isa
}

// emitNative returns the native kernel of pl under the runtime's hints
// h, or an Unimplemented error for a plan it does not take. AVX2 column
// blocks take the f32 column's wide count of accumulators
// (tuning.avx2WideAcc, as colAcc) where the kind's code needs no more
// than the temporaries that leaves and does not speculate (the NaN-free
// code holds Y11 to Y13); a kind that needs more temporaries is emitted
// again with the usual 8.
func emitNative(pl *plan.Plan, h kernelconf.Hints, o Options) (plan.Code, error) {
	k, err := kernelshape.CheckNative(pl, nativeISA(o))
	if err != nil {
		return plan.Code{}, err
	}
	if !o.AVX512 && !k.LSE && !k.Halves() && !nanFreeTakes(k, false) &&
		kernelshape.NativeShapeOf(pl, nativeISA(o).VectorBytes/k.LaneBytes()) == kernelshape.NativeColumn {
		code, short, err := emitNativeAccs(pl, h, o, k, true)
		if !short {
			return code, err
		}
	}
	code, _, err := emitNativeAccs(pl, h, o, k, false)
	return code, err
}

// emitNativeAccs emits the native kernel of pl, of kind k, with AVX2's
// wide column blocks (wide) or the usual accumulators; short reports a
// kernel that needed more temporary registers than were left.
func emitNativeAccs(pl *plan.Plan, h kernelconf.Hints, o Options, k kernelshape.NativeKind, wide bool) (code plan.Code, short bool, err error) {
	// The loops' generator, made for an f32 sum of the same loops under
	// the same hints: the native kernel uses its loops, pointers and
	// registers, and the pacing of its row sweeps (NativePacedRowAccs).
	like := pl.Clone()
	like.SrcDT, like.DstDT, like.PostOps = dtypes.F32, dtypes.F32, nil
	like.Reduction, like.Stage = plan.AlgSum.Reduction(0, 0), 0
	g := newGenConf(newAsm(), pl, Choose(like, h, o.Target()))
	g.Types = kernelshape.TypesOf(pl)
	g.add = false
	isa := nativeISA(o)
	n := &nativeGen{gen: g, k: k, lanes: isa.VectorBytes / k.LaneBytes(), accs: isa.Accs(false), byRow: h.RowByRow}
	g.tmpLo, g.tmpNext, g.tmpHi = n.accs, n.accs, 2*n.accs
	if wide {
		n.accs = g.conf.tune.avx2WideAcc
		g.tmpLo, g.tmpNext = n.accs, n.accs
	}
	if k.LSE {
		// Half the accumulators' registers hold the shifts.
		n.lse, n.accs = k, k.Accs(isa.Accs)(false)
		n.shifts, n.shift = n.accs, n.accs
	}
	if k.Halves() {
		n.pairs = n.accs / 2
		n.low = g.Tmp()
	}
	if k.Op == kernelshape.NativeOdd || k.Store == kernelshape.StoreTruth {
		n.ones = g.Tmp()
	}
	if !g.avx512 && !k.Float && !k.Signed && k.Bytes == 8 && (k.Op == kernelshape.NativeMax || k.Op == kernelshape.NativeMin) ||
		k.Halves() && k.Signed {
		n.sign = g.Tmp()
	}
	if k.Transform == kernelshape.NativeAbs || k.Transform == kernelshape.NativePow {
		n.abs = g.Tmp()
	}
	kernelshape.Native(pl, k, n)
	text, err := kernelshape.Assemble(g)
	if err != nil {
		return plan.Code{}, g.tmpShort, err
	}
	return plan.Code{Text: text}, false, nil
}

// NativePrefetchSrc prefetches the line off bytes past the src pointer
// into the L2 (kernelshape.NativePrefetcher).
func (n *nativeGen) NativePrefetchSrc(off int64) { n.PrefetchSrcL2(off) }

// NativePacedRowAccs is the accumulators of the row sweeps of an f32
// sum of the kernel's loops where Choose paces them (Conf.Paced: src
// from DRAM on Zen cores), one 64-byte line of them per add; else 0
// (kernelshape.NativePacer).
func (n *nativeGen) NativePacedRowAccs() int {
	if !n.conf.Paced {
		return 0
	}
	return n.conf.RowAcc
}

// NativeRowStreams is how many streams an f32 row sweep of the same
// blocks reads its row as (Conf.streams; kernelshape.NativeStreamer).
func (n *nativeGen) NativeRowStreams(u int, iters, unit int64) int {
	return u / n.conf.streams(1, u, iters, unit).per
}

// PaceLoops gives the loops emitted from now on the paced shape
// (testedLoops), or the usual one.
func (n *nativeGen) PaceLoops(on bool) { n.testedLoops = on }

// NativeLanes is V in the kind's lanes.
func (n *nativeGen) NativeLanes() int { return n.lanes }

// NativeAccs is every accumulator register, for both shapes; half of
// them where each is a pair (Halves).
func (n *nativeGen) NativeAccs(bool) int {
	if n.pairs != 0 {
		return n.pairs
	}
	return n.accs
}

// Prologue loads src, the binary operands, Count and dst, and the
// constants held for the kernel.
func (n *nativeGen) Prologue(cnt int16) {
	if n.nanFree {
		// Before DI, the argument block, becomes the dst pointer.
		n.nanFreePrologue()
	}
	n.op(x86.AMOVQ, mem(rDI, plan.ArgSrc), reg(rSrc))
	for i := 0; i < n.NBin; i++ {
		n.op(x86.AMOVQ, mem(rDI, plan.ArgBins+8*int64(i)), reg(n.binReg[i]))
	}
	if cnt != 0 {
		n.op(x86.AMOVQ, mem(rDI, plan.ArgCount), reg(cnt))
	}
	n.op(x86.AMOVQ, mem(rDI, plan.ArgDst), reg(rDst))
	n.pro = n.Add(&obj.Prog{As: obj.ANOP})
	if n.ones != 0 {
		n.pattern(n.ones, 0x0101010101010101)
	}
	if n.sign != 0 {
		n.pattern(n.sign, 1<<63)
	}
	if n.low != 0 {
		n.pattern(n.low, math.MaxUint32)
	}
	if n.abs != 0 {
		n.pattern(n.abs, 1<<63-1)
	}
}

// NativeInit sets accumulator u to the identity. An identity that
// pattern builds through a general register (a max's -Inf, a min's
// greatest value, a product's 1) is built once for a run of
// accumulators initialized one after the other, each copied from the
// run's first, as arm64's kernel copies the identity it holds: a move
// from a general register into a vector one costs more than a register
// copy, and a short row starts all its accumulators
// (docs/PERFORMANCE-f64.md, "Zen 5: a native identity built once a
// row"). A zero or all-ones identity is no dearer than a copy.
func (n *nativeGen) NativeInit(u int) {
	p := n.k.IdentityPattern()
	broadcast := p != 0 && p != math.MaxUint64
	if run := &n.initRun; broadcast && n.pairs == 0 && run.last == n.Last() && run.reg == u-1 {
		run.last, run.reg = n.op(x86.AVMOVAPS, n.vr(run.first), n.vr(u)), u
		return
	}
	n.pattern(u, p)
	n.initRun = initRun{last: n.Last(), first: u, reg: u}
	if n.pairs != 0 {
		n.pattern(u+n.pairs, 0)
	}
}

// NativeLoad combines a whole vector, or one element into lane 0 (the
// other lanes the identity), into accumulator u.
func (n *nativeGen) NativeLoad(u int, off int64, cnt int) {
	mk := n.Mark()
	defer n.Release(mk)
	addr := n.m(rSrc, off)
	if n.nanFree {
		n.loadNaNFree(u, addr, cnt)
		return
	}
	if n.pairs != 0 {
		n.loadHalves(u, addr, cnt)
		return
	}
	transform := n.k.Transform != kernelshape.NativeNoTransform
	if cnt == n.lanes {
		if n.memOperand() && !transform {
			n.combine(u, addr)
			return
		}
		t := n.Tmp()
		n.op(n.loadVector(), addr, n.vr(t))
		kernelshape.NativeTransformF64(n, n.k, t)
		n.combine(u, n.vr(t))
		return
	}
	t := n.Tmp()
	n.NativeInit(t)
	if transform {
		n.loadFirstF64(t, addr)
	} else {
		n.loadFirst(t, addr)
	}
	n.combine(u, n.vr(t))
}

// loadHalves adds a whole vector of 64-bit elements, or one element
// into lane 0, to accumulator pair u: the low 32 bits of each element
// to u's lanes, the high 32 to u+pairs's, a signed element biased by
// 2^63 first (its sign bit flipped) so that both halves are unsigned.
func (n *nativeGen) loadHalves(u int, addr obj.Addr, cnt int) {
	t, h := n.Tmp(), n.Tmp()
	if cnt == n.lanes {
		n.op(n.move(), addr, n.vr(t))
		if n.k.Signed {
			n.op(n.bitwise(x86.AVPXOR, x86.AVPXORQ), n.vr(n.sign), n.vr(t), n.vr(t))
		}
	} else {
		// Through a general register, whose VMOVQ zeroes the other
		// lanes: they add nothing.
		n.op(x86.AMOVQ, addr, reg(rScratch))
		if n.k.Signed {
			n.op(x86.ABTCQ, imm(63), reg(rScratch))
		}
		n.op(x86.AVMOVQ, reg(rScratch), n.xr(t))
	}
	n.op(x86.AVPSRLQ, imm(32), n.vr(t), n.vr(h))
	n.op(n.bitwise(x86.AVPAND, x86.AVPANDQ), n.vr(n.low), n.vr(t), n.vr(t))
	n.op(x86.AVPADDQ, n.vr(t), n.vr(u), n.vr(u))
	n.op(x86.AVPADDQ, n.vr(h), n.vr(u+n.pairs), n.vr(u+n.pairs))
}

// loadFirstF64 loads the f64 element at addr, transformed, into lane 0
// of t, the other lanes kept: the element is transformed alone (the
// identity of a max, -Inf, is no identity once transformed) and then
// merged into lane 0.
func (n *nativeGen) loadFirstF64(t int, addr obj.Addr) {
	mk := n.Mark()
	defer n.Release(mk)
	s := n.Tmp()
	n.op(x86.AVMOVQ, addr, n.xr(s))
	kernelshape.NativeTransformF64(n, n.k, s)
	if n.avx512 {
		n.op(x86.AVMOVDQU64, n.vr(s), n.kbits(1), n.vr(t))
		return
	}
	n.op(x86.AVPBLENDD, imm(0b11), n.vr(s), n.vr(t), n.vr(t))
}

// F64Abs clears r's sign bits.
func (n *nativeGen) F64Abs(r int) {
	n.op(n.bitwise(x86.AVPAND, x86.AVPANDQ), n.vr(n.abs), n.vr(r), n.vr(r))
}

// F64Square squares r.
func (n *nativeGen) F64Square(r int) { n.op(x86.AVMULPD, n.vr(r), n.vr(r), n.vr(r)) }

// F64MaxEps sets r to max(eps, r): VMAXPD gives its second source (r)
// where either is NaN.
func (n *nativeGen) F64MaxEps(r int) { n.withEps(x86.AVMAXPD, r) }

// F64AddEps adds eps to r.
func (n *nativeGen) F64AddEps(r int) { n.withEps(x86.AVADDPD, r) }

// withEps sets r to eps as r (as: VMAXPD or VADDPD), eps in a temporary
// and r the second source, which VMAXPD returns where either is NaN.
func (n *nativeGen) withEps(as obj.As, r int) {
	mk := n.Mark()
	defer n.Release(mk)
	e := n.Tmp()
	n.pattern(e, math.Float64bits(n.k.EpsValue))
	n.op(as, n.vr(r), n.vr(e), n.vr(r))
}

// F64Sqrt sets r to its square root.
func (n *nativeGen) F64Sqrt(r int) { n.op(x86.AVSQRTPD, n.vr(r), n.vr(r)) }

// F64Exp sets r to e^r (vf64.Exp's steps).
func (n *nativeGen) F64Exp(r int) { n.expF64(r) }

// F64Log sets r to log(r) (vf64.Log's steps).
func (n *nativeGen) F64Log(r int) { n.logF64(r) }

// F64Mul multiplies r by c, held in a temporary.
func (n *nativeGen) F64Mul(r int, c float64) {
	mk := n.Mark()
	defer n.Release(mk)
	t := n.Tmp()
	n.pattern(t, math.Float64bits(c))
	n.op(x86.AVMULPD, n.vr(t), n.vr(r), n.vr(r))
}

// loadVector is the whole-vector load: an integer mean's widens each
// element to 64 bits, sign- or zero-extended as its type is.
func (n *nativeGen) loadVector() obj.As {
	if !n.k.Mean || n.k.Float {
		return n.move()
	}
	return map[[2]bool]obj.As{{true, true}: x86.AVPMOVSXWQ, {true, false}: x86.AVPMOVZXWQ,
		{false, true}: x86.AVPMOVSXDQ, {false, false}: x86.AVPMOVZXDQ}[[2]bool{n.k.Bytes == 2, n.k.Signed}]
}

// loadFirst loads the element at addr into lane 0 of t, the other lanes
// kept, reading only the element's bytes.
func (n *nativeGen) loadFirst(t int, addr obj.Addr) {
	if n.k.Mean && !n.k.Float {
		// Widened to 64 bits; the other lanes hold the sum's identity,
		// 0, which VMOVQ writes.
		n.op(map[[2]bool]obj.As{{true, true}: x86.AMOVWQSX, {true, false}: x86.AMOVWLZX,
			{false, true}: x86.AMOVLQSX, {false, false}: x86.AMOVL}[[2]bool{n.k.Bytes == 2, n.k.Signed}], addr, reg(rScratch))
		n.op(x86.AVMOVQ, reg(rScratch), n.xr(t))
		return
	}
	if n.avx512 {
		// A merge-masked load of lane 0 (masked lanes do not fault).
		n.op(n.maskedMove(), addr, n.kbits(1), n.vr(t))
		return
	}
	mk := n.Mark()
	defer n.Release(mk)
	s := n.Tmp()
	if n.k.Bytes == 8 {
		n.op(x86.AVMOVQ, addr, n.xr(s))
		n.op(x86.AVPBLENDD, imm(0b11), n.vr(s), n.vr(t), n.vr(t))
		return
	}
	// A dword of the element and the identity's other bytes.
	switch n.k.Bytes {
	case 1:
		n.op(x86.AMOVBLZX, addr, reg(rScratch))
	case 2:
		n.op(x86.AMOVWLZX, addr, reg(rScratch))
	default:
		n.op(x86.AMOVL, addr, reg(rScratch))
	}
	if n.k.Bytes < 4 {
		rest := uint32(n.k.IdentityPattern()) &^ (1<<(8*n.k.Bytes) - 1)
		if rest != 0 {
			n.op(x86.AORL, imm(int64(int32(rest))), reg(rScratch))
		}
	}
	n.op(x86.AVMOVD, reg(rScratch), n.xr(s))
	n.op(x86.AVPBLENDD, imm(0b1), n.vr(s), n.vr(t), n.vr(t))
}

// memOperand reports whether the combine reads a whole vector straight
// from memory.
func (n *nativeGen) memOperand() bool {
	switch n.k.Op {
	case kernelshape.NativeOdd:
		return false
	case kernelshape.NativeAdd:
		// An integer mean widens what it loads first.
		return n.k.Float || !n.k.Mean
	case kernelshape.NativeMax, kernelshape.NativeMin:
		return !n.k.Float && (n.avx512 || n.k.Bytes < 8)
	case kernelshape.NativeMul:
		// mul64 shifts its operand, and VEX shifts take no memory.
		return n.k.Float || n.avx512 || n.k.Bytes < 8
	}
	return true
}

// move is the whole-vector load, store and register copy.
func (n *nativeGen) move() obj.As {
	if n.avx512 {
		return x86.AVMOVDQU64
	}
	return x86.AVMOVDQU
}

// maskedMove is AVX-512's masked load of the lane width.
func (n *nativeGen) maskedMove() obj.As {
	switch n.k.Bytes {
	case 1:
		return x86.AVMOVDQU8
	case 2:
		return x86.AVMOVDQU16
	case 4:
		return x86.AVMOVDQU32
	}
	return x86.AVMOVDQU64
}

// NativeCombine combines accumulator from into u.
func (n *nativeGen) NativeCombine(u, from int) {
	mk := n.Mark()
	defer n.Release(mk)
	if n.nanFree {
		n.fast(n.vr(u), n.vr(from))
		return
	}
	if n.pairs != 0 {
		n.op(x86.AVPADDQ, n.vr(from), n.vr(u), n.vr(u))
		n.op(x86.AVPADDQ, n.vr(from+n.pairs), n.vr(u+n.pairs), n.vr(u+n.pairs))
		return
	}
	if n.k.Op == kernelshape.NativeOdd {
		// Both hold truths already: xor them.
		n.op(n.bitwise(x86.AVPXOR, x86.AVPXORQ), n.vr(from), n.vr(u), n.vr(u))
		return
	}
	if !n.memOperand() {
		// The combine clobbers its operand.
		t := n.Tmp()
		n.op(n.move(), n.vr(from), n.vr(t))
		n.combine(u, n.vr(t))
		return
	}
	n.combine(u, n.vr(from))
}

// bitwise picks the VEX (AVX2) or EVEX (AVX-512) spelling.
func (n *nativeGen) bitwise(vex, evex obj.As) obj.As {
	if n.avx512 {
		return evex
	}
	return vex
}

// intOps are the integer instructions by lane width: add, multiply,
// signed max and min, unsigned max and min.
var intOps = map[int][6]obj.As{
	1: {x86.AVPADDB, 0, x86.AVPMAXSB, x86.AVPMINSB, x86.AVPMAXUB, x86.AVPMINUB},
	2: {x86.AVPADDW, x86.AVPMULLW, x86.AVPMAXSW, x86.AVPMINSW, x86.AVPMAXUW, x86.AVPMINUW},
	4: {x86.AVPADDD, x86.AVPMULLD, x86.AVPMAXSD, x86.AVPMINSD, x86.AVPMAXUD, x86.AVPMINUD},
	8: {x86.AVPADDQ, x86.AVPMULLQ, x86.AVPMAXSQ, x86.AVPMINSQ, x86.AVPMAXUQ, x86.AVPMINUQ},
}

// combine sets u = u op x, x a register (clobbered where memOperand is
// false) or, where memOperand is true, memory.
func (n *nativeGen) combine(u int, x obj.Addr) {
	acc := n.vr(u)
	k := n.k
	if k.Float {
		switch k.Op {
		case kernelshape.NativeAdd:
			n.op(x86.AVADDPD, x, acc, acc)
		case kernelshape.NativeMul:
			n.op(x86.AVMULPD, x, acc, acc)
		default:
			n.minMaxF64(k.Op, acc, x)
		}
		return
	}
	ops := intOps[k.LaneBytes()]
	switch k.Op {
	case kernelshape.NativeAdd:
		n.op(ops[0], x, acc, acc)
	case kernelshape.NativeMul:
		if k.Bytes == 8 && !n.avx512 {
			n.mul64(acc, x)
			return
		}
		n.op(ops[1], x, acc, acc)
	case kernelshape.NativeMax, kernelshape.NativeMin:
		if k.Bytes == 8 && !n.avx512 {
			n.minMax64(k.Op, acc, x)
			return
		}
		i := 2
		if k.Op == kernelshape.NativeMin {
			i++
		}
		if !k.Signed {
			i += 2
		}
		n.op(ops[i], x, acc, acc)
	case kernelshape.NativeAnd:
		n.op(n.bitwise(x86.AVPAND, x86.AVPANDQ), x, acc, acc)
	case kernelshape.NativeOr:
		n.op(n.bitwise(x86.AVPOR, x86.AVPORQ), x, acc, acc)
	case kernelshape.NativeXor:
		n.op(n.bitwise(x86.AVPXOR, x86.AVPXORQ), x, acc, acc)
	case kernelshape.NativeAll:
		n.op(x86.AVPMINUB, x, acc, acc)
	case kernelshape.NativeAny:
		n.op(x86.AVPMAXUB, x, acc, acc)
	case kernelshape.NativeOdd:
		// Each byte's truth, min(x, 1) unsigned, xored in.
		n.op(x86.AVPMINUB, n.vr(n.ones), x, x)
		n.op(n.bitwise(x86.AVPXOR, x86.AVPXORQ), x, acc, acc)
	}
}

// minMaxF64 sets acc = acc max/min y (a register, clobbered) in f64
// lanes as plan.Binary has it: NaN wins, -0 below +0 (minMaxLanes).
func (n *nativeGen) minMaxF64(op kernelshape.NativeOp, acc, y obj.Addr) {
	k := ops.Minimum
	if op == kernelshape.NativeMax {
		k = ops.Maximum
	}
	n.minMaxLanes(&f64Lanes, k, acc, y)
}

// minMax64 sets acc = acc max/min x (a register, clobbered) in 64-bit
// integer lanes on AVX2: a VPCMPGTQ mask and a blend; unsigned lanes are
// compared with their sign bits flipped.
func (n *nativeGen) minMax64(op kernelshape.NativeOp, acc, x obj.Addr) {
	mk := n.Mark()
	defer n.Release(mk)
	m := n.Tmp()
	a, b := acc, x
	if !n.k.Signed {
		fa, fx := n.Tmp(), n.Tmp()
		n.op(x86.AVPXOR, n.vr(n.sign), acc, n.vr(fa))
		n.op(x86.AVPXOR, n.vr(n.sign), x, n.vr(fx))
		a, b = n.vr(fa), n.vr(fx)
	}
	// m: the lanes where x wins (x > acc for max, acc > x for min).
	if op == kernelshape.NativeMax {
		n.op(x86.AVPCMPGTQ, a, b, n.vr(m))
	} else {
		n.op(x86.AVPCMPGTQ, b, a, n.vr(m))
	}
	n.op(x86.AVBLENDVPD, n.vr(m), x, acc, acc)
}

// mul64 sets acc = acc * x (x a register, kept) in 64-bit integer lanes
// on AVX2, the low 64 bits of the product as VPMULLQ's: with a = ah:al
// and x = xh:xl in 32-bit halves, al*xl + (ah*xl + al*xh)<<32 modulo
// 2^64 (ah*xh is shifted out), each partial product a VPMULUDQ of the
// lanes' low halves.
func (n *nativeGen) mul64(acc, x obj.Addr) {
	mk := n.Mark()
	defer n.Release(mk)
	hi, cross := n.vr(n.Tmp()), n.vr(n.Tmp())
	n.op(x86.AVPSRLQ, imm(32), acc, hi)
	n.op(x86.AVPMULUDQ, x, hi, hi) // ah*xl
	n.op(x86.AVPSRLQ, imm(32), x, cross)
	n.op(x86.AVPMULUDQ, acc, cross, cross) // al*xh
	n.op(x86.AVPADDQ, hi, cross, cross)
	n.op(x86.AVPSLLQ, imm(32), cross, cross)
	n.op(x86.AVPMULUDQ, x, acc, acc) // al*xl
	n.op(x86.AVPADDQ, cross, acc, acc)
}

// finalize turns accumulator r's lanes into results: an f64 mean divided
// by Div, an Lp norm's eps and root, a truth made 0 or 1.
func (n *nativeGen) finalize(r int) {
	switch {
	case n.k.FinalizesF64():
		kernelshape.NativeFinalizeF64(n, n.k, r)
	case n.k.Mean && !n.k.Float:
		n.intMean(r)
	case n.k.Mean:
		mk := n.Mark()
		t := n.Tmp()
		n.pattern(t, math.Float64bits(float64(n.pl.Div)))
		n.op(x86.AVDIVPD, n.vr(t), n.vr(r), n.vr(r))
		n.Release(mk)
	case n.k.Store == kernelshape.StoreTruth && n.k.Op != kernelshape.NativeOdd:
		n.op(x86.AVPMINUB, n.vr(n.ones), n.vr(r), n.vr(r))
	}
}

// intMean turns r's 64-bit integer sums into their mean: converted to
// f64 (rounded once), divided by Div; for an integer dst (StoreTrunc)
// truncated toward zero, the integer left in each lane's low 32 bits.
// The quotient of an exact sum of elements of the src's type lies
// within a rounding or two of the type's range, far below 1, so the
// truncation saturates as the interpreter's does without a clamp. An
// empty reduction (Div 0) is NaN, the interpreter's NaN, and 0 in an
// integer dst.
func (n *nativeGen) intMean(r int) {
	mk := n.Mark()
	defer n.Release(mk)
	if n.pl.Div == 0 {
		if n.k.Store == kernelshape.StoreTrunc {
			n.zero(r)
		} else {
			n.pattern(r, math.Float64bits(math.NaN()))
		}
		return
	}
	v := n.vr(r)
	switch {
	case n.pairs != 0:
		// joinHalves has converted the sum.
	case n.avx512:
		n.op(x86.AVCVTQQ2PD, v, v)
	default:
		// No VCVTQQ2PD: the high half h (signed) and the low half l
		// (unsigned) as f64 from their bit patterns, 2^84+2^63+h*2^32
		// and 2^52+l, less 2^84+2^63+2^52 (exact), added with one
		// rounding.
		lo, c := n.Tmp(), n.Tmp()
		n.pattern(c, 0x4330000000000000)
		n.op(x86.AVPBLENDD, imm(0x55), v, n.vr(c), n.vr(lo))
		n.pattern(c, 0x4530000080000000)
		n.op(x86.AVPSRLQ, imm(32), v, v)
		n.op(x86.AVPXOR, n.vr(c), v, v)
		n.pattern(c, 0x4530000080100000)
		n.op(x86.AVSUBPD, n.vr(c), v, v)
		n.op(x86.AVADDPD, n.vr(lo), v, v)
	}
	d := n.Tmp()
	n.pattern(d, math.Float64bits(float64(n.pl.Div)))
	n.op(x86.AVDIVPD, n.vr(d), v, v)
	if n.k.Store != kernelshape.StoreTrunc {
		return
	}
	switch {
	case n.avx512 && n.k.Bytes == 8 && !n.k.Signed:
		// A mean of u64 data below 2^64 rounds at most to 2^64, whose
		// conversion gives the indefinite all ones: the saturated value.
		n.op(x86.AVCVTTPD2UQQ, v, v)
		return
	case n.avx512 && n.k.Bytes == 8:
		// A mean rounded to 2^63 saturates: the indefinite MinInt64
		// VCVTTPD2QQ gives there, less 1.
		c := n.Tmp()
		n.pattern(c, math.Float64bits(0x1p63))
		n.op(x86.AVCMPPD, imm(0x1D), n.vr(c), v, kreg(6)) // v >= 2^63
		n.op(x86.AVCVTTPD2QQ, v, v)
		n.pattern(c, math.MaxUint64)
		n.op(x86.AVPADDQ, n.vr(c), v, kreg(6), v)
		return
	case n.avx512:
		n.op(x86.AVCVTTPD2QQ, v, v)
		return
	}
	if n.k.Bytes == 8 {
		n.truncWide(r, d)
		return
	}
	// Truncated, then added to 1.5*2^52 (exact): the integer is the low
	// bits of the sum's mantissa.
	n.op(x86.AVROUNDPD, imm(3), v, v)
	n.pattern(d, 0x4338000000000000)
	n.op(x86.AVADDPD, n.vr(d), v, v)
}

// truncWide sets r's f64 lanes, the mean of 64-bit integers, to their
// integers truncated toward zero, saturated as the interpreter's (a mean
// rounded up to 2^63, s64, or 2^64, u64, is the type's largest), on
// AVX2, which has no conversion to 64-bit integers; c is a temporary.
// The truncated t splits exactly into hi = floor(t/2^32) and
// lo = t - hi*2^32, whose integers are the low 32 bits of hi + 1.5*2^52
// and lo + 2^52: hi's shifted up, lo's below them.
func (n *nativeGen) truncWide(r, c int) {
	mk := n.Mark()
	defer n.Release(mk)
	hi, lo := n.Tmp(), n.Tmp()
	v := n.vr(r)
	n.op(x86.AVROUNDPD, imm(3), v, v)
	n.pattern(c, math.Float64bits(0x1p-32))
	n.op(x86.AVMULPD, n.vr(c), v, n.vr(hi))
	n.op(x86.AVROUNDPD, imm(1), n.vr(hi), n.vr(hi))
	n.op(x86.AVMOVAPD, v, n.vr(lo))
	n.pattern(c, math.Float64bits(0x1p32))
	n.op(x86.AVFNMADD231PD, n.vr(c), n.vr(hi), n.vr(lo)) // lo = t - hi*2^32
	n.pattern(c, 0x4338000000000000)
	n.op(x86.AVADDPD, n.vr(c), n.vr(hi), n.vr(hi))
	n.op(x86.AVPSLLQ, imm(32), n.vr(hi), n.vr(hi))
	n.pattern(c, 0x4330000000000000)
	n.op(x86.AVADDPD, n.vr(c), n.vr(lo), n.vr(lo))
	n.op(x86.AVPBLENDD, imm(0x55), n.vr(lo), n.vr(hi), n.vr(hi))
	// The saturated lanes: where v is at least the limit.
	limit, top := 0x1p63, uint64(math.MaxInt64)
	if !n.k.Signed {
		limit, top = 0x1p64, math.MaxUint64
	}
	n.pattern(c, math.Float64bits(limit))
	n.op(x86.AVCMPPD, imm(0x1D), n.vr(c), v, n.vr(lo)) // v >= limit
	n.pattern(c, top)
	n.op(x86.AVBLENDVPD, n.vr(lo), n.vr(c), n.vr(hi), v)
}

// combineAcross sets r to the combine of accumulator 0's lanes, through
// t.
func (n *nativeGen) combineAcross(r, t int) {
	n.op(n.move(), n.vr(0), n.vr(r))
	step := func(shuffle func()) {
		shuffle()
		n.NativeCombine(r, t)
	}
	if n.avx512 {
		step(func() { n.op(x86.AVSHUFI64X2, imm(0x4E), n.vr(r), n.vr(r), n.vr(t)) })
		step(func() { n.op(x86.AVSHUFI64X2, imm(0xB1), n.vr(r), n.vr(r), n.vr(t)) })
	} else {
		step(func() { n.op(x86.AVPERM2I128, imm(0x01), n.vr(r), n.vr(r), n.vr(t)) })
	}
	step(func() { n.op(x86.AVPSHUFD, imm(0x4E), n.vr(r), n.vr(t)) })
	if n.k.LaneBytes() <= 4 {
		step(func() { n.op(x86.AVPSHUFD, imm(0xB1), n.vr(r), n.vr(t)) })
	}
	if n.k.LaneBytes() <= 2 {
		step(func() { n.op(x86.AVPSRLD, imm(16), n.vr(r), n.vr(t)) })
	}
	if n.k.Bytes == 1 {
		step(func() { n.op(x86.AVPSRLW, imm(8), n.vr(r), n.vr(t)) })
	}
}

// joinHalvesAcross sets r to the sum of accumulator pair 0's lanes,
// joined (joinHalves): each half's lanes added across on its own, the
// high half's in h.
func (n *nativeGen) joinHalvesAcross(r, h int) {
	n.op(n.move(), n.vr(0), n.vr(r))
	n.op(n.move(), n.vr(n.pairs), n.vr(h))
	mt := n.Mark()
	t := n.Tmp()
	for _, x := range []int{r, h} {
		if n.avx512 {
			n.op(x86.AVSHUFI64X2, imm(0x4E), n.vr(x), n.vr(x), n.vr(t))
			n.op(x86.AVPADDQ, n.vr(t), n.vr(x), n.vr(x))
			n.op(x86.AVSHUFI64X2, imm(0xB1), n.vr(x), n.vr(x), n.vr(t))
		} else {
			n.op(x86.AVPERM2I128, imm(0x01), n.vr(x), n.vr(x), n.vr(t))
		}
		n.op(x86.AVPADDQ, n.vr(t), n.vr(x), n.vr(x))
		n.op(x86.AVPSHUFD, imm(0x4E), n.vr(x), n.vr(t))
		n.op(x86.AVPADDQ, n.vr(t), n.vr(x), n.vr(x))
	}
	n.Release(mt)
	n.joinHalves(r, h)
}

// joinHalves sets l to the sum of the pair l, h (Halves: the sums of
// the elements' low and high 32-bit halves), as f64 rounded once; h is
// clobbered. The low sums' carries go into the high word H, less
// Div*2^31 for the bias of signed elements, so that the sum is
// H*2^32 + L, H signed and L below 2^32. H rounds to a (one rounding),
// and r = H - a comes exactly from H's high and low 32 bits as f64
// (each exact, their differences with a exact integers); the sum is
// then a*2^32 + (r*2^32 + L), the bracket exact, one rounding in all.
func (n *nativeGen) joinHalves(l, h int) {
	mk := n.Mark()
	defer n.Release(mk)
	c, hl, a, k32 := n.Tmp(), n.Tmp(), n.Tmp(), n.Tmp()
	bw := n.bitwise(x86.AVPAND, x86.AVPANDQ)
	n.op(x86.AVPSRLQ, imm(32), n.vr(l), n.vr(c))
	n.op(x86.AVPADDQ, n.vr(c), n.vr(h), n.vr(h))
	n.op(bw, n.vr(n.low), n.vr(l), n.vr(l))
	if n.k.Signed {
		n.pattern(c, uint64(n.pl.Div)<<31)
		n.op(x86.AVPSUBQ, n.vr(c), n.vr(h), n.vr(h))
	}
	n.pattern(k32, math.Float64bits(0x1p32))
	if n.avx512 {
		n.op(x86.AVPSRAQ, imm(32), n.vr(h), n.vr(c))
		n.op(x86.AVCVTQQ2PD, n.vr(c), n.vr(c))
		n.op(x86.AVMULPD, n.vr(k32), n.vr(c), n.vr(c))
		n.op(bw, n.vr(n.low), n.vr(h), n.vr(hl))
		n.op(x86.AVCVTQQ2PD, n.vr(hl), n.vr(hl))
		n.op(x86.AVCVTQQ2PD, n.vr(l), n.vr(l))
	} else {
		// From bit patterns, as intMean's conversion: the high 32 bits
		// (signed) as 2^84+2^63+hi*2^32, the low as 2^52+lo, each less
		// its offset (exact).
		n.op(x86.AVPSRLQ, imm(32), n.vr(h), n.vr(c))
		n.pattern(a, 0x4530000080000000)
		n.op(x86.AVPXOR, n.vr(a), n.vr(c), n.vr(c))
		n.op(x86.AVSUBPD, n.vr(a), n.vr(c), n.vr(c))
		n.pattern(a, 0x4330000000000000)
		n.op(x86.AVPBLENDD, imm(0x55), n.vr(h), n.vr(a), n.vr(hl))
		n.op(x86.AVSUBPD, n.vr(a), n.vr(hl), n.vr(hl))
		n.op(x86.AVPBLENDD, imm(0x55), n.vr(l), n.vr(a), n.vr(l))
		n.op(x86.AVSUBPD, n.vr(a), n.vr(l), n.vr(l))
	}
	n.op(x86.AVADDPD, n.vr(hl), n.vr(c), n.vr(a)) // a = round(H)
	n.op(x86.AVSUBPD, n.vr(a), n.vr(c), n.vr(c))  // hh - a, exact
	n.op(x86.AVADDPD, n.vr(hl), n.vr(c), n.vr(c)) // r = H - a, exact
	n.op(x86.AVFMADD231PD, n.vr(k32), n.vr(c), n.vr(l))
	n.op(x86.AVFMADD231PD, n.vr(k32), n.vr(a), n.vr(l))
}

// NativeStoreColumn finalizes accumulator u and stores its V lanes,
// through the f64 epilogue where there are post-ops.
func (n *nativeGen) NativeStoreColumn(u int, lm kernelshape.LaneMap) {
	mk := n.Mark()
	defer n.Release(mk)
	t := n.Tmp()
	n.op(n.move(), n.vr(u), n.vr(t))
	if n.pairs != 0 {
		h := n.Tmp()
		n.op(n.move(), n.vr(u+n.pairs), n.vr(h))
		n.joinHalves(t, h)
	}
	if n.k.PostOps {
		n.epilogue(t, lm)
		return
	}
	off := lm.DstOff
	n.finalize(t)
	n.flagNegZero(t)
	addr := n.m(rDst, off)
	if n.k.Store == kernelshape.StoreTrunc {
		n.storeTrunc(t, addr)
		return
	}
	if n.k.Store == kernelshape.StoreF32 {
		n.storeF32s(t, t, addr)
		return
	}
	n.op(n.move(), n.vr(t), addr)
}

// storeF32s stores the V f64 lanes of src at addr as f32, rounded to
// nearest even, through the low half of t (which may be src).
func (n *nativeGen) storeF32s(src, t int, addr obj.Addr) {
	if n.avx512 {
		n.op(x86.AVCVTPD2PS, n.vr(src), n.hr(t))
		n.op(x86.AVMOVUPS, n.hr(t), addr)
		return
	}
	n.op(x86.AVCVTPD2PSY, n.vr(src), n.xr(t))
	n.op(x86.AVMOVUPS, n.xr(t), addr)
}

// storeTrunc stores the V integers in the low halves of t's 64-bit
// lanes (intMean's) as V elements of the src's type at addr.
func (n *nativeGen) storeTrunc(t int, addr obj.Addr) {
	if n.k.Bytes == 8 {
		n.op(n.move(), n.vr(t), addr)
		return
	}
	if n.avx512 {
		if n.k.Bytes == 4 {
			n.op(x86.AVPMOVQD, n.vr(t), n.hr(t))
			n.op(x86.AVMOVDQU64, n.hr(t), addr)
			return
		}
		n.op(x86.AVPMOVQW, n.vr(t), n.xr(t))
		n.op(x86.AVMOVDQU64, n.xr(t), addr)
		return
	}
	// The low dwords of the four lanes into the low 128 bits.
	n.op(x86.AVPSHUFD, imm(0x88), n.vr(t), n.vr(t))
	n.op(x86.AVPERMQ, imm(0x08), n.vr(t), n.vr(t))
	if n.k.Bytes == 4 {
		n.op(x86.AVMOVDQU, n.xr(t), addr)
		return
	}
	// In range: the saturating pack keeps each value.
	pack := x86.AVPACKUSDW
	if n.k.Signed {
		pack = x86.AVPACKSSDW
	}
	n.op(pack, n.xr(t), n.xr(t), n.xr(t))
	n.op(x86.AVMOVQ, n.xr(t), addr)
}

// NativeStoreFirst combines accumulator 0's lanes (a butterfly of swaps
// at half the width, ..., one lane, which leaves the result in every
// lane), finalizes it and stores it, through the f64 epilogue where
// there are post-ops.
func (n *nativeGen) NativeStoreFirst() {
	mk := n.Mark()
	defer n.Release(mk)
	r, t := n.Tmp(), n.Tmp()
	if n.pairs != 0 {
		n.joinHalvesAcross(r, t)
	} else {
		n.combineAcross(r, t)
	}
	if n.k.PostOps {
		n.epilogue(r, kernelshape.LaneMap{N: kernelshape.Bcast})
		return
	}
	n.finalize(r)
	n.flagNegZero(r)
	addr := n.m(rDst, 0)
	switch {
	case n.k.Store == kernelshape.StoreF32:
		n.op(x86.AVCVTSD2SS, n.xr(r), n.xr(r), n.xr(r))
		n.op(x86.AVMOVSS, n.xr(r), addr)
	case n.pl.DstDT.Size() == 8:
		n.op(x86.AVMOVQ, n.xr(r), addr)
	case n.pl.DstDT.Size() == 4:
		n.op(x86.AVMOVD, n.xr(r), addr)
	default:
		n.op(x86.AVMOVD, n.xr(r), reg(rScratch))
		if n.pl.DstDT.Size() == 2 {
			n.op(x86.AMOVW, reg(rScratch), addr)
		} else {
			n.op(x86.AMOVB, reg(rScratch), addr)
		}
	}
}

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

// Index reductions (kernelshape.Arg): the primitives of an ArgEmitter
// over the reduction generator's loops, pointers, loads and max/min.
// Accumulator u is the values in vector register u and the indices in
// register argIdx+u; cur is a temporary held for the whole kernel.
//
// An integer src of up to 32 bits (s16, u16, s32, u32) is compared in
// s32 lanes: widened exactly, |x| taken with VPABSD, and u32 (or the
// magnitude of an s32, which reaches 2^31) with the sign bit flipped,
// which maps unsigned order onto signed order. VPCMPGTD (AVX2) or VPCMPD
// (AVX-512) then decide, with no NaN to watch for.
//
// f64, s64 and u64 are compared in 64-bit lanes (argWidth says which
// instructions), V/2 of them a vector, the same way: u64 and the
// magnitude of an s64 with the sign bit flipped; AVX2's |x| of an s64,
// which has no VPABSQ, is (x XOR s) - s with s the lanes' signs
// (VPCMPGTQ). The indices stay s32, each lane's held twice (in both
// halves of the lane): a blend under the lane's mask (VMOVDQA64 under an
// opmask; VBLENDVPS under an all-ones lane) moves both, and the index
// arithmetic and combines of s32 lanes serve both widths.

// argGen is the generator of one index reduction kernel.
type argGen struct {
	*gen
	apl       *plan.ArgPlan
	min       bool
	last      bool
	cur       int
	abs       bool // compare |x| (pl.Abs)
	ints      bool // compare in signed integer lanes (an integer src)
	w         *argWidth
	bias      int    // the register of the sign bits flipped into unsigned lanes (0: none)
	bound     int    // the register of a row's bound (kernelshape.ArgBlockSkipper; 0: none)
	unchecked int16  // the general register counting a row's unchecked blocks down
	accs      [2]int // accumulators of the row and the column shapes
	idxBase   int    // register of accumulator 0's indices
	scr       int16  // the scratch pointer of a row-by-row column (0: none)
	minMaxOp  ops.Kind
	update    kernelshape.ArgUpdateKind
	// The NaN witnesses of a src that can hold NaN. On AVX-512: vectors
	// that sum the loads (wit), or, in a row-by-row column and in rows,
	// opmasks (kwit) that keep the lanes where every load so far was
	// ordered, so that one compare folds two loaded vectors
	// (ArgUpdatePair, a row's skipped block) and infinities never look
	// like a NaN; the columns held in registers keep the sums, where the
	// compares would crowd the updates' own. On AVX2 (maskWit): vectors
	// that OR in the lanes an unordered compare finds, one compare for each pair of loaded
	// vectors (ArgUpdatePair). An OR's chain is a third of an add's, and
	// AVX2's compares and adds share the vector pipes that the blends
	// leave (Zen), where a compare per pair is half an add per vector.
	wit     []int
	kwit    []obj.Addr
	maskWit bool
	next    int // the witness the next fold takes
	// rowCur[r] holds cur+r for a row-by-row column's group of rows
	// (ArgHoldRowCurs); useRow is the one updates take (0: cur).
	rowCur [kernelshape.ArgRowsGroup]int
	useRow int
}

// argWidth is the instructions of the lane width an index kernel
// compares in.
type argWidth struct {
	wide             bool   // 64-bit lanes
	cmpF, movF, addF obj.As // float compare, masked move (AVX-512) and add
	cmpI, gtI, eqI   obj.As // VPCMPx (AVX-512), VPCMPGTx, VPCMPEQx
	movI             obj.As // a masked move of integer lanes (AVX-512)
	maxI, minI       obj.As // signed max and min (64-bit: AVX-512 only)
	kxnor, kortest   obj.As // set and test an opmask of V lanes
}

var (
	argWidth32 = argWidth{cmpF: x86.AVCMPPS, movF: x86.AVMOVAPS, addF: x86.AVADDPS,
		cmpI: x86.AVPCMPD, gtI: x86.AVPCMPGTD, eqI: x86.AVPCMPEQD, movI: x86.AVMOVDQA32,
		maxI: x86.AVPMAXSD, minI: x86.AVPMINSD, kxnor: x86.AKXNORW, kortest: x86.AKORTESTW}
	argWidth64 = argWidth{wide: true, cmpF: x86.AVCMPPD, movF: x86.AVMOVAPD, addF: x86.AVADDPD,
		cmpI: x86.AVPCMPQ, gtI: x86.AVPCMPGTQ, eqI: x86.AVPCMPEQQ, movI: x86.AVMOVDQA64,
		maxI: x86.AVPMAXSQ, minI: x86.AVPMINSQ, kxnor: x86.AKXNORB, kortest: x86.AKORTESTB}
)

// argWitnesses is how many NaN witnesses a float src's kernel folds its
// loads into, in turn (AVX2: two vectors, one in a row-by-row column and
// in rows): each chain of adds or masked compares is then a fraction of a
// row's or a block's loads long.
const argWitnesses = 4

// argWitnessK is the first opmask register of AVX-512's witnesses; the
// updates use k6 and k7.
const argWitnessK = 2

// VPCMPD predicates.
const (
	vpcmpEQ  = 0
	vpcmpLT  = 1
	vpcmpLE  = 2
	vpcmpNLT = 5 // >=
	vpcmpNLE = 6 // >
)

// VCMPPS predicates.
const (
	cmpEQ    = 0x00 // equal, ordered
	cmpLTOrd = 0x01 // <, ordered
	cmpLE    = 0x02 // <=, ordered
	cmpUnord = 0x03 // either NaN
	cmpNLE   = 0x06 // not <=: >, or either NaN
	cmpOrd   = 0x07 // neither NaN
	cmpNGE   = 0x09 // not >=: <, or either NaN
	cmpGE    = 0x0D // >=, ordered
	cmpGTOrd = 0x0E // >, ordered
)

// EmitArg returns x86-64 machine code for the index reduction pl: AVX-512
// or AVX2 (avx512 false), following the kernel ABI of plan.Args.
func EmitArg(pl *plan.ArgPlan, avx512 bool) ([]byte, error) {
	if pl == nil {
		return nil, status.Errorf(status.InvalidArguments, "amd64: nil plan")
	}
	if !kernelshape.ArgJITTypes(pl) {
		return nil, status.Errorf(status.Unimplemented, "amd64: no index reduction kernel of %v to %v", pl.SrcDT, pl.IdxDT)
	}
	if len(pl.Outer)+1 > maxDepth {
		return nil, status.Errorf(status.Unimplemented, "amd64: index reduction with %d kept loops", len(pl.Outer)+1)
	}
	kind := ops.Maximum
	if pl.Min {
		kind = ops.Minimum
	}
	like := kernelshape.ArgGenPlan(pl)
	o := Options{AVX512: avx512}
	g := newGenConf(newAsm(), like, Choose(like, kernelconf.Hints{}, o.Target()))
	g.SrcDT, g.SrcSize = pl.SrcDT, int64(pl.SrcDT.Size())
	g.DstDT, g.DstSize = pl.IdxDT, int64(pl.IdxDT.Size())
	a := &argGen{gen: g, apl: pl, min: pl.Min, last: pl.Last, abs: pl.Abs, ints: kernelshape.ArgIntLanes(pl.SrcDT),
		w: &argWidth32, minMaxOp: kind}
	if kernelshape.ArgLaneBytes(pl.SrcDT) == 8 {
		a.w = &argWidth64
	}
	column := kernelshape.ArgShapeOf(pl, a.Lanes()) == kernelshape.ArgColumn
	switch {
	case avx512 && column:
		// A column takes 768 bytes of each row per visit: twelve
		// accumulators (indices in z12..z23), temporaries from z24. A
		// row-by-row column takes fewer (ArgRowsVecs) and holds its
		// group's row indices in the values' registers it leaves.
		a.accs, a.idxBase = [2]int{8, 12}, 12
		g.tmpLo, g.tmpNext = 24, 24
		if kernelshape.ArgRowsVecs <= a.idxBase-kernelshape.ArgRowsGroup {
			for r := 1; r < kernelshape.ArgRowsGroup; r++ {
				a.rowCur[r] = a.idxBase - kernelshape.ArgRowsGroup + r
			}
		}
	case avx512:
		a.accs, a.idxBase = [2]int{8, 8}, 8
	case column && kernelshape.ArgRowByRow(pl):
		// A row-by-row column takes four accumulators (indices in
		// y4..y7), holds its group's row indices cur+1 .. cur+3 in
		// y8..y10, where each run of a group would otherwise broadcast
		// and add cur's steps between the rows (one of every nine of
		// its instructions), and leaves five temporaries: cur, one NaN
		// witness, and the pair's or the exact update's three.
		a.accs, a.idxBase = [2]int{4, 4}, 4
		next := 2 * a.accs[1]
		for r := 1; r < kernelshape.ArgRowsGroup; r++ {
			a.rowCur[r] = next
			next++
		}
		g.tmpLo, g.tmpNext, g.tmpHi = next, next, 16
	case column:
		// A column takes more of each row per visit: five accumulators
		// (indices in y5..y9) and the six temporaries above them (cur,
		// two NaN witnesses and the exact update's three), where a row's
		// combine would need more. No arg kernel holds tail masks.
		a.accs, a.idxBase = [2]int{4, 5}, 5
		g.tmpLo, g.tmpNext, g.tmpHi = 10, 10, 16
	default:
		a.accs, a.idxBase = [2]int{4, 4}, 4
		g.tmpHi = 16
	}
	if kernelshape.ArgRowByRow(pl) {
		a.scr = g.Counter()
		g.ptrs = kernelshape.NewPointers(rSrc, rDst, []int16{a.scr})
	}
	a.cur = g.Tmp()
	if kernelshape.ArgUnsigned(pl) {
		a.bias = g.Tmp()
	}
	if kernelshape.ArgShapeOf(pl, a.Lanes()) == kernelshape.ArgRow {
		a.bound, a.unchecked = g.Tmp(), g.Counter()
	}
	switch {
	case kernelshape.ArgNaNs(pl.SrcDT) && avx512 && (a.scr != 0 || a.bound != 0):
		for i := range argWitnesses {
			a.kwit = append(a.kwit, kreg(argWitnessK+i))
		}
		g.kLast = argWitnessK - 1 // no hoisted mask may take a witness
	case kernelshape.ArgNaNs(pl.SrcDT):
		nw := argWitnesses
		if !avx512 {
			nw, a.maskWit = 2, true
			if a.rowCur[1] != 0 || a.bound != 0 {
				nw = 1
			}
		}
		for range nw {
			a.wit = append(a.wit, g.Tmp())
		}
	}
	kernelshape.Arg(pl, a, g.SrcSize)
	return kernelshape.Assemble(g)
}

// Lanes is V in the compared lanes: half the f32 lanes in 64-bit lanes.
func (a *argGen) Lanes() int {
	if a.w.wide {
		return a.V / 2
	}
	return a.V
}

// ArgSetUpdate sets the update ArgUpdate emits.
func (a *argGen) ArgSetUpdate(k kernelshape.ArgUpdateKind) { a.update = k }

// ArgClearWitness zeroes the vector witnesses, or sets every lane of the
// opmask witnesses (nothing unordered seen).
func (a *argGen) ArgClearWitness() {
	for _, w := range a.wit {
		a.zero(w)
	}
	for _, k := range a.kwit {
		a.op(a.w.kxnor, k, k, k)
	}
}

// ArgSkipUnlessNaN jumps to l unless a witness saw a NaN: it ANDs the
// opmask witnesses and jumps when every lane is still set, ORs the mask
// witnesses and jumps when no bit is set, or sums the vector witnesses
// (a NaN stays NaN) and jumps unless a lane of the sum is unordered.
func (a *argGen) ArgSkipUnlessNaN(l kernelshape.Label) {
	if len(a.kwit) > 0 {
		k := a.kwit[0]
		for _, o := range a.kwit[1:] {
			a.op(x86.AKANDW, o, k, k)
		}
		a.op(a.w.kortest, k, k)
		a.Jump(x86.AJCS, l) // CF: every lane set
		return
	}
	w := a.wit[0]
	if a.maskWit {
		for _, o := range a.wit[1:] {
			a.op(x86.AVORPS, a.vr(o), a.vr(w), a.vr(w))
		}
		a.op(x86.AVPTEST, a.vr(w), a.vr(w))
		a.Jump(x86.AJEQ, l)
		return
	}
	for _, o := range a.wit[1:] {
		a.op(a.w.addF, a.vr(o), a.vr(w), a.vr(w))
	}
	if a.avx512 {
		k := kreg(6)
		a.op(a.w.cmpF, imm(cmpUnord), a.vr(w), a.vr(w), k)
		a.op(x86.AKORTESTW, k, k)
	} else {
		a.op(a.w.cmpF, imm(cmpUnord), a.vr(w), a.vr(w), a.vr(w))
		a.op(x86.AVPTEST, a.vr(w), a.vr(w))
	}
	a.Jump(x86.AJEQ, l)
}

// ArgAccs is the accumulators of the row and the column shapes (a.accs).
func (a *argGen) ArgAccs(column bool) int {
	if column {
		return a.accs[1]
	}
	return a.accs[0]
}

func (a *argGen) idx(u int) int { return a.idxBase + u }

// Prologue sets up the scratch pointer of a row-by-row column (the
// IndexArgs scratch rounded up to 64 bytes, so that no vector straddles
// two lines) before the argument block's pointer is replaced by dst.
func (a *argGen) Prologue(cnt int16) {
	if a.scr != 0 {
		a.op(x86.ALEAQ, mem(rDI, plan.ArgIndexScratch+63), reg(a.scr))
		a.op(x86.AANDQ, imm(-64), reg(a.scr))
	}
	a.gen.Prologue(cnt)
	switch {
	case a.bias != 0 && a.w.wide:
		a.pattern(a.bias, 1<<63)
	case a.bias != 0:
		a.constant(a.bias, 1<<31)
	}
}

// scratchIdx is how far the scratch's indices are past its values.
const scratchIdx = plan.IndexScratchOutputs * 4

// ArgLoadScratch loads u's values and indices from the scratch.
func (a *argGen) ArgLoadScratch(u int, off int64) {
	a.load(dtypes.F32, u, a.m(a.scr, off), a.V)
	a.load(dtypes.F32, a.idx(u), a.m(a.scr, off+scratchIdx), a.V)
}

// ArgStoreScratch stores u's values and indices to the scratch.
func (a *argGen) ArgStoreScratch(u int, off int64) {
	a.store(dtypes.F32, u, a.m(a.scr, off), a.V)
	a.store(dtypes.F32, a.idx(u), a.m(a.scr, off+scratchIdx), a.V)
}

// ArgInit sets accumulator u to (identity, 0).
func (a *argGen) ArgInit(u int) {
	switch {
	case a.ints && a.w.wide:
		a.pattern(u, kernelshape.ArgIntIdentity(a.min, 8))
	case a.ints:
		a.constant(u, uint32(kernelshape.ArgIntIdentity(a.min, 4)))
	case a.w.wide && a.min:
		a.constF64(u, math.Inf(1))
	case a.w.wide:
		a.constF64(u, math.Inf(-1))
	case a.min:
		a.constF32(u, float32(math.Inf(1)))
	default:
		a.constF32(u, float32(math.Inf(-1)))
	}
	a.zero(a.idx(u))
}

// ArgSetCur sets cur to v in every lane.
func (a *argGen) ArgSetCur(v int64) { a.constant(a.cur, uint32(v)) }

// ArgAddCur adds v to every lane of cur.
func (a *argGen) ArgAddCur(v int64) {
	mk := a.Mark()
	t := a.Tmp()
	a.constant(t, uint32(v))
	a.op(x86.AVPADDD, a.vr(t), a.vr(a.cur), a.vr(a.cur))
	a.Release(mk)
}

// loadX loads n elements off bytes past src into x, as compared (|x|
// with pl.Abs).
func (a *argGen) loadX(x int, off int64, n int) {
	switch {
	case a.w.wide:
		a.load64(x, a.m(rSrc, off), n)
		return
	case a.ints:
		a.loadS32(x, a.m(rSrc, off), n)
		return
	}
	a.load(a.SrcDT, x, a.m(rSrc, off), n)
	if a.abs {
		// |x|: the sign bit shifted out (no register for a mask).
		xv := a.vr(x)
		a.op(x86.AVPSLLD, imm(1), xv, xv)
		a.op(x86.AVPSRLD, imm(1), xv, xv)
	}
}

// loadS32 loads n integer elements (V, or bcast) at addr into x as
// s32 lanes in the order compared.
func (a *argGen) loadS32(x int, addr obj.Addr, n int) {
	xv := a.vr(x)
	wide := a.SrcDT.Size() == 4
	switch {
	case n == bcast && wide:
		a.op(x86.AVPBROADCASTD, addr, xv)
	case n == bcast:
		// Each dword gets the word twice: shifting the copy out of the
		// high half and back extends the one in the low half.
		a.op(x86.AVPBROADCASTW, addr, xv)
		a.op(x86.AVPSLLD, imm(16), xv, xv)
		if a.SrcDT == dtypes.S16 {
			a.op(x86.AVPSRAD, imm(16), xv, xv)
		} else {
			a.op(x86.AVPSRLD, imm(16), xv, xv)
		}
	case n != a.Lanes():
		a.Fail(status.Errorf(status.RuntimeError, "amd64: index load of %d lanes", n))
	case wide:
		a.op(x86.AVMOVUPS, addr, xv)
	case a.SrcDT == dtypes.S16:
		a.op(x86.AVPMOVSXWD, addr, xv)
	default:
		a.op(x86.AVPMOVZXWD, addr, xv)
	}
	if a.abs && a.SrcDT.IsSigned() {
		a.op(x86.AVPABSD, xv, xv)
	}
	if a.bias != 0 {
		a.op(a.pxor(), a.vr(a.bias), xv, xv)
	}
}

// load64 loads n elements (V/2, or bcast) of 64 bits at addr into x, as
// compared.
func (a *argGen) load64(x int, addr obj.Addr, n int) {
	xv := a.vr(x)
	switch n {
	case bcast:
		a.op(x86.AVPBROADCASTQ, addr, xv)
	case a.Lanes():
		a.op(x86.AVMOVUPS, addr, xv)
	default:
		a.Fail(status.Errorf(status.RuntimeError, "amd64: index load of %d lanes", n))
	}
	switch {
	case !a.abs:
	case a.SrcDT == dtypes.F64:
		a.op(x86.AVPSLLQ, imm(1), xv, xv)
		a.op(x86.AVPSRLQ, imm(1), xv, xv)
	case a.SrcDT == dtypes.U64:
	case a.avx512:
		a.op(x86.AVPABSQ, xv, xv)
	default:
		// (x XOR s) - s, s all-ones where x < 0.
		mk := a.Mark()
		s := a.vr(a.Tmp())
		a.op(x86.AVPXOR, s, s, s)
		a.op(x86.AVPCMPGTQ, xv, s, s)
		a.op(x86.AVPXOR, s, xv, xv)
		a.op(x86.AVPSUBQ, s, xv, xv)
		a.Release(mk)
	}
	if a.bias != 0 {
		a.op(a.pxor(), a.vr(a.bias), xv, xv)
	}
}

// ArgHoldRowCurs sets the held row indices to cur+1 .. cur+k-1 where
// registers were left for them (row-by-row columns).
func (a *argGen) ArgHoldRowCurs(k int) bool {
	if a.scr == 0 || a.rowCur[1] == 0 || k > len(a.rowCur) {
		return false
	}
	for r := 1; r < k; r++ {
		a.constant(a.rowCur[r], uint32(r))
		a.op(x86.AVPADDD, a.vr(a.cur), a.vr(a.rowCur[r]), a.vr(a.rowCur[r]))
	}
	return true
}

// ArgUseRowCur makes updates take cur+r (held for r > 0).
func (a *argGen) ArgUseRowCur(r int) { a.useRow = r }

// index is the register of the index updates take: cur, or a held row's.
func (a *argGen) index() int {
	if a.useRow > 0 {
		return a.rowCur[a.useRow]
	}
	return a.cur
}

// witness returns the opmask witness the next fold takes: each in turn,
// so that no chain of masked compares holds the updates.
func (a *argGen) witness() obj.Addr {
	k := a.kwit[a.next%len(a.kwit)]
	a.next++
	return k
}

// ArgUpdatePair is ArgUpdate(u, off, V) then ArgUpdate(w, off2, V);
// watched with opmask or mask witnesses, one compare folds both loads
// into one.
func (a *argGen) ArgUpdatePair(u int, off int64, w int, off2 int64) {
	if (len(a.kwit) == 0 && !a.maskWit) || a.update != kernelshape.ArgWatched {
		a.ArgUpdate(u, off, a.Lanes())
		a.ArgUpdate(w, off2, a.Lanes())
		return
	}
	mk := a.Mark()
	x, y := a.Tmp(), a.Tmp()
	a.loadX(x, off, a.Lanes())
	a.loadX(y, off2, a.Lanes())
	if a.maskWit {
		a.foldUnordered(y, x)
	} else {
		k := a.witness()
		a.op(a.w.cmpF, imm(cmpOrd), a.vr(y), a.vr(x), k, k)
	}
	a.takeOrdered(u, x)
	a.takeOrdered(w, y)
	a.Release(mk)
}

// foldUnordered ORs the lanes where x or y is NaN into the next mask
// witness.
func (a *argGen) foldUnordered(x, y int) {
	mk := a.Mark()
	m := a.Tmp()
	w := a.vr(a.wit[a.next%len(a.wit)])
	a.next++
	a.op(a.w.cmpF, imm(cmpUnord), a.vr(y), a.vr(x), a.vr(m))
	a.op(x86.AVORPS, a.vr(m), w, w)
	a.Release(mk)
}

// ArgUpdate loads n elements and takes the winning lanes into u.
func (a *argGen) ArgUpdate(u int, off int64, n int) {
	mk := a.Mark()
	x := a.Tmp()
	a.loadX(x, off, n)
	xv, bv := a.vr(x), a.vr(u)
	first, last := int64(cmpNLE), int64(cmpGE)
	if a.min {
		first, last = cmpNGE, cmpLE
	}
	if a.update != kernelshape.ArgExact || a.ints {
		a.updateOrdered(u, x)
		a.Release(mk)
		return
	}
	if a.avx512 {
		k1, k2 := kreg(6), kreg(7)
		if a.last {
			// x wins if it is >= best, or NaN.
			a.op(a.w.cmpF, imm(last), bv, xv, k1)
			a.op(a.w.cmpF, imm(cmpUnord), xv, xv, k2)
			a.op(x86.AKORW, k2, k1, k1)
		} else {
			// x wins if best is not NaN and x is not <= best (x is
			// larger, or NaN).
			a.op(a.w.cmpF, imm(cmpOrd), bv, bv, k1)
			a.op(a.w.cmpF, imm(first), bv, xv, k1, k1)
		}
		a.op(a.w.movF, xv, k1, bv)
		a.op(a.w.movI, a.vr(a.index()), k1, a.vr(a.idx(u)))
		a.Release(mk)
		return
	}
	m, t := a.Tmp(), a.Tmp()
	if a.last {
		a.op(a.w.cmpF, imm(last), bv, xv, a.vr(m))
		a.op(a.w.cmpF, imm(cmpUnord), xv, xv, a.vr(t))
		a.op(x86.AVORPS, a.vr(t), a.vr(m), a.vr(m))
	} else {
		a.op(a.w.cmpF, imm(cmpOrd), bv, bv, a.vr(m))
		a.op(a.w.cmpF, imm(first), bv, xv, a.vr(t))
		a.op(x86.AVANDPS, a.vr(t), a.vr(m), a.vr(m))
	}
	a.op(x86.AVBLENDVPS, a.vr(m), xv, bv, bv)
	a.op(x86.AVBLENDVPS, a.vr(m), a.vr(a.index()), a.vr(a.idx(u)), a.vr(a.idx(u)))
	a.Release(mk)
}

// updateOrdered takes the lanes of x that win into u by one ordered
// compare, and folds x into a witness when watched.
func (a *argGen) updateOrdered(u, x int) {
	a.foldWitness(u, x, x)
	a.takeOrdered(u, x)
}

// takeOrdered takes the lanes of x that win into u by one ordered
// compare (x > best, >= with select_last_index; < and <= for ArgMin),
// exact when no element is NaN.
func (a *argGen) takeOrdered(u, x int) {
	if a.ints {
		a.takeInt(u, x)
		return
	}
	pred := a.pred(cmpGTOrd, cmpGE, cmpLTOrd, cmpLE)
	xv, bv := a.vr(x), a.vr(u)
	if a.avx512 {
		k := kreg(6)
		a.op(a.w.cmpF, imm(pred), bv, xv, k)
		a.op(a.w.movF, xv, k, bv)
		a.op(a.w.movI, a.vr(a.index()), k, a.vr(a.idx(u)))
		return
	}
	mk := a.Mark()
	m := a.Tmp()
	a.op(a.w.cmpF, imm(pred), bv, xv, a.vr(m))
	a.op(x86.AVBLENDVPS, a.vr(m), xv, bv, bv)
	a.op(x86.AVBLENDVPS, a.vr(m), a.vr(a.index()), a.vr(a.idx(u)), a.vr(a.idx(u)))
	a.Release(mk)
}

// pred is the compare predicate of the kernel's rule: x > best (gt),
// x >= best (ge) with select_last_index, and x < best (lt), x <= best
// (le) for ArgMin.
func (a *argGen) pred(gt, ge, lt, le int64) int64 {
	switch {
	case a.min && a.last:
		return le
	case a.min:
		return lt
	case a.last:
		return ge
	}
	return gt
}

// takeInt is takeOrdered in signed integer lanes: VPCMPD (VPCMPQ) into
// an opmask, or VPCMPGTD (VPCMPGTQ), whose one predicate decides x >
// best (or best > x) and the blend takes x where it holds or, for the
// predicates that include equality, where it does not.
func (a *argGen) takeInt(u, x int) {
	xv, bv, iv := a.vr(x), a.vr(u), a.vr(a.idx(u))
	if a.avx512 {
		pred := a.pred(vpcmpNLE, vpcmpNLT, vpcmpLT, vpcmpLE)
		k := kreg(6)
		a.op(a.w.cmpI, imm(pred), bv, xv, k)
		a.op(a.w.movI, xv, k, bv)
		a.op(a.w.movI, a.vr(a.index()), k, iv)
		return
	}
	mk := a.Mark()
	m := a.vr(a.Tmp())
	// greater: m = x > best; otherwise m = best > x.
	greater := a.min == a.last
	if greater {
		a.op(a.w.gtI, bv, xv, m)
	} else {
		a.op(a.w.gtI, xv, bv, m)
	}
	if a.last {
		// x >= best is not best > x; x <= best is not x > best.
		a.op(x86.AVBLENDVPS, m, bv, xv, bv)
		a.op(x86.AVBLENDVPS, m, iv, a.vr(a.index()), iv)
	} else {
		a.op(x86.AVBLENDVPS, m, xv, bv, bv)
		a.op(x86.AVBLENDVPS, m, a.vr(a.index()), iv, iv)
	}
	a.Release(mk)
}

// ArgStoreColumn stores u's V indices at off bytes past dst.
func (a *argGen) ArgStoreColumn(u int, off int64) {
	r := a.idx(u)
	if a.w.wide {
		a.storeIndexPairs(r, off)
		return
	}
	if a.DstDT == dtypes.S32 {
		if a.avx512 {
			a.op(x86.AVMOVDQU32, a.vr(r), a.m(rDst, off))
		} else {
			a.op(x86.AVMOVDQU, a.vr(r), a.m(rDst, off))
		}
		return
	}
	// s64: the indices are below 2^31, so zero-extension is exact.
	mk := a.Mark()
	t, h := a.Tmp(), a.Tmp()
	half := int64(a.V / 2 * 8)
	a.op(x86.AVPMOVZXDQ, a.hr(r), a.vr(t))
	if a.avx512 {
		a.op(x86.AVEXTRACTI32X8, imm(1), a.vr(r), a.hr(h))
		a.op(x86.AVMOVDQU64, a.vr(t), a.m(rDst, off))
		a.op(x86.AVPMOVZXDQ, a.hr(h), a.vr(t))
		a.op(x86.AVMOVDQU64, a.vr(t), a.m(rDst, off+half))
	} else {
		a.op(x86.AVEXTRACTI128, imm(1), a.vr(r), a.hr(h))
		a.op(x86.AVMOVDQU, a.vr(t), a.m(rDst, off))
		a.op(x86.AVPMOVZXDQ, a.hr(h), a.vr(t))
		a.op(x86.AVMOVDQU, a.vr(t), a.m(rDst, off+half))
	}
	a.Release(mk)
}

// storeIndexPairs stores the V/2 indices of r, each held twice in a
// 64-bit lane, at off bytes past dst: the lanes shifted right 32 (the
// index zero-extended) for s64, the lanes' low halves for s32.
func (a *argGen) storeIndexPairs(r int, off int64) {
	mk := a.Mark()
	tr := a.Tmp()
	t := a.vr(tr)
	switch {
	case a.DstDT == dtypes.S64:
		a.op(x86.AVPSRLQ, imm(32), a.vr(r), t)
		a.op(x86.AVMOVUPS, t, a.m(rDst, off))
	case a.avx512:
		a.op(x86.AVPMOVQD, a.vr(r), a.m(rDst, off))
	default:
		// Dwords 0 and 2 of each 128-bit half into its low qword, then
		// the halves' low qwords together.
		a.op(x86.AVPSHUFD, imm(0x08), a.vr(r), t)
		a.op(x86.AVPERMQ, imm(0x08), t, t)
		a.op(x86.AVMOVUPS, a.xr(tr), a.m(rDst, off))
	}
	a.Release(mk)
}

// storeLane0 stores lane 0 of r's indices at the dst pointer.
func (a *argGen) storeLane0(r int) {
	if a.DstDT == dtypes.S32 {
		a.op(x86.AVMOVD, a.xr(r), a.m(rDst, 0))
		return
	}
	a.op(x86.AVPMOVZXDQ, a.xr(r), a.xr(r))
	a.op(x86.AVMOVQ, a.xr(r), a.m(rDst, 0))
}

// ArgStoreFirst stores lane 0 of accumulator 0's indices.
func (a *argGen) ArgStoreFirst() { a.storeLane0(a.idx(0)) }

// ArgFinishRow combines accumulators 0..n-1: w, the winning value (the
// NaN-wins max or min of every lane; the signed max or min of integer
// lanes),
// then among the lanes holding w (NaN: any NaN) the smallest (last:
// largest) index, u*V+lane added.
func (a *argGen) ArgFinishRow(n int) {
	mk := a.Mark()
	w, t := a.Tmp(), a.Tmp()
	a.op(x86.AVMOVAPS, a.vr(0), a.vr(w))
	switch {
	case a.w.wide:
		for u := 1; u < n; u++ {
			a.op(x86.AVMOVAPS, a.vr(u), a.vr(t))
			a.keep64(w, t)
		}
		a.hcombine64(w, t)
	case a.ints:
		keep := x86.AVPMAXSD
		if a.min {
			keep = x86.AVPMINSD
		}
		for u := 1; u < n; u++ {
			a.op(keep, a.vr(u), a.vr(w), a.vr(w))
		}
		a.hcombineInt(keep, w, t)
	default:
		for u := 1; u < n; u++ {
			a.op(x86.AVMOVAPS, a.vr(u), a.vr(t))
			a.Binary(a.minMaxOp, w, t)
		}
		a.HCombine(w)
	}
	lane, res := a.Tmp(), a.Tmp()
	a.iota(lane)
	// pick takes the lesser (greater) index of s32 lanes, lanePick that
	// of the compared lanes under an opmask (its pairs of equal s32
	// halves order as their indices do).
	sentinel, pick, lanePick := uint32(math.MaxInt32), x86.AVPMINSD, a.w.minI
	if a.last {
		sentinel, pick, lanePick = math.MaxUint32, x86.AVPMAXSD, a.w.maxI
	}
	a.constant(res, sentinel)
	for u := range n {
		iu := a.idx(u)
		a.op(x86.AVPADDD, a.vr(lane), a.vr(iu), a.vr(iu))
		if u > 0 {
			a.broadcast(t, int64(u*a.Lanes()))
			a.op(x86.AVPADDD, a.vr(t), a.vr(iu), a.vr(iu))
		}
		switch {
		case a.avx512 && a.ints:
			k1 := kreg(6)
			a.op(a.w.cmpI, imm(vpcmpEQ), a.vr(w), a.vr(u), k1)
			a.op(lanePick, a.vr(iu), a.vr(res), k1, a.vr(res))
			continue
		case a.avx512:
			k1, k2 := kreg(6), kreg(7)
			a.op(a.w.cmpF, imm(cmpEQ), a.vr(w), a.vr(u), k1)
			a.op(a.w.cmpF, imm(cmpUnord), a.vr(u), a.vr(u), k2)
			a.op(x86.AKORW, k2, k1, k1)
			a.op(lanePick, a.vr(iu), a.vr(res), k1, a.vr(res))
			continue
		case a.ints:
			a.op(a.w.eqI, a.vr(w), a.vr(u), a.vr(u))
		default:
			a.op(a.w.cmpF, imm(cmpEQ), a.vr(w), a.vr(u), a.vr(t))
			a.op(a.w.cmpF, imm(cmpUnord), a.vr(u), a.vr(u), a.vr(u))
			a.op(x86.AVORPS, a.vr(t), a.vr(u), a.vr(u))
		}
		a.constant(t, sentinel)
		a.op(x86.AVBLENDVPS, a.vr(u), a.vr(iu), a.vr(t), a.vr(t))
		a.op(pick, a.vr(t), a.vr(res), a.vr(res))
	}
	a.hcombineInt(pick, res, t)
	a.storeLane0(res)
	a.Release(mk)
}

// ArgSkips reports whether a row's blocks may be skipped: under the
// one-compare updates.
func (a *argGen) ArgSkips() bool { return a.bound != 0 && a.update != kernelshape.ArgExact }

// ArgInitBound sets the bound to accumulator 0's identity, with no block
// left unchecked.
func (a *argGen) ArgInitBound() {
	a.op(x86.AVMOVAPS, a.vr(0), a.vr(a.bound))
	a.op(x86.AXORL, reg(a.unchecked), reg(a.unchecked))
}

// ArgSkipBlock loads the block's vectors a pair at a time, folds each
// pair into a witness and then into the block's greatest (least) lanes b,
// so that four registers hold the block; it branches past unless a lane
// of b wins against the bound, and otherwise raises the bound to b's
// winner, in every lane.
func (a *argGen) ArgSkipBlock(n int64, off func(i int64) int64, updates, past kernelshape.Label) {
	// The count of unchecked blocks goes below 0 at the first check and
	// on from there; a row has fewer than 2^31 blocks.
	a.op(x86.ADECL, reg(a.unchecked))
	a.Jump(x86.AJGE, updates)
	mk := a.Mark()
	b := a.Tmp()
	a.loadX(b, off(0), a.Lanes())
	// take loads vectors i and, with two, i+1, folds them (fold) and
	// keeps their winner in b.
	take := func(i int64, two bool, fold func(x, y int)) {
		mp := a.Mark()
		x := a.Tmp()
		a.loadX(x, off(i), a.Lanes())
		y := x
		if two {
			y = a.Tmp()
			a.loadX(y, off(i+1), a.Lanes())
		}
		fold(x, y)
		if y != x {
			a.keepLanes(x, y)
		}
		a.keepLanes(b, x)
		a.Release(mp)
	}
	fold := func(x, y int) { a.foldWitness(0, x, y) }
	if n == 1 {
		fold(b, b)
	} else {
		take(1, false, func(x, _ int) { fold(b, x) })
	}
	for i := int64(2); i < n; i += 2 {
		take(i, i+1 < n, fold)
	}
	bv, rv := a.vr(b), a.vr(a.bound)
	switch {
	case a.avx512:
		k := kreg(6)
		if a.ints {
			a.op(a.w.cmpI, imm(a.pred(vpcmpNLE, vpcmpNLT, vpcmpLT, vpcmpLE)), rv, bv, k)
		} else {
			a.op(a.w.cmpF, imm(a.pred(cmpGTOrd, cmpGE, cmpLTOrd, cmpLE)), rv, bv, k)
		}
		a.op(a.w.kortest, k, k)
		a.Jump(x86.AJEQ, past)
	case a.ints:
		// As takeInt: one VPCMPGTx decides, and a lane wins where it
		// holds (first) or where it does not (select_last_index).
		m := a.vr(a.Tmp())
		if a.min == a.last {
			a.op(a.w.gtI, rv, bv, m)
		} else {
			a.op(a.w.gtI, bv, rv, m)
		}
		if a.last {
			a.op(x86.AVMOVMSKPS, m, reg(rScratch))
			a.op(x86.ACMPL, reg(rScratch), imm(0xFF))
		} else {
			a.op(x86.AVPTEST, m, m)
		}
		a.Jump(x86.AJEQ, past)
	default:
		m := a.vr(a.Tmp())
		a.op(a.w.cmpF, imm(a.pred(cmpGTOrd, cmpGE, cmpLTOrd, cmpLE)), rv, bv, m)
		a.op(x86.AVPTEST, m, m)
		a.Jump(x86.AJEQ, past)
	}
	// b's winner in every lane, then the bound's: the chain from one
	// block's bound to the next is one instruction.
	a.butterfly(b, a.Tmp(), int(kernelshape.ArgLaneBytes(a.SrcDT)), a.ints, a.keepLanes)
	a.keepLanes(a.bound, b)
	a.op(x86.AMOVL, imm(kernelshape.ArgSkipRest), reg(a.unchecked))
	a.Release(mk)
}

// foldWitness folds the loaded x and y (x twice, or a pair) into a NaN
// witness under ArgWatched: the next opmask or mask witness, or the sum
// of accumulator u's.
func (a *argGen) foldWitness(u, x, y int) {
	switch {
	case a.update != kernelshape.ArgWatched:
	case len(a.kwit) > 0:
		k := a.witness()
		a.op(a.w.cmpF, imm(cmpOrd), a.vr(y), a.vr(x), k, k)
	case a.maskWit:
		a.foldUnordered(x, y)
	default:
		w := a.vr(a.wit[u%len(a.wit)])
		a.op(a.w.addF, a.vr(x), w, w)
		if y != x {
			a.op(a.w.addF, a.vr(y), w, w)
		}
	}
}

// keepLanes sets r to the greater (lesser) of r and t in each compared
// lane, NaNs aside: a row's blocks are skipped only under the one-compare
// updates, whose witnesses catch a NaN.
func (a *argGen) keepLanes(r, t int) {
	switch {
	case a.w.wide && a.ints:
		a.keep64(r, t)
	case a.ints && a.min:
		a.op(a.w.minI, a.vr(t), a.vr(r), a.vr(r))
	case a.ints:
		a.op(a.w.maxI, a.vr(t), a.vr(r), a.vr(r))
	case a.w.wide && a.min:
		a.op(x86.AVMINPD, a.vr(t), a.vr(r), a.vr(r))
	case a.w.wide:
		a.op(x86.AVMAXPD, a.vr(t), a.vr(r), a.vr(r))
	case a.min:
		a.op(x86.AVMINPS, a.vr(t), a.vr(r), a.vr(r))
	default:
		a.op(x86.AVMAXPS, a.vr(t), a.vr(r), a.vr(r))
	}
}

// broadcast sets every lane of r to v.
func (a *argGen) broadcast(r int, v int64) { a.constant(r, uint32(v)) }

// iota sets r's index lanes to 0, 1, ..., V-1 (in 64-bit lanes, each
// held twice).
func (a *argGen) iota(r int) {
	lo, hi := int64(0x0706050403020100), int64(0x0F0E0D0C0B0A0908)
	if a.w.wide {
		lo, hi = 0x0303020201010000, 0x0707060605050404
	}
	a.op(x86.AMOVQ, imm(lo), reg(rScratch))
	a.op(x86.AVMOVQ, reg(rScratch), a.xr(r))
	if a.avx512 {
		a.op(x86.AMOVQ, imm(hi), reg(rScratch))
		a.op(x86.AVPINSRQ, imm(1), reg(rScratch), a.xr(r), a.xr(r))
	}
	a.op(x86.AVPMOVZXBD, a.xr(r), a.vr(r))
}

// keep64 sets w to the winner of w and t in 64-bit lanes (t is
// clobbered): the NaN-wins max (min) of f64, the signed max (min) of
// integer lanes (AVX2, which has no VPMAXSQ: VPCMPGTQ and a blend).
func (a *argGen) keep64(w, t int) {
	switch {
	case !a.ints:
		a.minMaxLanes(&f64Lanes, a.minMaxOp, a.vr(w), a.vr(t))
	case a.avx512 && a.min:
		a.op(a.w.minI, a.vr(t), a.vr(w), a.vr(w))
	case a.avx512:
		a.op(a.w.maxI, a.vr(t), a.vr(w), a.vr(w))
	default:
		mk := a.Mark()
		m := a.vr(a.Tmp())
		if a.min {
			a.op(x86.AVPCMPGTQ, a.vr(t), a.vr(w), m) // w > t
		} else {
			a.op(x86.AVPCMPGTQ, a.vr(w), a.vr(t), m) // t > w
		}
		a.op(x86.AVBLENDVPS, m, a.vr(t), a.vr(w), a.vr(w))
		a.Release(mk)
	}
}

// hcombine64 sets every 64-bit lane of r to the winner of its lanes
// (keep64); t is clobbered.
func (a *argGen) hcombine64(r, t int) { a.butterfly(r, t, 8, a.ints, a.keep64) }

// hcombineInt sets every lane of r to the pick (VPMINSD, VPMAXSD) of
// its s32 lanes; t is clobbered.
func (a *argGen) hcombineInt(pick obj.As, r, t int) {
	a.butterfly(r, t, 4, true, func(r, t int) { a.op(pick, a.vr(t), a.vr(r), a.vr(r)) })
}

package arm64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Index reductions (kernelshape.Arg): the primitives of an ArgEmitter,
// as amd64's, over the reduction generator's loops, pointers, loads and
// max/min. Accumulator u is the values in v<u> and the indices in
// v<8+u>; cur is a temporary held for the whole kernel. An integer src of
// up to 32 bits is compared in s32 lanes, as amd64's: widened by SXTL or
// UXTL, |x| by ABS, unsigned lanes with the sign bit flipped by EOR, then
// CMGT or CMGE. f64, s64 and u64 are compared in 2D lanes the same way
// (argWidth), their indices held twice in each 64-bit lane, as amd64's;
// NEON has no 64-bit integer max or across-lanes op, so a row's combine
// takes CMGT and BIT, and DUP of the other lane.

// Integer and bitwise vector ops the Go 1.15 assembler does not spell
// (4S unless the name says otherwise).
const (
	opORN     = 0x4EE01C00 // Vd.16B = Vn OR NOT Vm
	opSMAX    = 0x4EA06400 // signed max
	opSMIN    = 0x4EA06C00 // signed min
	opSMAXV   = 0x4EB0A800 // Sd = signed max of Vn's lanes
	opSMINV   = 0x4EB1A800 // Sd = signed min of Vn's lanes
	opUXTL2S  = 0x2F20A400 // Vd.2D = u64(Vn.2S) (USHLL #0)
	opUXTL4S  = 0x6F20A400 // Vd.2D = u64(Vn.4S upper half) (USHLL2 #0)
	opFMAXV   = 0x6E30F800 // Sd = max of Vn's lanes, NaN if any is NaN
	opUMAXV   = 0x6EB0A800 // Sd = unsigned max of Vn's lanes
	opFCMPS   = 0x1E202000 // flags of Sn compared with Sm (V: unordered)
	opCMGT    = 0x4EA03400 // all-ones where signed n > m
	opCMGE    = 0x4EA03C00 // all-ones where signed n >= m
	opCMEQ    = 0x6EA08C00 // all-ones where n == m
	opABS     = 0x4EA0B800 // Vd = |Vn| (|-2^31| wraps to -2^31)
	opCMGE2D  = 0x4EE03C00 // all-ones where signed n >= m
	opCMEQ2D  = 0x6EE08C00 // all-ones where n == m
	opABS2D   = 0x4EE0B800 // Vd = |Vn| (|-2^63| wraps to -2^63)
	opFMAXP2D = 0x6E60F400 // Vd.2D = the pairs' max of Vn, then of Vm, NaN-propagating
	opFCMPD   = 0x1E602000 // flags of Dn compared with Dm (V: unordered)
)

// argWidth is the compares of the lane width an index kernel compares
// in.
type argWidth struct {
	wide                bool   // 2D lanes
	gt, ge, eq          uint32 // signed integer compares
	fgt, fge, feq, fmax uint32 // float compares, FMAX
	abs, fabs           uint32 // |x| of integer and float lanes
}

var (
	argWidth32 = argWidth{gt: opCMGT, ge: opCMGE, eq: opCMEQ, fgt: opFCMGT, fge: opFCMGE, feq: opFCMEQ, fmax: opFMAX,
		abs: opABS, fabs: opFABS}
	argWidth64 = argWidth{wide: true, gt: opCMGT2D, ge: opCMGE2D, eq: opCMEQ2D, fgt: opFCMGT2D, fge: opFCMGE2D,
		feq: opFCMEQ2D, fmax: opFMAX2D, abs: opABS2D, fabs: opFABS2D}
)

// argGen is the generator of one index reduction kernel.
type argGen struct {
	*gen
	min, last bool
	abs       bool // compare |x| (pl.Abs)
	ints      bool // compare in signed integer lanes (an integer src)
	unsigned  bool // the integer lanes hold unsigned values, sign bits flipped
	w         *argWidth
	cur       int
	bound     int   // the register of a row's bound (kernelshape.ArgBlockSkipper; 0: none)
	unchecked int16 // the general register counting a row's unchecked blocks down
	scr       int16 // the scratch pointer of a row-by-row column (0: none)
	update    kernelshape.ArgUpdateKind
	wit       []int // the NaN witnesses (a src that can hold NaN)
	// rowCur[r] holds cur+r for a row-by-row column's group of rows
	// (ArgHoldRowCurs); useRow is the one updates take (0: cur).
	rowCur [kernelshape.ArgRowsGroup]int
	useRow int
}

// argWitnesses is how many NaN witnesses a float src's kernel folds its
// loads into, in turn, as amd64's.
const argWitnesses = 2

// argIdx is the register of accumulator 0's indices.
const argIdx = 8

// EmitArg returns arm64 machine code for the index reduction pl,
// following the kernel ABI of plan.Args.
func EmitArg(pl *plan.ArgPlan) ([]byte, error) {
	if pl == nil {
		return nil, status.Errorf(status.InvalidArguments, "arm64: nil plan")
	}
	if !kernelshape.ArgJITTypes(pl) {
		return nil, status.Errorf(status.Unimplemented, "arm64: no index reduction kernel of %v to %v", pl.SrcDT, pl.IdxDT)
	}
	g := newGen(kernelshape.ArgGenPlan(pl))
	g.SrcDT, g.SrcSize = pl.SrcDT, int64(pl.SrcDT.Size())
	g.DstDT, g.DstSize = pl.IdxDT, int64(pl.IdxDT.Size())
	a := &argGen{gen: g, min: pl.Min, last: pl.Last, abs: pl.Abs, ints: kernelshape.ArgIntLanes(pl.SrcDT),
		unsigned: kernelshape.ArgUnsigned(pl), w: &argWidth32}
	if kernelshape.ArgLaneBytes(pl.SrcDT) == 8 {
		a.w = &argWidth64
	}
	if kernelshape.ArgRowByRow(pl) {
		a.scr = g.Counter()
		g.ptrs = kernelshape.NewPointers(rSrc, rDst, []int16{a.scr})
		// The row indices go in the values' and indices' registers of
		// the column's accumulators a row-by-row column leaves.
		var free []int
		for u := kernelshape.ArgRowsVecs; u < a.ArgAccs(true); u++ {
			free = append(free, u, argIdx+u)
		}
		if len(free) >= kernelshape.ArgRowsGroup-1 {
			copy(a.rowCur[1:], free)
		}
	}
	a.cur = g.Tmp()
	if kernelshape.ArgShapeOf(pl, a.Lanes()) == kernelshape.ArgRow {
		a.bound, a.unchecked = g.Tmp(), g.Counter()
	}
	if kernelshape.ArgNaNs(pl.SrcDT) {
		for range argWitnesses {
			a.wit = append(a.wit, g.Tmp())
		}
	}
	kernelshape.Arg(pl, a, g.SrcSize)
	return kernelshape.Assemble(g)
}

// ArgSetUpdate sets the update ArgUpdate emits.
func (a *argGen) ArgSetUpdate(k kernelshape.ArgUpdateKind) { a.update = k }

// ArgClearWitness zeroes the NaN witnesses.
func (a *argGen) ArgClearWitness() {
	for _, w := range a.wit {
		a.zero(w)
	}
}

// ArgSkipUnlessNaN folds the witnesses by FMAX (NaN-propagating, so
// a witness is NaN exactly when a NaN was loaded) and branches to l
// unless the result is unordered.
func (a *argGen) ArgSkipUnlessNaN(l kernelshape.Label) {
	w := a.wit[0]
	for _, o := range a.wit[1:] {
		a.fop(a.w.fmax, w, w, o)
	}
	if a.w.wide {
		a.fop(opFMAXP2D, w, w, w)
		a.word(rrr(opFCMPD, 0, w, w))
	} else {
		a.word(rr(opFMAXV, w, w))
		a.word(rrr(opFCMPS, 0, w, w))
	}
	a.Jump(arm64.ABVC, l)
}

// Prologue sets up the scratch pointer of a row-by-row column (the
// IndexArgs scratch rounded up to 64 bytes, as amd64's) and loads the
// argument block.
func (a *argGen) Prologue(cnt int16) {
	if a.scr != 0 {
		a.op3(arm64.AADD, imm(plan.ArgIndexScratch+63), rArgs, reg(a.scr))
		a.op3(arm64.AAND, imm(-64), a.scr, reg(a.scr))
	}
	a.gen.Prologue(cnt)
}

// scratchIdx is how far the scratch's indices are past its values.
const scratchIdx = plan.IndexScratchOutputs * 4

// ArgLoadScratch loads u's values and indices from the scratch.
func (a *argGen) ArgLoadScratch(u int, off int64) {
	a.fpMem(true, 16, u, at(a.scr, off))
	a.fpMem(true, 16, argIdx+u, at(a.scr, off+scratchIdx))
}

// ArgStoreScratch stores u's values and indices to the scratch.
func (a *argGen) ArgStoreScratch(u int, off int64) {
	a.fpMem(false, 16, u, at(a.scr, off))
	a.fpMem(false, 16, argIdx+u, at(a.scr, off+scratchIdx))
}

// Lanes is V in the compared lanes.
func (a *argGen) Lanes() int {
	if a.w.wide {
		return lanes / 2
	}
	return lanes
}

// ArgAccs is 4 accumulators for rows, 8 for columns.
func (a *argGen) ArgAccs(column bool) int {
	if column {
		return 8
	}
	return 4
}

// ArgInit sets accumulator u to (identity, 0).
func (a *argGen) ArgInit(u int) {
	inf := math.Inf(-1)
	if a.min {
		inf = math.Inf(1)
	}
	switch {
	case a.ints && a.w.wide:
		a.vmov(u, a.vconst64(kernelshape.ArgIntIdentity(a.min, 8)))
	case a.ints:
		a.vmov(u, a.vconst(uint32(kernelshape.ArgIntIdentity(a.min, 4))))
	case a.w.wide:
		a.vmov(u, a.vconst64(math.Float64bits(inf)))
	default:
		a.vmov(u, a.vconst(math.Float32bits(float32(inf))))
	}
	a.zero(argIdx + u)
}

// ArgSetCur sets cur to v in every lane.
func (a *argGen) ArgSetCur(v int64) { a.setConst(a.cur, uint32(v)) }

// ArgAddCur adds v to every lane of cur.
func (a *argGen) ArgAddCur(v int64) {
	mk := a.Mark()
	a.vop(arm64.AVADD, arr4S, a.cur, a.cur, a.vconst(uint32(v)))
	a.Release(mk)
}

// ArgHoldRowCurs sets the held row indices to cur+1 .. cur+k-1 where
// registers were left for them (row-by-row columns).
func (a *argGen) ArgHoldRowCurs(k int) bool {
	if a.scr == 0 || a.rowCur[1] == 0 || k > len(a.rowCur) {
		return false
	}
	for r := 1; r < k; r++ {
		mk := a.Mark()
		a.vop(arm64.AVADD, arr4S, a.rowCur[r], a.cur, a.vconst(uint32(r)))
		a.Release(mk)
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

// ArgUpdate loads n elements and takes the winning lanes into u.
func (a *argGen) ArgUpdate(u int, off int64, n int) {
	mk := a.Mark()
	x, m, t := a.Tmp(), a.Tmp(), a.Tmp()
	a.loadX(x, off, n)
	hi, lo := x, u // ArgMax: x wins over u when larger
	if a.min {
		hi, lo = u, x
	}
	switch {
	case a.ints:
		// No NaN: one compare is exact.
		cmp := a.w.gt
		if a.last {
			cmp = a.w.ge
		}
		a.fop(cmp, m, hi, lo)
	case a.update != kernelshape.ArgExact:
		// One ordered compare, exact when no element is NaN: x wins if
		// it is larger (smaller), or not smaller with select_last_index.
		if a.update == kernelshape.ArgWatched {
			w := a.wit[u%len(a.wit)]
			a.fop(a.w.fmax, w, w, x)
		}
		cmp := a.w.fgt
		if a.last {
			cmp = a.w.fge
		}
		a.fop(cmp, m, hi, lo)
	case a.last:
		// x wins if it is >= best (<= for ArgMin), or NaN.
		a.fop(a.w.fge, m, hi, lo)
		a.fop(a.w.feq, t, x, x)
		a.word(rrr(opORN, m, m, t))
	default:
		// x wins if best is not NaN and best >= x fails (x <= best for
		// ArgMin): x is larger (smaller), or NaN.
		a.fop(a.w.feq, m, u, u)
		a.fop(a.w.fge, t, lo, hi)
		a.word(rrr(opBIC, m, m, t))
	}
	a.vop(arm64.AVBIT, arr16B, u, x, m)
	a.vop(arm64.AVBIT, arr16B, argIdx+u, a.index(), m)
	a.Release(mk)
}

// loadX loads n elements off bytes past src into x, as compared (|x|
// with pl.Abs).
func (a *argGen) loadX(x int, off int64, n int) {
	switch {
	case a.w.wide:
		a.load64(x, at(rSrc, off), n)
	case a.ints:
		a.loadS32(x, at(rSrc, off), n)
	default:
		a.load(a.SrcDT, x, at(rSrc, off), n)
		if a.abs {
			a.word(rr(a.w.fabs, x, x))
		}
	}
}

// ArgSkips reports whether a row's blocks may be skipped: under the
// one-compare updates.
func (a *argGen) ArgSkips() bool { return a.bound != 0 && a.update != kernelshape.ArgExact }

// ArgInitBound sets the bound to accumulator 0's identity, with no block
// left unchecked.
func (a *argGen) ArgInitBound() {
	a.vmov(a.bound, 0)
	a.movImm(a.unchecked, 0)
}

// ArgSkipBlock loads the block's vectors and keeps their greatest
// (least) lanes in b by a tree of FMAX (FMIN; SMAX, SMIN; keep64), which
// keeps a NaN, so that b alone is folded into a witness; it branches
// past unless a lane of b wins against the bound (the compare's lanes
// folded by UMAXV: all-ones is a NaN to FCMP), and otherwise raises the
// bound to b's winner, in every lane.
func (a *argGen) ArgSkipBlock(n int64, off func(i int64) int64, updates, past kernelshape.Label) {
	// The count of unchecked blocks goes below 0 at the first check and
	// on from there.
	a.op3(arm64.ASUBS, imm(1), a.unchecked, reg(a.unchecked))
	a.Jump(arm64.ABGE, updates)
	mk := a.Mark()
	xs := make([]int, n)
	for i := range xs {
		xs[i] = a.Tmp()
		a.loadX(xs[i], off(int64(i)), a.Lanes())
	}
	m := a.Tmp()
	for step := 1; step < len(xs); step *= 2 {
		for i := 0; i+step < len(xs); i += 2 * step {
			a.keepLanes(xs[i], xs[i+step], m)
		}
	}
	b := xs[0]
	if a.update == kernelshape.ArgWatched {
		w := a.wit[0]
		a.fop(a.w.fmax, w, w, b)
	}
	hi, lo := b, a.bound // ArgMax: b wins when greater
	if a.min {
		hi, lo = a.bound, b
	}
	cmp := a.w.fgt
	switch {
	case a.ints && a.last:
		cmp = a.w.ge
	case a.ints:
		cmp = a.w.gt
	case a.last:
		cmp = a.w.fge
	}
	a.fop(cmp, m, hi, lo)
	a.word(rr(opUMAXV, m, m))
	a.word(rrr(opFCMPS, 0, m, m))
	a.Jump(arm64.ABVC, past)
	// b's winner in every lane, then the bound's: the chain from one
	// block's bound to the next is one instruction.
	a.hkeep(b, a.Tmp(), m)
	a.keepLanes(a.bound, b, m)
	a.movImm(a.unchecked, kernelshape.ArgSkipRest)
	a.Release(mk)
}

// keepLanes sets r to the winner of r and x in each compared lane (m is
// clobbered): FMAX or FMIN, which keep a NaN; SMAX or SMIN; keep64.
func (a *argGen) keepLanes(r, x, m int) {
	switch {
	case a.w.wide:
		a.keep64(r, x, m)
	case a.ints && a.min:
		a.word(rrr(opSMIN, r, r, x))
	case a.ints:
		a.word(rrr(opSMAX, r, r, x))
	case a.min:
		a.fop(opFMIN, r, r, x)
	default:
		a.fop(opFMAX, r, r, x)
	}
}

// hkeep sets every lane of w to the winner of its lanes (t and m are
// clobbered): keep64 with the other lane, SMAXV or SMINV, or the NaN-wins
// HCombine.
func (a *argGen) hkeep(w, t, m int) {
	switch {
	case a.w.wide:
		a.op(arm64.AVDUP, velem(w, arm64.ARNG_D, 1), varng(t, arr2D))
		a.keep64(w, t, m)
		a.op(arm64.AVDUP, velem(w, arm64.ARNG_D, 0), varng(w, arr2D))
	case a.ints:
		across := uint32(opSMAXV)
		if a.min {
			across = opSMINV
		}
		a.word(rr(across, w, w))
		a.op(arm64.AVDUP, velem(w, arm64.ARNG_S, 0), v4s(w))
	default:
		a.HCombine(w)
	}
}

// loadS32 loads n integer elements (V, or bcast) at x into r as s32
// lanes in the order compared.
func (a *argGen) loadS32(r int, x ref, n int) {
	sz := int64(a.SrcDT.Size())
	switch n {
	case bcast:
		a.fpMem(true, sz, r, x)
	case lanes:
		a.fpMem(true, lanes*sz, r, x)
	default:
		a.Fail(status.Errorf(status.RuntimeError, "arm64: index load of %d lanes", n))
	}
	switch a.SrcDT {
	case dtypes.S16:
		a.word(rr(opSXTL16, r, r))
	case dtypes.U16:
		a.word(rr(opUXTL16, r, r))
	}
	if n == bcast {
		a.op(arm64.AVDUP, velem(r, arm64.ARNG_S, 0), v4s(r))
	}
	if a.abs && a.SrcDT.IsSigned() {
		a.word(rr(a.w.abs, r, r))
	}
	if a.unsigned {
		a.fop(opEOR, r, r, a.vconst(1<<31))
	}
}

// load64 loads n elements (V/2, or bcast) of 64 bits at x into r, as
// compared.
func (a *argGen) load64(r int, x ref, n int) {
	switch n {
	case bcast:
		a.fpMem(true, 8, r, x)
		a.op(arm64.AVDUP, velem(r, arm64.ARNG_D, 0), varng(r, arr2D))
	case lanes / 2:
		a.fpMem(true, 16, r, x)
	default:
		a.Fail(status.Errorf(status.RuntimeError, "arm64: index load of %d lanes", n))
	}
	switch {
	case !a.abs || a.SrcDT == dtypes.U64:
	case a.SrcDT == dtypes.F64:
		a.word(rr(a.w.fabs, r, r))
	default:
		a.word(rr(a.w.abs, r, r))
	}
	if a.unsigned {
		a.fop(opEOR, r, r, a.vconst64(1<<63))
	}
}

// ArgStoreColumn stores u's V indices at off bytes past dst.
func (a *argGen) ArgStoreColumn(u int, off int64) {
	r := argIdx + u
	if a.w.wide {
		// Each index is held twice in a 64-bit lane: USHR #32 is the
		// index zero-extended, XTN the low halves.
		mk := a.Mark()
		t := a.Tmp()
		if a.DstDT == dtypes.S64 {
			a.word(ushr2D(t, r, 32))
			a.fpMem(false, 16, t, at(rDst, off))
		} else {
			a.word(rr(opXTN2D, t, r))
			a.fpMem(false, 8, t, at(rDst, off))
		}
		a.Release(mk)
		return
	}
	if a.DstDT == dtypes.S32 {
		a.fpMem(false, 16, r, at(rDst, off))
		return
	}
	// s64: the indices are below 2^31, so zero-extension is exact.
	mk := a.Mark()
	t := a.Tmp()
	a.word(rr(opUXTL2S, t, r))
	a.fpMem(false, 16, t, at(rDst, off))
	a.word(rr(opUXTL4S, t, r))
	a.fpMem(false, 16, t, at(rDst, off+16))
	a.Release(mk)
}

// storeLane0 stores lane 0 of r's indices at the dst pointer.
func (a *argGen) storeLane0(r int) {
	if a.DstDT == dtypes.S32 {
		a.fpMem(false, 4, r, at(rDst, 0))
		return
	}
	a.word(rr(opUXTL2S, r, r))
	a.fpMem(false, 8, r, at(rDst, 0))
}

// ArgStoreFirst stores lane 0 of accumulator 0's indices.
func (a *argGen) ArgStoreFirst() { a.storeLane0(argIdx) }

// ArgFinishRow combines accumulators 0..n-1: w, the winning value (the
// NaN-wins max or min of every lane), then among the lanes holding w
// (NaN: any NaN) the smallest (last: largest) index, u*V+lane added.
func (a *argGen) ArgFinishRow(n int) {
	mk := a.Mark()
	w, t, m, lane, res := a.Tmp(), a.Tmp(), a.Tmp(), a.Tmp(), a.Tmp()
	a.vmov(w, 0)
	for u := 1; u < n; u++ {
		a.keepLanes(w, u, m)
	}
	a.hkeep(w, t, m)
	// The lanes' offsets, 0 .. V-1 (in 2D lanes, each held twice).
	lo, hi := int64(1<<32), int64(3<<32|2)
	if a.w.wide {
		lo, hi = 0, 1<<32|1
	}
	a.movImm(rTmp, lo)
	a.op(arm64.AVMOV, reg(rTmp), velem(lane, arm64.ARNG_D, 0))
	a.movImm(rTmp, hi)
	a.op(arm64.AVMOV, reg(rTmp), velem(lane, arm64.ARNG_D, 1))
	sentinel, pick, across := uint32(math.MaxInt32), uint32(opSMIN), uint32(opSMINV)
	if a.last {
		sentinel, pick, across = math.MaxUint32, opSMAX, opSMAXV
	}
	a.setConst(res, sentinel)
	for u := range n {
		iu := argIdx + u
		a.vop(arm64.AVADD, arr4S, iu, iu, lane)
		if u > 0 {
			a.setConst(t, uint32(u*a.Lanes()))
			a.vop(arm64.AVADD, arr4S, iu, iu, t)
		}
		if a.ints {
			a.fop(a.w.eq, m, u, w)
		} else {
			a.fop(a.w.feq, m, u, w)
			a.fop(a.w.feq, t, u, u)
			a.word(rrr(opORN, m, m, t))
		}
		a.setConst(t, sentinel)
		a.vop(arm64.AVBIT, arr16B, t, iu, m)
		a.word(rrr(pick, res, res, t))
	}
	a.word(rr(across, res, res))
	a.storeLane0(res)
	a.Release(mk)
}

// keep64 sets w to the winner of w and x in 2D lanes (m is clobbered):
// FMAX or FMIN (NaN-propagating) for f64; a signed compare and BIT for
// integer lanes.
func (a *argGen) keep64(w, x, m int) {
	switch {
	case !a.ints && a.min:
		a.fop(opFMIN2D, w, w, x)
	case !a.ints:
		a.fop(opFMAX2D, w, w, x)
	default:
		hi, lo := x, w // ArgMax: x wins when greater
		if a.min {
			hi, lo = w, x
		}
		a.fop(opCMGT2D, m, hi, lo)
		a.vop(arm64.AVBIT, arr16B, w, x, m)
	}
}

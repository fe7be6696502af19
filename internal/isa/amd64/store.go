package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// store writes the f32 lanes of r to addr as type dt, rounding to nearest
// even (integers saturate, NaN gives 0; see storeInt): n == bcast (or 1) writes lane 0 only, n == V a full vector,
// 0 < n < V the first n lanes, never touching a byte past them.
// r itself is left unchanged.
func (g *gen) store(dt dtypes.DataType, r int, addr obj.Addr, n int) {
	if n == bcast {
		n = 1
	}
	if n <= 0 || n > g.V {
		g.Fail(status.Errorf(status.RuntimeError, "amd64: store of %d lanes", n))
		return
	}
	if dt == dtypes.F32 {
		g.storeF32(r, addr, n)
		return
	}
	if dt.IsInt() {
		g.storeInt(dt, r, addr, n)
		return
	}
	mk := g.Mark()
	h := g.Tmp() // the 16-bit values, in the half register of h
	g.toHalf(dt, h, r)
	g.storeWords(h, addr, n)
	g.Release(mk)
}

// toHalf rounds the f32 lanes of r to dt, f16 or bf16, into the half
// register of h, as store writes them.
func (g *gen) toHalf(dt dtypes.DataType, h, r int) {
	if dt == dtypes.F16 {
		// Immediate 0: round to nearest even whatever MXCSR says.
		g.op(x86.AVCVTPS2PH, imm(0), g.vr(r), g.hr(h))
		return
	}
	g.toBF16(h, r)
}

// storeF32 writes n f32 lanes of r.
func (g *gen) storeF32(r int, addr obj.Addr, n int) {
	switch {
	case n == 1:
		g.op(x86.AVMOVSS, g.xr(r), addr)
	case n == g.V:
		g.op(x86.AVMOVUPS, g.vr(r), addr)
	case g.avx512:
		g.op(x86.AVMOVUPS, g.vr(r), g.vmask(n), addr)
	default:
		mk := g.Mark()
		g.op(x86.AVMASKMOVPS, g.vr(r), g.vmask(n), addr)
		g.Release(mk)
	}
}

// storeWords writes n 16-bit values from the half register of h.
func (g *gen) storeWords(h int, addr obj.Addr, n int) {
	at := func(words int) obj.Addr { a := addr; a.Offset += int64(2 * words); return a }
	x := g.xr(h)
	switch {
	case n == g.V:
		g.op(x86.AVMOVUPS, g.hr(h), addr)
		return
	case n == 1:
		g.op(x86.AVPEXTRW, imm(0), x, addr)
		return
	case g.avx512:
		g.op(x86.AVMOVDQU16, g.hr(h), g.vmask(n), addr)
		return
	}
	w := 0
	if n >= 4 {
		g.op(x86.AVMOVQ, x, addr)
		w = 4
	} else {
		g.op(x86.AVMOVD, x, addr)
		w = 2
	}
	if n-w >= 2 {
		g.op(x86.AVPEXTRD, imm(int64(w/2)), x, at(w))
		w += 2
	}
	if n-w == 1 {
		g.op(x86.AVPEXTRW, imm(int64(w)), x, at(w))
	}
}

// toBF16 rounds the f32 lanes of r to bf16 (nearest even, NaN made quiet)
// into the half register of h, as dtypes.F32ToBF16 does.
func (g *gen) toBF16(h, r int) {
	if g.bf16 {
		g.toBF16Native(h, r)
		return
	}
	mk := g.Mark()
	hi := g.Tmp()
	x := g.vr(r)
	or := x86.AVPOR
	if g.avx512 {
		or = x86.AVPORD
	}
	g.bf16Round(h, hi, r)
	// NaN: keep sign and upper payload, set the quiet bit.
	g.op(or, g.roundConst(bf16QuietBit), g.vr(hi), g.vr(hi))
	if g.avx512 {
		k := kreg(6)
		g.op(x86.AVCMPPS, imm(3), x, x, k) // unordered: x is NaN
		g.op(x86.AVPBLENDMD, g.vr(hi), g.vr(h), k, g.vr(h))
		g.op(x86.AVPMOVDW, g.vr(h), g.hr(h))
	} else {
		c := g.Tmp()
		g.op(x86.AVCMPPS, imm(3), x, x, g.vr(c))
		g.op(x86.AVBLENDVPS, g.vr(c), g.vr(hi), g.vr(h), g.vr(h))
		// Pack the 8 dwords (all <= 0xffff) into 8 words.
		g.op(x86.AVEXTRACTI128, imm(1), g.vr(h), g.xr(c))
		g.op(x86.AVPACKUSDW, g.xr(c), g.xr(h), g.xr(h))
	}
	g.Release(mk)
}

// bf16Round sets the dwords of h to the bf16 bits of the f32 lanes of r,
// rounded to nearest even, ignoring NaN; hi gets r>>16:
// h = (x + 0x7fff + (hi&1)) >> 16 adds half an ulp, less one when the
// kept lsb is even, so that ties go to even.
func (g *gen) bf16Round(h, hi, r int) {
	x := g.vr(r)
	and := x86.AVPAND
	if g.avx512 {
		and = x86.AVPANDD
	}
	g.op(x86.AVPSRLD, imm(16), x, g.vr(hi))
	g.op(and, g.roundConst(bf16Lsb), g.vr(hi), g.vr(h))
	g.op(x86.AVPADDD, g.roundConst(bf16Half), g.vr(h), g.vr(h))
	g.op(x86.AVPADDD, x, g.vr(h), g.vr(h))
	g.op(x86.AVPSRLD, imm(16), g.vr(h), g.vr(h))
}

// The integer bf16 rounding's constants, in the order of bf16RoundConsts:
// the kept bit's mask, half an ulp less one, and a NaN's quiet bit in the
// upper half.
const (
	bf16Lsb = iota
	bf16Half
	bf16QuietBit
)

// bf16RoundConsts are the constants of bf16Round and of toBF16's NaN
// fix-up in a constant table (newConstTable).
var bf16RoundConsts = newConstTable([]uint32{1, 0x7fff, 0x40})

// roundConst is bf16RoundConsts' constant i as an operand: the register
// that holds it from the prologue on where a norm kernel can hold one
// (hold), else a memory operand of the table (rScratch set here). A
// norm's map stores every element, so building the constants at each
// store (two or three instructions each) would be a good share of it.
func (g *gen) roundConst(i int) obj.Addr {
	bits := bf16RoundConsts[i*lanesPerConst]
	if g.norm {
		if r, ok := g.hold(uint64(bits), func(r int) { g.constant(r, bits) }); ok {
			return g.vr(r)
		}
	}
	g.loadTable(bf16RoundConsts)
	return tableConst(i)
}

// toBF16Native converts with VCVTNEPS2BF16. That instruction flushes
// subnormal inputs and outputs to zero (it ignores MXCSR), which gdnn's
// rounding does not; so subnormal lanes are redone with the integer
// sequence, on a branch that normal data never takes. VFPCLASSPS finds
// them in one instruction with no constant, and leaves zeros (which the
// instruction converts exactly, as common data has them) off the branch.
func (g *gen) toBF16Native(h, r int) {
	g.vcvtneps2bf16(h, r)
	if g.rowStores.on {
		// The row's check is EndRowStores': gather the lanes here.
		g.op(x86.AVFPCLASSPSZ, imm(fpclassDenormal), g.vr(r), kreg(6))
		g.op(x86.AKORW, kreg(6), g.rowStores.k, g.rowStores.k)
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	d := g.Tmp()
	hi := g.Tmp()
	k := kreg(6)
	g.op(x86.AVFPCLASSPSZ, imm(fpclassDenormal), g.vr(r), k)
	// No flush here: the caller may hold memory operands with pending
	// pointer increments folded in, and the skipped block only touches
	// registers, so both paths leave the pointers alike.
	skip := g.NewLabel()
	g.op(x86.AKORTESTW, k, k)
	g.Jump(x86.AJEQ, skip)
	g.bf16Round(d, hi, r)
	g.op(x86.AVPMOVDW, g.vr(d), k, g.hr(h))
	g.Place(skip)
}

// storeBF16Pair writes the f32 lanes of a and then b to addr as bf16,
// rounded as toBF16 does, with one VCVTNE2PS2BF16 for both. Its flushed
// subnormals come out as ±0; one VFPCLASSPS of each source finds its
// subnormal lanes, and where there are any the exact path patches them.
// The check reads the sources, not the results: a result of ±0 is also
// what a true zero gives, and zeros scattered through data (rounded
// values, padding, ReLU outputs) would send the branch to the exact path
// at random, which a row from memory pays for in mispredictions.
func (g *gen) storeBF16Pair(a, b int, addr obj.Addr) {
	mk := g.Mark()
	defer g.Release(mk)
	w := g.Tmp()
	g.vcvtne2ps2bf16(w, b, a)
	ka, kb := kreg(6), kreg(7)
	g.op(x86.AVFPCLASSPSZ, imm(fpclassDenormal), g.vr(a), ka)
	g.op(x86.AVFPCLASSPSZ, imm(fpclassDenormal), g.vr(b), kb)
	g.storeWhole(x86.AVMOVDQU16, g.vr(w), addr)
	// As in toBF16Native, the skipped block flushes no pointer
	// increment: it stores through addr as the fast path did.
	skip := g.NewLabel()
	g.op(x86.AKORTESTW, ka, kb)
	g.Jump(x86.AJEQ, skip)
	hi := addr
	hi.Offset += int64(2 * g.V)
	g.patchBF16Subnormals(a, addr)
	g.patchBF16Subnormals(b, hi)
	g.Place(skip)
}

// storeBF16PairRounded writes the f32 lanes of a and then b to addr as
// bf16, rounded as toBF16 does, in AVX2's 16 words of one register: the
// integer rounding of each vector, one VPACKUSDW of the two and one
// VPERMQ to put its quadwords in order, and one store. NaN lanes, which
// the rounding gets wrong, are found by one unordered compare of a with
// b, and only where there is one does a block set them to the quiet NaN:
// x + x is x quieted (sign and payload kept), and its upper half is
// toBF16's (x >> 16) | 0x40. That block overwrites a and b. The rounding's
// constants are memory operands of bf16RoundConsts, not held (roundConst):
// the pair takes three temporaries beside a and b, and a held constant
// could leave fewer.
func (g *gen) storeBF16PairRounded(a, b int, addr obj.Addr) {
	mk := g.Mark()
	defer g.Release(mk)
	ha, hb, c := g.Tmp(), g.Tmp(), g.Tmp()
	x, y := g.vr(a), g.vr(b)
	// h = ((x >> 16) & 1) + 0x7fff + x, then >> 16 (bf16Round).
	g.loadTable(bf16RoundConsts)
	for _, v := range [][2]obj.Addr{{x, g.vr(ha)}, {y, g.vr(hb)}} {
		g.op(x86.AVPSRLD, imm(16), v[0], v[1])
		g.op(x86.AVPAND, tableConst(bf16Lsb), v[1], v[1])
		g.op(x86.AVPADDD, tableConst(bf16Half), v[1], v[1])
		g.op(x86.AVPADDD, v[0], v[1], v[1])
		g.op(x86.AVPSRLD, imm(16), v[1], v[1])
	}
	// No flush at the branch: the skipped block only touches registers,
	// so both paths leave pending pointer increments alike.
	g.op(x86.AVCMPPS, imm(3), y, x, g.vr(c)) // unordered: a or b is NaN
	g.op(x86.AVPTEST, g.vr(c), g.vr(c))
	pack := g.NewLabel()
	g.Jump(x86.AJEQ, pack)
	for _, v := range [][2]int{{a, ha}, {b, hb}} {
		r := g.vr(v[0])
		g.op(x86.AVCMPPS, imm(3), r, r, g.vr(c))
		g.op(x86.AVADDPS, r, r, r)
		g.op(x86.AVPSRLD, imm(16), r, r)
		g.op(x86.AVBLENDVPS, g.vr(c), r, g.vr(v[1]), g.vr(v[1]))
	}
	g.Place(pack)
	// Words a0-a3 b0-b3 | a4-a7 b4-b7, then quadwords 0 2 1 3.
	g.op(x86.AVPACKUSDW, g.vr(hb), g.vr(ha), g.vr(ha))
	g.op(x86.AVPERMQ, imm(0xD8), g.vr(ha), g.vr(ha))
	g.storeWhole(x86.AVMOVDQU, g.vr(ha), addr)
}

// storeWhole stores the whole register r to addr with as, or with
// VMOVNTDQ while StreamDst is on (addr then aligned to r's width).
func (g *gen) storeWhole(as obj.As, r, addr obj.Addr) {
	if g.stream.on {
		as, g.stream.used = x86.AVMOVNTDQ, true
	}
	g.op(as, r, addr)
}

// patchBF16Subnormals rewrites the bf16 at addr of the subnormal f32
// lanes of r, which VCVTNE(2)PS2BF16 flushed, rounded exactly; the
// other lanes are left as they are.
func (g *gen) patchBF16Subnormals(r int, addr obj.Addr) {
	mk := g.Mark()
	defer g.Release(mk)
	d := g.Tmp()
	hi := g.Tmp()
	k := kreg(6)
	g.op(x86.AVFPCLASSPSZ, imm(fpclassDenormal), g.vr(r), k)
	skip := g.NewLabel()
	g.op(x86.AKORTESTW, k, k)
	g.Jump(x86.AJEQ, skip)
	g.bf16Round(d, hi, r)
	g.op(x86.AVPMOVDW, g.vr(d), k, addr)
	g.Place(skip)
}

// rowStores is the state of BeginRowStores: on between it and
// EndRowStores, k the opmask that gathers the subnormal lanes, taken
// from the hoisting pool once (set says so).
type rowStores struct {
	on, set bool
	k       obj.Addr
}

// BeginRowStores makes the bf16 stores that follow, up to
// EndRowStores, gather their subnormal lanes into one opmask instead
// of branching each (kernelshape.RowStoreChecker). Only the native
// conversion has the check; where no opmask is free it reports false.
func (g *gen) BeginRowStores() bool {
	if !g.avx512 || !g.bf16 || g.DstDT != dtypes.BF16 || g.rowStores.on {
		return false
	}
	if !g.rowStores.set {
		if g.kNext > g.kLast {
			return false
		}
		g.rowStores.k, g.rowStores.set = kreg(g.kLast), true
		g.kLast--
	}
	k := g.rowStores.k
	g.op(x86.AKXORW, k, k, k)
	g.rowStores.on = true
	return true
}

// EndRowStores branches once, where some store since BeginRowStores met
// a subnormal lane, to redo: the same stores again, each with its own
// check and exact path. Like toBF16Native's branch it flushes no
// pointer increment: redo's addresses are the stores' own.
func (g *gen) EndRowStores(redo func()) {
	if !g.rowStores.on {
		g.Fail(status.Errorf(status.RuntimeError, "amd64: EndRowStores without BeginRowStores"))
		return
	}
	g.rowStores.on = false
	k := g.rowStores.k
	skip := g.NewLabel()
	g.op(x86.AKORTESTW, k, k)
	g.Jump(x86.AJEQ, skip)
	redo()
	g.Place(skip)
}

// fpclassDenormal is VFPCLASSPS's category of subnormal inputs (its
// bit 5), read from the bits alone whatever MXCSR's DAZ says.
const fpclassDenormal = 0x20

// vcvtneps2bf16 emits VCVTNEPS2BF16 ymm(h), zmm(r), which the assembler
// does not know: EVEX.512.F3.0F38.W0 72 /r. It rounds to nearest even
// and turns NaN into a quiet NaN like the integer sequence.
func (g *gen) vcvtneps2bf16(h, r int) { g.evex0F38x72(0b10, h, 0, r) }

// vcvtne2ps2bf16 emits VCVTNE2PS2BF16 zmm(h), zmm(hi), zmm(lo), which
// the assembler does not know either: EVEX.512.F2.0F38.W0 72 /r. The
// 16 low words of h are lo's lanes, the 16 high words hi's, rounded as
// vcvtneps2bf16 does.
func (g *gen) vcvtne2ps2bf16(h, hi, lo int) { g.evex0F38x72(0b11, h, hi, lo) }

// evex0F38x72 emits EVEX.512.pp.0F38.W0 72 /r with register operands
// reg, vvvv (0 where the instruction has none: its inverted field is
// then all ones) and rm, unmasked: the bf16 conversions.
func (g *gen) evex0F38x72(pp byte, reg, vvvv, rm int) {
	// P0: inverted R (reg bit 3), X (rm bit 4), B (rm bit 3), R' (reg
	// bit 4), then 00 and mm=10 (0F38).
	p0 := byte(0x02)
	if reg&8 == 0 {
		p0 |= 0x80
	}
	if rm&16 == 0 {
		p0 |= 0x40
	}
	if rm&8 == 0 {
		p0 |= 0x20
	}
	if reg&16 == 0 {
		p0 |= 0x10
	}
	// P1: W=0, vvvv's low 4 bits inverted, 1, pp. P2: z=0, L'L=10 (512
	// bits), b=0, V' (vvvv's bit 4, inverted), aaa=000 (no mask).
	p1 := byte((^vvvv&15)<<3 | 0x04 | int(pp))
	p2 := byte(0x40)
	if vvvv&16 == 0 {
		p2 |= 0x08
	}
	modrm := byte(0xC0 | (reg&7)<<3 | rm&7)
	g.raw(0x62, p0, p1, p2, 0x72, modrm)
}

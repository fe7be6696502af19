package amd64

import (
	"unsafe"

	"github.com/gdnn/gdnn/internal/vexp"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// expConsts are the exp's constants, in the order of the indices
// below, in a constant table (newConstTable).
var expConsts = newExpConsts()

// The indices of expConsts; Poly's coefficient i is at constPoly+i.
const (
	constHi = iota
	constLo
	constLog2e
	constNegLn2Hi
	constNegLn2Lo
	constPoly
	expConstCount = constPoly + vexp.PolyDegree + 1
)

// lanesPerConst is how many copies of a constant a table holds.
const lanesPerConst = 16

func newExpConsts() []uint32 {
	bits := [expConstCount]uint32{vexp.HiBits, vexp.LoBits, vexp.Log2eBits, vexp.NegLn2Hi, vexp.NegLn2Lo}
	copy(bits[constPoly:], vexp.Poly[:])
	return newConstTable(bits[:])
}

// newConstTable returns a table of the constants bits, each repeated
// across 64 bytes (one zmm, two ymm) at a 64-byte aligned address, so
// that every step reads its constant as a memory operand of the full
// width: no register holds one, and none is built per vector. The table
// is a Go heap object that never moves; kernels carry its address.
func newConstTable(bits []uint32) []uint32 {
	// Over-allocate by one line and start at the first aligned element.
	buf := make([]uint32, (len(bits)+1)*lanesPerConst)
	skip := (64 - int(uintptr(unsafe.Pointer(&buf[0]))%64)) % 64 / 4
	t := buf[skip : skip+len(bits)*lanesPerConst]
	for i, b := range bits {
		for l := range lanesPerConst {
			t[i*lanesPerConst+l] = b
		}
	}
	return t
}

// loadTable sets rScratch to the address of table t, for tableConst.
func (g *gen) loadTable(t []uint32) {
	g.op(x86.AMOVQ, imm(int64(uintptr(unsafe.Pointer(&t[0])))), reg(rScratch))
}

// tableConst is constant i of the table in rScratch (loadTable) as a
// memory operand.
func tableConst(i int) obj.Addr { return mem(rScratch, int64(i*lanesPerConst*4)) }

// exp sets every lane of r to e^r by package vexp's algorithm (its doc
// says why each step is there), in three temporaries, for both widths.
// AVX-512 applies 2^n with VSCALEFPS, which rounds p*2^n once, as the
// two halves of the algorithm's step 5 do (the first product is exact):
// the same bits, in one instruction instead of nine.
func (g *gen) exp(r int) {
	mk := g.Mark()
	defer g.Release(mk)
	orig := g.vr(g.Tmp())
	g.loadTable(expConsts)
	g.op(x86.AVMOVAPS, g.vr(r), orig)
	n := g.expSteps(r)
	g.keepNaN(g.vr(r), orig, n)
}

// expCore is exp without the NaN fix-up (a NaN lane comes out as some
// NaN), in two temporaries, for callers that restore NaNs themselves
// (package vfn's programs).
func (g *gen) expCore(r int) {
	g.loadTable(expConsts)
	g.expSteps(r)
}

// expSteps is exp's arithmetic on r, the table loaded, in two
// temporaries; it returns the first, free again, as scratch for exp's
// NaN fix-up.
func (g *gen) expSteps(r int) obj.Addr {
	mk := g.Mark()
	defer g.Release(mk)
	x := g.vr(r)
	n, p := g.vr(g.Tmp()), g.vr(g.Tmp())

	g.op(x86.AVMINPS, tableConst(constHi), x, x)
	g.op(x86.AVMAXPS, tableConst(constLo), x, x)
	g.op(x86.AVMULPS, tableConst(constLog2e), x, n)
	g.roundEven(n)
	g.op(x86.AVFMADD231PS, tableConst(constNegLn2Hi), n, x) // x += n * -ln2hi
	g.op(x86.AVFMADD231PS, tableConst(constNegLn2Lo), n, x)

	g.horner(func(i int) obj.Addr { return tableConst(constPoly + i) }, vexp.PolyDegree, x, p)

	if g.avx512 {
		g.op(x86.AVSCALEFPS, n, p, x)
	} else {
		// 2^n1 and 2^n2 in n1 = x and n2 = n.
		g.op(x86.AVCVTPS2DQ, n, n)
		g.op(x86.AVPSRAD, imm(1), n, x)
		g.op(x86.AVPSUBD, x, n, n)
		g.op(x86.AVPSLLD, imm(vexp.MantBits), x, x)
		g.op(x86.AVPSLLD, imm(vexp.MantBits), n, n)
		g.op(x86.AVPADDD, tableConst(constPoly), x, x) // + 1.0's bits: the exponent bias
		g.op(x86.AVPADDD, tableConst(constPoly), n, n)
		g.op(x86.AVMULPS, x, p, p)
		g.op(x86.AVMULPS, n, p, x)
	}
	return n
}

// sumExpConsts are the constants of the exp for sums, in the order of
// the indices below (sumPoly+i is SumPoly's coefficient i).
var sumExpConsts = newSumExpConsts()

const (
	sumLo = iota
	sumHi
	sumScale
	sumLog2e
	sumPoly
	sumExpConstCount = sumPoly + vexp.SumPolyDegree + 1
)

func newSumExpConsts() []uint32 {
	bits := [sumExpConstCount]uint32{vexp.SumLoBits, vexp.HiBits, vexp.SumScaleBits, vexp.Log2eBits}
	copy(bits[sumPoly:], vexp.SumPoly[:])
	return newConstTable(bits[:])
}

// expForSum sets every lane of r to e^r by package vexp's exp for sums
// (its doc says why it may be cheaper than exp), in two temporaries.
// AVX-512 needs no clamp: VREDUCEPS gives f = t - floor(t), rounded once
// (+0 for an infinite t), and VSCALEFPS multiplies by 2^floor(t) with one
// rounding, +Inf and +0 at the ends; its constants are in registers where
// placeSumExp can take them. AVX2's clamp takes the bound as its first
// source, so that a NaN x (the second) is what comes out.
func (g *gen) expForSum(r int) { g.expForSumInto(r, -1) }

// expForSumInto is expForSum, and with acc >= 0 it adds e^r into
// accumulator acc instead, clobbering r. AVX2 then fuses its last product,
// p * 2^n, with the add: the product is exact (package vexp's step 4), so
// the FMA rounds once where the product and the add would have rounded
// once between them, and gives the same bits with one instruction fewer.
func (g *gen) expForSumInto(r, acc int) {
	mk := g.Mark()
	defer g.Release(mk)
	x := g.vr(r)
	n, p := g.vr(g.Tmp()), g.vr(g.Tmp())

	if g.avx512 {
		g.placeSumExp()
		g.op(x86.AVMULPS, g.sumExpConst(sumLog2e), x, x) // t
		g.op(x86.AVREDUCEPS, imm(1), x, n)               // f = t - floor(t)
		g.horner(func(i int) obj.Addr { return g.sumExpConst(sumPoly + i) }, vexp.SumPolyDegree, n, p)
		g.op(x86.AVSCALEFPS, x, p, x)
		if acc >= 0 {
			g.combine(acc, r)
		}
		return
	}
	g.loadTable(sumExpConsts)
	g.op(x86.AVMOVAPS, tableConst(sumLo), p)
	g.op(x86.AVMAXPS, x, p, x)
	g.op(x86.AVMOVAPS, tableConst(sumHi), p)
	g.op(x86.AVMINPS, x, p, x)
	g.op(x86.AVMULPS, tableConst(sumLog2e), x, x) // t
	g.op(x86.AVROUNDPS, imm(1), x, n)             // floor(t)
	g.op(x86.AVSUBPS, n, x, x)                    // f = t - n
	g.horner(func(i int) obj.Addr { return tableConst(sumPoly + i) }, vexp.SumPolyDegree, x, p)
	g.op(x86.AVADDPS, tableConst(sumScale), n, n) // n + 127 in the low bits
	g.op(x86.AVPSLLD, imm(vexp.MantBits), n, n)   // 2^n
	if acc >= 0 {
		g.op(x86.AVFMADD231PS, n, p, g.vr(acc)) // acc += p * 2^n
		return
	}
	g.op(x86.AVMULPS, n, p, x)
}

// expShifted sets every lane of r, a softmax's x - m (at most 0, -Inf
// or a NaN), to e^r by the exp for sums, and -Inf to +0 exactly (see
// kernelshape.NormEmitter's ExpShifted). AVX-512's exp for sums takes the
// whole range as it is. AVX2's needs no clamp: r is at most 0, and the
// lanes below -87, where 2^n would leave the normal range, are set to +0
// at the end by a mask, whatever the arithmetic made of them (a NaN for
// -Inf). The compare is false for a NaN, which the arithmetic carries,
// so it stays a NaN. Three temporaries.
func (g *gen) expShifted(r int) {
	if g.avx512 {
		g.expForSum(r)
		return
	}
	mk := g.Mark()
	defer g.Release(mk)
	x := g.vr(r)
	n, p, below := g.vr(g.Tmp()), g.vr(g.Tmp()), g.vr(g.Tmp())
	g.loadTable(sumExpConsts)
	g.op(x86.AVCMPPS, imm(1), tableConst(sumLo), x, below) // x < -87 (LT_OS: false for a NaN)
	g.op(x86.AVMULPS, tableConst(sumLog2e), x, x)          // t
	g.op(x86.AVROUNDPS, imm(1), x, n)                      // floor(t)
	g.op(x86.AVSUBPS, n, x, x)                             // f = t - n
	g.horner(func(i int) obj.Addr { return tableConst(sumPoly + i) }, vexp.SumPolyDegree, x, p)
	g.op(x86.AVADDPS, tableConst(sumScale), n, n) // n + 127 in the low bits
	g.op(x86.AVPSLLD, imm(vexp.MantBits), n, n)   // 2^n
	g.op(x86.AVMULPS, n, p, x)
	g.op(x86.AVANDNPS, x, below, x) // +0 below the clamp
}

// sumExpPlace is where a kernel keeps the exp for sums' constants.
type sumExpPlace struct {
	decided bool
	reg     int // the register of constant sumLog2e, the others above it; 0: in memory
}

// sumExpRegs is how many registers the AVX-512 exp for sums' constants
// take (from sumLog2e on: the clamp and the scale are AVX2's only).
const sumExpRegs = sumExpConstCount - sumLog2e

// minTemps is how many temporaries a kernel keeps when it takes some for
// constants: as many as AVX2 kernels have and more.
const minTemps = 8

// placeSumExp decides, at the AVX-512 exp for sums' first use, where the
// kernel keeps its constants: it takes the top temporaries for good and
// loads the constants there in the prologue, if no code so far has used
// those registers and minTemps are left; then each vector costs one
// load, its own. Else they stay in memory, as AVX2's, and placeSumExp
// loads the table's address for sumExpConst.
func (g *gen) placeSumExp() {
	if !g.sumExp.decided {
		g.sumExp.decided = true
		if first := g.tmpHi - sumExpRegs; g.tmpPeak <= first && first-g.tmpLo >= minTemps {
			g.tmpHi, g.sumExp.reg = first, first
			g.InsertAfter(&g.pro, func() {
				g.loadTable(sumExpConsts)
				for j := range sumExpRegs {
					g.op(x86.AVMOVAPS, tableConst(sumLog2e+j), g.vr(first+j))
				}
			})
		}
	}
	if g.sumExp.reg == 0 {
		g.loadTable(sumExpConsts)
	}
}

// sumExpConst is the operand of constant i (sumLog2e or later) of the
// AVX-512 exp for sums, after placeSumExp.
func (g *gen) sumExpConst(i int) obj.Addr {
	if g.sumExp.reg == 0 {
		return tableConst(i)
	}
	return g.vr(g.sumExp.reg + i - sumLog2e)
}

// horner sets p to the polynomial of the given degree whose coefficient
// i is the operand coef(i), at x, by Horner's rule with FMAs (the exp's,
// the exp for sums' and the log's).
func (g *gen) horner(coef func(i int) obj.Addr, degree int, x, p obj.Addr) {
	g.op(x86.AVMOVAPS, coef(degree), p)
	for i := degree - 1; i >= 0; i-- {
		g.op(x86.AVFMADD213PS, coef(i), x, p) // p = p*x + c_i
	}
}

// roundEven rounds every lane of x to the nearest integer, ties to even.
func (g *gen) roundEven(x obj.Addr) {
	if g.avx512 {
		g.op(x86.AVRNDSCALEPS, imm(0), x, x)
		return
	}
	g.op(x86.AVROUNDPS, imm(0), x, x)
}

// keepNaN sets the lanes of x where orig is a NaN to orig, bits and all
// (arithmetic would have quietened a signalling NaN); AVX2 builds the
// lane mask in scratch.
func (g *gen) keepNaN(x, orig, scratch obj.Addr) {
	if g.avx512 {
		g.op(x86.AVCMPPS, imm(3), orig, orig, kreg(6)) // unordered
		g.op(x86.AVMOVAPS, orig, kreg(6), x)
		return
	}
	g.op(x86.AVCMPPS, imm(3), orig, orig, scratch)
	g.op(x86.AVBLENDVPS, scratch, orig, x, x)
}

// ConstTables returns the address of every constant table made so far
// (loadTable puts one into a kernel's code) with its contents. The
// addresses differ from process to process; a test that compares code
// across processes replaces them with the contents.
func ConstTables() map[uintptr][]uint32 {
	m := map[uintptr][]uint32{}
	add := func(t []uint32) { m[uintptr(unsafe.Pointer(&t[0]))] = t }
	for _, t := range [][]uint32{expConsts, sumExpConsts, logConsts, signMasks, exp64Consts, log64Consts, bf16RoundConsts} {
		add(t)
	}
	constTables.Range(func(_, t any) bool { add(t.([]uint32)); return true })
	return m
}

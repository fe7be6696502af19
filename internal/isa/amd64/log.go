package amd64

import (
	"github.com/gdnn/gdnn/internal/vlog"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// logConsts are the log's constants, in the order of the indices below,
// in a constant table (newConstTable).
var logConsts = newLogConsts()

// The indices of logConsts; Poly's coefficient i is at logPoly+i.
const (
	logOne = iota
	logLn2Lo
	logLn2Hi
	// AVX-512 only.
	logTwoOff
	logHalf
	logFixup
	// AVX2 only.
	logMinNorm
	logScale
	logNegScale
	logOff
	logMant
	logZero
	logNegInf
	logNaN
	logMax
	logPoly
	logConstCount = logPoly + vlog.PolyDegree + 1
)

// logFixupTable is VFIXUPIMMPS's table for log: one 4-bit response per
// class of x (bits 4j+3:4j for class j). Classes: 0 QNaN, 1 SNaN, 2 ±0,
// 3 +1, 4 -Inf, 5 +Inf, 6 negative, 7 positive. Responses: 0 keeps the
// computed result, 1 is x itself (a NaN with its bits), 3 the default
// NaN, 4 -Inf, 5 +Inf. log(1) = +0 is computed.
const logFixupTable = 1<<0 | 1<<4 | 4<<8 | 0<<12 | 3<<16 | 5<<20 | 3<<24 | 0<<28

func newLogConsts() []uint32 {
	bits := [logConstCount]uint32{
		logOne: vlog.OneBits, logLn2Lo: vlog.Ln2LoBits, logLn2Hi: vlog.Ln2HiBits,
		logTwoOff: vlog.TwoOffBits, logHalf: vlog.HalfBits, logFixup: logFixupTable,
		logMinNorm: vlog.MinNormBits, logScale: vlog.Scale23Bits, logNegScale: vlog.NegScaleBits,
		logOff: vlog.OffBits, logMant: vlog.MantMask, logZero: 0, logNegInf: vlog.NegInfBits,
		logNaN: vlog.NaNBits, logMax: vlog.MaxBits,
	}
	copy(bits[logPoly:], vlog.Poly[:])
	return newConstTable(bits[:])
}

// log sets every lane of r to log(r) by package vlog's algorithm (its doc
// says why each step is there), in three temporaries, for both widths.
// AVX-512 splits x with VGETMANTPS and VGETEXPPS, subnormals included,
// and sets the specials with one VFIXUPIMMPS; AVX2 does both as the
// algorithm's steps 1 to 3 say. The same m and k, so the same bits.
func (g *gen) log(r int) { g.logOf(r, false) }

// logSum is log for lanes that are each at least 1 or a NaN (a
// softmax's sum of exps): AVX2 leaves out the steps that only a
// subnormal, zero or negative x needs, whose blends would change
// nothing there, so the bits are log's. AVX-512's are one instruction
// each and stay.
func (g *gen) logSum(r int) { g.logOf(r, true) }

func (g *gen) logOf(r int, atLeastOne bool) {
	mk := g.Mark()
	defer g.Release(mk)
	x := g.vr(r)
	orig, k, p := g.vr(g.Tmp()), g.vr(g.Tmp()), g.vr(g.Tmp())
	c := tableConst

	g.loadTable(logConsts)
	g.op(x86.AVMOVAPS, x, orig)
	if g.avx512 {
		g.op(x86.AVGETEXPPS, x, k)
		g.op(x86.AVGETMANTPS, imm(0), x, x)                    // significand in [1, 2), x's sign
		g.op(x86.AVCMPPS, imm(0x1d), c(logTwoOff), x, kreg(6)) // x >= 2*Off (GE_OQ)
		g.op(x86.AVMULPS, c(logHalf), x, kreg(6), x)
		g.op(x86.AVADDPS, c(logOne), k, kreg(6), k)
	} else {
		if !atLeastOne {
			// Subnormal x scaled by 2^23 in x, k's start (-23 or 0) in p.
			g.op(x86.AVCMPPS, imm(1), c(logMinNorm), x, p) // x < 2^-126 (LT_OS)
			g.op(x86.AVMULPS, c(logScale), x, k)
			g.op(x86.AVBLENDVPS, p, k, x, x)
			g.op(x86.AVANDPS, c(logNegScale), p, p)
		}
		g.op(x86.AVPSUBD, c(logOff), x, x)
		g.op(x86.AVPSRAD, imm(vlog.MantBits), x, k)
		g.op(x86.AVCVTDQ2PS, k, k)
		if !atLeastOne {
			g.op(x86.AVADDPS, p, k, k)
		}
		g.op(x86.AVPAND, c(logMant), x, x)
		g.op(x86.AVPADDD, c(logOff), x, x)
	}
	g.op(x86.AVSUBPS, c(logOne), x, x) // r = m - 1

	g.horner(func(i int) obj.Addr { return c(logPoly + i) }, vlog.PolyDegree, x, p) // p(r)
	g.op(x86.AVMULPS, x, p, p)
	g.op(x86.AVMULPS, x, p, p)
	g.op(x86.AVFMADD231PS, c(logLn2Lo), k, p) // p += k * ln2lo
	g.op(x86.AVADDPS, p, x, x)
	g.op(x86.AVFMADD231PS, c(logLn2Hi), k, x) // x += k * ln2hi

	if g.avx512 {
		g.op(x86.AVFIXUPIMMPS, imm(0), c(logFixup), orig, x)
		return
	}
	if !atLeastOne {
		g.op(x86.AVCMPPS, imm(2), c(logZero), orig, p) // x <= 0 (LE_OS)
		g.op(x86.AVBLENDVPS, p, c(logNegInf), x, x)
		g.op(x86.AVCMPPS, imm(1), c(logZero), orig, p) // x < 0
		g.op(x86.AVBLENDVPS, p, c(logNaN), x, x)
	}
	g.op(x86.AVCMPPS, imm(6), c(logMax), orig, p) // x > MaxFloat32 or unordered (NLE_US)
	g.op(x86.AVBLENDVPS, p, orig, x, x)
}

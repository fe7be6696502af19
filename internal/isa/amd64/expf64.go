package amd64

import (
	"math"
	"unsafe"

	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The f64 exp and log of the native kernel's epilogue (package vf64's
// algorithms: its doc says why each step is there), in the native
// kernel's f64 lanes. Their constants are memory operands of a table
// whose address is in rScratch (loadTable), as the f32 exp's.

// exp64Consts and log64Consts are the tables of the f64 exp and log, in
// the order of the indices below.
var (
	exp64Consts = newConstTable64(exp64Bits())
	log64Consts = newConstTable64(log64Bits())
)

// The indices of exp64Consts; ExpPoly's coefficient i is at e64Poly+i.
const (
	e64Lo = iota
	e64Hi
	e64Log2e
	e64NegLn2Hi
	e64NegLn2Lo
	e64ScaleBias
	e64Half
	e64Poly
	e64Count = e64Poly + vf64.ExpDegree + 1
)

func exp64Bits() []uint64 {
	v := [e64Count]float64{vf64.ExpLo, vf64.ExpHi, vf64.Log2e, -vf64.Ln2Hi, -vf64.Ln2Lo, vf64.ScaleBias, 0.5}
	copy(v[e64Poly:], vf64.ExpPoly[:])
	return f64Bits(v[:])
}

// The indices of log64Consts; LogPoly's coefficient i is at l64Poly+i.
const (
	l64One = iota
	l64Two
	l64Half
	l64Sqrt2
	l64Ln2Hi
	l64Ln2Lo
	// AVX-512 only.
	l64Fixup
	// AVX2 only.
	l64MinNorm
	l64Scale
	l64NegScale
	l64Bias
	l64BiasExp
	l64Mant
	l64Zero
	l64NegInf
	l64NaN
	l64Max
	l64Poly
	l64Count = l64Poly + vf64.LogDegree + 1
)

func log64Bits() []uint64 {
	v := [l64Count]float64{l64One: 1, l64Two: 2, l64Half: 0.5, l64Sqrt2: vf64.Sqrt2, l64Ln2Hi: vf64.Ln2Hi, l64Ln2Lo: vf64.Ln2Lo,
		l64MinNorm: 0x1p-1022, l64Scale: 0x1p52, l64NegScale: -52, l64Bias: 0x1p52, l64BiasExp: 0x1p52 + 1023,
		l64NegInf: math.Inf(-1), l64NaN: math.NaN(), l64Max: math.MaxFloat64}
	copy(v[l64Poly:], vf64.LogPoly[:])
	b := f64Bits(v[:])
	b[l64Fixup] = vf64.LogFixup
	b[l64Mant] = 1<<52 - 1
	return b
}

// f64Bits returns the bits of each of v.
func f64Bits(v []float64) []uint64 {
	b := make([]uint64, len(v))
	for i, x := range v {
		b[i] = math.Float64bits(x)
	}
	return b
}

// newConstTable64 is newConstTable for 64-bit constants: each repeated
// across 64 bytes, so that tableConst(i) is constant i.
func newConstTable64(bits []uint64) []uint32 {
	words := make([]uint32, 2*len(bits))
	for i, b := range bits {
		words[2*i], words[2*i+1] = uint32(b), uint32(b>>32)
	}
	buf := make([]uint32, (len(bits)+1)*lanesPerConst)
	skip := (64 - int(uintptr(unsafe.Pointer(&buf[0]))%64)) % 64 / 4
	t := buf[skip : skip+len(bits)*lanesPerConst]
	for i := range bits {
		for l := 0; l < lanesPerConst; l += 2 {
			t[i*lanesPerConst+l], t[i*lanesPerConst+l+1] = words[2*i], words[2*i+1]
		}
	}
	return t
}

// expF64 sets every f64 lane of r to e^r (vf64.Exp's steps), in three
// temporaries; a NaN lane keeps its bits.
func (n *nativeGen) expF64(r int) {
	mk := n.Mark()
	defer n.Release(mk)
	x := n.vr(r)
	orig, k, p := n.vr(n.Tmp()), n.vr(n.Tmp()), n.vr(n.Tmp())
	c := tableConst

	n.loadTable(exp64Consts)
	n.op(x86.AVMOVAPD, x, orig)
	n.op(x86.AVMAXPD, c(e64Lo), x, x)
	n.op(x86.AVMINPD, c(e64Hi), x, x)
	n.op(x86.AVMULPD, c(e64Log2e), x, k)
	n.roundEvenF64(k)
	n.op(x86.AVFMADD231PD, c(e64NegLn2Hi), k, x) // x += k * -ln2hi
	n.op(x86.AVFMADD231PD, c(e64NegLn2Lo), k, x)

	n.hornerF64(func(i int) obj.Addr { return c(e64Poly + i) }, vf64.ExpDegree, x, p)

	if n.avx512 {
		n.op(x86.AVSCALEFPD, k, p, x)
	} else {
		// 2^k1 in x and 2^k2 in k, k1 = floor(k/2), k2 = k - k1.
		n.op(x86.AVMULPD, c(e64Half), k, x)
		n.op(x86.AVROUNDPD, imm(1), x, x) // floor
		n.op(x86.AVSUBPD, x, k, k)
		n.op(x86.AVADDPD, c(e64ScaleBias), x, x)
		n.op(x86.AVADDPD, c(e64ScaleBias), k, k)
		n.op(x86.AVPSLLQ, imm(vf64.MantBits), x, x)
		n.op(x86.AVPSLLQ, imm(vf64.MantBits), k, k)
		n.op(x86.AVMULPD, x, p, p)
		n.op(x86.AVMULPD, k, p, x)
	}
	n.keepNaNF64(x, orig, k)
}

// logF64 sets every f64 lane of r to log(r) (vf64.Log's steps), in five
// temporaries. AVX-512 splits x with VGETEXPPD and VGETMANTPD,
// subnormals included, and sets the specials with one VFIXUPIMMPD; AVX2
// scales a subnormal by 2^52 and takes the exponent and significand
// from the bits, and sets the specials by compares and blends.
func (n *nativeGen) logF64(r int) { n.logF64Of(r, true) }

// logF64Of is logF64, but for specials false leaves the specials (zeros,
// negative x, +Inf, NaN) to garbage and takes a temporary fewer, the
// copy of x they need: the log of an x in [1, 2] (vf64.Lanes.LogUnit).
func (n *nativeGen) logF64Of(r int, specials bool) {
	mk := n.Mark()
	defer n.Release(mk)
	x := n.vr(r)
	var orig obj.Addr
	if specials {
		orig = n.vr(n.Tmp())
	}
	k, p, s, q := n.vr(n.Tmp()), n.vr(n.Tmp()), n.vr(n.Tmp()), n.vr(n.Tmp())
	c := tableConst

	n.loadTable(log64Consts)
	if specials {
		n.op(x86.AVMOVAPD, x, orig)
	}
	if n.avx512 {
		n.op(x86.AVGETEXPPD, x, k)
		n.op(x86.AVGETMANTPD, imm(0), x, x)                   // significand in [1, 2)
		n.op(x86.AVCMPPD, imm(0x1d), c(l64Sqrt2), x, kreg(6)) // x >= sqrt 2 (GE_OQ)
		n.op(x86.AVMULPD, c(l64Half), x, kreg(6), x)
		n.op(x86.AVADDPD, c(l64One), k, kreg(6), k)
	} else {
		// A subnormal x scaled by 2^52, k's start (-52 or 0) in p.
		n.op(x86.AVCMPPD, imm(1), c(l64MinNorm), x, p) // x < 2^-1022 (LT_OS)
		n.op(x86.AVMULPD, c(l64Scale), x, k)
		n.op(x86.AVBLENDVPD, p, k, x, x)
		n.op(x86.AVANDPD, c(l64NegScale), p, p)
		// The exponent field as 2^52 + e, then e - 1023.
		n.op(x86.AVPSRLQ, imm(vf64.MantBits), x, k)
		n.op(x86.AVPOR, c(l64Bias), k, k)
		n.op(x86.AVSUBPD, c(l64BiasExp), k, k)
		n.op(x86.AVADDPD, p, k, k)
		// The significand in [1, 2).
		n.op(x86.AVPAND, c(l64Mant), x, x)
		n.op(x86.AVPOR, c(l64One), x, x)
		n.op(x86.AVCMPPD, imm(13), c(l64Sqrt2), x, p) // x >= sqrt 2 (GE_OS)
		n.op(x86.AVMULPD, c(l64Half), x, s)
		n.op(x86.AVBLENDVPD, p, s, x, x)
		n.op(x86.AVANDPD, c(l64One), p, p)
		n.op(x86.AVADDPD, p, k, k)
	}
	n.op(x86.AVSUBPD, c(l64One), x, x) // f = m - 1
	n.op(x86.AVADDPD, c(l64Two), x, s)
	n.op(x86.AVDIVPD, s, x, s) // s = f / (2+f)
	n.op(x86.AVMULPD, s, s, p) // z = s*s
	n.hornerF64(func(i int) obj.Addr { return c(l64Poly + i) }, vf64.LogDegree, p, q)
	n.op(x86.AVMULPD, p, q, q) // R
	n.op(x86.AVMULPD, x, x, p)
	n.op(x86.AVMULPD, c(l64Half), p, p) // hfsq
	n.op(x86.AVADDPD, p, q, q)
	n.op(x86.AVMULPD, s, q, q)
	n.op(x86.AVFMADD231PD, c(l64Ln2Lo), k, q) // q += k * ln2lo
	n.op(x86.AVSUBPD, q, p, p)
	n.op(x86.AVSUBPD, x, p, x)
	n.op(x86.AVFMSUB231PD, c(l64Ln2Hi), k, x) // x = k*ln2hi - x

	if !specials {
		return
	}
	if n.avx512 {
		n.op(x86.AVFIXUPIMMPD, imm(0), c(l64Fixup), orig, x)
		return
	}
	n.op(x86.AVCMPPD, imm(2), c(l64Zero), orig, p) // x <= 0 (LE_OS)
	n.op(x86.AVBLENDVPD, p, c(l64NegInf), x, x)
	n.op(x86.AVCMPPD, imm(1), c(l64Zero), orig, p) // x < 0
	n.op(x86.AVBLENDVPD, p, c(l64NaN), x, x)
	n.op(x86.AVCMPPD, imm(6), c(l64Max), orig, p) // x > MaxFloat64 or unordered (NLE_US)
	n.op(x86.AVBLENDVPD, p, orig, x, x)
}

// hornerF64 is horner in f64 lanes.
func (n *nativeGen) hornerF64(coef func(i int) obj.Addr, degree int, x, p obj.Addr) {
	n.op(x86.AVMOVAPD, coef(degree), p)
	for i := degree - 1; i >= 0; i-- {
		n.op(x86.AVFMADD213PD, coef(i), x, p) // p = p*x + c_i
	}
}

// roundEvenF64 rounds every f64 lane of x to the nearest integer, ties
// to even.
func (n *nativeGen) roundEvenF64(x obj.Addr) {
	if n.avx512 {
		n.op(x86.AVRNDSCALEPD, imm(0), x, x)
		return
	}
	n.op(x86.AVROUNDPD, imm(0), x, x)
}

// keepNaNF64 is keepNaN in f64 lanes.
func (n *nativeGen) keepNaNF64(x, orig, scratch obj.Addr) {
	if n.avx512 {
		n.op(x86.AVCMPPD, imm(3), orig, orig, kreg(6)) // unordered
		n.op(x86.AVMOVAPD, orig, kreg(6), x)
		return
	}
	n.op(x86.AVCMPPD, imm(3), orig, orig, scratch)
	n.op(x86.AVBLENDVPD, scratch, orig, x, x)
}

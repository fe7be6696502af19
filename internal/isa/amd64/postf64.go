package amd64

import (
	"encoding/binary"
	"math"

	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// f64Ops is vf64.Lanes in the native kernel's f64 lanes: the post-ops
// built on the exp and the log (package vf64's postops.go) emitted by
// AVX-512 and AVX2 instructions. Constants are set by pattern (a general
// register and a broadcast), polynomials read from constant tables.
type f64Ops struct{ n *nativeGen }

var _ vf64.Lanes = f64Ops{}

func (f f64Ops) Tmp() int         { return f.n.Tmp() }
func (f f64Ops) Mark() int        { return f.n.Mark() }
func (f f64Ops) Release(mark int) { f.n.Release(mark) }

func (f f64Ops) Const(d int, v float64) { f.n.pattern(d, math.Float64bits(v)) }
func (f f64Ops) Mov(d, a int) {
	if d != a {
		f.n.op(x86.AVMOVAPD, f.n.vr(a), f.n.vr(d))
	}
}

func (f f64Ops) Add(d, a, b int) { f.n.op(x86.AVADDPD, f.n.vr(b), f.n.vr(a), f.n.vr(d)) }
func (f f64Ops) Sub(d, a, b int) { f.n.op(x86.AVSUBPD, f.n.vr(b), f.n.vr(a), f.n.vr(d)) }
func (f f64Ops) Mul(d, a, b int) { f.n.op(x86.AVMULPD, f.n.vr(b), f.n.vr(a), f.n.vr(d)) }
func (f f64Ops) Div(d, a, b int) { f.n.op(x86.AVDIVPD, f.n.vr(b), f.n.vr(a), f.n.vr(d)) }
func (f f64Ops) Min(d, a, b int) { f.n.op(x86.AVMINPD, f.n.vr(b), f.n.vr(a), f.n.vr(d)) }
func (f f64Ops) Max(d, a, b int) { f.n.op(x86.AVMAXPD, f.n.vr(b), f.n.vr(a), f.n.vr(d)) }

// FMA sets d = a*b + c in the form that writes the operand d is, or
// into a copy of a.
func (f f64Ops) FMA(d, a, b, c int) {
	n := f.n
	switch d {
	case c:
		n.op(x86.AVFMADD231PD, n.vr(b), n.vr(a), n.vr(d)) // d = a*b + d
	case a:
		n.op(x86.AVFMADD213PD, n.vr(c), n.vr(b), n.vr(d)) // d = d*b + c
	case b:
		n.op(x86.AVFMADD213PD, n.vr(c), n.vr(a), n.vr(d)) // d = d*a + c
	default:
		f.Mov(d, a)
		n.op(x86.AVFMADD213PD, n.vr(c), n.vr(b), n.vr(d))
	}
}

// OrSign sets d = a | (b & sign bit).
func (f f64Ops) OrSign(d, a, b int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	t := n.Tmp()
	n.pattern(t, 1<<63)
	n.op(n.pandOf(&f64Lanes), n.vr(b), n.vr(t), n.vr(t))
	n.op(n.porOf(&f64Lanes), n.vr(a), n.vr(t), n.vr(d))
}

// SelLT sets d = a < b ? c : e (LT_OS: false where either is a NaN).
func (f f64Ops) SelLT(d, a, b, c, e int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	m := n.Tmp()
	if n.avx512 {
		n.op(x86.AVCMPPD, imm(1), n.vr(b), n.vr(a), kreg(6))
		f.Mov(m, e)
		n.op(x86.AVMOVAPD, n.vr(c), kreg(6), n.vr(m))
		f.Mov(d, m)
		return
	}
	n.op(x86.AVCMPPD, imm(1), n.vr(b), n.vr(a), n.vr(m))
	n.op(x86.AVBLENDVPD, n.vr(m), n.vr(c), n.vr(e), n.vr(d)) // d = m ? c : e
}

// Poly is hornerF64 over a constant table of c.
func (f f64Ops) Poly(d, x int, c []float64) {
	f.n.loadTable(cachedTable64(c))
	f.n.hornerF64(tableConst, len(c)-1, f.n.vr(x), f.n.vr(d))
}

func (f f64Ops) Exp(r int)     { f.n.expF64(r) }
func (f f64Ops) LogUnit(r int) { f.n.logF64Of(r, false) }

func (f f64Ops) KeepNaN(d, x int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	n.keepNaNF64(n.vr(d), n.vr(x), n.vr(n.Tmp()))
}

// cachedTable64 returns the constant table (newConstTable64) of the
// float64 values c, one per content, kept for the process's life as
// cachedTable's.
func cachedTable64(c []float64) []uint32 {
	key := make([]byte, 1+8*len(c))
	key[0] = 64 // apart from cachedTable's 32-bit keys
	for i, v := range c {
		binary.LittleEndian.PutUint64(key[1+8*i:], math.Float64bits(v))
	}
	if t, ok := constTables.Load(string(key)); ok {
		return t.([]uint32)
	}
	t, _ := constTables.LoadOrStore(string(key), newConstTable64(f64Bits(c)))
	return t.([]uint32)
}

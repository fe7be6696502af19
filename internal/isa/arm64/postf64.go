package arm64

import (
	"github.com/gdnn/gdnn/internal/vf64"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// f64Ops is vf64.Lanes in the native kernel's two f64 lanes: the
// post-ops built on the exp and the log (package vf64's postops.go)
// emitted by NEON instructions, as amd64's f64Ops. Constants come from
// the pool where it has room, else are set in the destination.
type f64Ops struct{ n *nativeGen }

var _ vf64.Lanes = f64Ops{}

func (f f64Ops) Tmp() int         { return f.n.Tmp() }
func (f f64Ops) Mark() int        { return f.n.Mark() }
func (f f64Ops) Release(mark int) { f.n.Release(mark) }

func (f f64Ops) Const(d int, v float64) { f.Mov(d, f.n.f64In(v, d)) }
func (f f64Ops) Mov(d, a int) {
	if d != a {
		f.n.vmov(d, a)
	}
}

func (f f64Ops) Add(d, a, b int) { f.n.fop(opFADD2D, d, a, b) }
func (f f64Ops) Sub(d, a, b int) { f.n.fop(opFSUB2D, d, a, b) }
func (f f64Ops) Mul(d, a, b int) { f.n.fop(opFMUL2D, d, a, b) }
func (f f64Ops) Div(d, a, b int) { f.n.fop(opFDIV2D, d, a, b) }
func (f f64Ops) Min(d, a, b int) { f.n.fop(opFMIN2D, d, a, b) }
func (f f64Ops) Max(d, a, b int) { f.n.fop(opFMAX2D, d, a, b) }

// FMA sets d = a*b + c by FMLA, which adds into its destination: c's
// register, or a copy of c.
func (f f64Ops) FMA(d, a, b, c int) {
	n := f.n
	switch {
	case d == c:
		n.fop(opFMLA2D, d, a, b)
	case d != a && d != b:
		n.vmov(d, c)
		n.fop(opFMLA2D, d, a, b)
	default:
		mk := n.Mark()
		t := n.Tmp()
		n.vmov(t, c)
		n.fop(opFMLA2D, t, a, b)
		n.vmov(d, t)
		n.Release(mk)
	}
}

// OrSign sets d = a | (b & sign bit).
func (f f64Ops) OrSign(d, a, b int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	t := n.Tmp()
	n.fop(opAND, t, b, n.const64In(1<<63, t))
	n.fop(opORR, d, a, t)
}

// SelLT sets d = a < b ? c : e (FCMGT b, a: false where either is a
// NaN), inserting c or e under the mask into whichever d already is.
func (f f64Ops) SelLT(d, a, b, c, e int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	m := n.Tmp()
	n.fop(opFCMGT2D, m, b, a)
	if d == c {
		n.vop(arm64.AVBIF, arr16B, d, e, m)
		return
	}
	f.Mov(d, e)
	n.vop(arm64.AVBIT, arr16B, d, c, m)
}

// Poly is hornerF64 into d.
func (f f64Ops) Poly(d, x int, c []float64) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	p, _ := n.hornerF64(c, x, d, n.Tmp())
	f.Mov(d, p)
}

func (f f64Ops) Exp(r int)     { f.n.expF64(r) }
func (f f64Ops) LogUnit(r int) { f.n.logF64Of(r, false) }

func (f f64Ops) KeepNaN(d, x int) {
	n := f.n
	mk := n.Mark()
	defer n.Release(mk)
	m := n.Tmp()
	n.fop(opFCMEQ2D, m, x, x) // not a NaN
	n.vop(arm64.AVBIF, arr16B, d, x, m)
}

package amd64

import (
	"math"

	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The f64 log-sum-exp of the native kernel (kernelshape's nativelse.go):
// accumulators 0..A-1, where A is half the usual, and shift slot i in
// register A+i; the temporaries are above them, as usual.

// NativeLSEPass switches the kind to the max pass's or the sum pass's.
func (n *nativeGen) NativeLSEPass(sum bool) {
	n.k = n.lse
	if !sum {
		n.k = n.lse.LSEMax()
	}
}

// NativeLSEShift sets shift slot s to accumulator u clamped.
func (n *nativeGen) NativeLSEShift(s, u int) {
	n.op(n.move(), n.vr(u), n.vr(n.shifts+s))
	n.clampShift(n.shifts + s)
}

// NativeLSEShiftFirst sets shift slot 0 to the max of accumulator 0's
// lanes, in every lane, clamped.
func (n *nativeGen) NativeLSEShiftFirst() {
	mk := n.Mark()
	defer n.Release(mk)
	n.combineAcross(n.shifts, n.Tmp())
	n.clampShift(n.shifts)
}

// clampShift clamps r to [-MaxFloat64, MaxFloat64]: VMINPD and VMAXPD
// return their second source, r, where either is NaN.
func (n *nativeGen) clampShift(r int) {
	mk := n.Mark()
	defer n.Release(mk)
	c := n.Tmp()
	n.pattern(c, math.Float64bits(math.MaxFloat64))
	n.op(x86.AVMINPD, n.vr(r), n.vr(c), n.vr(r))
	n.pattern(c, math.Float64bits(-math.MaxFloat64))
	n.op(x86.AVMAXPD, n.vr(r), n.vr(c), n.vr(r))
}

// NativeLSEUse makes the shift slot s's.
func (n *nativeGen) NativeLSEUse(s int) { n.shift = n.shifts + s }

// F64SubShift sets r to r - shift.
func (n *nativeGen) F64SubShift(r int) { n.op(x86.AVSUBPD, n.vr(n.shift), n.vr(r), n.vr(r)) }

// F64AddShift sets r to r + shift.
func (n *nativeGen) F64AddShift(r int) { n.op(x86.AVADDPD, n.vr(n.shift), n.vr(r), n.vr(r)) }

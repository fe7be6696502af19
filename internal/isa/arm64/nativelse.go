package arm64

import "math"

// The f64 log-sum-exp of the native kernel (kernelshape's nativelse.go):
// the accumulators are the low half of v0..v15 (kernelshape.NativeKind.Accs),
// shift slot i is v<8+i>. FMIN and FMAX give NaN where either side is
// NaN, so a NaN max stays the shift.

// NativeLSEPass switches the kind (and the identity) to the max pass's
// or the sum pass's.
func (n *nativeGen) NativeLSEPass(sum bool) {
	n.k, n.id = n.lse, n.idSum
	if !sum {
		n.k, n.id = n.lse.LSEMax(), n.idMax
	}
}

// NativeLSEShift sets shift slot s to accumulator u clamped.
func (n *nativeGen) NativeLSEShift(s, u int) {
	n.vmov(n.shifts+s, u)
	n.clampShift(n.shifts + s)
}

// NativeLSEShiftFirst sets shift slot 0 to the max of accumulator 0's
// two lanes, in both, clamped.
func (n *nativeGen) NativeLSEShiftFirst() {
	mk := n.Mark()
	defer n.Release(mk)
	r, t := n.shifts, n.Tmp()
	n.vmov(r, 0)
	n.word(ext(t, r, r, 8))
	n.combine(r, t)
	n.clampShift(r)
}

// clampShift clamps r to [-MaxFloat64, MaxFloat64], NaN kept.
func (n *nativeGen) clampShift(r int) {
	mk := n.Mark()
	defer n.Release(mk)
	c := n.Tmp()
	n.fop(opFMIN2D, r, r, n.f64In(math.MaxFloat64, c))
	n.fop(opFMAX2D, r, r, n.f64In(-math.MaxFloat64, c))
}

// NativeLSEUse makes the shift slot s's.
func (n *nativeGen) NativeLSEUse(s int) { n.shift = n.shifts + s }

// F64SubShift sets r to r - shift.
func (n *nativeGen) F64SubShift(r int) { n.fop(opFSUB2D, r, r, n.shift) }

// F64AddShift sets r to r + shift.
func (n *nativeGen) F64AddShift(r int) { n.fop(opFADD2D, r, r, n.shift) }

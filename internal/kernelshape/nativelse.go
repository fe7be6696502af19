package kernelshape

// The f64 log-sum-exp of the native kernel (NativeKind.LSE), as the
// interpreter computes it: for each output, a max pass gives its
// largest element m, whose shift is m clamped to the finite f64 range
// (NaN kept); a sum pass then adds exp(x - shift) of every element
// (NativeExpShift, package vf64's exp), cut into runs as any f64 sum;
// the result is log(sum) + shift (vf64's log). So a row of -Inf (or an
// empty one) is log(0) + shift = -Inf, a row with +Inf is +Inf, a NaN
// gives NaN, and a row of finite values near ±MaxFloat64 keeps them:
// no Inf - Inf arises. Both passes read the output's elements in the
// same shape; the row and element shapes combine the max pass's lanes
// into one shift, the column shape keeps a shift a lane. An instruction
// set gives half its accumulator registers to the shifts (Accs).

// NativeLSE is what an instruction set supplies for an f64 log-sum-exp.
// The shift slots are registers of their own: slot i beside accumulator
// i, up to the accumulators Accs leaves.
type NativeLSE interface {
	// NativeLSEPass makes NativeInit, NativeLoad and NativeCombine the
	// max pass's (sum false: LSEMax's kind) or the sum pass's (the
	// kind's own) from here on in the code.
	NativeLSEPass(sum bool)
	// NativeLSEShift sets shift slot s to the lanes of accumulator u
	// (the max pass's) clamped to [-MaxFloat64, MaxFloat64], NaN kept.
	NativeLSEShift(s, u int)
	// NativeLSEShiftFirst sets shift slot 0, every lane, to the max of
	// accumulator 0's lanes, clamped as NativeLSEShift.
	NativeLSEShiftFirst()
	// NativeLSEUse makes the loads' exp(x - shift) and the finalize's
	// log + shift take shift slot s from here on in the code.
	NativeLSEUse(s int)
}

// LSEMax is the kind of k's max pass: an f64 max of the elements as
// they are.
func (k NativeKind) LSEMax() NativeKind {
	k.Op, k.Transform = NativeMax, NativeNoTransform
	return k
}

// Accs is the accumulators of k's kernel out of those of accs: half for
// a log-sum-exp, whose shifts take the other half.
func (k NativeKind) Accs(accs func(column bool) int) func(column bool) int {
	if !k.LSE {
		return accs
	}
	return func(column bool) int { return max(1, accs(column)/2) }
}

// nativeUse points a log-sum-exp's shift at slot s (k.LSE).
func nativeUse(e NativeEmitter, k NativeKind, s int) {
	if k.LSE {
		e.(NativeLSE).NativeLSEUse(s)
	}
}

// nativeLSEMax emits the max pass of a row or element shape's output:
// sweep (given the layout nl without its cut, a max needing none) into
// accumulator 0, its lanes then combined into shift slot 0; the sum
// pass follows, with slot 0.
func nativeLSEMax(e NativeEmitter, sweep func(nativeLayout), nl nativeLayout) {
	lse := e.(NativeLSE)
	lse.NativeLSEPass(false)
	nl.cut = nativeCut{level: -1}
	sweep(nl)
	lse.NativeLSEShiftFirst()
	lse.NativeLSEPass(true)
	lse.NativeLSEUse(0)
}

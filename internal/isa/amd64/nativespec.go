package amd64

import (
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// NaN-free f64 max and min of the native kernel
// (kernelshape.NativeSpeculator), the f32 kernels' speculation
// (speculate.go) in f64 lanes, with its registers and its flag: each
// combine is one instruction, VRANGEPD on AVX-512 (max and min), VMAXPD
// on AVX2 (max only: AVX2's min keeps its exact three instructions, for
// speculate.go's reason), and one unordered compare checks two whole src
// vectors (the first held in Z31 or Y11 until the second is loaded, or
// checked alone at the next branch or label), so that a pair costs one
// load, two combines, a compare and an OR where the exact code takes
// four instructions a vector (AVX2's max six). AVX2's VMAXPD may give
// -0 for +0, so each output of -0 is flagged too. Where the f32 kernels
// take a watch sum (Conf.Watch: AVX-512 plans read from memory on Zen
// cores), so does f64: each whole src vector is added into Z30, tested
// once at the return, so that a paced row loop (one vector an iteration,
// none to pair a compare with) costs no compare and KORW a vector. The
// exact code is the same generator's, emitted after the NaN-free code's
// return.

// NativeNaNFree starts NaN-free code for an f64 max, and on AVX-512 an
// f64 min; it reports whether it did.
func (n *nativeGen) NativeNaNFree() bool {
	if !nanFreeTakes(n.k, n.avx512) {
		return false
	}
	n.nanFree, n.f64 = true, true
	if n.avx512 {
		// Hoisted masks stay in K1-K3 (K4 and K5 are the check's and
		// the argument block's), and so stay set in the exact code.
		n.kLast, n.tmpHi = kCheck-1, rPending
		if n.conf.Watch {
			n.watch, n.tmpHi = true, rWatch
		}
	} else {
		n.tmpHi = yPending
	}
	return true
}

// NativeExact places the exact code, where the NaN-free code's Return
// jumps when its flag is set, and restores the argument block.
func (n *nativeGen) NativeExact() {
	n.Place(n.exact)
	n.nanFree, n.f64, n.watch = false, false, false
	// The pointers start again from the argument block, nothing pending.
	n.ptrs = kernelshape.NewPointers(rSrc, rDst, n.binReg[:n.NBin])
	if n.avx512 {
		n.op(x86.AKMOVQ, kreg(kArgs), reg(rDI))
		n.tmpHi = 32
	} else {
		n.op(x86.AVMOVQ, n.xr(yArgs), reg(rDI))
		n.tmpHi = 16
	}
}

// nanFreeTakes reports whether the native kernel of kind k speculates
// (kernelshape.NativeKind.Speculative) on AVX-512 (avx512) or AVX2: every
// such kind on AVX-512, the max alone on AVX2.
func nanFreeTakes(k kernelshape.NativeKind, avx512 bool) bool {
	return k.Speculative() && (avx512 || k.Op != kernelshape.NativeMin)
}

// rangeKind is the f64 op as ops' kind, for rangeCtl.
func (n *nativeGen) rangeKind() ops.Kind {
	if n.k.Op == kernelshape.NativeMax {
		return ops.Maximum
	}
	return ops.Minimum
}

// fast sets acc = acc max/min y (a register or memory) by one
// instruction: exact when neither side is NaN but, on AVX2, for the sign
// of a zero.
func (n *nativeGen) fast(acc, y obj.Addr) {
	if n.avx512 {
		n.op(x86.AVRANGEPD, imm(rangeCtl(n.rangeKind())), y, acc, acc)
		return
	}
	n.op(x86.AVMAXPD, y, acc, acc)
}

// loadNaNFree combines src at addr into accumulator u by fast, with the
// NaN check: a whole vector added into the watch sum where the code
// watches (Conf.Watch), else paired with the next (checkPending checks
// one left alone); an element (in lane 0 of the identity) on its own.
func (n *nativeGen) loadNaNFree(u int, addr obj.Addr, cnt int) {
	acc := n.vr(u)
	if cnt == n.lanes {
		pr := yPending
		if n.avx512 {
			pr = rPending
		}
		p := n.vr(pr)
		if n.watch || !n.pending {
			n.op(x86.AVMOVUPD, addr, p)
			n.fast(acc, p)
			if n.watch {
				n.op(x86.AVADDPD, p, n.vr(rWatch), n.vr(rWatch))
			} else {
				n.pending = true
			}
			return
		}
		n.pending = false
		if n.avx512 {
			n.op(x86.AVCMPPD, imm(3), addr, p, kreg(kCheck))
			n.fast(acc, addr)
			n.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
			return
		}
		c := n.vr(n.Tmp())
		n.op(x86.AVCMPPD, imm(3), addr, p, c)
		n.fast(acc, addr)
		n.op(x86.AVPOR, c, n.vr(yNaN), n.vr(yNaN))
		return
	}
	t := n.Tmp()
	n.NativeInit(t)
	n.loadFirst(t, addr)
	if n.avx512 {
		n.op(x86.AVCMPPD, imm(3), n.vr(t), n.vr(t), kreg(kCheck))
		n.fast(acc, n.vr(t))
		n.op(x86.AKORW, kreg(kCheck), kreg(kNaN), kreg(kNaN))
		return
	}
	n.fast(acc, n.vr(t))
	n.op(x86.AVCMPPD, imm(3), n.vr(t), n.vr(t), n.vr(t))
	n.op(x86.AVPOR, n.vr(t), n.vr(yNaN), n.vr(yNaN))
}

// flagNegZero flags the lanes of r that hold -0 (AVX2 NaN-free code),
// so that a -0 VMAXPD may have given for +0 is never left in dst.
func (n *nativeGen) flagNegZero(r int) {
	if !n.nanFree || n.avx512 {
		return
	}
	mk := n.Mark()
	defer n.Release(mk)
	t := n.Tmp()
	n.pattern(t, 1<<63)
	n.op(x86.AVPCMPEQQ, n.vr(r), n.vr(t), n.vr(t))
	n.op(x86.AVPOR, n.vr(t), n.vr(yNaN), n.vr(yNaN))
}

package arm64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// store writes the f32 lanes of r to x as type dt, rounding to nearest
// even (integers saturate, NaN gives 0; see storeInt): n == bcast (or 1) writes lane 0 only, n == V a full vector,
// 0 < n < V the first n lanes, never touching a byte past them.
// r itself is left unchanged.
func (g *gen) store(dt dtypes.DataType, r int, x ref, n int) {
	if n == bcast {
		n = 1
	}
	if n <= 0 || n > lanes {
		g.Fail(status.Errorf(status.RuntimeError, "arm64: store of %d lanes", n))
		return
	}
	if dt == dtypes.F32 {
		g.storeLanes(4, r, x, n)
		return
	}
	if dt.IsInt() {
		g.storeInt(dt, r, x, n)
		return
	}
	mk := g.Mark()
	h := g.Tmp() // the 16-bit values, in the low half of h
	if dt == dtypes.F16 {
		// FCVTN rounds as FPCR says; Go runs with round to nearest
		// even, no flush to zero and no default NaN.
		g.word(rr(opFCVTN, h, r))
	} else {
		g.toBF16(h, r)
	}
	g.storeLanes(2, h, x, n)
	g.Release(mk)
}

// storeInt writes the f32 lanes of r to x as integers of type dt (s32,
// s8 or u8), as dtypes.F32ToS32 and friends round: FCVTNS rounds to
// nearest even, saturates to s32 and turns NaN into 0; for the 8-bit
// types two saturating narrowings follow (s32 -> s16 -> s8 with SQXTN;
// for u8, SQXTUN takes the signed value to [0, 65535] and UQXTN that to
// [0, 255]). Saturating twice is saturating once: every step's range
// holds the next one's.
func (g *gen) storeInt(dt dtypes.DataType, r int, x ref, n int) {
	mk := g.Mark()
	defer g.Release(mk)
	h := g.Tmp()
	g.word(rr(opFCVTNS, h, r))
	switch dt {
	case dtypes.S32:
		g.storeLanes(4, h, x, n)
		return
	case dtypes.S8:
		g.word(rr(opSQXTN16, h, h))
		g.word(rr(opSQXTN8, h, h))
	default:
		g.word(rr(opSQXTUN, h, h))
		g.word(rr(opUQXTN8, h, h))
	}
	g.storeLanes(1, h, x, n)
}

// storeLanes writes the first n lanes of size sz bytes (4, 2 or 1) of
// register r: one store of the first 4, 2 or 1 lanes, and the third lane
// from a second register.
func (g *gen) storeLanes(sz int64, r int, x ref, n int) {
	if n == lanes {
		g.fpMem(false, lanes*sz, r, x)
		return
	}
	first := min(n, 2)
	g.fpMem(false, sz*int64(first), r, x)
	if n == 3 {
		mk := g.Mark()
		t := g.Tmp()
		ea := elemArr(sz)
		g.op(arm64.AVMOV, velem(r, ea, 2), velem(t, ea, 0))
		g.fpMem(false, sz, t, x.plus(2*sz))
		g.Release(mk)
	}
}

// toBF16 rounds the f32 lanes of r to bf16 (nearest even, NaN made quiet)
// into the low half of h, as dtypes.F32ToBF16 does:
// x + 0x7fff + ((x >> 16) & 1) adds half an ulp, less one when the kept
// lsb is even, so that ties go to even; a NaN keeps its sign and upper
// payload with the quiet bit set. The high halves of the four words are
// then gathered with UZP2.
func (g *gen) toBF16(h, r int) {
	mk := g.Mark()
	defer g.Release(mk)
	t := g.Tmp()
	m := g.Tmp()
	g.vshift(arm64.AVSHL, t, r, 15) // lsb of the kept half to bit 31
	g.vshift(arm64.AVUSHR, t, t, 31)
	g.vop(arm64.AVADD, arr4S, h, r, g.vconst(0x7fff))
	g.vop(arm64.AVADD, arr4S, h, h, t)
	g.vop(arm64.AVORR, arr16B, t, r, g.vconst(0x00400000))
	g.fop(opFCMEQ, m, r, r)             // all-ones unless x is NaN
	g.vop(arm64.AVBIF, arr16B, h, t, m) // NaN lanes take x | quiet
	g.vop(arm64.AVUZP2, arr8H, h, h, h)
}

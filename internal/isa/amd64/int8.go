package amd64

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// 8-bit integer src and integer dst. In registers every value is f32, as
// for the float types: src bytes are widened to dwords (sign- or
// zero-extended) and converted, which is exact; results are rounded to
// nearest even and saturated on the way out, as dtypes.F32ToS8, F32ToU8
// and F32ToS32 do, NaN giving 0.

// takesDataTypes reports whether the generator loads src type src and
// stores dst type dst: every src type plans take (the floats, s8, u8)
// with every dst type (the floats, s8, u8, s32), f64 aside
// (kernelshape.F32Lanes).
func takesDataTypes(src, dst dtypes.DataType) bool { return kernelshape.F32Lanes(src, dst) }

// loadInt8 is load for s8 and u8: n == bcast one byte in every lane,
// n == V a full vector of V bytes, 0 < n < V the first n bytes, zeros
// above, reading no byte past the last one (an opmasked byte move on
// AVX-512, which neither reads nor faults on masked-off bytes; exact-size
// moves on AVX2).
func (g *gen) loadInt8(dt dtypes.DataType, r int, addr obj.Addr, n int) {
	ext := x86.AVPMOVZXBD
	if dt == dtypes.S8 {
		ext = x86.AVPMOVSXBD
	}
	switch {
	case n == bcast:
		g.op(x86.AVPBROADCASTB, addr, g.xr(r))
		g.op(ext, g.xr(r), g.vr(r))
	case n == g.V:
		g.op(ext, addr, g.vr(r))
	case g.avx512:
		g.opz(x86.AVMOVDQU8, addr, g.vmask(n), g.xr(r))
		g.op(ext, g.xr(r), g.vr(r))
	default:
		g.loadBytes(r, addr, n)
		g.op(ext, g.xr(r), g.vr(r))
	}
	g.op(x86.AVCVTDQ2PS, g.vr(r), g.vr(r))
}

// loadBytes reads exactly n (1..15) bytes into xmm r, zeros above: a
// qword, a dword, a word and a byte move at most.
func (g *gen) loadBytes(r int, addr obj.Addr, n int) {
	at := func(b int) obj.Addr { a := addr; a.Offset += int64(b); return a }
	x := g.xr(r)
	w := 0
	switch {
	case n >= 8:
		g.op(x86.AVMOVQ, addr, x)
		w = 8
	case n >= 4:
		g.op(x86.AVMOVD, addr, x)
		w = 4
	case n >= 2:
		g.op(x86.AMOVWLZX, addr, reg(rScratch))
		g.op(x86.AVMOVD, reg(rScratch), x)
		w = 2
	default:
		g.op(x86.AMOVBLZX, addr, reg(rScratch))
		g.op(x86.AVMOVD, reg(rScratch), x)
		return
	}
	if n-w >= 4 {
		g.op(x86.AVPINSRD, imm(int64(w/4)), at(w), x, x)
		w += 4
	}
	if n-w >= 2 {
		g.op(x86.AVPINSRW, imm(int64(w/2)), at(w), x, x)
		w += 2
	}
	if n-w == 1 {
		g.op(x86.AVPINSRB, imm(int64(w)), at(w), x, x)
	}
}

// storeInt writes the f32 lanes of r to addr as integers of type dt (s8,
// u8, s32), rounded to nearest even and saturated, NaN as 0: n lanes as
// for store (1..V), r unchanged. VCVTPS2DQ rounds to nearest even under
// the default MXCSR, which Go keeps; what it gets wrong is fixed around
// it. 8-bit results are clamped in f32 first (the bounds are integers, so
// clamping then rounding is rounding then saturating), which leaves the
// conversion in range; s32 cannot be clamped above in f32 (2^31-1 has no
// f32), so lanes >= 2^31, which convert to 0x80000000, are flipped to
// 0x7fffffff, and lanes below -2^31 already give 0x80000000. NaN lanes,
// which convert to 0x80000000 too, are cleared.
func (g *gen) storeInt(dt dtypes.DataType, r int, addr obj.Addr, n int) {
	mk := g.Mark()
	defer g.Release(mk)
	x := g.vr(r)
	i, c := g.Tmp(), g.Tmp()
	src := x
	if dt != dtypes.S32 {
		lo, hi := float32(-128), float32(127)
		if dt == dtypes.U8 {
			lo, hi = 0, 255
		}
		g.constF32(c, lo)
		g.op(x86.AVMAXPS, g.vr(c), x, g.vr(i))
		g.constF32(c, hi)
		g.op(x86.AVMINPS, g.vr(c), g.vr(i), g.vr(i))
		src = g.vr(i)
	}
	if g.avx512 {
		ord, big := kreg(6), kreg(7)
		g.op(x86.AVCMPPS, imm(7), x, x, ord) // ordered: x is not NaN
		g.opz(x86.AVCVTPS2DQ, src, ord, g.vr(i))
		if dt == dtypes.S32 {
			g.constF32(c, 1<<31)
			g.op(x86.AVCMPPS, imm(0x1D), g.vr(c), x, big) // x >= 2^31, ordered
			g.constant(c, 0xFFFFFFFF)
			g.op(x86.AVPXORD, g.vr(c), g.vr(i), big, g.vr(i))
			g.storeF32(i, addr, n)
			return
		}
		// In range: truncating to bytes keeps the value.
		switch {
		case n == g.V:
			g.op(x86.AVPMOVDB, g.vr(i), addr)
		default:
			g.op(x86.AVPMOVDB, g.vr(i), g.vmask(n), addr)
		}
		return
	}
	g.op(x86.AVCVTPS2DQ, src, g.vr(i))
	if dt == dtypes.S32 {
		g.constF32(c, 1<<31)
		g.op(x86.AVCMPPS, imm(0x1D), g.vr(c), x, g.vr(c)) // x >= 2^31, ordered
		g.op(x86.AVPXOR, g.vr(c), g.vr(i), g.vr(i))
	}
	g.op(x86.AVCMPPS, imm(7), x, x, g.vr(c)) // ordered: x is not NaN
	g.op(x86.AVPAND, g.vr(c), g.vr(i), g.vr(i))
	if dt == dtypes.S32 {
		g.storeF32(i, addr, n)
		return
	}
	// 8 dwords in range to 8 bytes: words (the high 128 bits packed after
	// the low ones), then bytes, in the low 8 bytes of xmm i.
	g.op(x86.AVEXTRACTI128, imm(1), g.vr(i), g.xr(c))
	g.op(x86.AVPACKSSDW, g.xr(c), g.xr(i), g.xr(i))
	pack := x86.AVPACKSSWB
	if dt == dtypes.U8 {
		pack = x86.AVPACKUSWB
	}
	g.op(pack, g.xr(i), g.xr(i), g.xr(i))
	g.storeBytes(i, addr, n)
}

// storeBytes writes the low n (1..8) bytes of xmm i: a qword, or a
// dword, a word and a byte move at most.
func (g *gen) storeBytes(i int, addr obj.Addr, n int) {
	at := func(b int) obj.Addr { a := addr; a.Offset += int64(b); return a }
	x := g.xr(i)
	if n == 8 {
		g.op(x86.AVMOVQ, x, addr)
		return
	}
	w := 0
	if n >= 4 {
		g.op(x86.AVMOVD, x, addr)
		w = 4
	}
	if n-w >= 2 {
		g.op(x86.AVPEXTRW, imm(int64(w/2)), x, at(w))
		w += 2
	}
	if n-w == 1 {
		g.op(x86.AVPEXTRB, imm(int64(w)), x, at(w))
	}
}

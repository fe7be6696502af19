package amd64

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// Vector primitives, written once for both widths: each picks the AVX-512
// or AVX2 spelling of the same operation. Values in registers are always
// f32; the 16-bit and integer types exist only in memory and during
// conversion (int8.go).

// bcast is the lane count that means "one element, broadcast to every
// lane" for load, and "lane 0 only" for store.
const bcast = kernelshape.Bcast

// zero sets vector register r to +0 in every lane.
func (g *gen) zero(r int) {
	if g.avx512 {
		g.op(x86.AVPXORD, g.vr(r), g.vr(r), g.vr(r))
		return
	}
	g.op(x86.AVPXOR, g.vr(r), g.vr(r), g.vr(r))
}

// constant broadcasts the 32-bit pattern bits into every lane of r.
func (g *gen) constant(r int, bits uint32) {
	if bits == 0 {
		g.zero(r)
		return
	}
	g.op(x86.AMOVL, imm(int64(int32(bits))), reg(rScratch))
	if g.avx512 {
		// EVEX broadcasts straight from a general register.
		g.op(x86.AVPBROADCASTD, reg(rScratch), g.vr(r))
		return
	}
	g.op(x86.AVMOVD, reg(rScratch), g.xr(r))
	g.op(x86.AVPBROADCASTD, g.xr(r), g.vr(r))
}

// pattern sets every 64 bits of r to p.
func (g *gen) pattern(r int, p uint64) {
	switch p {
	case 0:
		g.zero(r)
		return
	case math.MaxUint64:
		if g.avx512 {
			g.op(x86.AVPTERNLOGD, imm(0xFF), g.vr(r), g.vr(r), g.vr(r))
		} else {
			g.op(x86.AVPCMPEQD, g.vr(r), g.vr(r), g.vr(r))
		}
		return
	}
	g.op(x86.AMOVQ, imm(int64(p)), reg(rScratch))
	if g.avx512 {
		g.op(x86.AVPBROADCASTQ, reg(rScratch), g.vr(r))
		return
	}
	g.op(x86.AVMOVQ, reg(rScratch), g.xr(r))
	g.op(x86.AVPBROADCASTQ, g.xr(r), g.vr(r))
}

// constF32 broadcasts the float f into every lane of r.
func (g *gen) constF32(r int, f float32) { g.constant(r, math.Float32bits(f)) }

// vmask returns a mask operand selecting the first n lanes (0 < n < V):
// an opmask register for AVX-512 (also good for n 16-bit lanes; see
// kbits), a vector of all-ones dwords for AVX2 (VMASKMOVPS). AVX2 masks
// are built once in the Prologue while its two slots last; after that
// they are built where needed, into a temporary.
func (g *gen) vmask(n int) obj.Addr {
	if g.avx512 {
		return g.kbits(uint32(1)<<n - 1)
	}
	for _, s := range g.masks {
		if s.n == n {
			return s.reg
		}
	}
	if len(g.masks) < 2 {
		r := 15 - len(g.masks)
		g.InsertAfter(&g.pro, func() { g.setYMask(r, n) })
		g.masks = append(g.masks, maskSlot{n, g.vr(r)})
		return g.vr(r)
	}
	t := g.Tmp() // freed by the caller's release
	g.setYMask(t, n)
	return g.vr(t)
}

// kbits returns an opmask register holding bits (AVX-512): hoisted into
// the prologue while K1-K5 last (K1-K3 in NaN-free code, see
// speculate.go), else built in the scratch opmask K7 where needed.
func (g *gen) kbits(bits uint32) obj.Addr {
	for _, s := range g.kpats {
		if s.bits == bits {
			return s.reg
		}
	}
	set := func(k obj.Addr) {
		g.op(x86.AMOVL, imm(int64(int32(bits))), reg(rScratch))
		if bits > 0xFFFF { // 32 word lanes (AVX512BW)
			g.op(x86.AKMOVD, reg(rScratch), k)
			return
		}
		g.op(x86.AKMOVW, reg(rScratch), k)
	}
	if g.kNext <= g.kLast {
		k := kreg(g.kNext)
		g.kNext++
		g.InsertAfter(&g.pro, func() { set(k) })
		g.kpats = append(g.kpats, kpat{bits, k})
		return k
	}
	set(kreg(7))
	return kreg(7)
}

// kbitsHeld reports whether kbits(bits) takes no instruction where it
// is used: the opmask is held already or one is left to hold it.
func (g *gen) kbitsHeld(bits uint32) bool {
	for _, s := range g.kpats {
		if s.bits == bits {
			return true
		}
	}
	return g.kNext <= g.kLast
}

// setYMask sets the first n dwords of ymm r to all-ones, the rest to 0:
// n 0xFF bytes, sign-extended to dwords.
func (g *gen) setYMask(r, n int) {
	var b uint64
	for i := 0; i < n; i++ {
		b |= 0xFF << (8 * i)
	}
	g.op(x86.AMOVQ, imm(int64(b)), reg(rScratch))
	g.op(x86.AVMOVQ, reg(rScratch), g.xr(r))
	g.op(x86.AVPMOVSXBD, g.xr(r), g.vr(r))
}

// byteIndex builds a dword index vector in r from up to 8 byte values.
func (g *gen) byteIndex(r int, idx []int) {
	var b uint64
	for i, v := range idx {
		b |= uint64(v&0xFF) << (8 * i)
	}
	g.op(x86.AMOVQ, imm(int64(b)), reg(rScratch))
	g.op(x86.AVMOVQ, reg(rScratch), g.xr(r))
	g.op(x86.AVPMOVZXBD, g.xr(r), g.vr(r))
}

// widen16 converts V 16-bit values in the half register h of r into f32
// lanes of r.
func (g *gen) widen16(dt dtypes.DataType, r int) {
	if dt == dtypes.F16 {
		g.op(x86.AVCVTPH2PS, g.hr(r), g.vr(r))
		return
	}
	// bf16 is the upper half of an f32: zero-extend and shift up.
	g.op(x86.AVPMOVZXWD, g.hr(r), g.vr(r))
	g.op(x86.AVPSLLD, imm(16), g.vr(r), g.vr(r))
}

// load puts elements of type dt at addr, as f32, into register r:
// n == bcast: one element in every lane; n == V: a full vector; 0 < n < V:
// the first n elements, zeros above, reading no byte past element n-1.
func (g *gen) load(dt dtypes.DataType, r int, addr obj.Addr, n int) {
	if dt.IsInt8() && (n == bcast || n > 0 && n <= g.V) {
		g.loadInt8(dt, r, addr, n)
		return
	}
	if dt == dtypes.S32 {
		// The f32 moves carry any dword exactly; convert after.
		g.load(dtypes.F32, r, addr, n)
		g.op(x86.AVCVTDQ2PS, g.vr(r), g.vr(r))
		return
	}
	switch {
	case n == bcast:
		switch dt {
		case dtypes.F32:
			g.op(x86.AVBROADCASTSS, addr, g.vr(r))
		case dtypes.BF16:
			// Each dword gets the word twice; shifting drops the copy
			// in the low half.
			g.op(x86.AVPBROADCASTW, addr, g.vr(r))
			g.op(x86.AVPSLLD, imm(16), g.vr(r), g.vr(r))
		default:
			g.op(x86.AVPBROADCASTW, addr, g.hr(r))
			g.op(x86.AVCVTPH2PS, g.hr(r), g.vr(r))
		}
	case n == g.V:
		switch dt {
		case dtypes.F32:
			g.op(x86.AVMOVUPS, addr, g.vr(r))
		case dtypes.BF16:
			g.op(x86.AVPMOVZXWD, addr, g.vr(r))
			g.op(x86.AVPSLLD, imm(16), g.vr(r), g.vr(r))
		default:
			g.op(x86.AVCVTPH2PS, addr, g.vr(r))
		}
	case n > 0 && n < g.V:
		g.loadPart(dt, r, addr, n)
	default:
		g.Fail(status.Errorf(status.RuntimeError, "amd64: load of %d lanes", n))
	}
}

// loadPart loads the first n < V elements. AVX-512 masked loads do not
// touch (or fault on) masked-off elements; AVX2 uses VMASKMOVPS for f32,
// which has the same guarantee, and exact-size moves for 16-bit data.
func (g *gen) loadPart(dt dtypes.DataType, r int, addr obj.Addr, n int) {
	if g.avx512 {
		k := g.vmask(n)
		if dt == dtypes.F32 {
			g.opz(x86.AVMOVUPS, addr, k, g.vr(r))
			return
		}
		g.opz(x86.AVMOVDQU16, addr, k, g.hr(r))
		g.widen16(dt, r)
		return
	}
	if dt == dtypes.F32 {
		mk := g.Mark()
		k := g.vmask(n)
		g.op(x86.AVMASKMOVPS, addr, k, g.vr(r))
		g.Release(mk)
		return
	}
	g.loadBytes(r, addr, 2*n) // n words: the same moves, counted in bytes
	g.widen16(dt, r)
}

// vadd sets r += s.
func (g *gen) vadd(r, s int) { g.op(x86.AVADDPS, g.vr(s), g.vr(r), g.vr(r)) }

// rotate sets dst[i] = src[(i+d) mod V].
func (g *gen) rotate(dst, src, d int) {
	d %= g.V
	if g.avx512 {
		g.op(x86.AVALIGND, imm(int64(d)), g.vr(src), g.vr(src), g.vr(dst))
		return
	}
	mk := g.Mark()
	t := g.Tmp()
	idx := make([]int, g.V)
	for i := range idx {
		idx[i] = (i + d) % g.V
	}
	g.byteIndex(t, idx)
	g.op(x86.AVPERMPS, g.vr(src), g.vr(t), g.vr(dst))
	g.Release(mk)
}

// LaneBcast sets every lane of dst to lane j of src.
func (g *gen) LaneBcast(dst, src, j int) {
	if j == 0 {
		g.op(x86.AVBROADCASTSS, g.xr(src), g.vr(dst))
		return
	}
	mk := g.Mark()
	t := g.Tmp()
	g.constant(t, uint32(j))
	g.op(x86.AVPERMPS, g.vr(src), g.vr(t), g.vr(dst))
	g.Release(mk)
}

// HCombine sets every lane of r to the combination of r's lanes: a butterfly
// of swaps at distance V/2, ..., 1, which leaves the total in every lane.
func (g *gen) HCombine(r int) {
	mk := g.Mark()
	g.butterfly(r, g.Tmp(), 4, false, g.CombineAcc)
	g.Release(mk)
}

// butterfly combines the lanes of r of the given bytes (4 or 8) by swaps
// at distance V/2, ..., one lane, each swapped copy put in t and then
// combined into r by combine(r, t), which leaves the combination in every
// lane. The shuffles are the float domain's, or the integer domain's with
// ints, as the combine's own instructions are.
func (g *gen) butterfly(r, t, laneBytes int, ints bool, combine func(r, t int)) {
	halves, quarters, within := x86.AVSHUFF32X4, x86.AVPERM2F128, x86.AVPERMILPS
	if ints {
		halves, quarters, within = x86.AVSHUFI32X4, x86.AVPERM2I128, x86.AVPSHUFD
	}
	if g.avx512 {
		g.op(halves, imm(0x4E), g.vr(r), g.vr(r), g.vr(t))
		combine(r, t)
		g.op(halves, imm(0xB1), g.vr(r), g.vr(r), g.vr(t))
		combine(r, t)
	} else {
		g.op(quarters, imm(0x01), g.vr(r), g.vr(r), g.vr(t))
		combine(r, t)
	}
	g.op(within, imm(0x4E), g.vr(r), g.vr(t))
	combine(r, t)
	if laneBytes == 4 {
		g.op(within, imm(0xB1), g.vr(r), g.vr(t))
		combine(r, t)
	}
}

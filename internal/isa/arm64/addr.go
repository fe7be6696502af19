package arm64

import (
	"github.com/gdnn/gdnn/internal/status"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/arm64"
)

// Memory operands: logical locations relative to the pointer registers,
// and the addressing form each access gets.

// ref is a logical memory location: pointer register r plus off bytes.
type ref struct {
	r   int16
	off int64
}

// at is the location off bytes past where pointer r logically points.
func at(r int16, off int64) ref { return ref{r, off} }

// plus returns x moved by d bytes.
func (x ref) plus(d int64) ref { return ref{x.r, x.off + d} }

// phys returns the base register and physical offset of x, with r's
// pending increment folded in.
func (g *gen) phys(x ref) (int16, int64) { return x.r, g.ptrs.Pending(x.r) + x.off }

// addrFor returns a base register and offset for an access of size bytes
// at x (a pair of 16-byte registers when pair is set) whose offset the
// instruction can encode: the pointer itself when the offset fits the
// scaled or unscaled field, else rAddr, reused when it already points
// close enough, or set to the access's address.
func (g *gen) addrFor(x ref, size int64, pair bool) (int16, int64) {
	return g.addrFits(x, func(o int64) bool {
		if pair {
			return fitsPairQ(o)
		}
		return fitsScaled(o, size) || fitsUnscaled(o)
	})
}

// addrFits returns a base register and offset for an access at x whose
// offset satisfies fits, as addrFor.
func (g *gen) addrFits(x ref, fits func(int64) bool) (int16, int64) {
	base, off := g.phys(x)
	if fits(off) {
		return base, off
	}
	if g.addrOK && g.addrBase == base && fits(off-g.addrOff) {
		return rAddr, off - g.addrOff
	}
	g.addTo(rAddr, base, off)
	g.addrOK, g.addrBase, g.addrOff = true, base, off
	return rAddr, 0
}

// addTo emits dst = src + d, with ADD/SUB immediates (12 bits, shifted
// or not) when d fits 24 bits, else through rTmp.
func (g *gen) addTo(dst, src int16, d int64) {
	as := arm64.AADD
	mag := d
	if d < 0 {
		as, mag = arm64.ASUB, -d
	}
	switch {
	case mag >= 1<<24:
		g.movImm(rTmp, d)
		g.op3(arm64.AADD, reg(rTmp), src, reg(dst))
	case mag&^0xfff != 0 && mag&0xfff != 0:
		g.op3(as, imm(mag&^0xfff), src, reg(dst))
		g.op3(as, imm(mag&0xfff), dst, reg(dst))
	case mag != 0:
		g.op3(as, imm(mag), src, reg(dst))
	case dst != src:
		g.op(arm64.AMOVD, reg(src), reg(dst))
	}
}

// moved records that pointer r changed physically: rAddr no longer holds
// a known offset from it.
func (g *gen) moved(r int16) {
	if g.addrBase == r {
		g.addrOK = false
	}
}

// PlaceLabel appends label l; control may arrive from elsewhere, so rAddr's
// contents are unknown after it. Labels go through here, never through
// the list's own Place.
func (g *gen) PlaceLabel(l *obj.Prog) {
	g.addrOK = false
	g.Place(l)
}

// fpMem loads (or stores) the low size bytes of vector register v from
// (to) x. Loads zero the rest of the register.
func (g *gen) fpMem(load bool, size int64, v int, x ref) {
	base, off := g.addrFor(x, size, false)
	switch size {
	case 4, 8:
		as := arm64.AFMOVS
		r := reg(arm64.REG_F0 + int16(v))
		if size == 8 {
			as = arm64.AFMOVD
		}
		if load {
			g.op(as, mem(base, off), r)
		} else {
			g.op(as, r, mem(base, off))
		}
	case 1, 2, 16:
		if fitsScaled(off, size) {
			g.word(ldstScaled(load, size, v, int(base-arm64.REG_R0), off))
		} else {
			g.word(ldstUnscaled(load, size, v, int(base-arm64.REG_R0), off))
		}
	default:
		g.Fail(status.Errorf(status.RuntimeError, "arm64: memory access of %d bytes", size))
	}
}

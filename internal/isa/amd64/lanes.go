package amd64

import (
	"math"

	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/twitchyliquid64/golang-asm/obj"
	"github.com/twitchyliquid64/golang-asm/obj/x86"
)

// The post-ops that f32 lanes (the f32 epilogue) and f64 lanes (the
// native kernel's f64 epilogue, nativepost.go) compute with the same
// steps, written once over laneOps, the instructions of one lane width.

// laneOps are the instructions and constants of one float lane width.
type laneOps struct {
	add, sub, mul, div, max, min, sqrt, cmp, movu, mova, blendv, rng obj.As
	rndscale, round                                                  obj.As // AVX-512's and AVX2's round to integer
	pandd, pord, ternlog                                             obj.As // EVEX spellings by element size
	absBits                                                          uint64 // all bits but the sign's
	// set broadcasts the lane pattern b into every lane of r.
	set func(g *gen, r int, b uint64)
	// bits is the lane pattern of the parameter v.
	bits func(v float32) uint64
}

var f32Lanes = laneOps{
	add: x86.AVADDPS, sub: x86.AVSUBPS, mul: x86.AVMULPS, div: x86.AVDIVPS, max: x86.AVMAXPS, min: x86.AVMINPS,
	sqrt: x86.AVSQRTPS, cmp: x86.AVCMPPS, movu: x86.AVMOVUPS, mova: x86.AVMOVAPS, blendv: x86.AVBLENDVPS, rng: x86.AVRANGEPS,
	rndscale: x86.AVRNDSCALEPS, round: x86.AVROUNDPS, pandd: x86.AVPANDD, pord: x86.AVPORD, ternlog: x86.AVPTERNLOGD,
	absBits: 0x7fffffff,
	set:     func(g *gen, r int, b uint64) { g.constant(r, uint32(b)) },
	bits:    func(v float32) uint64 { return uint64(math.Float32bits(v)) },
}

var f64Lanes = laneOps{
	add: x86.AVADDPD, sub: x86.AVSUBPD, mul: x86.AVMULPD, div: x86.AVDIVPD, max: x86.AVMAXPD, min: x86.AVMINPD,
	sqrt: x86.AVSQRTPD, cmp: x86.AVCMPPD, movu: x86.AVMOVUPD, mova: x86.AVMOVAPD, blendv: x86.AVBLENDVPD, rng: x86.AVRANGEPD,
	rndscale: x86.AVRNDSCALEPD, round: x86.AVROUNDPD, pandd: x86.AVPANDQ, pord: x86.AVPORQ, ternlog: x86.AVPTERNLOGQ,
	absBits: 1<<63 - 1,
	set:     func(g *gen, r int, b uint64) { g.pattern(r, b) },
	bits:    func(v float32) uint64 { return math.Float64bits(float64(v)) },
}

// pandOf and porOf are the bitwise AND and OR of the width in use: VEX
// (AVX2), or w's EVEX spelling (which needs an element size).
func (g *gen) pandOf(w *laneOps) obj.As {
	if g.avx512 {
		return w.pandd
	}
	return x86.AVPAND
}

func (g *gen) porOf(w *laneOps) obj.As {
	if g.avx512 {
		return w.pord
	}
	return x86.AVPOR
}

// eltwiseLanes applies the unary post-op op to the w lanes of r, as
// plan.Eltwise (f32) or plan.EltwiseF64 (f64) has it, bit for bit (NaN
// in, a NaN out; signed zeros as the reference gives them), and
// reports whether op is one of those written here.
func (g *gen) eltwiseLanes(w *laneOps, op plan.PostOp, r int) bool {
	x := g.vr(r)
	switch op.Kind {
	case ops.Abs:
		t := g.Tmp()
		w.set(g, t, w.absBits)
		g.op(g.pandOf(w), g.vr(t), x, x)
	case ops.Clamp:
		// VMAXPS returns its second source (x) when either is NaN or
		// both are zero: max(alpha, x) then min(beta, x) is exactly
		// "if x < alpha {alpha}; if x > beta {beta}".
		t := g.Tmp()
		w.set(g, t, w.bits(op.Alpha))
		g.op(w.max, x, g.vr(t), x)
		w.set(g, t, w.bits(op.Beta))
		g.op(w.min, x, g.vr(t), x)
	case ops.Square:
		g.op(w.mul, x, x, x)
	case ops.Sqrt:
		g.op(w.sqrt, x, x)
	case ops.Round:
		if g.avx512 {
			g.op(w.rndscale, imm(0), x, x)
		} else {
			g.op(w.round, imm(0), x, x)
		}
	case ops.ReLU:
		// x > 0 or NaN (not-less-or-equal, unordered true) keeps x,
		// everything else (including -0) becomes +0.
		t := g.Tmp()
		g.zero(t)
		if g.avx512 {
			g.op(w.cmp, imm(6), g.vr(t), x, kreg(6))
			g.opz(w.movu, x, kreg(6), x)
		} else {
			g.op(w.cmp, imm(6), g.vr(t), x, g.vr(t))
			g.op(x86.AVPAND, g.vr(t), x, x)
		}
	case ops.LeakyReLU:
		// Only x < 0 (ordered) is scaled: NaN and -0 stay as they are.
		t := g.Tmp()
		g.zero(t)
		if g.avx512 {
			g.op(w.cmp, imm(1), g.vr(t), x, kreg(6))
			w.set(g, t, w.bits(op.Alpha))
			g.op(w.mul, g.vr(t), x, kreg(6), x)
		} else {
			a := g.Tmp()
			g.op(w.cmp, imm(1), g.vr(t), x, g.vr(t))
			w.set(g, a, w.bits(op.Alpha))
			g.op(w.mul, g.vr(a), x, g.vr(a))
			g.op(w.blendv, g.vr(t), g.vr(a), x, x)
		}
	default:
		return false
	}
	return true
}

// binaryLanes sets r = r OP t in w lanes for the binary post-op k (the
// result on the left), as plan.Binary or plan.BinaryF64 has it: Maximum
// and Minimum give NaN when either side is NaN and order +0 above -0. t
// is clobbered. It reports whether k is one of the binary post-ops.
func (g *gen) binaryLanes(w *laneOps, k ops.Kind, r, t int) bool {
	x, y := g.vr(r), g.vr(t)
	switch k {
	case ops.Add:
		g.op(w.add, y, x, x)
	case ops.Subtract:
		g.op(w.sub, y, x, x)
	case ops.Multiply:
		g.op(w.mul, y, x, x)
	case ops.Divide:
		g.op(w.div, y, x, x)
	case ops.Minimum, ops.Maximum:
		g.minMaxLanes(w, k, x, y)
	default:
		return false
	}
	return true
}

// minMaxLanes sets x = x max/min y (a register, clobbered) in w lanes
// with plan.Binary's semantics: AVX-512's max by rangeExact's steps, the
// others by minMax's.
func (g *gen) minMaxLanes(w *laneOps, k ops.Kind, x, y obj.Addr) {
	if g.avx512 && k == ops.Maximum {
		g.rangeIn(w, k, y, x, nil)
		return
	}
	g.minMaxIn(w, k, x, y)
}

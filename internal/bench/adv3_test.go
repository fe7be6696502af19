package bench

import (
	"io"
	"testing"
)

// TestAdv3DequantNormBetaChain: a LayerNorm or GroupNorm with beta and a
// fused op after it, after a fused Dequantize (whose integer fill gives
// normalized values that nearly cancel beta), passes gdnn's output for
// every seed: the check's allowance for cancellation against beta goes
// through the chain, as the lnorm and gnorm drivers' does; an output
// off by 1e-5 still fails.
func TestAdv3DequantNormBetaChain(t *testing.T) {
	r := newRunner(io.Discard, io.Discard)
	for name, doc := range map[string]string{
		"LayerNorm": normGraphJSON("LayerNorm", lnormAttrs, "[3, 5]", false, mulPost),
		"GroupNorm": normGraphJSON("GroupNorm", gnormAttrs, "[6]", false, mulPost),
	} {
		for _, q := range []struct {
			dt    string
			scale float64
			zp    int64
		}{{"s8", 0.25, 3}, {"u8", 0.5, 255}} {
			n := buildDecomposed(t, writeCase(t, doc, withDequant(q.dt, q.scale, q.zp)))
			for seed := uint64(0); seed < 200; seed++ {
				if f := r.checkGraphNorm(n, seed); f != nil {
					t.Fatalf("%s, %s, seed %d: %s %v", name, q.dt, seed, f.reason, f.detail)
				}
			}
			// A wrong output still fails.
			b := n.outBufs[0][n.dst]
			at := rows(n.outs[n.dst].Dims) / 2
			b.set(at, b.get(at)*(1+1e-5)+1e-6)
			if f := r.compareGraphNorm(n, false); f == nil || f.state != "FAILED" {
				t.Errorf("%s, %s: a changed output passes", name, q.dt)
			}
		}
	}
}

// TestAdv3DequantNormNegativeScale: a LayerNorm or GroupNorm after a
// fused Dequantize whose scale is a negative power of two (its values
// as exact as a positive one's) is checked and passes, not refused as a
// scale that is no power of two.
func TestAdv3DequantNormNegativeScale(t *testing.T) {
	for name, doc := range map[string]string{
		"LayerNorm": normGraphJSON("LayerNorm", lnormAttrs, "[3, 5]", false, ""),
		"GroupNorm": normGraphJSON("GroupNorm", gnormAttrs, "[6]", false, mulPost),
	} {
		code, out, errw := runGraph(t, writeCase(t, doc, withDequant("s8", -0.25, 3)))
		if code != 0 || summary(t, out)[1] != "1" {
			t.Errorf("%s, scale -0.25: exit %d\n%s%s", name, code, out, errw)
		}
	}
}

package bench

import (
	"math"
	"strings"
	"testing"
)

// TestR1NormPostOpAfterOverflow: a normalization driver's src scale can
// overflow f32 (lnorm's values of about ±2 times 3e38; log-softmax's
// negative fill times 3), giving -Inf before an eltwise post-op. gdnn's
// ReLU, GELUs, Mish and HardSwish give their limit there (0 or -0, as
// README's "infinities exact" says, on every ISA and the interpreter),
// but the driver's reference computes alpha*x and x*(...)
// (refEltwise), 0 * -Inf = NaN, and FAILS the correct result.
func TestR1NormPostOpAfterOverflow(t *testing.T) {
	for _, args := range [][]string{
		{"--lnorm", "--dir=FWD_I", "--attr-scales=src:common:3e38", "--attr-post-ops=relu", "4x16"},
		{"--lnorm", "--dir=FWD_I", "--dt=f32:s8", "--attr-scales=src:common:3e38", "--attr-post-ops=relu", "4x16"},
		{"--lnorm", "--dir=FWD_I", "--attr-scales=src:common:3e38", "--attr-post-ops=gelu_erf", "4x16"},
		{"--lnorm", "--dir=FWD_I", "--attr-scales=src:common:3e38", "--attr-post-ops=gelu_tanh", "4x16"},
		{"--lnorm", "--dir=FWD_I", "--attr-scales=src:common:3e38", "--attr-post-ops=mish", "4x16"},
		{"--lnorm", "--dir=FWD_I", "--attr-scales=src:common:3e38", "--attr-post-ops=hardswish", "4x16"},
		{"--softmax", "--alg=LOGSOFTMAX", "--axis=2", "--attr-scales=src:common:3", "--attr-post-ops=relu", "1x1x129"},
		{"--softmax", "--alg=LOGSOFTMAX", "--attr-scales=src:common:3+dst:common:0.02", "--attr-post-ops=add:s8:per_tensor+relu", "3x1000x33"},
	} {
		for _, isa := range []string{"--max-isa=all", "--max-isa=none"} {
			_, out, _ := runMain(t, append([]string{isa}, args...)...)
			s := summary(t, out)
			if s[1] != "1" || s[5] != "0" {
				line := ""
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, "FAILED") {
						line = l
						break
					}
				}
				t.Errorf("%s %v: passed %s failed %s: %s", isa, args, s[1], s[5], line)
			}
		}
	}
	// The reference itself: ReLU (alpha 0) of -Inf is 0 in gdnn's graph
	// ReLU and oneDNN Graph's (max(x, 0)).
	if v := refEltwise("relu", 0, 0, math.Inf(-1)); v != 0 {
		t.Errorf("refEltwise(relu, alpha 0, -Inf) = %v, want 0", v)
	}
}

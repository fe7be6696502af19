package bench

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestNormPostOpAfterOverflow: a normalization driver's src scale can
// overflow f32 (lnorm's values of about ±2 times 3e38; log-softmax's
// negative fill times 3), giving -Inf before an eltwise post-op. gdnn's
// ReLU, GELUs, Mish and HardSwish give their limit there (0 or -0, as
// README's "infinities exact" says, on every ISA and the interpreter),
// and so must the driver's reference, not 0 * -Inf = NaN.
func TestNormPostOpAfterOverflow(t *testing.T) {
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

// checkLinesBefore is the -v1 per-check lines ("[random fill] outputs:5
// max_err/allowed:...") printed before the problem numbered idx.
func checkLinesBefore(out string, idx int) []string {
	var lines, cur []string
	prefix := strconv.Itoa(idx) + ":"
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "[") {
			cur = append(cur, l)
			continue
		}
		if strings.HasPrefix(l, prefix) {
			lines = cur
		}
		if strings.Contains(l, "__REPRO") {
			cur = nil
		}
	}
	return lines
}

// TestReproLineIsPositionFree: a problem's __REPRO line run alone sees
// the data it saw in the batch (benchdnn's repro lines reproduce a
// failure), wherever the problem stood in that batch.
func TestReproLineIsPositionFree(t *testing.T) {
	for _, c := range []struct{ batch, alone []string }{
		{[]string{"--reduction", "--alg=max,sum", "-v1", "5x1000:5x1"}, []string{"--reduction", "--alg=sum", "-v1", "5x1000:5x1"}},
		{[]string{"--softmax", "--alg=SOFTMAX,LOGSOFTMAX", "-v1", "5x1000"}, []string{"--softmax", "--alg=LOGSOFTMAX", "-v1", "5x1000"}},
		{[]string{"--lnorm", "--dir=FWD_I", "--flags=,CH", "-v1", "5x1000"}, []string{"--lnorm", "--dir=FWD_I", "--flags=CH", "-v1", "5x1000"}},
	} {
		_, inBatch, _ := runMain(t, c.batch...)
		_, alone, _ := runMain(t, c.alone...)
		b, a := checkLinesBefore(inBatch, 1), checkLinesBefore(alone, 0)
		if len(b) == 0 || len(a) == 0 {
			t.Errorf("%v: no check lines:\n%s\n%s", c.alone, inBatch, alone)
			continue
		}
		if strings.Join(b, "\n") != strings.Join(a, "\n") {
			t.Errorf("%v: second in a run %q, alone %q: the repro line runs on other data", c.alone, b, a)
		}
	}
}

// TestRefEltwiseLimits: the reference's ops at the infinities are their
// limits, and a NaN stays NaN.
func TestRefEltwiseLimits(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		op          string
		alpha, beta float64
		x, want     float64
	}{
		{"relu", 0, 0, -inf, 0}, {"relu", 0.5, 0, -inf, -inf}, {"relu", 0, 0, inf, inf},
		{"gelu_erf", 0, 0, -inf, 0}, {"gelu_erf", 0, 0, inf, inf},
		{"gelu_tanh", 0, 0, -inf, 0}, {"gelu_tanh", 0, 0, inf, inf},
		{"mish", 0, 0, -inf, 0}, {"mish", 0, 0, inf, inf},
		{"hardswish", 1.0 / 6, 0.5, -inf, 0}, {"hardswish", 1.0 / 6, 0.5, inf, inf},
	} {
		if got := refEltwise(c.op, c.alpha, c.beta, c.x); got != c.want {
			t.Errorf("%s(alpha %v, beta %v) of %v = %v, want %v", c.op, c.alpha, c.beta, c.x, got, c.want)
		}
	}
	for _, op := range []string{"relu", "gelu_erf", "gelu_tanh", "mish", "hardswish"} {
		if got := refEltwise(op, 0, 0, math.NaN()); !math.IsNaN(got) {
			t.Errorf("%s of NaN = %v, want NaN", op, got)
		}
	}
}

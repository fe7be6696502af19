package bench

import (
	"strings"
	"testing"
)

// TestExactDriver runs the integer types wider than 8 bits through the
// reduction driver, every alg they take on every axis pattern of a 3-D
// shape, checked byte for byte against the exact oracle (the exact fill
// puts the types' extremes in, so sums and products wrap around), and
// in the bitwise and performance modes.
func TestExactDriver(t *testing.T) {
	for _, dt := range []string{"s16", "u16", "s32", "u32", "s64", "u64"} {
		code, out, errw := runMain(t, "--reduction", "--sdt="+dt, "--ddt="+dt, "--alg=sum,mul,max,min,mean",
			"--stag=abc,acb", "5x7x9:1x7x9", "5x7x9:5x1x1", "5x7x9:1x1x1", "5x7x9:5x7x1", "5x7x9:5x7x9")
		wantAllPassed(t, code, out, 5*2*5)
		if t.Failed() {
			t.Fatalf("%s: %s", dt, errw)
		}
	}
	code, out, _ := runMain(t, "--reduction", "--sdt=s64", "--ddt=f32", "--alg=mean", "64x300:64x1")
	wantAllPassed(t, code, out, 1)
	for _, mode := range []string{"--mode=B", "--mode=P"} {
		code, out, errw := runMain(t, mode, "--max-ms-per-prb=20", "--reduction", "--sdt=s64", "--ddt=s64", "--alg=sum", "4x4096:4x1")
		if code != 0 || !strings.Contains(out, "tests:1 passed:1") {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errw)
		}
	}
	_, out, _ = runMain(t, "--reduction", "--sdt=s32", "--ddt=s32", "--alg=norm_lp_sum", "--p=1", "4x8:4x1")
	if !strings.Contains(out, "0:SKIPPED (invalid case: --alg=norm_lp_sum of s32 src)") {
		t.Errorf("an Lp norm of s32: %s", out)
	}
}

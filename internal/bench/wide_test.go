package bench

import (
	"bytes"
	"strings"
	"testing"
)

// TestF64Driver: f64 src (a gdnn extension) passes every alg into f64 and
// f32 dst, with post-ops and an f64 operand; the pairs gdnn does not make
// are UNIMPLEMENTED with the reason.
func TestF64Driver(t *testing.T) {
	var out, errb bytes.Buffer
	args := []string{"--reduction", "--sdt=f64", "--ddt=f64,f32",
		"--alg=sum,mean,max,min,mul,norm_lp_max,norm_lp_sum,norm_lp_power_p_max,norm_lp_power_p_sum", "--p=2", "--eps=0.25",
		"6x300x5:6x1x5", "4x4x64:1x4x1",
		"--alg=sum,max", "--attr-post-ops=add:f64:per_oc+relu+mul:f32", "8x3x50:8x3x1",
		"--ddt=bf16", "--alg=sum", "--attr-post-ops=", "8x3x5:8x1x5",
		"--sdt=f32", "--ddt=f64", "8x3x5:8x1x5"}
	Main(args, &out, &errb)
	got := out.String()
	if !strings.Contains(got, "tests:42 passed:40 skipped:0 mistrusted:0 unimplemented:2 invalid_arguments:0 failed:0") {
		t.Fatalf("summary:\n%s\n%s", got, errb.String())
	}
	for _, want := range []string{
		"data types f64:bf16; gdnn reduces f64 data (a gdnn extension) into f64 or f32, and only f64 data into f64",
		"data types f32:f64; gdnn reduces f64 data (a gdnn extension) into f64 or f32, and only f64 data into f64",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
}

package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

func TestParseSummary(t *testing.T) {
	d := defaultSummary()
	if !d.failures || !d.impl || d.implCSV || !d.unimpl {
		t.Errorf("defaults %+v, want failures, impl and unimplemented on, impl-csv off (benchdnn's)", d)
	}
	cases := []struct {
		v    string
		want summarySettings
	}{
		{"", d},
		{"no-impl", summarySettings{failures: true, unimpl: true}},
		{"impl-csv", summarySettings{failures: true, impl: true, implCSV: true, unimpl: true}},
		{"no-failures+no-impl+no-unimplemented", summarySettings{}},
		{"no-impl+impl", d}, // the last wins
	}
	for _, c := range cases {
		got, err := parseSummary(c.v)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.v, got, err, c.want)
		}
	}
	for _, v := range []string{"bogus", "impl+", "no-", "impl,failures"} {
		if _, err := parseSummary(v); !errors.Is(err, status.InvalidArguments) {
			t.Errorf("%q: %v, want invalid_arguments", v, err)
		}
	}
}

// TestSummaryOutput drives the CLI with buffers (no terminal): the
// implementation table, the UNIMPLEMENTED reasons grouped, and the failed
// cases (ten, then a count) come before the tests line.
func TestSummaryOutput(t *testing.T) {
	args := []string{"--reduction", "--sdt=f32,s32", "--ddt=f32", "2x3:2x1", "4x3:4x1"}
	for i := 0; i < 11; i++ {
		args = append(args, "4x4:3x1") // INVALID_ARGUMENTS, counted as failures
	}
	code, out, errw := runMain(t, args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errw)
	}
	implHead := "= Implementation statistics (--summary=no-impl to disable) ="
	unimplHead := "= Unimplemented reasons (--summary=no-unimplemented to disable) ="
	failHead := "= Failed cases summary (--summary=no-failures to disable) ="
	for _, want := range []string{implHead, " : 2 (100%) ", unimplHead,
		"     2 x --alg=sum of s32 data into f32: a sum of s32 data writes s32, not f32 (first: problem 1)\n", failHead,
		"\n4:INVALID_ARGUMENTS (dst dim 0 is 3; it must equal src dim 0 (4) or be 1) __REPRO: --reduction 4x4:3x1\n",
		"\n(... 12 more cases ...)\n============================\ntests:26 "} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if i, j, k, l := strings.Index(out, implHead), strings.Index(out, unimplHead), strings.Index(out, failHead), strings.Index(out, "tests:"); !(i < j && j < k && k < l) {
		t.Errorf("sections out of order (impl %d, unimplemented %d, failures %d, tests %d)", i, j, k, l)
	}
	if n := strings.Count(out[strings.Index(out, failHead):], "INVALID_ARGUMENTS ("); n != 10 {
		t.Errorf("failures summary lists %d cases, want 10", n)
	}

	_, out, _ = runMain(t, append([]string{"--summary=no-failures+no-impl+no-unimplemented+impl-csv"}, args...)...)
	for _, head := range []string{implHead, unimplHead, failHead} {
		if strings.Contains(out, head) {
			t.Errorf("%q printed although disabled", head)
		}
	}
	if !strings.Contains(out, "\nbenchdnn_summary,impl_names,") || !strings.Contains(out, ":2\ntests:") {
		t.Errorf("no impl-csv line in\n%s", out)
	}
	// benchdnn prints no failures summary in performance mode.
	_, out, _ = runMain(t, "--mode=P", "--fix-times-per-prb=1", "--reduction", "4x4:3x1")
	if strings.Contains(out, failHead) {
		t.Errorf("failures summary in P mode:\n%s", out)
	}
}

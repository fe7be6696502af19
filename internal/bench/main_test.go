package bench

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runMain runs Main in-process and returns the exit status and outputs.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := Main(args, &out, &errw)
	return code, out.String(), errw.String()
}

var summaryRE = regexp.MustCompile(`tests:(\d+) passed:(\d+) skipped:(\d+) mistrusted:0 unimplemented:(\d+) invalid_arguments:(\d+) failed:(\d+) listed:(\d+)`)

func summary(t *testing.T, out string) []string {
	t.Helper()
	m := summaryRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary line in:\n%s", out)
	}
	return m[1:]
}

func TestMainPassAndRepro(t *testing.T) {
	code, out, errw := runMain(t, "--reduction", "--sdt=f32,bf16", "--stag=abx,axb", "--attr-post-ops=,relu+add:f32:per_oc", "2x16x3x4:2x1x3x1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	if got := summary(t, out); got[0] != "8" || got[1] != "8" {
		t.Errorf("summary %v, want 8 tests all passed\n%s", got, out)
	}
	want := "0:PASSED __REPRO: --reduction 2x16x3x4:2x1x3x1"
	if !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
	// Every repro line reproduces its problem on its own.
	for _, line := range strings.Split(out, "\n") {
		_, repro, ok := strings.Cut(line, "__REPRO: ")
		if !ok {
			continue
		}
		code, out2, _ := runMain(t, strings.Fields(repro)...)
		if code != 0 || !strings.Contains(out2, "0:PASSED __REPRO: "+repro+"\n") {
			t.Errorf("repro %q: exit %d\n%s", repro, code, out2)
		}
	}
}

func TestMainExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "--perf-template"},
		{[]string{}, 2, "no arguments"},
		{[]string{"--reduction", "--bogus=1", "2x3:2x1"}, 2, `unknown option for the reduction driver: "--bogus=1"`},
		{[]string{"--reduction", "2x3:2"}, 2, "argument 2: "},
		// A dst dim that contradicts its src dim is an invalid problem, as
		// in benchdnn: counted, the batch goes on, exit 1.
		{[]string{"--reduction", "2x3:2x2", "4x4:3x1", "2x3:2x1"}, 1,
			"0:INVALID_ARGUMENTS (dst dim 1 is 2; it must equal src dim 1 (3) or be 1) __REPRO: --reduction 2x3:2x2\n" +
				"1:INVALID_ARGUMENTS (dst dim 0 is 3; it must equal src dim 0 (4) or be 1) __REPRO: --reduction 4x4:3x1\n" +
				"2:PASSED"},
		// A tensor too large to allocate is SKIPPED, and the batch goes on.
		{[]string{"--reduction", "99999999999x99999999999:1x1", "2x3:2x1"}, 0, "tests:2 passed:1 skipped:1"},
		{[]string{"--reduction", "-sdt=f32"}, 2, "`--` prefix"},
		{[]string{"--reduction", "--sdt=f99", "2x3:2x1"}, 2, "unknown data type"},
		{[]string{"--reduction", "--stag=abq", "2x3:2x1"}, 2, "invalid tag"},
		{[]string{"--reduction", "--attr-post-ops=nope", "2x3:2x1"}, 2, "unknown post-op kind"},
		{[]string{"--reduction", "--perf-template=%nope%", "2x3:2x1"}, 2, "unknown token"},
		{[]string{"--reduction", "--mode=Q", "2x3:2x1"}, 2, "mode"},
		// benchdnn's options and tokens that gdnnbench lacks say so.
		{[]string{"--cold-cache=all", "--reduction", "2x3:2x1"}, 2, "argument 1: unimplemented: --cold-cache=all: benchdnn's --cold-cache is not implemented by gdnnbench"},
		{[]string{"--reduction", "--fast-ref=false", "2x3:2x1"}, 2, "argument 2: unimplemented: --fast-ref=false: benchdnn's --fast-ref is not implemented"},
		{[]string{"--graph", "--ctx-init=2", "--case=x.json"}, 2, "benchdnn's --ctx-init is not implemented by gdnnbench: gdnn's threads are set by --threads"},
		{[]string{"--reduction", "--perf-template=%-clocks%", "2x3:2x1"}, 2, "unimplemented: perf template: benchdnn's %-clocks% is not implemented by gdnnbench"},
		{[]string{"--reduction", "--batch=/nonexistent/file", "2x3:2x1"}, 2, "cannot find batch file"},
		// Files that never end are refused at a bound, not read into memory.
		{[]string{"--reduction", "--batch=/dev/zero", "2x3:2x1"}, 2, "larger than 16 MiB"},
		{[]string{"--graph", "--case=/dev/zero"}, 2, "larger than 64 MiB"},
		{[]string{"2x3:2x1"}, 2, "before a driver"},
		{[]string{"--sdt=f32"}, 2, "need a driver first: --reduction, --graph, --softmax, --lnorm or --gnorm"},
		{[]string{"--reduction", "--max-isa=sse9"}, 2, "max-isa"},
		{[]string{"--graph", "--case=/nonexistent.json"}, 2, "no such file"},
		{[]string{"--graph", "--case=" + os.TempDir()}, 2, "is a directory, not a file"},
		{[]string{"--softmax", "1x2x3x4x5x6x7x8x9x10x11x12x13"}, 2, "the tensor has rank 13"},
		// A tag for the wrong rank is an invalid problem: counted, exit 1.
		{[]string{"--reduction", "--stag=abcd", "2x3:2x1"}, 1, "invalid_arguments:1"},
		// Blocked layouts run; one that blocks a dim the rank lacks is invalid.
		{[]string{"--reduction", "--alg=sum,mean", "--stag=aBx16b,abx", "4x16x2:4x1x2"}, 0, "tests:4 passed:4 skipped:0 mistrusted:0 unimplemented:0"},
		{[]string{"--reduction", "--stag=aBx16b", "16:1"}, 1, "invalid_arguments:1"},
		// Honest UNIMPLEMENTED and SKIPPED results do not fail the run.
		{[]string{"--reduction", "--sdt=s32", "2x3:2x1"}, 0, "unimplemented:1"},
		{[]string{"--reduction", "--skip-impl=jit,interp", "2x3:2x1"}, 0, "skipped:1"},
		// --match drops what it does not match: not run, not counted.
		{[]string{"--summary=no-impl", "--reduction", "--match=5x", "2x3:2x1", "5x3:5x1"}, 0, "0:PASSED __REPRO: --reduction 5x3:5x1\ntests:1 passed:1 skipped:0"},
		// benchdnn's basic regular expressions: + is an ordinary character.
		{[]string{"--summary=no-impl", "--reduction", "--attr-post-ops=relu,relu+add:f32", "--match=relu+add", "2x3:2x1"}, 0, "0:PASSED __REPRO: --reduction --attr-post-ops=relu+add:f32 2x3:2x1\ntests:1 passed:1"},
		// The global options are not part of the matched problem string.
		{[]string{"--canonical=true", "--reduction", "--match=^--sdt=f32 ", "2x3:2x1"}, 0, "tests:1 passed:1"},
		{[]string{"--reduction", "--match=a\\(", "2x3:2x1"}, 2, "unmatched"},
		{[]string{"--reduction", "--match=\\(a\\)\\1", "2x3:2x1"}, 2, "back-reference"},
		{[]string{"--reduction", "--mode=L", "2x3:2x1"}, 0, "listed:1"},
		{[]string{"--reduction", "--mode=B", "--sdt=bf16", "64x300:64x1"}, 0, "passed:1"},
		{[]string{"--reduction", "--mode=I", "2x3:2x1"}, 0, "0:INITIALIZED"},
		{[]string{"--reduction", "--mode=R", "2x3:2x1"}, 0, "0:EXECUTED"},
		{[]string{"--reduction", "--start=1", "2x3:2x1", "4x3:4x1"}, 0, "tests:2 passed:1 skipped:1"},
		// Defaults stay out of the repro line, as benchdnn's; others are in.
		{[]string{"--reduction", "--sdt=bf16", "--alg=max", "2x3:2x1"}, 0, "0:PASSED __REPRO: --reduction --sdt=bf16 --alg=max 2x3:2x1\n"},
		// An empty --max-isa restores the default cap.
		{[]string{"--max-isa=none", "--max-isa=", "--reduction", "2x3:2x1"}, 0, "0:PASSED __REPRO: --reduction 2x3:2x1\n"},
		{[]string{"--reduction", "--p=1e400", "2x3:2x1"}, 2, "out of the f32 range"},
		// f32 overflows between post-ops as gdnn's pipeline does: the
		// reference follows it in both fills.
		{[]string{"--reduction", "--attr-post-ops=linear:1e38:0+linear:1e-38:0", "2x64:2x1"}, 0, "tests:1 passed:1"},
		{[]string{"--reduction", "--sdt=f16", "--alg=mul", "--attr-post-ops=linear:1e38:1e38", "64x1000:64x1"}, 0, "tests:1 passed:1"},
		// A float src into an integer dst is a valid norm (benchdnn skips integer src only).
		{[]string{"--reduction", "--ddt=s8", "--alg=norm_lp_max", "--p=2", "2x3:1x3"}, 0, "tests:1 passed:1"},
	}
	for _, c := range cases {
		code, out, errw := runMain(t, c.args...)
		if code != c.code || !strings.Contains(out+errw, c.want) {
			t.Errorf("%v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.want, out, errw)
		}
	}
}

func TestMainPerfTemplates(t *testing.T) {
	code, out, _ := runMain(t, "--mode=P", "--fix-times-per-prb=3", "--reduction", "--sdt=f16", "--ddt=f32",
		"--perf-template=X %prb% %sdt%:%ddt% %-time% %~time% %0Gbw% %-bwpct% %times% X", "64x256:64x1")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	re := regexp.MustCompile(`(?m)^X --mode=P --fix-times-per-prb=3 --reduction --sdt=f16 64x256:64x1 f16:f32 [0-9.e+-]+ [0-9.e+-]+ [0-9.e+-]+ [0-9.e+-]+ 3 X$`)
	if !re.MatchString(out) {
		t.Errorf("perf line not found:\n%s", out)
	}
	if strings.Contains(out, "0:PASSED") {
		t.Errorf("P mode printed a PASSED line:\n%s", out)
	}
	code, out, _ = runMain(t, "--mode=CP", "--fix-times-per-prb=2", "--reduction", "--perf-template=csv", "--table", "8x8:8x1")
	if code != 0 || !strings.Contains(out, "perf,cpu,") || !strings.Contains(out, "0:PASSED") ||
		!strings.Contains(out, "%readBW") || !strings.Contains(out, "perf,engine,impl,name,sdt,ddt") {
		t.Errorf("CP csv + table: exit %d\n%s", code, out)
	}
}

func TestBatchFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(sub, "shapes"), "# shapes\n2x3:2x1 # trailing comment\n\n4x5:1x5\n")
	write(filepath.Join(dir, "top"), "--reset\n--sdt=f32,f16 --batch=sub/shapes\n--reset --batch=sub/shapes\n")
	code, out, errw := runMain(t, "--reduction", "--batch="+filepath.Join(dir, "top"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	if got := summary(t, out); got[0] != "6" || got[1] != "6" {
		t.Errorf("nested batch: summary %v\n%s", got, out)
	}
	write(filepath.Join(sub, "bad"), "2x3:2x1\n  --sdt=f32 --wat\n")
	write(filepath.Join(dir, "top2"), "--batch=sub/bad\n")
	code, _, errw = runMain(t, "--reduction", "--batch="+filepath.Join(dir, "top2"))
	if code != 2 || !strings.Contains(errw, filepath.Join(sub, "bad")+":2:13") {
		t.Errorf("unknown option in a nested batch: exit %d, stderr %q", code, errw)
	}
	write(filepath.Join(dir, "loop"), "--batch=loop\n")
	code, _, errw = runMain(t, "--reduction", "--batch="+filepath.Join(dir, "loop"))
	if code != 2 || !strings.Contains(errw, "nest deeper") {
		t.Errorf("self-including batch: exit %d, stderr %q", code, errw)
	}
}

func TestTokenizeBatch(t *testing.T) {
	toks := TokenizeBatch("--a=1  b#c\n  # x y\n\t--d \"e f\"\n", "f", "")
	var got []string
	for _, a := range toks {
		got = append(got, a.Text+"@"+a.Where)
	}
	want := []string{"--a=1@f:1:1", "b#c@f:1:8", "--d@f:3:2", "\"e@f:3:6", "f\"@f:3:9"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tokens %v, want %v", got, want)
	}
}

// sharedInputs is oneDNN's benchdnn inputs folder shipped beside the repo.
const sharedInputs = "../../../shared/benchdnn-inputs"

func needShared(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(sharedInputs); os.IsNotExist(err) {
		t.Skip("shared benchdnn inputs are not present")
	}
}

func TestShapesCI(t *testing.T) {
	needShared(t)
	code, out, errw := runMain(t, "--reduction", "--mode=C", "--sdt=f32,bf16,f16", "--alg=mean",
		"--batch="+sharedInputs+"/reduction/shapes_ci")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	if got := summary(t, out); got[0] != "24" || got[1] != "24" {
		t.Errorf("shapes_ci summary %v\n%s", got, out)
	}
}

// TestEveryReductionBatchLists runs every reduction batch file oneDNN
// ships through the driver in list mode, which parses every option and
// resolves every tag: each must run to its summary with exit 0.
func TestEveryReductionBatchLists(t *testing.T) {
	needShared(t)
	files, err := os.ReadDir(sharedInputs + "/reduction")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		code, out, errw := runMain(t, "--reduction", "--mode=L", "--batch="+sharedInputs+"/reduction/"+f.Name())
		if code != 0 {
			t.Errorf("%s: exit %d: %s", f.Name(), code, errw)
			continue
		}
		if got := summary(t, out); got[6] == "0" {
			t.Errorf("%s: nothing listed: %v", f.Name(), got)
		}
	}
}

// TestAttributeKnobs checks benchdnn's other attribute and context
// knobs: values gdnn satisfies pass, the rest make the problem
// UNIMPLEMENTED, an empty value restores the default, and the repro line
// carries them.
func TestAttributeKnobs(t *testing.T) {
	cases := []struct {
		args  []string
		state string
	}{
		{[]string{"--attr-fpmath=bf16:true", "--attr-deterministic=true", "--attr-acc-mode=relaxed", "--attr-scratchpad=library",
			"--attr-rounding-mode=dst:environment"}, "PASSED"},
		{[]string{"--attr-rounding-mode=dst:stochastic"}, "UNIMPLEMENTED"},
		{[]string{"--attr-scales=src:common:0.5"}, "UNIMPLEMENTED"},
		{[]string{"--attr-zero-points=src:common:1"}, "UNIMPLEMENTED"},
		{[]string{"--attr-acc-mode=f16"}, "UNIMPLEMENTED"},
		{[]string{"--inplace=true"}, "UNIMPLEMENTED"},
		{[]string{"--inplace=1"}, "UNIMPLEMENTED"},
		{[]string{"--inplace=0", "--inplace=FALSE"}, "PASSED"},
		{[]string{"--ctx-init=1"}, "UNIMPLEMENTED"},
		{[]string{"--ctx-init=auto", "--ctx-exe=auto:auto"}, "PASSED"},
		{[]string{"--attr-scales=src:common:0.5", "--attr-scales="}, "PASSED"},
		{[]string{"--attr-scales=src:common:0.5", "--reset", "--reduction"}, "PASSED"},
	}
	for _, c := range cases {
		args := append(append([]string{"--cpu-isa-hints=prefer_ymm", "--mode-modifier=P", "--reduction"}, c.args...), "2x16:2x1")
		code, out, errw := runMain(t, args...)
		if code != 0 || !strings.Contains(out, "0:"+c.state+" ") {
			t.Errorf("%v: exit %d, want %s:\n%s%s", c.args, code, c.state, out, errw)
		}
		if c.state == "UNIMPLEMENTED" && !strings.Contains(out, "__REPRO: --reduction "+c.args[0]+" 2x16:2x1") {
			t.Errorf("%v: repro line lacks the knob:\n%s", c.args, out)
		}
	}
	if code, _, _ := runMain(t, "--reduction", "--attr-scales", "2x16:2x1"); code != 2 {
		t.Errorf("--attr-scales without a value: exit %d, want 2", code)
	}
	// A list is a problem per item, as benchdnn runs it; an empty item is
	// the default.
	code, out, errw := runMain(t, "--reduction", "--attr-scales=,src:common:0.5", "--ctx-init=auto,1", "2x16:2x1")
	for _, want := range []string{
		"0:PASSED __REPRO: --reduction --ctx-init=auto 2x16:2x1",
		"1:UNIMPLEMENTED (gdnn does not implement --ctx-init=1) __REPRO: --reduction --ctx-init=1 2x16:2x1",
		"2:UNIMPLEMENTED (gdnn does not implement --attr-scales=src:common:0.5) __REPRO: --reduction --attr-scales=src:common:0.5 --ctx-init=auto 2x16:2x1",
		"3:UNIMPLEMENTED (gdnn does not implement --attr-scales=src:common:0.5 --ctx-init=1)",
		"tests:4 passed:1",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("knob lists: exit %d, want %q in\n%s%s", code, want, out, errw)
		}
	}
	// Malformed values are refused before any problem runs, as the
	// normalization drivers refuse them.
	for _, bad := range []string{"--attr-scales=garbage", "--attr-zero-points=src", "--attr-fpmath=fast", "--attr-scratchpad=mine",
		"--attr-deterministic=maybe", "--attr-acc-mode=f8", "--attr-rounding-mode=dst:up", "--attr-dropout=2",
		"--ctx-init=many", "--ctx-exe=1:2:3:4", "--inplace=maybe", "--attr-scales=src:common:0.5,bad"} {
		if code, _, errw := runMain(t, "--reduction", bad, "2x16:2x1"); code != 2 || !strings.Contains(errw, "no problem was run") {
			t.Errorf("%s: exit %d, want 2 (malformed)\n%s", bad, code, errw)
		}
	}
	for _, bad := range []string{"--fix-times-per-prb=-3", "--start=-1", "--repeats-per-prb=0"} {
		name := strings.SplitN(bad, "=", 2)[0]
		if code, _, errw := runMain(t, "--reduction", "--mode=P", bad, "2x16:2x1"); code != 2 || !strings.Contains(errw, name+":") {
			t.Errorf("%s: exit %d, want 2 and a message naming %s:\n%s", bad, code, name, errw)
		}
	}
}

// TestOptionSetAll runs oneDNN's option_set_all (bf16 src, plain and
// blocked tags): every problem passes.
func TestOptionSetAll(t *testing.T) {
	needShared(t)
	code, out, errw := runMain(t, "--reduction", "--sdt=bf16", "--ddt=bf16,f32", "--attr-post-ops=,add:f32:per_oc",
		"--batch="+sharedInputs+"/reduction/option_set_all")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "__REPRO") && !strings.Contains(line, ":PASSED ") {
			t.Errorf("unexpected result: %s", line)
		}
	}
}

func TestGraphHarnessCI(t *testing.T) {
	needShared(t)
	code, out, errw := runMain(t, "--graph", "--batch="+sharedInputs+"/graph/op/harness_reduce_f32_ci")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	if !strings.Contains(out, "PASSED __REPRO: --graph --case=op/f32/reducemean.json") || summary(t, out)[1] != "5" {
		t.Errorf("harness_reduce_f32_ci:\n%s", out)
	}
	code, out, errw = runMain(t, "--graph", "--case-dir="+sharedInputs+"/graph", "--dt=bf16,f16",
		"--in-shapes=0:2x8x6x6*acdb", "--op-attrs=0:axes:2x3*keep_dims:0", "--case=op/f32/reducemean.json",
		"--reset", "--in-shapes=0:1x1x150x150", "--case=pattern/f32/reduction_post_ops_mean_fusion.json")
	if code != 0 || summary(t, out)[1] != "3" {
		t.Errorf("graph knobs: exit %d\n%s\n%s", code, out, errw)
	}
}

func TestReadCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := readCapped(path, 10); err != nil || string(data) != "0123456789" {
		t.Errorf("limit 10: %q, %v; want the whole file", data, err)
	}
	if _, err := readCapped(path, 9); !errors.Is(err, errTooLarge) {
		t.Errorf("limit 9: err %v, want errTooLarge", err)
	}
	if _, err := readCapped(filepath.Join(path, "missing"), 9); err == nil || errors.Is(err, errTooLarge) {
		t.Errorf("missing file: err %v, want an open error", err)
	}
}

// TestTokenizeBatchContinuation: a token ending in '\' joins the next one,
// as benchdnn's shell-style line break (oneDNN's test_lnorm_int8).
func TestTokenizeBatchContinuation(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"--dt=a,b, \\\n   c,d, \\\n e\n--x", "--dt=a,b,c,d,e|--x"},
		{"--dt=a,b,\\\nc", "--dt=a,b,c"},
		{"p \\ q r", "pq|r"},
		{"p \\\n \\\n q", "pq"},
		{"\\ p", "p"},
		{"p \\", "p"},
		{"p # \\\nq", "p|q"},
	} {
		var got []string
		for _, a := range TokenizeBatch(c.in, "f", "") {
			got = append(got, a.Text)
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("%q: tokens %q, want %q", c.in, g, c.want)
		}
	}
}

// TestInputErrorStateOnce: an option error whose cause is itself a
// library error (a tag, a shape, an op kind, a post-op) names its state
// once, in the prefix, and the option's value is not repeated by a
// wrapper around an error that names it already.
func TestInputErrorStateOnce(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--reduction", "--stag=q", "2x3:2x1"},
			`argument 2: invalid_arguments: --stag: unknown or invalid tag "q": tag "q": unexpected character 'q' (no problem was run)`},
		{[]string{"--reduction", "--attr-post-ops=add:f32:per_tensor:abq", "2x3:2x1"},
			`argument 2: invalid_arguments: post-ops "add:f32:per_tensor:abq": entry "add:f32:per_tensor:abq": tag "abq": unexpected character 'q' (no problem was run)`},
		{[]string{"--softmax", "--attr-post-ops=add:f32:per_oc:abq", "2x3"},
			`argument 2: invalid_arguments: post-ops "add:f32:per_oc:abq": entry "add:f32:per_oc:abq": tag "abq": unexpected character 'q' (no problem was run)`},
		{[]string{"--lnorm", "--attr-post-ops=relu+add:q", "2x3"},
			`argument 2: invalid_arguments: post-ops "relu+add:q": entry "add:q": unknown data type "q" (no problem was run)`},
		{[]string{"--graph", "--in-shapes=0:2xq"},
			`argument 2: invalid_arguments: --in-shapes "0:2xq": shape "2xq": element 1 is "q", want a non-negative integer (no problem was run)`},
		{[]string{"--graph", "--in-shapes=0:2x3*1xq"},
			`argument 2: invalid_arguments: --in-shapes "0:2x3*1xq": strides "1xq": element 1 is "q", want a non-negative integer (no problem was run)`},
		{[]string{"--graph", "--op-kind=0:ReduceQ"},
			`argument 2: invalid_arguments: --op-kind "0:ReduceQ": entry "0:ReduceQ": unknown op kind "ReduceQ" (no problem was run)`},
	} {
		code, _, errw := runMain(t, c.args...)
		if code != 2 || !strings.Contains(errw, c.want) {
			t.Errorf("%v: exit %d, stderr %q\nwant %q", c.args, code, errw, c.want)
		}
		for _, s := range []string{"invalid_arguments", "invalid_shape", "invalid_graph_op", "unimplemented"} {
			if n := strings.Count(errw, s); n > 1 {
				t.Errorf("%v: %q %d times in %q", c.args, s, n, errw)
			}
		}
	}
}

package bench

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const implHead = "= Implementation statistics (--summary=no-impl to disable) ="

// TestWholeRunOptionsAnywhere: --plot, --summary and --table take effect
// wherever they stand, after the problems and inside a batch file too;
// the last value given wins.
func TestWholeRunOptionsAnywhere(t *testing.T) {
	dir := t.TempDir()
	batch := filepath.Join(dir, "shapes")
	if err := os.WriteFile(batch, []byte("2x3:2x1\n4x8:4x1\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// --plot after the batch writes the chart of its problems.
	plot := filepath.Join(dir, "bw.svg")
	code, out, errw := runMain(t, "--mode=P", "--fix-times-per-prb=1", "--reduction", "--batch="+batch, "--plot="+plot)
	if code != 0 || strings.Contains(errw, "no problem was timed") {
		t.Fatalf("--plot after --batch: exit %d\n%s\n%s", code, out, errw)
	}
	data, err := os.ReadFile(plot)
	if err != nil {
		t.Fatalf("--plot after --batch wrote no chart: %v", err)
	}
	if marks, _ := svgStats(t, data); marks != 2 {
		t.Errorf("--plot after --batch: %d marks, want 2", marks)
	}

	// --summary after the problems, and the last of two wins.
	code, out, errw = runMain(t, "--reduction", "--batch="+batch, "--summary=no-impl")
	if code != 0 || strings.Contains(out, implHead) || !strings.Contains(out, "tests:2 passed:2") {
		t.Errorf("--summary=no-impl after --batch: exit %d\n%s\n%s", code, out, errw)
	}
	code, out, _ = runMain(t, "--summary=no-impl", "--reduction", "2x3:2x1", "--summary=impl-csv")
	if code != 0 || !strings.Contains(out, implHead) || !strings.Contains(out, "benchdnn_summary,impl_names,") {
		t.Errorf("--summary given twice: the last (impl-csv, impl on) should win:\n%s", out)
	}

	// --table=only in a batch file after its problems: no PASSED lines,
	// the table.
	tail := filepath.Join(dir, "tail")
	if err := os.WriteFile(tail, []byte("--batch=shapes\n--table=only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errw = runMain(t, "--reduction", "--batch="+tail)
	if code != 0 || strings.Contains(out, ":PASSED") || !strings.Contains(out, "4x8:4x1") || !strings.Contains(out, "%readBW") {
		t.Errorf("--table=only at the end of a batch: exit %d\n%s\n%s", code, out, errw)
	}
	if strings.Contains(errw, "no problem follows") {
		t.Errorf("warning about a trailing whole-run option: %s", errw)
	}
}

// TestPerProblemOptionsStayPositional: the driver's knobs and --reset apply
// to the problems after them, as in benchdnn; one no problem follows is
// named in a warning.
func TestPerProblemOptionsStayPositional(t *testing.T) {
	code, out, errw := runMain(t, "--summary=no-impl", "--reduction", "2x3:2x1", "--sdt=bf16", "4x3:4x1", "--reset", "6x3:6x1", "--alg=max")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	for _, want := range []string{"0:PASSED __REPRO: --reduction 2x3:2x1\n", "1:PASSED __REPRO: --reduction --sdt=bf16 4x3:4x1\n",
		"2:PASSED __REPRO: --reduction 6x3:6x1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if !strings.Contains(errw, "no problem follows --alg=max (argument 8)") {
		t.Errorf("no warning naming the trailing --alg=max: %q", errw)
	}
}

// TestRefusedBeforeAnyProblem: malformed input anywhere on the command
// line or in a batch file is refused before the first problem runs, with
// exit status 2 and an error naming the option.
func TestRefusedBeforeAnyProblem(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	bad := filepath.Join(dir, "bad")
	for p, s := range map[string]string{file: "", bad: "2x3:2x1\n--summary=nope\n"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		arg  string
		want string
	}{
		{"--summary", "argument 3: invalid_arguments: option --summary needs a value (--summary=VALUE)"},
		{"--summary=", ""}, // the defaults: not an error
		{"--summary=no-impl+bogus", `argument 3: invalid_arguments: --summary: unknown setting "bogus"`},
		{"--plot", "option --plot needs a value"},
		{"--plot=" + filepath.Join(dir, "missing", "x.svg"), "--plot=" + filepath.Join(dir, "missing", "x.svg") + ": folder"},
		{"--plot=" + filepath.Join(file, "x.svg"), "--plot=" + filepath.Join(file, "x.svg") + ": folder"},
		{"--plot=" + dir, "is a folder"},
		{"--table=maybe", `--table: "maybe" is not a boolean`},
		{"--bogus", `unknown option for the reduction driver: "--bogus"`},
		{"--sdt=f99", `--sdt: unknown data type "f99"`},
		{"--perf-template=%nope%", "unknown token"},
		{"--batch=" + filepath.Join(dir, "nothere"), `cannot find batch file "` + filepath.Join(dir, "nothere") + `"`},
		{"--batch=" + bad, bad + `:2:1: invalid_arguments: --summary: unknown setting "nope"`},
		{"4x4:3", "argument 3: "},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases, struct{ arg, want string }{"--plot=/proc/x.svg", "--plot=/proc/x.svg cannot be written"})
	}
	for _, c := range cases {
		code, out, errw := runMain(t, "--reduction", "2x3:2x1", c.arg, "4x3:4x1")
		if c.want == "" {
			if code != 0 {
				t.Errorf("%s: exit %d\n%s", c.arg, code, errw)
			}
			continue
		}
		if code != 2 || strings.Contains(out, "PASSED") || !strings.Contains(errw, c.want) || !strings.Contains(errw, "(no problem was run)") {
			t.Errorf("%s: exit %d, want 2 with %q and no problem run\nstdout %q\nstderr %q", c.arg, code, c.want, out, errw)
		}
	}
}

// TestHelpAnywhere: --help prints the help and runs nothing, wherever it
// stands (after a malformed option, that option's error wins).
func TestHelpAnywhere(t *testing.T) {
	code, out, _ := runMain(t, "--reduction", "2x3:2x1", "--help")
	if code != 0 || strings.Contains(out, "0:PASSED") || !strings.Contains(out, "Usage: gdnnbench") {
		t.Errorf("--help after a problem: exit %d\n%s", code, out)
	}
	code, _, errw := runMain(t, "--reduction", "--bogus", "--help")
	if code != 2 || !strings.Contains(errw, "--bogus") {
		t.Errorf("--bogus --help: exit %d, stderr %q", code, errw)
	}
}

// TestGraphRefusedBeforeAnyCase: a missing case file or a malformed graph
// knob after a good case stops the run before the good case runs, and
// --summary after the cases applies to them.
func TestGraphRefusedBeforeAnyCase(t *testing.T) {
	good := writeCase(t, sumAddDroppedCase, nil)
	code, out, errw := runMain(t, "--graph", "--case="+good, "--summary=no-impl")
	if code != 0 || !strings.Contains(out, "0:PASSED") || strings.Contains(out, implHead) {
		t.Fatalf("good case with --summary=no-impl after it: exit %d\n%s\n%s", code, out, errw)
	}
	for _, c := range []struct{ arg, want string }{
		{"--case=" + filepath.Join(t.TempDir(), "nothere.json"), "argument 3: "},
		{"--mb=-1", `--mb: "-1" is not a non-negative integer`},
	} {
		code, out, errw := runMain(t, "--graph", "--case="+good, c.arg, "--case="+good)
		if code != 2 || strings.Contains(out, "PASSED") || !strings.Contains(errw, c.want) || !strings.Contains(errw, "(no problem was run)") {
			t.Errorf("%s: exit %d, want 2 with %q and no case run\nstdout %q\nstderr %q", c.arg, code, c.want, out, errw)
		}
	}
}

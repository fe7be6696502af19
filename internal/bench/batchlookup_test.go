package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchLookup: a relative --batch is found beside the including batch
// file first, then in the current directory, then in an inputs folder
// (--inputs-dir, $GDNN_BENCHDNN_INPUTS) as <dir>/<driver>/<file>.
func TestBatchLookup(t *testing.T) {
	dir := t.TempDir()
	inputs := filepath.Join(dir, "inputs")
	other := filepath.Join(dir, "other")
	for _, d := range []string{filepath.Join(inputs, "reduction"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(inputs, "reduction", "test_ci"), "--batch=shapes_x\n")
	write(filepath.Join(inputs, "reduction", "shapes_x"), "2x3:2x1\n")
	write(filepath.Join(inputs, "reduction", "shapes_y"), "2x3:2x1\n")
	// The including file's folder wins over the inputs folder.
	write(filepath.Join(other, "top"), "--batch=shapes_y\n")
	write(filepath.Join(other, "shapes_y"), "4x3:4x1 6x3:6x1\n")
	t.Setenv(inputsEnv, "")

	code, out, errw := runMain(t, "--inputs-dir="+inputs, "--reduction", "--batch=test_ci")
	if code != 0 || !strings.Contains(out, "0:PASSED __REPRO: --reduction 2x3:2x1\n") {
		t.Errorf("--inputs-dir: exit %d\n%s\n%s", code, out, errw)
	}
	code, out, errw = runMain(t, "--inputs-dir="+inputs, "--reduction", "--batch="+filepath.Join(other, "top"))
	if code != 0 || !strings.Contains(out, "tests:2 passed:2") {
		t.Errorf("beside the including file: exit %d\n%s\n%s", code, out, errw)
	}
	t.Setenv(inputsEnv, filepath.Join(dir, "nowhere")+string(os.PathListSeparator)+inputs)
	code, out, errw = runMain(t, "--reduction", "--batch=test_ci")
	if code != 0 || !strings.Contains(out, "tests:1 passed:1") {
		t.Errorf("$%s: exit %d\n%s\n%s", inputsEnv, code, out, errw)
	}
	// Not found: exit 2, naming every path tried.
	code, _, errw = runMain(t, "--reduction", "--batch=no_such_batch")
	want := filepath.Join(inputs, "reduction", "no_such_batch")
	if code != 2 || !strings.Contains(errw, "cannot find batch file") || !strings.Contains(errw, want) {
		t.Errorf("missing batch: exit %d, stderr %q, want it to name %s", code, errw, want)
	}
	// A directory: exit 2, saying so.
	code, _, errw = runMain(t, "--reduction", "--batch="+dir)
	if code != 2 || !strings.Contains(errw, "is a directory") {
		t.Errorf("--batch of a directory: exit %d, stderr %q", code, errw)
	}
}

// TestCaseLookupInInputsDirs: a relative --case is found in the graph
// folder of an inputs folder, as benchdnn names cases relative to
// inputs/graph, and a failed lookup names each path it tried once.
func TestCaseLookupInInputsDirs(t *testing.T) {
	inputs := filepath.Join(t.TempDir(), "inputs")
	if err := os.MkdirAll(filepath.Join(inputs, "graph", "op"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inputs, "graph", "op", "sum.json"), []byte(sumAddDroppedCase), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(inputsEnv, "")
	t.Setenv(caseDirEnv, "")
	code, out, errw := runMain(t, "--inputs-dir="+inputs, "--graph", "--mode=C", "--case=op/sum.json")
	if code != 0 || !strings.Contains(out, "tests:1 passed:1") {
		t.Errorf("--case in --inputs-dir's graph folder: exit %d\n%s\n%s", code, out, errw)
	}
	code, _, errw = runMain(t, "--inputs-dir="+inputs, "--graph", "--case=op/none.json")
	want := filepath.Join(inputs, "graph", "op", "none.json")
	tried := strings.Split(strings.SplitN(strings.SplitN(errw, "(tried ", 2)[1], ";", 2)[0], ", ")
	seen := map[string]bool{}
	for _, p := range tried {
		if seen[p] {
			t.Errorf("missing case: %s tried twice", p)
		}
		seen[p] = true
	}
	if code != 2 || !seen[want] {
		t.Errorf("missing case: exit %d, stderr %q, want %s among the paths tried", code, errw, want)
	}
}

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
}

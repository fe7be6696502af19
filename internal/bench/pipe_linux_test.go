//go:build linux

package bench

import (
	"fmt"
	"os"
	"testing"
)

// pipePath returns a path that reads text through a pipe, as a shell's
// <(...) gives: opened again, it reads nothing, the pipe being drained.
func pipePath(t *testing.T, text string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if _, err := w.WriteString(text); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return fmt.Sprintf("/proc/self/fd/%d", r.Fd())
}

// TestFilesFromPipes: a batch or case file that can be read only once
// (a pipe) runs its problems, the dry pass and the run sharing one read.
func TestFilesFromPipes(t *testing.T) {
	code, out, errw := runMain(t, "--reduction", "--batch="+pipePath(t, "--alg=max 2x3:2x1\n"))
	if code != 0 || summary(t, out)[1] != "1" {
		t.Errorf("batch from a pipe: exit %d, want 0 and 1 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
	code, out, errw = runGraph(t, pipePath(t, sumAddDroppedCase), "--mode=C")
	if code != 0 || summary(t, out)[1] != "1" {
		t.Errorf("case from a pipe: exit %d, want 0 and 1 passed\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}
}

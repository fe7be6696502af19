package bench

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzProblem: ParseProblem never panics, what it accepts formats back to
// a descriptor that parses to the same problem, and what Check passes has
// every dst dim equal to its src dim or 1.
func FuzzProblem(f *testing.F) {
	for _, s := range []string{"2x16x3x4:2x1x3x1", "127:1", "1x64x7x7:1x64x1x1_n\"gap\"", "2x3:2x2", "x:", "0x5:0x1",
		"99999999999x99999999999:1x1", "1n2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProblem(s)
		if err != nil {
			return
		}
		q, err := ParseProblem(p.String())
		if err != nil {
			t.Fatalf("%q parsed, but its String %q does not: %v", s, p.String(), err)
		}
		if q.String() != p.String() {
			t.Fatalf("round trip %q -> %q -> %q", s, p.String(), q.String())
		}
		if p.Check() != nil {
			return
		}
		for i := range p.Src {
			if p.Dst[i] != p.Src[i] && p.Dst[i] != 1 {
				t.Fatalf("%q: accepted dst dim %d = %d for src %d", s, i, p.Dst[i], p.Src[i])
			}
		}
	})
}

// FuzzBatch: any batch text ends with status 0, 1 or 2 and never panics
// (Main turns a panic into status 2 with "internal error", which fails
// here). Problems run in list mode so that huge shapes cost nothing.
func FuzzBatch(f *testing.F) {
	for _, s := range []string{
		"--reduction 2x3:2x1",
		"--reduction --sdt=f32,bf16 --stag=axb --attr-post-ops=relu+add:f32:per_oc 4x4x4x4:4x4x1x4",
		"--reduction --stag=aBx16b --dtag=any 8x15x5x7:8x15x1x1 # comment",
		"--graph --in-shapes=0:1x2*ba --op-attrs=0:axes:1 --dt=bf16",
		"--reduction --perf-template=%prb%,%-Gbw% --match=2x --alg=sum,mean 2x2:1x2",
		"--reset --p= --eps= --reduction --batch=nonexistent",
		"--summary=no-impl+impl-csv --reduction --match=\\(relu\\|add\\)+[[:digit:]]\\{1,2\\}x 2x3:2x1",
		"--inputs-dir=. --plot=x.svg --reduction --match=^--sdt=f32\\b --batch=shapes 4x4:4x1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var out, errw bytes.Buffer
		// List mode first, and no way to leave it: problems are parsed and
		// counted but never allocated or run.
		// Devices are out of reach too: /dev/stdin or /dev/tty would wait
		// for input. The endless ones (/dev/zero) are tested in
		// TestMainExitCodes.
		text = strings.ReplaceAll(text, "/dev/", "/no-dev/")
		text = "--mode=L " + strings.ReplaceAll(text, "--mode", "--no-mode")
		code := MainBatch(text, "fuzz", nil, &out, &errw)
		if code < 0 || code > 2 {
			t.Fatalf("exit status %d", code)
		}
		if strings.Contains(errw.String(), "internal error") {
			t.Fatalf("panic on %q: %s", text, errw.String())
		}
	})
}

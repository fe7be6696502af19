package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHandWrittenSections: with -sections, each hand-written file is in
// the report after the generated section it follows (the target rows
// inside the targets table); a missing file fails the report instead of
// dropping the section.
func TestHandWrittenSections(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw := write("raw.txt", synthRaw())
	harness := write("RESULTS.txt", "# date: 2026-01-01T00:00:00Z\n# load before run: 0.1; ROUNDS=3 TIME=0.4\n\ntable\n")
	bench := write("bench.txt", benchOut)
	kinds := write("kinds.txt", kindsRaw)
	sec := filepath.Join(dir, "docs")
	if err := os.Mkdir(sec, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range handWritten {
		text := "## " + h.file + "\n\nwritten by hand\n"
		if h.after == "targets-rows" {
			text = "| a target measured apart | **MET** | 2x |\n"
		}
		if err := os.WriteFile(filepath.Join(sec, h.file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-raw", raw, "-harness", harness, "-bench", bench, "-kinds", kinds, "-sections", sec}
	var out, errb strings.Builder
	if rc := run(args, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	s := out.String()
	// Each piece must come after the one before it.
	order := []string{
		"## Targets\n", "| JIT compile of a new kernel", "| a target measured apart | **MET** | 2x |\n\nFigures with no numeric target",
		"## PERFORMANCE-argmax.md\n", "## How to read the tables",
		"## Every reduction beside oneDNN's same alg", "## PERFORMANCE-f64.md\n",
		"## PERFORMANCE-normalizations.md\n", "## PERFORMANCE-integer.md\n", "## Shape A latency",
		"## JIT compile and execute overhead", "## PERFORMANCE-ort.md\n", "## Changes measured one by one",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(s[at:], want)
		if i < 0 {
			t.Fatalf("the report lacks %q after byte %d:\n%s", want, at, s)
		}
		at += i + len(want)
	}
	if !strings.Contains(s, "<!-- PERFORMANCE-f64.md, copied in by bench/perf_report.sh") {
		t.Errorf("a copied section does not name its file")
	}
	if err := os.Remove(filepath.Join(sec, "PERFORMANCE-integer.md")); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if rc := run(args, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "PERFORMANCE-integer.md") {
		t.Errorf("a missing section file: rc %d, %q", rc, errb.String())
	}
}

// TestReportHoldsHandWrittenSections: docs/PERFORMANCE.md holds every
// hand-written file as a regeneration copies it in, so that the report
// and the files never tell two stories (edit the file, then copy it in).
func TestReportHoldsHandWrittenSections(t *testing.T) {
	report, err := os.ReadFile("../../docs/PERFORMANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	s, err := readSections("../../docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range handWritten {
		for _, text := range s[h.after] {
			if !strings.Contains(string(report), text) {
				t.Errorf("docs/PERFORMANCE.md lacks %s as a regeneration writes it", h.file)
			}
		}
	}
}

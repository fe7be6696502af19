package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// Some of the report is written by hand from measurements this command
// does not take (ArgMax, integer and f64 data, normalizations beside
// ONNX Runtime, ...). That text lives in files beside the report, one
// per section, and each regeneration copies it in at its place, so that
// it survives; it is edited in those files, never in the report.

// handWritten are those files, in the -sections directory: the rows
// added to the targets table, then each section after the generated
// section it follows (named as render names them).
var handWritten = []struct{ after, file string }{
	{"targets-rows", "PERFORMANCE-targets.md"},
	{"targets", "PERFORMANCE-argmax.md"},
	{"kinds", "PERFORMANCE-f64.md"},
	{"interp", "PERFORMANCE-normalizations.md"},
	{"interp", "PERFORMANCE-integer.md"},
	{"jit", "PERFORMANCE-ort.md"},
}

// sections is the hand-written text to write after each generated
// section (nil: none).
type sections map[string][]string

// readSections reads every file of handWritten from dir; a missing one
// is an error, so that a report never silently drops a section.
func readSections(dir string) (sections, error) {
	s := sections{}
	for _, h := range handWritten {
		data, err := os.ReadFile(filepath.Join(dir, h.file))
		if err != nil {
			return nil, status.Errorf(status.InvalidArguments, "hand-written section: %v", err)
		}
		text := strings.TrimRight(string(data), "\n") + "\n"
		if h.after != "targets-rows" {
			text = "<!-- " + h.file + ", copied in by bench/perf_report.sh: edit that file, not this one -->\n" + text + "\n"
		}
		s[h.after] = append(s[h.after], text)
	}
	return s, nil
}

// write writes the text that follows the generated section after.
func (s sections) write(sb *strings.Builder, after string) {
	for _, text := range s[after] {
		sb.WriteString(text)
	}
}

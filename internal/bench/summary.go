package bench

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// summarySettings are benchdnn's --summary=[no-]SETTING[+...] (a global
// option): what is printed about the whole run before the tests line.
type summarySettings struct {
	failures bool // up to ten failed problems' result lines (not in P mode)
	impl     bool // a table of implementations and how many problems each ran
	implCSV  bool // the same as one benchdnn_summary,impl_names,... line
	// unimpl (gdnn): UNIMPLEMENTED results grouped by reason. benchdnn
	// counts UNIMPLEMENTED as failures; gdnn does not, so it groups them
	// here instead of listing them with the failures.
	unimpl bool
}

// defaultSummary is benchdnn's default (failures and impl), plus gdnn's
// unimplemented.
func defaultSummary() summarySettings {
	return summarySettings{failures: true, impl: true, unimpl: true}
}

// parseSummary reads a --summary value. As in benchdnn, every value starts
// from the defaults and changes only the settings it names; the last of a
// setting named twice wins; an empty value restores the defaults.
func parseSummary(v string) (summarySettings, error) {
	s := defaultSummary()
	if v == "" {
		return s, nil
	}
	for _, item := range strings.Split(v, "+") {
		name, neg := strings.CutPrefix(item, "no-")
		on := !neg
		switch name {
		case "failures":
			s.failures = on
		case "impl":
			s.impl = on
		case "impl-csv":
			s.implCSV = on
		case "unimplemented":
			s.unimpl = on
		default:
			return s, status.Errorf(status.InvalidArguments,
				"--summary: unknown setting %q (want [no-]failures, [no-]impl, [no-]impl-csv or [no-]unimplemented, joined by +)", item)
		}
	}
	return s, nil
}

// maxFailuresListed is how many failed problems the failures summary
// lists, as benchdnn.
const maxFailuresListed = 10

// runSummary collects what --summary prints.
type runSummary struct {
	impls    map[string]int
	failed   []string // result lines of FAILED and INVALID_ARGUMENTS problems, in run order
	nFailed  int
	unimpl   map[string]int
	firstIdx map[string]int // first problem with each UNIMPLEMENTED reason
}

// add records one problem's result; line is its printed result line.
func (s *runSummary) add(idx int, res result, line string) {
	if s.impls == nil {
		s.impls, s.unimpl, s.firstIdx = map[string]int{}, map[string]int{}, map[string]int{}
	}
	if res.impl != "" && res.state != "SKIPPED" {
		s.impls[res.impl]++
	}
	switch res.state {
	case "PASSED", "EXECUTED", "INITIALIZED", "SKIPPED", "LISTED", "MISTRUSTED":
	case "UNIMPLEMENTED":
		if _, ok := s.firstIdx[res.reason]; !ok {
			s.firstIdx[res.reason] = idx
		}
		s.unimpl[res.reason]++
	default:
		s.nFailed++
		if len(s.failed) < maxFailuresListed {
			s.failed = append(s.failed, line)
		}
	}
}

// banner prints benchdnn's three-line section header.
func banner(w io.Writer, text string, width int) {
	width = max(width, len(text)+1)
	rule := strings.Repeat("=", width)
	fmt.Fprintf(w, "%s\n%s%s=\n%s\n", rule, text, strings.Repeat(" ", width-len(text)-1), rule)
}

// print writes the sections set enables, in benchdnn's order.
func (s *runSummary) print(w io.Writer, set summarySettings, perf bool) {
	if set.impl && len(s.impls) > 0 {
		s.printImpls(w)
	}
	if set.implCSV && len(s.impls) > 0 {
		fmt.Fprint(w, "benchdnn_summary,impl_names")
		for _, name := range s.implsByCount() {
			fmt.Fprintf(w, ",%s:%d", name, s.impls[name])
		}
		fmt.Fprintln(w)
	}
	if set.unimpl && len(s.unimpl) > 0 {
		s.printUnimpl(w)
	}
	if set.failures && !perf && s.nFailed > 0 {
		const head = "= Failed cases summary (--summary=no-failures to disable) ="
		fmt.Fprintf(w, "%s\n%s\n%s\n", strings.Repeat("=", len(head)), head, strings.Repeat("=", len(head)))
		for _, l := range s.failed {
			fmt.Fprintln(w, l)
		}
		if s.nFailed > len(s.failed) {
			fmt.Fprintf(w, "(... %d more cases ...)\n", s.nFailed-len(s.failed))
		}
		fmt.Fprintln(w, "============================")
	}
}

// implsByCount lists implementation names, most used first (ties by name).
func (s *runSummary) implsByCount() []string {
	names := slices.Collect(maps.Keys(s.impls))
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.impls[b], s.impls[a]), cmp.Compare(a, b))
	})
	return names
}

// printImpls draws benchdnn's implementation table:
// "| name : count (pct%) |" rows, names right-aligned.
func (s *runSummary) printImpls(w io.Writer) {
	const head = "= Implementation statistics (--summary=no-impl to disable) "
	names := s.implsByCount()
	longName, longCount, total := 0, 0, 0
	for _, n := range names {
		longName = max(longName, len(n))
		longCount = max(longCount, len(fmt.Sprint(s.impls[n])))
		total += s.impls[n]
	}
	const extra, pctLen = 7, 7 // "| ", " : ", " |" and " (100%)"
	width := max(len(head)+1, longName+longCount+pctLen+extra)
	banner(w, head, width)
	for _, n := range names {
		c := s.impls[n]
		pct := fmt.Sprintf(" (%d%%)", (200*c+total)/(2*total)) // rounded
		entry := len(n) + len(fmt.Sprint(c)) + len(pct) + extra
		left := longName - len(n)
		fmt.Fprintf(w, "| %s%s : %d%s%s |\n", strings.Repeat(" ", left), n, c, pct, strings.Repeat(" ", width-entry-left))
	}
	fmt.Fprintln(w, strings.Repeat("=", width))
}

// printUnimpl lists UNIMPLEMENTED reasons, most frequent first, with the
// first problem that gave each.
func (s *runSummary) printUnimpl(w io.Writer) {
	const head = "= Unimplemented reasons (--summary=no-unimplemented to disable) "
	reasons := slices.Collect(maps.Keys(s.unimpl))
	slices.SortFunc(reasons, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.unimpl[b], s.unimpl[a]), cmp.Compare(s.firstIdx[a], s.firstIdx[b]))
	})
	width := len(head) + 1
	banner(w, head, width)
	for _, r := range reasons {
		label := r
		if label == "" {
			label = "(no reason given)"
		}
		fmt.Fprintf(w, "%6d x %s (first: problem %d)\n", s.unimpl[r], label, s.firstIdx[r])
	}
	fmt.Fprintln(w, strings.Repeat("=", width))
}

package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// shapeNotes describes the anchor shapes of run_all.sh (as make_table.py).
var shapeNotes = map[string]string{
	"A": "tiny, latency-bound", "B": "row means", "C": "16 MiB rows", "D": "column means",
	"E": "GAP NCHW", "F": "GAP NHWC", "G": "256 MiB rows", "H": "full reduce", "I": "middle axis",
}

// jitBenches are the jit package benchmarks the report reads: name, what
// it measures, and the unit shown.
var jitBenches = []struct{ name, what, unit string }{
	{"BenchmarkCompileNew", "JIT compile of a new (uncached) kernel: bf16 64x1024 row mean + ReLU", "µs"},
	{"BenchmarkRunTiny", "execute overhead: Run of a cached kernel on 2x3 f32, inline on the caller", "ns"},
}

// inputs is everything the report is made from.
type inputs struct {
	data      *dataset
	harness   string // run_all.sh RESULTS.txt
	bench     *benchRuns
	benchstat string // benchstat output, or ""
	cmd, rev  string
	plot      string      // gdnnbench --plot chart beside the report, or ""
	kinds     *kindRuns   // kinds_side_by_side.sh runs, or nil
	interp    *interpRuns // reduce's BenchmarkInterpVsNaive runs, or nil
	sections  sections    // the hand-written sections, or nil
	trial     bool
}

// render writes the report as markdown.
func render(in inputs) (string, error) {
	rows, err := in.data.rows()
	if err != nil {
		return "", err
	}
	lowp, err := in.data.lowpRows()
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	P := func(format string, a ...any) { fmt.Fprintf(&sb, format+"\n", a...) }
	if in.trial {
		P("> **TRIAL RUN** (shapes %s, %d round(s)): it proves the measuring pipeline, it is not the report of record; regenerate with `bench/perf_report.sh` (all shapes, ROUNDS=3) on a quiet machine.",
			strings.Join(in.data.shapes, " "), len(in.data.rounds))
		P("")
	}
	P("# gdnn performance")
	P("")
	P("ReduceMean, gdnn measured side by side with oneDNN, numpy, naive Go and a read-bandwidth probe")
	P("in one run of the anchors harness (`shared/anchors/run_all.sh`, gdnn as its `EXTRA_CMD` through")
	P("`bench/anchors_extra.sh`), on the same machine in the same rounds; then the `jit` package's benchmarks.")
	P("")
	P("- Command: `%s`", in.cmd)
	if in.rev != "" {
		P("- gdnn revision: `%s`", in.rev)
	}
	P("- Rounds: %d; shapes: %s", len(in.data.rounds), strings.Join(in.data.shapes, " "))
	P("")
	P("```text")
	for _, l := range harnessHeader(in.harness) {
		P("%s", l)
	}
	P("```")
	P("")
	if n, m, q, ok := busyLines(in.harness); ok && n > 0 {
		P("**Measured on a busy machine:** %d of %d result lines were taken while other processes used more than %d%% of the CPUs", n, m, q)
		P("(the harness's quiet gate gave up waiting); those figures may understate every tool's speed, gdnn's included.")
		P("")
	}
	ts := summarize(rows, lowp, in.bench)
	if in.interp != nil {
		ts = append(ts, in.interp.target())
	}
	renderTargets(&sb, ts, in.bench, in.sections)
	in.sections.write(&sb, "targets")
	renderReading(&sb, in.data.l3)
	renderPlot(&sb, in.plot)
	renderShapes(&sb, in.data, rows)
	renderLowp(&sb, lowp)
	srcBytes := map[string]int64{}
	for _, r := range rows {
		srcBytes[r.shape+" "+r.dt] = r.srcBytes
	}
	renderKinds(&sb, in.kinds, srcBytes)
	in.sections.write(&sb, "kinds")
	renderInterp(&sb, in.interp)
	in.sections.write(&sb, "interp")
	renderLatency(&sb, rows)
	renderJIT(&sb, in.bench, in.benchstat)
	in.sections.write(&sb, "jit")
	P("## Changes measured one by one")
	P("")
	P("This report is regenerated whole by the command above, the hand-written sections (measured apart)")
	P("copied in from their files (`docs/PERFORMANCE-*.md`, named at each). What single changes gained, with")
	P("before/after benchstat, and what was measured and not kept, is in [PERFORMANCE-log.md](PERFORMANCE-log.md),")
	P("newest last.")
	P("")
	P("## Appendix: harness output")
	P("")
	P("`run_all.sh`'s RESULTS.txt as written (gdnn in its \"Extra tools\" table; its ratios are time ratios, < 1 = gdnn faster).")
	P("")
	P("<details><summary>RESULTS.txt</summary>")
	P("")
	P("```text")
	P("%s", strings.TrimRight(in.harness, "\n"))
	P("```")
	P("")
	P("</details>")
	return sb.String(), nil
}

// renderPlot embeds the gdnnbench --plot chart of the built-in batch.
func renderPlot(sb *strings.Builder, plot string) {
	if plot == "" {
		return
	}
	sb.WriteString("## Bandwidth chart\n\n")
	sb.WriteString("gdnnbench's built-in batch in the same session (`gdnnbench --plot --batch=cmd/gdnnbench/default_batch`): each problem's GB/s\n")
	sb.WriteString("at its src size over the read-bandwidth probe it is compared with, so that a `%readBW` above 100% shows where it\n")
	sb.WriteString("comes from (a problem above the probe line; the table under the chart lists every problem).\n\n")
	fmt.Fprintf(sb, "![gdnnbench bandwidth chart: GB/s per problem over the read-bandwidth probe](%s)\n\n", plot)
}

// busyRE matches run_all.sh's header line on its quiet gate.
var busyRE = regexp.MustCompile(`quiet gate gave up \(other processes > (\d+)% cpu\): (\d+) of (\d+)`)

// busyLines reads from the harness header how many result lines were
// measured after the quiet gate gave up (n of m, threshold q %).
func busyLines(harness string) (n, m, q int, ok bool) {
	sm := busyRE.FindStringSubmatch(harness)
	if sm == nil {
		return 0, 0, 0, false
	}
	q, _ = strconv.Atoi(sm[1]) // \d+ always parses
	n, _ = strconv.Atoi(sm[2])
	m, _ = strconv.Atoi(sm[3])
	return n, m, q, true
}

// harnessHeader returns the leading '#' lines of RESULTS.txt: date, host,
// versions, load, ROUNDS/TIME, run time and quiet-gate figures.
func harnessHeader(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		out = append(out, "# (the harness output has no header lines)")
	}
	return out
}

// renderTargets writes the targets table, the hand-written rows (judged
// from measurements of their own) after the generated ones.
func renderTargets(sb *strings.Builder, ts []target, b *benchRuns, s sections) {
	fmt.Fprintf(sb, "## Targets\n\n")
	if s != nil {
		fmt.Fprintf(sb, "<!-- the last rows of the table are docs/PERFORMANCE-targets.md, copied in by bench/perf_report.sh -->\n")
	}
	rows := [][]string{{"target", "verdict", "figures"}}
	for _, t := range ts {
		rows = append(rows, []string{t.name, "**" + t.v.String() + "**", t.figures})
	}
	mdTable(sb, 3, rows)
	s.write(sb, "targets-rows")
	fmt.Fprintf(sb, "\nFigures with no numeric target:")
	sep := " "
	for _, jb := range jitBenches {
		if jb.name == compileBench {
			continue // judged above
		}
		fmt.Fprintf(sb, "%s%s", sep, jitFigure(b, jb.name, jb.unit))
		sep = "; "
	}
	sb.WriteString(".\n\n")
}

// jitFigure is "BenchmarkX median 12.3 µs over 10 runs", or says it is missing.
func jitFigure(b *benchRuns, name, unit string) string {
	xs := b.ns[name]
	m := median(xs)
	if !m.ok {
		return fmt.Sprintf("%s: not in the benchmark output (missing from ./internal/jit)", name)
	}
	v := m.v
	if unit == "µs" {
		v /= 1000
	}
	return fmt.Sprintf("%s median %.3g %s over %d runs", name, v, unit, len(xs))
}

func renderReading(sb *strings.Builder, l3 int64) {
	sb.WriteString(`## How to read the tables

- Times are µs per execute: each tool reports its median over many executes in a round; shown is the
  median over rounds. 2T / 1T: 2 threads (gdnn's default on this 2-core machine; OpenMP for oneDNN) / 1 thread.
  numpy is single-threaded (f16: accumulates in f32, returns f16; no bf16).
- Speed ratios are t(reference) / t(gdnn), computed within each round, then the median over rounds:
  > 1 means gdnn is faster. vs oneDNN compares equal thread counts; vs numpy compares gdnn 1T.
  f16:f32 rows are compared with numpy's f16 -> f16 (numpy has no f16 -> f32 mean).
- GB/s = (src + dst bytes) / time. %readbw = that over the best GB/s of the readbw probe in the same round,
  for the same shape, at the src byte size (rounded down to 64 B) and the same thread count` + roofNote(l3) + `.
- speed: MET when gdnn is at least as fast as oneDNN at 2T and at 1T; where oneDNN does not run the pair,
  when gdnn 1T is at least as fast as numpy ("vs numpy"). BW: MET when gdnn 2T reaches 75% of readbw;
  n/a below 1 MiB of src.

`)
}

// roofNote says how the roofline rule applied, if it did.
func roofNote(l3 int64) string {
	if l3 <= 0 {
		return ""
	}
	return fmt.Sprintf(`; except where
  the src is half the L3 (%d MiB) or more: there the roofline is the probe at 256 MiB (DRAM), because
  the probe's repeats at the src size are partly served by the L3, which a reduction keeping thousands
  of partial results cannot match`, l3>>20)
}

func renderShapes(sb *strings.Builder, d *dataset, rows []row) {
	sb.WriteString("## Per shape\n\n")
	for _, s := range d.shapes {
		p, _ := parsePrb(d.prb[s]) // validated when the dataset was built
		src, dst, _ := strings.Cut(d.prb[s], ":")
		fmt.Fprintf(sb, "### %s: %s -> %s, axes %s (%s), src %s in f32\n\n", s, src, dst, fmtAxes(p.axes()), orDash(shapeNotes[s]), fmtBytes(nelem(p.src)*4))
		t := [][]string{{"dt", "gdnn impl", "gdnn 2T µs", "gdnn 1T µs", "oneDNN impl", "oneDNN 2T µs", "oneDNN 1T µs",
			"numpy µs", "vs oneDNN 2T", "vs oneDNN 1T", "vs numpy", "gdnn 2T GB/s", "%readbw 2T", "%readbw 1T", "speed", "BW"}}
		for _, r := range rows {
			if r.shape != s {
				continue
			}
			speed := r.speed.String()
			if r.speedRef == "numpy" {
				speed += " (vs numpy)"
			}
			t = append(t, []string{r.dt, orDash(r.gdnnImpl), fmtUS(r.g2), fmtUS(r.g1), orDash(r.onednnImpl), fmtUS(r.o2), fmtUS(r.o1),
				fmtUS(r.np), fmtX(r.x2), fmtX(r.x1), fmtX(r.xnp), fmtGB(r.gb2), fmtPct(r.pct2), fmtPct(r.pct1), speed, r.bw.String()})
		}
		mdTable(sb, 2, t)
		sb.WriteString("\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func renderLowp(sb *strings.Builder, lowp []lowpRow) {
	sb.WriteString("## bf16 / f16 speed vs f32 on DRAM-bound shapes\n\n")
	if len(lowp) == 0 {
		sb.WriteString("No DRAM-bound shape (f32 src >= 32 MiB: E F G H I) was in this run.\n\n")
		return
	}
	sb.WriteString("t(f32:f32) / t(pair) for gdnn, within each round, median over rounds; target >= 1.6x at 2T.\n\n")
	t := [][]string{{"shape", "dt", "f32 2T µs", "pair 2T µs", "speed-up 2T", "speed-up 1T", "target"}}
	for _, l := range lowp {
		t = append(t, []string{l.shape, l.dt, fmtUS(l.f32), fmtUS(l.t), fmtX(l.x2), fmtX(l.x1), l.v.String()})
	}
	mdTable(sb, 2, t)
	sb.WriteString("\n")
}

func renderLatency(sb *strings.Builder, rows []row) {
	fmt.Fprintf(sb, "## Shape %s latency\n\n", latencyShape)
	t := [][]string{{"dt", "gdnn 2T µs", "gdnn 1T µs", "oneDNN 2T µs", "oneDNN 1T µs", "under 1 µs (2T)"}}
	for _, r := range rows {
		if r.shape == latencyShape {
			t = append(t, []string{r.dt, fmtUS(r.g2), fmtUS(r.g1), fmtUS(r.o2), fmtUS(r.o1), threshold(r.g2, latencyUS, true).String()})
		}
	}
	if len(t) == 1 {
		fmt.Fprintf(sb, "Shape %s was not in this run.\n\n", latencyShape)
		return
	}
	mdTable(sb, 1, t)
	sb.WriteString("\n")
}

func renderJIT(sb *strings.Builder, b *benchRuns, benchstat string) {
	sb.WriteString("## JIT compile and execute overhead\n\n")
	fmt.Fprintf(sb, "`go test -bench` in ./internal/jit (cpu: %s); median of the runs.\n\n", orDash(b.cpu))
	t := [][]string{{"benchmark", "measures", "median", "runs"}}
	for _, jb := range jitBenches {
		xs := b.ns[jb.name]
		m := median(xs)
		val := "missing from ./internal/jit"
		if m.ok {
			v := m.v
			if jb.unit == "µs" {
				v /= 1000
			}
			val = fmt.Sprintf("%.3g %s", v, jb.unit)
		}
		t = append(t, []string{jb.name, jb.what, val, fmt.Sprint(len(xs))})
	}
	mdTable(sb, 2, t)
	sb.WriteString("\n")
	if benchstat != "" {
		sb.WriteString("benchstat:\n\n```text\n" + strings.TrimRight(benchstat, "\n") + "\n```\n\n")
	} else {
		sb.WriteString("(benchstat was not available for this run.)\n\n")
	}
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run parses the flags, reads the inputs and writes the report to stdout;
// it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gdnnperf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	raw := fs.String("raw", "", "run_all.sh RESULTS.raw.txt (required)")
	harness := fs.String("harness", "", "run_all.sh RESULTS.txt (required)")
	bench := fs.String("bench", "", "`go test -bench` output of ./internal/jit (required)")
	benchstat := fs.String("benchstat", "", "benchstat output of the same file (optional)")
	cmd := fs.String("cmd", "bench/perf_report.sh", "the command line that produced the inputs")
	rev := fs.String("rev", "", "gdnn revision measured (optional)")
	trial := fs.Bool("trial", false, "label the report a trial run")
	plot := fs.String("plot", "", "gdnnbench --plot chart to embed, as a path relative to the report (optional)")
	kinds := fs.String("kinds", "", "bench/kinds_side_by_side.sh output (optional)")
	interp := fs.String("interp", "", "`go test -bench InterpVsNaive` output of ./reduce (optional; given alone, only its section is written)")
	secDir := fs.String("sections", "", "`dir`ectory of the hand-written sections (docs; optional: without it the report has none)")
	l3 := fs.Int64("l3", 0, "L3 `bytes`: a src of half of it or more is compared with the 256 MiB (DRAM) probe; 0: every src with the probe at its own size")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *interp != "" && *raw == "" && *harness == "" && *bench == "" && fs.NArg() == 0 {
		return writeOut(stdout, stderr, func() (string, error) { return interpSection(*interp) })
	}
	if *raw == "" || *harness == "" || *bench == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "gdnnperf: need -raw, -harness and -bench, and no other arguments")
		fs.Usage()
		return 2
	}
	if *l3 < 0 {
		fmt.Fprintln(stderr, "gdnnperf: -l3 must not be negative")
		return 2
	}
	return writeOut(stdout, stderr, func() (string, error) {
		return build(*raw, *harness, *bench, *benchstat, *kinds, *interp, *secDir, *cmd, *rev, *plot, *trial, *l3)
	})
}

// writeOut writes what make returns to stdout and returns the exit status.
func writeOut(stdout, stderr io.Writer, make func() (string, error)) int {
	out, err := make()
	if err != nil {
		fmt.Fprintln(stderr, "gdnnperf:", err)
		return 1
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		fmt.Fprintln(stderr, "gdnnperf:", err)
		return 1
	}
	return 0
}

// readInterp reads the interpreter benchmark's output file.
func readInterp(path string) (*interpRuns, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, status.Errorf(status.InvalidArguments, "interpreter benchmark output %s: %v", path, err)
	}
	defer f.Close()
	return parseInterp(f)
}

// interpSection renders the interpreter's section alone, to replace that
// section of a report without measuring the rest again.
func interpSection(path string) (string, error) {
	ir, err := readInterp(path)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	renderInterp(&sb, ir)
	return sb.String(), nil
}

// build reads the files and renders the report.
func build(raw, harness, bench, benchstat, kinds, interp, secDir, cmd, rev, plot string, trial bool, l3 int64) (string, error) {
	rf, err := os.Open(raw)
	if err != nil {
		return "", status.Errorf(status.InvalidArguments, "raw results %s: %v", raw, err)
	}
	defer rf.Close()
	recs, err := parseRaw(rf)
	if err != nil {
		return "", err
	}
	d, err := newDataset(recs)
	if err != nil {
		return "", err
	}
	d.l3 = l3
	if len(d.shapes) == 0 {
		return "", status.Errorf(status.InvalidArguments, "raw results %s: no measurements", raw)
	}
	h, err := os.ReadFile(harness)
	if err != nil {
		return "", status.Errorf(status.InvalidArguments, "harness output %s: %v", harness, err)
	}
	bf, err := os.Open(bench)
	if err != nil {
		return "", status.Errorf(status.InvalidArguments, "benchmark output %s: %v", bench, err)
	}
	defer bf.Close()
	br, err := parseBench(bf)
	if err != nil {
		return "", err
	}
	var bs []byte
	if benchstat != "" {
		if bs, err = os.ReadFile(benchstat); err != nil {
			return "", status.Errorf(status.InvalidArguments, "benchstat output %s: %v", benchstat, err)
		}
	}
	var kr *kindRuns
	if kinds != "" {
		kf, err := os.Open(kinds)
		if err != nil {
			return "", status.Errorf(status.InvalidArguments, "kinds output %s: %v", kinds, err)
		}
		defer kf.Close()
		if kr, err = parseKinds(kf); err != nil {
			return "", err
		}
	}
	var ir *interpRuns
	if interp != "" {
		if ir, err = readInterp(interp); err != nil {
			return "", err
		}
	}
	var sec sections
	if secDir != "" {
		if sec, err = readSections(secDir); err != nil {
			return "", err
		}
	}
	return render(inputs{data: d, harness: string(h), bench: br, benchstat: string(bs), kinds: kr, interp: ir,
		sections: sec, cmd: cmd, rev: rev, plot: plot, trial: trial})
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"

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
	l3 := fs.Int64("l3", 0, "L3 `bytes`: a src of half of it or more is compared with the 256 MiB (DRAM) probe; 0: every src with the probe at its own size")
	if err := fs.Parse(args); err != nil {
		return 2
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
	out, err := build(*raw, *harness, *bench, *benchstat, *kinds, *cmd, *rev, *plot, *trial, *l3)
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

// build reads the files and renders the report.
func build(raw, harness, bench, benchstat, kinds, cmd, rev, plot string, trial bool, l3 int64) (string, error) {
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
	return render(inputs{data: d, harness: string(h), bench: br, benchstat: string(bs), kinds: kr, cmd: cmd, rev: rev, plot: plot, trial: trial})
}

// Command gdnnperf turns one run of the ReduceMean anchors harness
// (shared/anchors/run_all.sh with gdnn as its EXTRA_CMD), the jit
// package's Go benchmarks and, given -interp, reduce's benchmark of the
// interpreter against plain Go loops into docs/PERFORMANCE.md: a table per
// anchor shape and data type pair with gdnn, oneDNN and numpy side by side,
// speed ratios computed within each round, the fraction of the
// read-bandwidth limit, the low-precision speed-ups, the JIT compile and
// execute-overhead figures, the interpreter's ratios to plain Go, and a
// summary that marks every performance target MET or NOT MET from those
// figures. Given -sections (the docs folder), it copies in the sections
// written by hand from measurements of their own (sections.go).
//
// Usage:
//
//	gdnnperf -raw OUT/RESULTS.raw.txt -harness OUT/RESULTS.txt -bench jit-bench.txt \
//	    [-benchstat benchstat.txt] [-kinds kinds.txt] [-interp interp-bench.txt] \
//	    [-sections docs] [-cmd "command line"] [-rev REV] [-trial] > docs/PERFORMANCE.md
//	gdnnperf -interp interp-bench.txt   # the interpreter's section alone
//
// bench/perf_report.sh runs the whole pipeline.
package main

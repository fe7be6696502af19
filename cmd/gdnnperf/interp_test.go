package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interpOut is BenchmarkInterpVsNaive output for two shapes, f32 Mean and
// Max and bf16 Mean, two rounds: A's Max is slower than plain Go.
const interpOut = `goos: linux
cpu: AMD EPYC
BenchmarkInterpVsNaive/shape=A/kind=Mean/dt=f32/impl=interp-2   100  9000 ns/op  7.0 MB/s  5000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Mean/dt=f32/impl=plainGo-2  100  9000 ns/op  7.0 MB/s  10000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Max/dt=f32/impl=interp-2    100  9000 ns/op  7.0 MB/s  12000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Max/dt=f32/impl=plainGo-2   100  9000 ns/op  7.0 MB/s  10000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Mean/dt=bf16/impl=interp-2  100  9000 ns/op  7.0 MB/s  4000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Mean/dt=bf16/impl=plainGo-2 100  9000 ns/op  7.0 MB/s  12000 cpu-ns/op
BenchmarkInterpVsNaive/shape=B/kind=Mean/dt=f32/impl=interp-2   100  9000 ns/op  7.0 MB/s  1000 cpu-ns/op
BenchmarkInterpVsNaive/shape=B/kind=Mean/dt=f32/impl=plainGo-2  100  9000 ns/op  7.0 MB/s  2000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Mean/dt=f32/impl=interp-2   100  9000 ns/op  7.0 MB/s  5000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Mean/dt=f32/impl=plainGo-2  100  9000 ns/op  7.0 MB/s  20000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Max/dt=f32/impl=interp-2    100  9000 ns/op  7.0 MB/s  12000 cpu-ns/op
BenchmarkInterpVsNaive/shape=A/kind=Max/dt=f32/impl=plainGo-2   100  9000 ns/op  7.0 MB/s  10000 cpu-ns/op
PASS
`

// TestInterpSection checks the ratios (the median of the paired
// rounds' ratios, from cpu-ns/op), the target's verdict and misses, and
// the section written alone by -interp.
func TestInterpSection(t *testing.T) {
	ir, err := parseInterp(strings.NewReader(interpOut))
	if err != nil {
		t.Fatal(err)
	}
	if ir.metric != "cpu-ns/op" || ir.cpu != "AMD EPYC" || ir.rounds() != 2 {
		t.Errorf("metric %q, cpu %q, rounds %d", ir.metric, ir.cpu, ir.rounds())
	}
	if x := ir.ratio(interpCell{"A", "Mean", "f32"}); !x.ok || x.v != 3 { // rounds 2x and 4x
		t.Errorf("A Mean f32 ratio %v, want 3", x)
	}
	tg := ir.target()
	if tg.v != notMet || !strings.Contains(tg.figures, "A Max 0.83x") {
		t.Errorf("target %v: %s", tg.v, tg.figures)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "interp.txt")
	if err := os.WriteFile(p, []byte(interpOut), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb strings.Builder
	if rc := run([]string{"-interp", p}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	s := out.String()
	for _, want := range []string{"## The interpreter against plain Go\n", "| f32 | A | B |\n", "| Mean | 3.00x | 2.00x |\n",
		"| Max | **0.83x** | - |\n", "| Mean | 3.00x | - |\n", "5.00 / 15.0"} {
		if !strings.Contains(s, want) {
			t.Errorf("section lacks %q:\n%s", want, s)
		}
	}
	raw := filepath.Join(dir, "raw.txt")
	harness := filepath.Join(dir, "RESULTS.txt")
	bench := filepath.Join(dir, "bench.txt")
	for f, body := range map[string]string{raw: synthRaw(), harness: "# date: 2026-01-01T00:00:00Z\n", bench: benchOut} {
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if rc := run([]string{"-raw", raw, "-harness", harness, "-bench", bench, "-interp", p}, &out, &errb); rc != 0 ||
		!strings.Contains(out.String(), "| "+tg.name+" | **NOT MET** |") || !strings.Contains(out.String(), "## The interpreter against plain Go\n") {
		t.Errorf("full report with -interp: rc %d, no interpreter target or section: %s", rc, errb.String())
	}
	if _, err := parseInterp(strings.NewReader("BenchmarkInterpVsNaive/shape=A/impl=interp-2 1 5 ns/op\n")); err == nil {
		t.Errorf("a malformed name parsed")
	}
}

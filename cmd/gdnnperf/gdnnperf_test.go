package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

// Synthetic harness results with known numbers, three rounds.
//
// A (69120 B f32 src): gdnn f32 2T is faster than oneDNN in the median time
// (0.9 vs 1.0 µs) but slower in the median of within-round ratios (0.889),
// so the speed target must be NOT MET. f16 has no oneDNN, numpy instead.
// E (98 MiB f32 src): DRAM-bound; bf16 2x f32 speed, f16 only 1.4x; bf16:f32
// and f16:f32 not measured. Z: a src size that is not a multiple of 64 B, to
// check the readbw match (with a decoy line at the unrounded size).
const (
	prbA = "6x12x10x24:6x12x1x1"
	prbE = "32x256x56x56:32x256x1x1"
	prbZ = "3x349525:3x1"
)

// synth holds per-round µs by (tool, shape, dt, threads).
var synth = []struct {
	tool, shape, prb, dt string
	threads              int
	us                   [3]float64
}{
	{"gdnn", "A", prbA, "f32:f32", 2, [3]float64{0.8, 0.9, 2.0}},
	{"gdnn", "A", prbA, "f32:f32", 1, [3]float64{1, 1, 1}},
	{"onednn", "A", prbA, "f32:f32", 2, [3]float64{1.0, 0.8, 1.0}},
	{"onednn", "A", prbA, "f32:f32", 1, [3]float64{1.5, 1.5, 1.5}},
	{"gdnn", "A", prbA, "f16:f16", 2, [3]float64{0.5, 0.5, 0.5}},
	{"gdnn", "A", prbA, "f16:f16", 1, [3]float64{0.6, 0.6, 0.6}},
	{"numpy", "A", prbA, "f16:f16", 1, [3]float64{30, 31, 32}},
	{"gdnn", "A", prbA, "f16:f32", 2, [3]float64{0.7, 0.7, 0.7}},
	{"gdnn", "A", prbA, "f16:f32", 1, [3]float64{0.8, 0.8, 0.8}},
	{"gdnn", "E", prbE, "f32:f32", 2, [3]float64{2000, 2100, 2200}},
	{"gdnn", "E", prbE, "f32:f32", 1, [3]float64{4000, 4000, 4000}},
	{"onednn", "E", prbE, "f32:f32", 2, [3]float64{2050, 2000, 2300}},
	{"onednn", "E", prbE, "f32:f32", 1, [3]float64{4100, 4100, 4100}},
	{"gdnn", "E", prbE, "bf16:bf16", 2, [3]float64{1000, 1400, 1100}},
	{"gdnn", "E", prbE, "bf16:bf16", 1, [3]float64{2000, 2000, 2000}},
	{"onednn", "E", prbE, "bf16:bf16", 2, [3]float64{900, 900, 900}},
	{"onednn", "E", prbE, "bf16:bf16", 1, [3]float64{2100, 2100, 2100}},
	{"gdnn", "E", prbE, "f16:f16", 2, [3]float64{1500, 1500, 1500}},
	{"onednn", "E", prbE, "bf16:f32", 2, [3]float64{1000, 1000, 1000}}, // gdnn did not run it
	{"gdnn", "Z", prbZ, "f32:f32", 2, [3]float64{100, 100, 100}},
}

// synthRaw renders the synthetic results in run_all.sh's raw format.
func synthRaw() string {
	var sb strings.Builder
	w := func(rd int, shape, rest string) {
		fmt.Fprintf(&sb, "round=%d shape=%s %s gate_busy=0 gate_steal=0\n", rd, shape, rest)
	}
	for rd := 1; rd <= 3; rd++ {
		w(rd, "BASE", "readbw bytes=32768 threads=1 passes=1 reps=7 best_gbps=300 median_gbps=290")
		w(rd, "A", "readbw bytes=69120 threads=2 passes=1 reps=5 best_gbps=700 median_gbps=650")
		w(rd, "E", fmt.Sprintf("readbw bytes=102760448 threads=2 passes=1 reps=5 best_gbps=%v median_gbps=40", []float64{60, 50, 55}[rd-1]))
		w(rd, "E", "readbw bytes=51380224 threads=2 passes=1 reps=5 best_gbps=60 median_gbps=40")
		w(rd, "Z", "readbw bytes=4194240 threads=2 passes=1 reps=5 best_gbps=50 median_gbps=45")
		w(rd, "Z", "readbw bytes=4194300 threads=2 passes=1 reps=5 best_gbps=40 median_gbps=35") // decoy: not rounded
		for _, dt := range []string{"f16:f16", "f16:f32"} {
			sd, dd, _ := strings.Cut(dt, ":")
			for _, th := range []int{2, 1} {
				w(rd, "A", fmt.Sprintf("onednn label=A prb=%s sdt=%s ddt=%s threads=%d impl=none status=unimplemented", prbA, sd, dd, th))
			}
		}
		for _, s := range synth {
			sd, dd, _ := strings.Cut(s.dt, ":")
			us := s.us[rd-1]
			switch s.tool {
			case "gdnn":
				w(rd, s.shape, fmt.Sprintf("gdnn prb=%s sdt=%s ddt=%s threads=%d variant=jit:avx512 iters=9 median_us=%v min_us=%v gbps_median=1 gbps_best=1 bwpct=1", s.prb, sd, dd, s.threads, us, us))
			case "onednn":
				w(rd, s.shape, fmt.Sprintf("onednn label=%s prb=%s sdt=%s ddt=%s threads=%d isa=x ver=2.6.3 impl=jit:avx512_core_bf16 status=ok create_us=1 iters=9 median_us=%v min_us=%v gbps_median=1 gbps_best=1 src_bytes=1 dst_bytes=1 maxabserr=0", s.shape, s.prb, sd, dd, s.threads, us, us))
			case "numpy":
				w(rd, s.shape, fmt.Sprintf("numpy prb=%s dtype=%s axes=2,3 out_dtype=float16 iters=9 median_us=%v min_us=%v gbps_median=1 gbps_best=1 maxabserr=0 np=1.24.2", s.prb, sd, us, us))
			}
		}
		w(rd, "A", fmt.Sprintf("gonaive prb=%s variant=rowacc outer=72 red=240 inner=1 iters=9 median_us=9 min_us=9 gbps_median=7 gbps_best=8 maxabserr=0", prbA))
	}
	return sb.String()
}

// refMedian is the test's own median (float64, sorted copy).
func refMedian(xs ...float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func synthUS(tool, shape, dt string, th int) [3]float64 {
	for _, s := range synth {
		if s.tool == tool && s.shape == shape && s.dt == dt && s.threads == th {
			return s.us
		}
	}
	panic("no synthetic series " + tool + shape + dt)
}

// refRatio is the median over rounds of a[r]/b[r].
func refRatio(a, b [3]float64) float64 { return refMedian(a[0]/b[0], a[1]/b[1], a[2]/b[2]) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func synthData(t *testing.T) *dataset {
	t.Helper()
	recs, err := parseRaw(strings.NewReader(synthRaw()))
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDataset(recs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func findRow(t *testing.T, rows []row, shape, dt string) row {
	t.Helper()
	for _, r := range rows {
		if r.shape == shape && r.dt == dt {
			return r
		}
	}
	t.Fatalf("no row %s %s", shape, dt)
	return row{}
}

func TestRowsRatiosAndVerdicts(t *testing.T) {
	d := synthData(t)
	if !slices.Equal(d.rounds, []int{1, 2, 3}) || !slices.Equal(d.shapes, []string{"A", "E", "Z"}) {
		t.Fatalf("rounds %v shapes %v", d.rounds, d.shapes)
	}
	rows, err := d.rows()
	if err != nil {
		t.Fatal(err)
	}
	// A f32: within-round ratio median, not the ratio of medians.
	a := findRow(t, rows, "A", "f32:f32")
	wantX2 := refRatio(synthUS("onednn", "A", "f32:f32", 2), synthUS("gdnn", "A", "f32:f32", 2))
	if !a.x2.ok || !near(a.x2.v, wantX2) || near(a.x2.v, 1.0/0.9) {
		t.Errorf("A f32 x2 = %v, want %v", a.x2, wantX2)
	}
	if !near(a.x1.v, 1.5) || !near(a.g2.v, 0.9) || !near(a.o2.v, 1.0) {
		t.Errorf("A f32 x1 %v g2 %v o2 %v", a.x1, a.g2, a.o2)
	}
	if a.speed != notMet || a.speedRef != "oneDNN" || a.bw != notApplicable {
		t.Errorf("A f32 speed %v (%s) bw %v, want NOT MET vs oneDNN, n/a", a.speed, a.speedRef, a.bw)
	}
	// A f16: oneDNN unimplemented, compared with numpy (gdnn 1T).
	f := findRow(t, rows, "A", "f16:f16")
	wantNP := refRatio(synthUS("numpy", "A", "f16:f16", 1), synthUS("gdnn", "A", "f16:f16", 1))
	if f.onednnImpl != "UNSUPPORTED(unimplemented)" || f.speedRef != "numpy" || f.speed != met || !near(f.xnp.v, wantNP) {
		t.Errorf("A f16 impl %q ref %q speed %v xnp %v want %v", f.onednnImpl, f.speedRef, f.speed, f.xnp, wantNP)
	}
	// f16:f32 is compared with numpy's f16 -> f16.
	f32 := findRow(t, rows, "A", "f16:f32")
	wantNP = refRatio(synthUS("numpy", "A", "f16:f16", 1), synthUS("gdnn", "A", "f16:f32", 1))
	if f32.npDT != "f16:f16" || f32.speed != met || !near(f32.xnp.v, wantNP) {
		t.Errorf("A f16:f32 npDT %q speed %v xnp %v want %v", f32.npDT, f32.speed, f32.xnp, wantNP)
	}
	// A pair oneDNN ran and gdnn did not is NOT MEASURED, never MET.
	nm := findRow(t, rows, "E", "bf16:f32")
	if nm.speed != notMeasured || nm.bw != notMeasured {
		t.Errorf("E bf16:f32 speed %v bw %v, want NOT MEASURED", nm.speed, nm.bw)
	}
	// E f32: faster than oneDNN at both thread counts; readbw % per round.
	e := findRow(t, rows, "E", "f32:f32")
	g, rb := synthUS("gdnn", "E", "f32:f32", 2), []float64{60, 50, 55}
	var pcts []float64
	for i := range g {
		pcts = append(pcts, 100*(102760448+32768)/g[i]*1e-3/rb[i])
	}
	if e.speed != met || e.bw != met || !near(e.pct2.v, refMedian(pcts...)) {
		t.Errorf("E f32 speed %v bw %v pct2 %v want %v", e.speed, e.bw, e.pct2, refMedian(pcts...))
	}
	if e.pct1.ok {
		t.Errorf("E f32 pct1 %v: no 1T readbw line exists", e.pct1)
	}
	eb := findRow(t, rows, "E", "bf16:bf16")
	if eb.speed != notMet || eb.bw != met || eb.srcBytes != 51380224 || eb.dstBytes != 16384 {
		t.Errorf("E bf16 speed %v bw %v bytes %d/%d", eb.speed, eb.bw, eb.srcBytes, eb.dstBytes)
	}
	ef := findRow(t, rows, "E", "f16:f16")
	if ef.bw != notMet || ef.speed != notApplicable {
		t.Errorf("E f16 bw %v (pct %v) speed %v", ef.bw, ef.pct2, ef.speed)
	}
	// Z: readbw at the src size rounded down to 64 B, not the decoy.
	z := findRow(t, rows, "Z", "f32:f32")
	wantZ := 100 * (4194300.0 + 12) / 100 * 1e-3 / 50
	if !near(z.pct2.v, wantZ) || z.bw != met {
		t.Errorf("Z pct2 %v want %v (bw %v)", z.pct2, wantZ, z.bw)
	}
}

func TestLowPrecisionAndSummary(t *testing.T) {
	d := synthData(t)
	rows, err := d.rows()
	if err != nil {
		t.Fatal(err)
	}
	lowp, err := d.lowpRows()
	if err != nil {
		t.Fatal(err)
	}
	if len(lowp) != 4 { // only E is DRAM-bound (Z is 4 MiB, A tiny)
		t.Fatalf("lowp rows %d, want 4", len(lowp))
	}
	f32 := synthUS("gdnn", "E", "f32:f32", 2)
	want := map[string]struct {
		x float64
		v verdict
	}{
		"bf16:bf16": {refRatio(f32, synthUS("gdnn", "E", "bf16:bf16", 2)), met},
		"f16:f16":   {refRatio(f32, synthUS("gdnn", "E", "f16:f16", 2)), notMet},
		"bf16:f32":  {0, notMeasured},
		"f16:f32":   {0, notMeasured},
	}
	for _, l := range lowp {
		w := want[l.dt]
		if l.v != w.v || (w.v != notMeasured && !near(l.x2.v, w.x)) {
			t.Errorf("lowp %s: %v %v, want %v %v", l.dt, l.x2, l.v, w.x, w.v)
		}
	}
	ts := summarize(rows, lowp, nil)
	wantV := []verdict{notMet, met, notMet, notMet, met, notMeasured}
	if len(ts) != len(wantV) {
		t.Fatalf("%d targets, want %d", len(ts), len(wantV))
	}
	for i, tg := range ts {
		if tg.v != wantV[i] {
			t.Errorf("target %q: %v, want %v (%s)", tg.name, tg.v, wantV[i], tg.figures)
		}
	}
	if !strings.HasPrefix(ts[0].figures, "1 of 4 rows met") || !strings.Contains(ts[0].figures, "A f32:f32 (2T 0.89x, 1T 1.50x)") {
		t.Errorf("speed figures %q", ts[0].figures)
	}
	if !strings.Contains(ts[2].figures, "E f16:f16") || !strings.HasPrefix(ts[2].figures, "3 of 5 rows met") {
		t.Errorf("BW figures %q", ts[2].figures)
	}
}

func TestOverallNoRowsIsNotMeasured(t *testing.T) {
	if v := overall(nil); v != notMeasured {
		t.Errorf("overall(nil) = %v", v)
	}
	ts := summarize(nil, nil, nil)
	if ts[3].v != notMeasured || ts[3].figures != "no such row in this run" {
		t.Errorf("low-precision target with no rows: %v %q", ts[3].v, ts[3].figures)
	}
	if v := overall([]verdict{met, notApplicable, notMeasured}); v != notMet {
		t.Errorf("a row not measured must not count as met: %v", v)
	}
}

const benchOut = `goos: linux
cpu: AMD EPYC
BenchmarkCompileNew-2   	   19011	     60000 ns/op
--- BENCH: BenchmarkCompileNew-2
    bench_test.go:28: impl jit:avx512
BenchmarkCompileNew-2   	   21595	     50000 ns/op	  12 B/op
BenchmarkCompileNew-2   	   21595	     70000 ns/op
BenchmarkRunTiny-2      	11591626	       105.0 ns/op
BenchmarkRunTiny-2      	11591626	       95.0 ns/op
PASS
`

func TestParseBench(t *testing.T) {
	b, err := parseBench(strings.NewReader(benchOut))
	if err != nil {
		t.Fatal(err)
	}
	if b.cpu != "AMD EPYC" || len(b.ns["BenchmarkCompileNew"]) != 3 || !near(median(b.ns["BenchmarkRunTiny"]).v, 100) {
		t.Errorf("parsed %+v", b)
	}
	if got := jitFigure(b, "BenchmarkCompileNew", "µs"); got != "BenchmarkCompileNew median 60 µs over 3 runs" {
		t.Errorf("figure %q", got)
	}
	if got := jitFigure(b, "BenchmarkMissing", "ns"); !strings.Contains(got, "not in the benchmark output") {
		t.Errorf("missing figure %q", got)
	}
	// The compile target: median 60 µs is under 200 µs; 250 µs is not.
	if ts := summarize(nil, nil, b); ts[len(ts)-1].v != met {
		t.Errorf("compile target with a 60 µs median: %v", ts[len(ts)-1].v)
	}
	slow, _ := parseBench(strings.NewReader("BenchmarkCompileNew-2 10 250000 ns/op\n"))
	if ts := summarize(nil, nil, slow); ts[len(ts)-1].v != notMet {
		t.Errorf("compile target with a 250 µs median: %v", ts[len(ts)-1].v)
	}
	if _, err := parseBench(strings.NewReader("BenchmarkX-2 10 abc ns/op\n")); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("bad ns/op: %v", err)
	}
}

func TestBadRawInput(t *testing.T) {
	for _, in := range []string{
		"round=x shape=A gdnn median_us=1\n",
		"round=1 gdnn median_us=1\n",
		"round=1 shape=A gdnn prb=2x3:2x1 sdt=f32 ddt=f32 threads=2 median_us=abc\n",
		"round=1 shape=A gdnn prb=2x3:2x1 sdt=f32 ddt=f32 threads=2 median_us=-1\n",
		"round=1 shape=A gdnn prb=2x3:2x2 sdt=f32 ddt=f32 threads=2 median_us=1\n",
		"round=1 shape=A gdnn prb=2x3:2x1 sdt=f32 ddt=f32 threads=2 median_us=1\nround=1 shape=A gdnn prb=2x3:2x1 sdt=f32 ddt=f32 threads=2 median_us=2\n",
		"round=1 shape=A numpy prb=2x3:2x1 dtype=bf16 median_us=1\n",
		"round=1 shape=A readbw bytes=64 threads=1\n",
	} {
		recs, err := parseRaw(strings.NewReader(in))
		if err == nil {
			_, err = newDataset(recs)
		}
		if !errors.Is(err, status.InvalidArguments) {
			t.Errorf("%q: err %v, want invalid_arguments", in, err)
		}
	}
}

func TestRunWritesReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	raw := write("raw.txt", synthRaw())
	harness := write("RESULTS.txt", "# date: 2026-01-01T00:00:00Z\n# load before run: 0.1; ROUNDS=3 TIME=0.4\n"+
		"# result lines measured after the quiet gate gave up (other processes > 20% cpu): 16 of 94; max steal seen: 0%\n\ntable\n")
	bench := write("bench.txt", benchOut)
	var out, errb strings.Builder
	if rc := run([]string{"-raw", raw, "-harness", harness, "-bench", bench, "-trial", "-cmd", "X=1 bench/perf_report.sh"}, &out, &errb); rc != 0 {
		t.Fatalf("rc %d: %s", rc, errb.String())
	}
	s := out.String()
	for _, want := range []string{"> **TRIAL RUN**", "# date: 2026-01-01T00:00:00Z", "`X=1 bench/perf_report.sh`",
		"| shape A under 1 µs per execute, 2T, every data type pair | **MET** |", "**NOT MET**",
		"### E: 32x256x56x56 -> 32x256x1x1, axes [2,3]", "MET (vs numpy)", "(benchstat was not available",
		"**Measured on a busy machine:** 16 of 94 result lines"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(s, "## Bandwidth chart") {
		t.Errorf("a chart section without -plot")
	}
	out.Reset()
	if rc := run([]string{"-raw", raw, "-harness", harness, "-bench", bench, "-plot", "perf-bandwidth.svg"}, &out, &errb); rc != 0 ||
		!strings.Contains(out.String(), "## Bandwidth chart\n") || !strings.Contains(out.String(), "](perf-bandwidth.svg)\n") {
		t.Errorf("-plot: rc %d, no embedded chart in the report", rc)
	}
	if strings.Count(strings.SplitN(s, "\n", 2)[0], "TRIAL") != 1 {
		t.Errorf("first line %q", strings.SplitN(s, "\n", 2)[0])
	}
	out.Reset()
	if rc := run([]string{"-raw", raw}, &out, &errb); rc != 2 {
		t.Errorf("missing flags: rc %d", rc)
	}
	if rc := run([]string{"-raw", filepath.Join(dir, "nope"), "-harness", harness, "-bench", bench}, &out, &errb); rc != 1 {
		t.Errorf("missing file: rc %d", rc)
	}
	out.Reset()
	kinds := write("kinds.txt", kindsRaw)
	if rc := run([]string{"-raw", raw, "-harness", harness, "-bench", bench, "-kinds", kinds, "-l3", "33554432"}, &out, &errb); rc != 0 ||
		!strings.Contains(out.String(), "## Every reduction beside oneDNN's same alg\n") ||
		!strings.Contains(out.String(), "the src is half the L3 (32 MiB) or more") {
		t.Errorf("-kinds -l3: rc %d, no kinds table or roofline note:\n%s", rc, errb.String())
	}
	for _, bad := range [][]string{{"-l3", "-1"}, {"-kinds", filepath.Join(dir, "nope")}} {
		args := append([]string{"-raw", raw, "-harness", harness, "-bench", bench}, bad...)
		if rc := run(args, &out, &errb); rc == 0 {
			t.Errorf("%v: rc 0", bad)
		}
	}
}

// TestRoofline checks the roofline rule: with an L3 of 64 MiB, E's f32 src
// (98 MiB) is compared with the 256 MiB probe of any shape in the same
// round, E's bf16 src (49 MiB, half the L3 or more) too, and Z's 4 MiB src
// still with its own size; without the rule, E uses its own size.
func TestRoofline(t *testing.T) {
	raw := synthRaw()
	for rd := 1; rd <= 3; rd++ {
		raw += fmt.Sprintf("round=%d shape=G readbw bytes=268435456 threads=2 passes=1 reps=5 best_gbps=%v median_gbps=30\n", rd, []float64{40, 30, 35}[rd-1])
	}
	recs, err := parseRaw(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDataset(recs)
	if err != nil {
		t.Fatal(err)
	}
	own, err := d.rows()
	if err != nil {
		t.Fatal(err)
	}
	d.l3 = 64 << 20
	roof, err := d.rows()
	if err != nil {
		t.Fatal(err)
	}
	g, dram := synthUS("gdnn", "E", "f32:f32", 2), []float64{40, 30, 35}
	var pcts []float64
	for i := range g {
		pcts = append(pcts, 100*(102760448+32768)/g[i]*1e-3/dram[i])
	}
	if e := findRow(t, roof, "E", "f32:f32"); !near(e.pct2.v, refMedian(pcts...)) {
		t.Errorf("E f32 with the rule: pct2 %v, want %v (against the 256 MiB probe)", e.pct2, refMedian(pcts...))
	}
	if e := findRow(t, own, "E", "f32:f32"); near(e.pct2.v, refMedian(pcts...)) {
		t.Errorf("E f32 without the rule: pct2 %v uses the 256 MiB probe", e.pct2)
	}
	eb := findRow(t, roof, "E", "bf16:bf16")
	if ob := findRow(t, own, "E", "bf16:bf16"); near(eb.pct2.v, ob.pct2.v) {
		t.Errorf("E bf16 (49 MiB, >= L3/2): pct2 %v unchanged by the rule", eb.pct2)
	}
	if z, oz := findRow(t, roof, "Z", "f32:f32"), findRow(t, own, "Z", "f32:f32"); !near(z.pct2.v, oz.pct2.v) {
		t.Errorf("Z (4 MiB, < L3/2): pct2 %v changed by the rule (was %v)", z.pct2, oz.pct2)
	}
	if got := roofNote(64 << 20); !strings.Contains(got, "half the L3 (64 MiB)") {
		t.Errorf("roofNote: %q", got)
	}
	if roofNote(0) != "" {
		t.Errorf("roofNote(0) = %q, want empty", roofNote(0))
	}
}

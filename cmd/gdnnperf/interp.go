package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// The interpreter against plain Go: reduce's BenchmarkInterpVsNaive,
// which times the interpreter (the one-call API with the instruction set
// capped to none, one thread) and hand-written Go loops side by side on
// every anchor shape, kind and src type. Its cells are
// BenchmarkInterpVsNaive/shape=S/kind=K/dt=D/impl=interp|plainGo.

const (
	interpBench  = "BenchmarkInterpVsNaive"
	interpTarget = 1.0 // t(plain Go) / t(interpreter), f32: at least as fast
)

// interpKinds and interpDTs order the section's tables (reduce's Op
// names; src types).
var (
	interpKinds = []string{"Mean", "Sum", "Max", "Min", "Prod", "L1", "L2", "SumSquare", "LogSum", "LogSumExp"}
	interpDTs   = []string{"f32", "bf16", "f16"}
)

// interpCell names one problem of the benchmark.
type interpCell struct{ shape, kind, dt string }

// interpRuns holds the benchmark's times per cell and impl, in run
// order: the thread's CPU time per call where the benchmark reported it
// (cpu-ns/op), else wall time (ns/op).
type interpRuns struct {
	cpu    string // the "cpu:" line
	metric string // "cpu-ns/op" or "ns/op"
	times  map[interpCell]map[string][]float64
}

// parseInterp reads `go test -bench` output holding BenchmarkInterpVsNaive
// lines (other lines are skipped).
func parseInterp(r io.Reader) (*interpRuns, error) {
	ir := &interpRuns{times: map[interpCell]map[string][]float64{}}
	wall := map[interpCell]map[string][]float64{}
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if c, ok := strings.CutPrefix(line, "cpu: "); ok {
			ir.cpu = strings.TrimSpace(c)
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], interpBench+"/") {
			continue
		}
		cell, impl, ok := interpName(benchName(f[0]))
		if !ok {
			return nil, status.Errorf(status.InvalidArguments, "interpreter benchmark line %d: name %q", ln, f[0])
		}
		for i := 2; i < len(f); i++ {
			dst := ir.times
			switch f[i] {
			case "cpu-ns/op":
			case "ns/op":
				dst = wall
			default:
				continue
			}
			v, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil || v <= 0 {
				return nil, status.Errorf(status.InvalidArguments, "interpreter benchmark line %d: %s value %q", ln, f[i], f[i-1])
			}
			if dst[cell] == nil {
				dst[cell] = map[string][]float64{}
			}
			dst[cell][impl] = append(dst[cell][impl], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, status.Errorf(status.InvalidArguments, "reading interpreter benchmark results: %v", err)
	}
	ir.metric = "cpu-ns/op"
	if len(ir.times) == 0 {
		ir.times, ir.metric = wall, "ns/op"
	}
	if len(ir.times) == 0 {
		return nil, status.Errorf(status.InvalidArguments, "no %s results", interpBench)
	}
	return ir, nil
}

// interpName splits shape=S/kind=K/dt=D/impl=I after the benchmark's name.
func interpName(name string) (interpCell, string, bool) {
	kv := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(name, interpBench+"/"), "/") {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return interpCell{}, "", false
		}
		kv[k] = v
	}
	c := interpCell{kv["shape"], kv["kind"], kv["dt"]}
	impl := kv["impl"]
	return c, impl, len(kv) == 4 && c.shape != "" && c.kind != "" && c.dt != "" && (impl == "interp" || impl == "plainGo")
}

// ratio is the median over rounds of t(plain Go) / t(interpreter), run
// i of one paired with run i of the other: perf_report.sh runs the
// benchmark once per round (-count 1), which times each cell's
// interpreter and then its plain Go, so a pair is measured moments
// apart and drifts in the machine's load cancel out.
func (ir *interpRuns) ratio(c interpCell) opt {
	in, pg := ir.times[c]["interp"], ir.times[c]["plainGo"]
	var rs []float64
	for i := range min(len(in), len(pg)) {
		rs = append(rs, pg[i]/in[i])
	}
	return median(rs)
}

// shapes returns the shapes measured, in order.
func (ir *interpRuns) shapes() []string {
	seen := map[string]bool{}
	var out []string
	for c := range ir.times {
		if !seen[c.shape] {
			seen[c.shape] = true
			out = append(out, c.shape)
		}
	}
	sort.Strings(out)
	return out
}

// target judges the f32 cells: the interpreter at least as fast as plain
// Go in every one.
func (ir *interpRuns) target() target {
	t := target{name: "the interpreter at least as fast as plain Go (hand-written loops), every anchor shape and kind, f32, 1 thread"}
	var vs []verdict
	var misses []string
	ok := 0
	for _, s := range ir.shapes() {
		for _, k := range interpKinds {
			x := ir.ratio(interpCell{s, k, "f32"})
			v := threshold(x, interpTarget, false)
			vs = append(vs, v)
			if v == met {
				ok++
			} else {
				misses = append(misses, fmt.Sprintf("%s %s %s", s, k, fmtX(x)))
			}
		}
	}
	t.v = overall(vs)
	t.figures = fmt.Sprintf("%d of %d cells met", ok, len(vs))
	if len(misses) > 0 {
		t.figures += "; not met: " + strings.Join(misses, ", ")
	}
	return t
}

// renderInterp writes the section: per src type, t(plain Go) /
// t(interpreter) for every kind and shape, then the medians behind them.
func renderInterp(sb *strings.Builder, ir *interpRuns) {
	if ir == nil {
		return
	}
	P := func(format string, a ...any) { fmt.Fprintf(sb, format+"\n", a...) }
	shapes := ir.shapes()
	P("## The interpreter against plain Go")
	P("")
	P("Where no machine code runs (macOS, Windows, an instruction set capped to none) the interpreter does all")
	P("the work. reduce's `BenchmarkInterpVsNaive` times it through the one-call API (`jit.SetMaxISA(jit.None)`,")
	P("one thread) and, right after it, the loops a Go programmer writes by hand (`reduce/naive_test.go`, the")
	P("anchors' gonaive style: one float32 running value per output, bf16 and f16 widened element by element")
	P("with the dtypes conversions; the faster of its rowacc and strided loop orders), on every anchor shape,")
	P("kind and src type (f32 dst). Each of %d rounds runs the benchmark once, taking each cell's interpreter", ir.rounds())
	P("and then its plain Go; cells are the median over rounds of t(plain Go) / t(interpreter), from the thread's")
	P("%s (wall time where the OS gives no thread CPU time, which other work on a shared machine", ir.metric)
	P("disturbs more): above 1 the interpreter is faster; **bold** below the target of %.1fx. cpu: %s.", interpTarget, ir.cpu)
	P("")
	for _, dt := range interpDTs {
		rows := [][]string{append([]string{dt}, shapes...)}
		for _, k := range interpKinds {
			r := []string{k}
			for _, s := range shapes {
				x := ir.ratio(interpCell{s, k, dt})
				cell := fmtX(x)
				if x.ok && x.v < interpTarget {
					cell = "**" + cell + "**"
				}
				r = append(r, cell)
			}
			rows = append(rows, r)
		}
		mdTable(sb, 1, rows)
		P("")
	}
	P("<details><summary>Medians behind the ratios (µs of %s per call: interpreter / plain Go)</summary>", ir.metric)
	P("")
	for _, dt := range interpDTs {
		rows := [][]string{append([]string{dt}, shapes...)}
		for _, k := range interpKinds {
			r := []string{k}
			for _, s := range shapes {
				t := ir.times[interpCell{s, k, dt}]
				in, pg := median(t["interp"]), median(t["plainGo"])
				r = append(r, fmtUS(opt{in.v / 1000, in.ok})+" / "+fmtUS(opt{pg.v / 1000, pg.ok}))
			}
			rows = append(rows, r)
		}
		mdTable(sb, 1, rows)
		P("")
	}
	P("</details>")
	P("")
}

// rounds is the most runs any cell has.
func (ir *interpRuns) rounds() int {
	n := 0
	for _, m := range ir.times {
		for _, t := range m {
			n = max(n, len(t))
		}
	}
	return n
}

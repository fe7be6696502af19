package main

import (
	"fmt"
	"strings"
)

// target is one line of the summary.
type target struct {
	name    string
	v       verdict
	figures string
}

// overall combines row verdicts: MET only when every applicable row was
// measured and met; no applicable row at all is NOT MEASURED.
func overall(vs []verdict) verdict {
	n, v := 0, met
	for _, x := range vs {
		switch x {
		case notApplicable:
			continue
		case notMet, notMeasured:
			v = notMet
		}
		n++
	}
	if n == 0 {
		return notMeasured
	}
	return v
}

// summarize builds the target summary from the rows.
func summarize(rows []row, lowp []lowpRow, b *benchRuns) []target {
	var ts []target
	add := func(name string, vs []verdict, ok int, misses []string) {
		n := 0
		for _, v := range vs {
			if v != notApplicable {
				n++
			}
		}
		fig := fmt.Sprintf("%d of %d rows met", ok, n)
		if n == 0 {
			fig = "no such row in this run"
		}
		if len(misses) > 0 {
			fig += "; not met: " + strings.Join(misses, ", ")
		}
		ts = append(ts, target{name, overall(vs), fig})
	}

	for _, ref := range []string{"oneDNN", "numpy"} {
		var vs []verdict
		var misses []string
		ok := 0
		for _, r := range rows {
			if r.speedRef != ref {
				continue
			}
			vs = append(vs, r.speed)
			if r.speed == met {
				ok++
				continue
			}
			if ref == "oneDNN" {
				misses = append(misses, fmt.Sprintf("%s %s (2T %s, 1T %s)", r.shape, r.dt, fmtX(r.x2), fmtX(r.x1)))
			} else {
				misses = append(misses, fmt.Sprintf("%s %s (%s)", r.shape, r.dt, fmtX(r.xnp)))
			}
		}
		if ref == "oneDNN" {
			add("gdnn at least as fast as oneDNN, same thread count (2T and 1T), where oneDNN runs", vs, ok, misses)
		} else {
			add("where oneDNN does not run the pair (f16): gdnn 1T at least as fast as numpy (single-threaded)", vs, ok, misses)
		}
	}

	var vs []verdict
	var misses []string
	ok := 0
	for _, r := range rows {
		vs = append(vs, r.bw)
		if r.bw == met {
			ok++
		} else if r.bw != notApplicable {
			misses = append(misses, fmt.Sprintf("%s %s %s", r.shape, r.dt, fmtPct(r.pct2)))
		}
	}
	add("gdnn 2T >= 75% of readbw best GB/s (same round, src size, threads) where src >= 1 MiB", vs, ok, misses)

	vs, misses, ok = nil, nil, 0
	for _, l := range lowp {
		vs = append(vs, l.v)
		if l.v == met {
			ok++
		} else {
			misses = append(misses, fmt.Sprintf("%s %s %s", l.shape, l.dt, fmtX(l.x2)))
		}
	}
	add("bf16/f16 >= 1.6x the f32 speed on DRAM-bound shapes (f32 src >= 32 MiB), 2T", vs, ok, misses)

	vs, misses, ok = nil, nil, 0
	for _, r := range rows {
		if r.shape != latencyShape {
			continue
		}
		v := threshold(r.g2, latencyUS, true)
		vs = append(vs, v)
		if v == met {
			ok++
		} else {
			misses = append(misses, fmt.Sprintf("%s %s µs", r.dt, fmtUS(r.g2)))
		}
	}
	add("shape A under 1 µs per execute, 2T, every data type pair", vs, ok, misses)

	compile := target{name: "JIT compile of a new kernel: median under 200 µs", v: notMeasured,
		figures: compileBench + " is not in the benchmark output"}
	if b != nil {
		if m := median(b.ns[compileBench]); m.ok {
			compile.v = threshold(opt{m.v / 1000, true}, compileUS, true)
			compile.figures = jitFigure(b, compileBench, "µs")
		}
	}
	return append(ts, compile)
}

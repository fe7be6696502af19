package bench

import (
	"fmt"
	"io"
	"strings"
)

// tableRow is one line of the --table summary.
type tableRow struct {
	shape, axes, alg, dts, layout, post, impl, status string
	perf                                              *PerfData
}

func tableRowOf(c redCase, res result) tableRow {
	axes := make([]string, 0)
	for _, a := range c.prb.Axes() {
		axes = append(axes, fmt.Sprint(a))
	}
	alg := c.alg
	if strings.HasPrefix(alg, "norm") {
		alg += fmt.Sprintf(" p=%s eps=%s", fmtFloat(c.p), fmtFloat(c.eps))
	}
	status := res.state
	if res.state == "FAILED" || res.state == "UNIMPLEMENTED" {
		status += " (" + shorten(res.reason, 48) + ")"
	}
	return tableRow{
		shape: c.prb.String(), axes: "[" + strings.Join(axes, ",") + "]", alg: alg,
		dts: c.sdt.String() + ":" + c.ddt.String(), layout: c.stag, post: c.postOps,
		impl: res.impl, status: status, perf: res.perf,
	}
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// printTable writes the rows as an aligned table: the readable summary of
// the default batch.
func printTable(w io.Writer, rows []tableRow) {
	cells := [][]string{{"shape", "axes", "alg", "sdt:ddt", "stag", "post-ops", "impl", "min us", "avg us", "GB/s", "%readBW", "runs", "status"}}
	busy := false
	for _, r := range rows {
		minUs, avgUs, gbs, pct, runs := "-", "-", "-", "-", "-"
		if p := r.perf; p != nil {
			minUs = fmt.Sprintf("%.1f", p.Time.Min*1e3)
			avgUs = fmt.Sprintf("%.1f", p.Time.Avg*1e3)
			if p.Time.Min > 0 {
				bw := float64(p.IBytes+p.OBytes) / (p.Time.Min / 1e3)
				gbs = fmt.Sprintf("%.1f", bw/1e9)
				if p.ReadBW > 0 {
					pct = fmt.Sprintf("%.0f%%", 100*bw/p.ReadBW)
					if p.ProbeBusy {
						pct += "*"
						busy = true
					}
				}
			}
			runs = fmt.Sprint(p.Time.Times)
		}
		post := r.post
		if post == "" {
			post = "-"
		}
		impl := r.impl
		if impl == "" {
			impl = "-"
		}
		cells = append(cells, []string{r.shape, r.axes, r.alg, r.dts, r.layout, post, impl, minUs, avgUs, gbs, pct, runs, r.status})
	}
	width := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	numeric := map[int]bool{6: true, 7: true, 8: true, 9: true, 10: true}
	for j, row := range cells {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			if numeric[i] && j > 0 {
				b.WriteString(strings.Repeat(" ", width[i]-len(c)) + c)
			} else if i < len(row)-1 {
				b.WriteString(c + strings.Repeat(" ", width[i]-len(c)))
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, b.String())
		if j == 0 {
			fmt.Fprintln(w, strings.Repeat("-", len(b.String())))
		}
	}
	if busy {
		fmt.Fprintf(w, "* %s: past the caches the problem read faster than the probe, even measured again; that %%readBW is not worth reading\n", busyProbeLabel)
	}
}

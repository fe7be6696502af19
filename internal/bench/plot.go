package bench

import (
	"cmp"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The --plot chart: every timed problem's bandwidth (in + out bytes over
// its min time, as %-Gbw%) against its size, over the read-bandwidth
// probe measured at each power of two, with the CPU's cache sizes marked
// where the OS tells them. %readBW is a problem's GB/s over the probe at
// the power of two at or above its src size; a mark above the probe line
// shows where a figure above 100% comes from: below the caches, a problem
// whose data stays in a cache between executes, or one that sits just
// below a cache size while its probe point is already past it; past the
// caches, a probe measured under load (checkProbe), which the mark, its
// row and the probe point then say.

// plotPoint is one timed problem.
type plotPoint struct {
	idx   int
	label string  // the problem: its name, else its descriptor
	impl  string  // the implementation that ran it
	bytes int64   // x: the src bytes its probe was measured for (else bytes read)
	gbs   float64 // y: GB/s at the min time
	pct   float64 // of the probe; 0 when not probed
	probe int     // index in runner.plotProbes of the probe it was compared with (-1: none)
	// busy: the problem, past the caches, beat the probe even re-measured:
	// the probe was measured under load (checkProbe).
	busy bool
}

// probeCurve is one probe's measurements, drawn as a line.
type probeCurve struct {
	name string
	pts  []probePoint
}

// probePoint is the probe's read bandwidth for a buffer of bytes; busy
// when it was measured under load (checkProbe).
type probePoint struct {
	bytes int64
	gbs   float64
	busy  bool
}

// cacheLevel is a data cache and its size.
type cacheLevel struct {
	name  string
	bytes int64
}

// plotPointOf makes the chart's point for a perf result.
func plotPointOf(d *PerfData) plotPoint {
	p := plotPoint{idx: d.Idx, label: problemLabel(d), impl: d.Impl, bytes: d.ProbeBytes, probe: -1, busy: d.ProbeBusy}
	if p.bytes <= 0 {
		p.bytes = d.IBytes
	}
	if d.Time.Min > 0 {
		p.gbs = float64(d.IBytes+d.OBytes) / (d.Time.Min / 1e3) / 1e9
	}
	if d.ReadBW > 0 {
		p.pct = 100 * p.gbs * 1e9 / d.ReadBW
	}
	return p
}

// problemLabel names a problem in the chart's table: its descriptor (with
// its _nNAME), data types and post-ops; for the graph driver, whose cases
// share a file, its repro line's options and case.
func problemLabel(d *PerfData) string {
	parts := []string{d.Desc}
	if _, rest, ok := strings.Cut(d.Prb, "--graph "); ok && d.Driver == "graph" {
		parts = []string{rest}
	} else if d.Desc == "" {
		parts = []string{d.Prb}
	}
	if d.Sdt != "" {
		parts = append(parts, d.Sdt+":"+d.Ddt)
	}
	if d.DT != "" {
		parts = append(parts, d.DT)
	}
	if d.Attr != "" {
		parts = append(parts, d.Attr)
	}
	return strings.Join(parts, " ")
}

// checkPlotPath refuses a --plot file that cannot be written, before the
// run rather than after it.
func checkPlotPath(path string) error {
	if path == "" || strings.HasSuffix(path, string(filepath.Separator)) {
		return fmt.Errorf("--plot needs a file name (--plot=FILE.svg)")
	}
	st, err := os.Stat(filepath.Dir(path))
	if err != nil || !st.IsDir() {
		return fmt.Errorf("--plot=%s: folder %s does not exist", path, filepath.Dir(path))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--plot=%s is a folder", path)
	} else if err == nil {
		// An existing file: it must open for writing (it is not truncated here).
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("--plot=%s cannot be written: %v", path, errors.Unwrap(err))
		}
		return f.Close()
	}
	// A new file: the folder must take one.
	f, err := os.CreateTemp(filepath.Dir(path), ".gdnnbench-plot-*")
	if err != nil {
		return fmt.Errorf("--plot=%s cannot be written: folder %s takes no new file: %v", path, filepath.Dir(path), errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// addPlotPoint records a timed problem for the chart, and measures the
// probe that gave its %readBW at every power of two up to its size, so
// that the chart's probe line is the very probe (and ISA cap) the
// problem was compared with.
func (r *runner) addPlotPoint(d *PerfData) {
	p := plotPointOf(d)
	if d.ReadBW > 0 {
		p.probe = slices.Index(r.plotProbes, r.bw)
		if p.probe < 0 {
			r.plotProbes = append(r.plotProbes, r.bw)
			p.probe = len(r.plotProbes) - 1
		}
		for b := 12; b <= bucket(p.bytes); b++ {
			r.bw.readBW(int64(1) << b) // cached after the first time
		}
	}
	r.plotPts = append(r.plotPts, p)
}

// writePlot writes the chart to the --plot file.
func (r *runner) writePlot() error {
	if len(r.plotPts) == 0 {
		fmt.Fprintf(r.errw, "gdnnbench: warning: --plot=%s: no problem was timed (the chart needs --mode=P or CP); no file written\n", r.g.plot)
		return nil
	}
	var curves []probeCurve
	for _, pr := range r.plotProbes {
		curves = append(curves, probeCurve{name: pr.name, pts: pr.points()})
	}
	title := "gdnnbench: GB/s per problem against the read-bandwidth probe"
	sub := fmt.Sprintf("%s, %d threads", cpuModel(), threads())
	f, err := os.Create(r.g.plot)
	if err != nil {
		return fmt.Errorf("--plot: %v", err)
	}
	err = writeBandwidthSVG(f, r.plotPts, curves, r.cacheLevels(), title, sub)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--plot: %v", err)
	}
	return nil
}

// cpuModel is the CPU's model name from /proc/cpuinfo, or "this CPU".
func cpuModel() string {
	data, err := readCapped("/proc/cpuinfo", 1<<20)
	if err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "this CPU"
}

// dataCaches reads the data and unified caches from a Linux sysfs cache
// folder (cpu0's). Machines and containers without it give none; the
// probe line still shows the steps.
func dataCaches(dir string) []cacheLevel {
	entries, err := filepath.Glob(filepath.Join(dir, "index*"))
	if err != nil {
		return nil
	}
	var out []cacheLevel
	read := func(d, f string) string {
		b, err := readCapped(filepath.Join(d, f), 4096)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	for _, d := range entries {
		if t := read(d, "type"); t != "Data" && t != "Unified" {
			continue
		}
		size := read(d, "size")
		mult := int64(1)
		switch {
		case strings.HasSuffix(size, "K"):
			mult, size = 1<<10, strings.TrimSuffix(size, "K")
		case strings.HasSuffix(size, "M"):
			mult, size = 1<<20, strings.TrimSuffix(size, "M")
		}
		n, err := strconv.ParseInt(size, 10, 64)
		level := read(d, "level")
		if err != nil || n <= 0 || level == "" {
			continue
		}
		out = append(out, cacheLevel{"L" + level, n * mult})
	}
	slices.SortFunc(out, func(a, b cacheLevel) int { return cmp.Compare(a.bytes, b.bytes) })
	return out
}

// Chart geometry, in SVG pixels.
const (
	plotW       = 1000
	plotLeft    = 80
	plotRight   = 200 // room for the impl legend
	plotTop     = 70
	plotH       = 420 // the plot area
	plotRowH    = 17  // one problem per row in the table below
	plotFont    = "DejaVu Sans, Verdana, sans-serif"
	plotMono    = "DejaVu Sans Mono, Menlo, monospace"
	probeColour = "#555555"
	busyColour  = "#c0392b" // a probe point measured under load
)

// implColour gives each implementation a colour that stays the same from
// chart to chart.
func implColour(impl string) string {
	switch {
	case strings.Contains(impl, "avx512"):
		return "#1f5fbf"
	case strings.Contains(impl, "avx2"):
		return "#2a9d3a"
	case strings.Contains(impl, "neon"):
		return "#d97a00"
	case strings.Contains(impl, "interp"):
		return "#c0392b"
	}
	return "#8e44ad"
}

// writeBandwidthSVG draws the chart: x is the problem's size on a log2
// axis, y its GB/s; the probe is a line through its power-of-two points;
// each problem is one circle labelled with its index, listed with its
// impl and figures in a table below the plot.
func writeBandwidthSVG(w io.Writer, pts []plotPoint, curves []probeCurve, caches []cacheLevel, title, sub string) error {
	// Axes ranges: x over whole powers of two, y from 0 to a round top.
	lo, hi := math.Inf(1), math.Inf(-1)
	ymax := 0.0
	for _, p := range pts {
		lo, hi = math.Min(lo, math.Log2(float64(max(p.bytes, 1)))), math.Max(hi, math.Log2(float64(max(p.bytes, 1))))
		ymax = math.Max(ymax, p.gbs)
	}
	for _, c := range curves {
		for _, p := range c.pts {
			lo, hi = math.Min(lo, math.Log2(float64(p.bytes))), math.Max(hi, math.Log2(float64(p.bytes)))
			ymax = math.Max(ymax, p.gbs)
		}
	}
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi <= lo {
		hi = lo + 1
	}
	ystep := niceStep(ymax / 6)
	ytop := ystep * math.Ceil(ymax*1.05/ystep)
	if ytop <= 0 {
		ytop, ystep = 1, 0.2
	}
	areaW := float64(plotW - plotLeft - plotRight)
	xOf := func(bytes int64) float64 {
		return plotLeft + (math.Log2(float64(max(bytes, 1)))-lo)/(hi-lo)*areaW
	}
	yOf := func(gbs float64) float64 { return plotTop + plotH - gbs/ytop*plotH }

	sorted := slices.Clone(pts)
	slices.SortStableFunc(sorted, func(a, b plotPoint) int { return cmp.Compare(a.idx, b.idx) })
	notes := plotNotes(pts, caches)
	tableTop := plotTop + plotH + 58 + 16*len(notes) + 20
	height := tableTop + 28 + plotRowH*len(sorted) + 20
	rows := make([]string, len(sorted))
	width := plotW
	for i, p := range sorted {
		pct := "-"
		if p.pct > 0 {
			pct = fmt.Sprintf("%.0f%%", p.pct)
		}
		rows[i] = fmt.Sprintf("%5d  %-12s %9s %8s  %s", p.idx, p.impl, strconv.FormatFloat(p.gbs, 'f', 1, 64), pct, p.label)
		if p.busy {
			rows[i] += "  (" + busyProbeLabel + ")"
		}
		// Widen the picture (not the plot) for long rows: about 7.3 px a
		// character at the table's 12 px monospace.
		width = max(width, plotLeft+int(7.3*float64(len([]rune(rows[i]))+2))+20)
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s" font-size="13">`+"\n",
		width, height, width, height, plotFont)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="28" font-size="17" font-weight="bold">%s</text>`+"\n", plotLeft, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="48" fill="#444">%s</text>`+"\n", plotLeft, esc(sub))

	// Grid and axes.
	b.WriteString(`<g id="axes" stroke="#ddd" stroke-width="1">` + "\n")
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", plotLeft, yOf(y), plotLeft+areaW, yOf(y))
	}
	for e := lo; e <= hi; e++ {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/>`+"\n", xOf(int64(1)<<int(e)), plotTop, xOf(int64(1)<<int(e)), plotTop+plotH)
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="none" stroke="#333"/>`+"\n", plotLeft, plotTop, areaW, plotH)
	b.WriteString(`<g id="ticks" fill="#333">` + "\n")
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-8, yOf(y)+4, fmtNum(y))
	}
	// Label every power of two, or every other one on a wide range.
	every := 1.0
	if hi-lo > 14 {
		every = 2
	}
	for e := lo; e <= hi; e += every {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", xOf(int64(1)<<int(e)), plotTop+plotH+18, fmtBytes(int64(1)<<int(e)))
	}
	b.WriteString("</g>\n")
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">src bytes per execute (log scale; the probe is measured at each power of two)</text>`+"\n",
		plotLeft+areaW/2, plotTop+plotH+40)
	fmt.Fprintf(&b, `<text transform="translate(22 %d) rotate(-90)" text-anchor="middle">GB/s (in + out bytes / min time)</text>`+"\n", plotTop+plotH/2)

	// Cache sizes: where the probe is expected to step down.
	b.WriteString(`<g id="caches" fill="#7a5c00" font-size="12">` + "\n")
	for _, c := range caches {
		x := xOf(c.bytes)
		if x < plotLeft || x > plotLeft+areaW {
			continue
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c9a227" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
			x, plotTop, x, plotTop+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s %s</text>`+"\n", x+4, plotTop+14, c.name, fmtBytes(c.bytes))
	}
	b.WriteString("</g>\n")

	// The probe lines (one per probe the run used; usually one).
	for i, c := range curves {
		fmt.Fprintf(&b, `<g class="probe" data-probe="%s">`+"\n", esc(c.name))
		var path strings.Builder
		for j, p := range c.pts {
			cmd := "L"
			if j == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, xOf(p.bytes), yOf(p.gbs))
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.TrimSpace(path.String()), probeColour, probeDash(i))
		for _, p := range c.pts {
			colour, why := probeColour, ""
			if p.busy {
				colour, why = busyColour, ", "+busyProbeLabel
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="7" height="7" fill="white" stroke="%s" stroke-width="1.5"><title>%s probe, %s: %s GB/s%s</title></rect>`+"\n",
				xOf(p.bytes)-3.5, yOf(p.gbs)-3.5, colour, esc(c.name), fmtBytes(p.bytes), fmtNum(p.gbs), esc(why))
			if p.busy {
				fmt.Fprintf(&b, `<text class="busy" x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="middle">under load</text>`+"\n",
					xOf(p.bytes), min(yOf(p.gbs)+16, plotTop+plotH-4), busyColour)
			}
		}
		b.WriteString("</g>\n")
	}

	// One mark per problem, its index beside it where it overlaps no
	// other index.
	b.WriteString(`<g id="problems">` + "\n")
	var placed []labelBox
	for _, c := range curves { // keep indices off the probe's squares
		for _, p := range c.pts {
			placed = append(placed, labelBox{xOf(p.bytes) - 4, yOf(p.gbs) - 4, 8, 8})
		}
	}
	for _, p := range sorted {
		x, y := xOf(p.bytes), yOf(p.gbs)
		fmt.Fprintf(&b, `<g class="problem" data-idx="%d"><circle cx="%.1f" cy="%.1f" r="5.5" fill="%s" fill-opacity="0.85" stroke="white" stroke-width="1"/>`,
			p.idx, x, y, implColour(p.impl))
		lb := placeLabel(x, y, len(strconv.Itoa(p.idx)), placed)
		placed = append(placed, lb)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#222">%d</text>`, lb.x, lb.y+lb.h, p.idx)
		why := ""
		if p.busy {
			why = "; " + busyProbeLabel
		}
		fmt.Fprintf(&b, `<title>%d %s (%s): %s GB/s%s%s</title></g>`+"\n", p.idx, esc(p.label), esc(p.impl), fmtNum(p.gbs), pctText(p.pct), esc(why))
	}
	b.WriteString("</g>\n")

	// Legend: the probe, then each implementation.
	lx, ly := plotLeft+int(areaW)+18, plotTop+10
	b.WriteString(`<g id="legend">` + "\n")
	for i, c := range curves {
		y := ly + 24*i
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/><rect x="%d" y="%d" width="7" height="7" fill="white" stroke="%s" stroke-width="1.5"/>`,
			lx, y, lx+24, y, probeColour, probeDash(i), lx+8, y-3, probeColour)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s read probe</text>`+"\n", lx+32, y+4, esc(c.name))
	}
	ly += 24 * max(len(curves)-1, 0)
	var impls []string
	for _, p := range sorted {
		if !slices.Contains(impls, p.impl) {
			impls = append(impls, p.impl)
		}
	}
	slices.Sort(impls)
	for i, impl := range impls {
		y := ly + 24*(i+1)
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="5.5" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx+12, y, implColour(impl), lx+32, y+4, esc(impl))
	}
	if len(caches) > 0 {
		y := ly + 24*(len(impls)+1)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#c9a227" stroke-width="1.5" stroke-dasharray="6 4"/><text x="%d" y="%d">cache size</text>`+"\n",
			lx, y, lx+24, y, lx+32, y+4)
	}
	b.WriteString("</g>\n")
	for i, l := range notes {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#444">%s</text>`+"\n", plotLeft, plotTop+plotH+58+16*i, esc(l))
	}

	// The table: one row per problem.
	b.WriteString(`<g id="table" font-family="` + plotMono + `" font-size="12">` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold" xml:space="preserve">%s</text>`+"\n", plotLeft, tableTop,
		esc(fmt.Sprintf("%5s  %-12s %9s %8s  %s", "idx", "impl", "GB/s", "%readBW", "problem")))
	for i, p := range sorted {
		fmt.Fprintf(&b, `<text class="row" x="%d" y="%d" xml:space="preserve"><tspan fill="%s">●</tspan>%s</text>`+"\n",
			plotLeft-14, tableTop+22+plotRowH*i, implColour(p.impl), esc(rows[i]))
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plotNotes explain a mark above the probe line: a cache below the
// caches; past them, a probe measured under load, flagged on the marks
// that beat even the re-measured probe (checkProbe).
func plotNotes(pts []plotPoint, caches []cacheLevel) []string {
	notes := []string{
		"%readBW = GB/s over the probe at the power of two at or above the src size. A mark above the probe line beats the probe;",
		"while its data fit a cache, the cache explains it: the data stay there between executes, or the probe point past a cache size",
		"is slower than the problem below it.",
	}
	if len(caches) == 0 {
		notes = append(notes, "The OS gives no cache sizes here, so a mark above the probe is not checked for a probe measured under load.")
	} else {
		notes = append(notes, fmt.Sprintf("Past the caches (over %dx the %s %s) no cache explains it: the probe is measured again, and a mark still over %.0f%% above it is flagged",
			pastCachesFactor, caches[len(caches)-1].name, fmtBytes(caches[len(caches)-1].bytes), 100*probeSlack),
			"\""+busyProbeLabel+"\": the probe read slower than the machine can, its %readBW is not worth reading.")
	}
	n := 0
	for _, p := range pts {
		if p.busy {
			n++
		}
	}
	if n > 0 {
		notes = append(notes, fmt.Sprintf("%d of %d problems flagged: %s.", n, len(pts), busyProbeLabel))
	}
	return notes
}

// labelBox is where a mark's index is drawn (top-left corner and size).
type labelBox struct{ x, y, w, h float64 }

func (a labelBox) overlaps(b labelBox) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}

// placeLabel puts an index of n digits beside the mark at (x, y): the
// first of a ring of spots around the mark that overlaps no label placed
// so far, else the usual spot (up and right).
func placeLabel(x, y float64, n int, placed []labelBox) labelBox {
	w, h := 6.5*float64(n)+1, 10.0
	spots := [][2]float64{{7, -16}, {7, 3}, {-7 - w, -16}, {-7 - w, 3}, {-w / 2, -20}, {-w / 2, 7},
		{14, -6}, {-14 - w, -6}, {7, -28}, {7, 15}, {-7 - w, -28}, {-7 - w, 15}}
	for _, s := range spots {
		lb := labelBox{x + s[0], y + s[1], w, h}
		free := true
		for _, o := range placed {
			if lb.overlaps(o) {
				free = false
				break
			}
		}
		if free {
			return lb
		}
	}
	return labelBox{x + spots[0][0], y + spots[0][1], w, h}
}

// probeDash tells a second probe line from the first.
func probeDash(i int) string {
	if i == 0 {
		return ""
	}
	return ` stroke-dasharray="3 3"`
}

func pctText(pct float64) string {
	if pct <= 0 {
		return ""
	}
	return fmt.Sprintf(", %.0f%% of the probe", pct)
}

// esc escapes text for SVG (XML) content and attributes.
func esc(s string) string { return html.EscapeString(s) }

// niceStep rounds a raw axis step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsInf(raw, 0) || math.IsNaN(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// fmtBytes prints a power-of-two-ish size: 4K, 1M, 1.5M, 2G.
func fmtBytes(n int64) string {
	units := []string{"", "K", "M", "G", "T"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64) + units[u]
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
}

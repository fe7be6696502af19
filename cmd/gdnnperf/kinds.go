package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// kindKey names one configuration of bench/kinds_side_by_side.sh's output.
type kindKey struct {
	shape, alg, dt string
	threads        int
}

// kindRuns holds the side-by-side runs of every reduction alg: per
// configuration and round, oneDNN's and gdnn's median µs.
type kindRuns struct {
	keys   []kindKey
	onednn map[kindKey]map[int]float64
	gdnn   map[kindKey]map[int]float64
	impl   map[kindKey]string // oneDNN's impl (the last one seen)
}

// parseKinds reads kinds_side_by_side.sh lines ('round=R shape=S alg=A
// dt=SDT:DDT threads=T onednn_impl=I onednn_us=U gdnn_impl=J gdnn_us=V');
// a time of NA means the tool did not run the problem.
func parseKinds(r io.Reader) (*kindRuns, error) {
	recs, err := parseRaw(strings.NewReader(kindLines(r)))
	if err != nil {
		return nil, err
	}
	k := &kindRuns{onednn: map[kindKey]map[int]float64{}, gdnn: map[kindKey]map[int]float64{}, impl: map[kindKey]string{}}
	for _, rec := range recs {
		th, err := strconv.Atoi(rec.kv["threads"])
		if err != nil || th < 1 || rec.kv["alg"] == "" || rec.kv["dt"] == "" {
			return nil, status.Errorf(status.InvalidArguments, "kinds: round %d shape %s: want alg, dt and threads, got %v", rec.round, rec.shape, rec.kv)
		}
		key := kindKey{rec.shape, rec.kv["alg"], rec.kv["dt"], th}
		if _, seen := k.onednn[key]; !seen {
			k.keys = append(k.keys, key)
			k.onednn[key], k.gdnn[key] = map[int]float64{}, map[int]float64{}
		}
		for tool, m := range map[string]map[int]float64{"onednn_us": k.onednn[key], "gdnn_us": k.gdnn[key]} {
			s := rec.kv[tool]
			if s == "" || s == "NA" {
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v > 0) {
				return nil, status.Errorf(status.InvalidArguments, "kinds: round %d shape %s: %s=%q is not a positive time", rec.round, rec.shape, tool, s)
			}
			m[rec.round] = v
		}
		if i := rec.kv["onednn_impl"]; i != "" && i != "NA" {
			k.impl[key] = i
		}
	}
	slices.SortStableFunc(k.keys, func(a, b kindKey) int {
		return strings.Compare(a.shape+" "+a.dt+" "+a.alg, b.shape+" "+b.dt+" "+b.alg)
	})
	return k, nil
}

// kindLines makes kinds lines parseRaw's: it names the tool ("kinds").
func kindLines(r io.Reader) string {
	b, _ := io.ReadAll(r)
	var sb strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "round=") {
			sb.WriteString(l + " kinds\n")
		}
	}
	return sb.String()
}

// ratio is the median over rounds of oneDNN µs / gdnn µs within a round:
// above 1, gdnn is faster.
func (k *kindRuns) ratio(key kindKey) opt {
	var xs []float64
	for r, o := range k.onednn[key] {
		if g, ok := k.gdnn[key][r]; ok {
			xs = append(xs, o/g)
		}
	}
	return median(xs)
}

// overMean is the median over rounds of gdnn's µs for key over its µs
// for the mean of the same shape, types and threads within a round: every
// alg reads the mean's bytes, so this is the mean's share of the roofline
// over the alg's (above 1: the alg is slower than the mean).
func (k *kindRuns) overMean(key kindKey) opt {
	if key.alg == "mean" {
		return opt{}
	}
	mean := kindKey{key.shape, "mean", key.dt, key.threads}
	var xs []float64
	for r, g := range k.gdnn[key] {
		if m, ok := k.gdnn[mean][r]; ok {
			xs = append(xs, g/m)
		}
	}
	return median(xs)
}

// meanBand is how far above the mean's time an alg's may be and still
// count as reaching the mean's share of the roofline: the rounds of one
// run spread about this much on a shared machine.
const meanBand = 1.10

func (k *kindRuns) time(m map[kindKey]map[int]float64, key kindKey) opt {
	var xs []float64
	for _, v := range m[key] {
		xs = append(xs, v)
	}
	return median(xs)
}

// renderKinds writes the kinds table: one row per shape, data types and
// alg, with 1- and 2-thread times and ratios, and the cells where gdnn is
// slower than oneDNN listed under it, then those more than meanBand above
// the mean's time among the shapes the roofline applies to: srcBytes
// (by "shape dt", from the harness's rows) at least bwMinSrc.
func renderKinds(sb *strings.Builder, k *kindRuns, srcBytes map[string]int64) {
	if k == nil || len(k.keys) == 0 {
		return
	}
	sb.WriteString("## Every reduction beside oneDNN's same alg\n\n")
	sb.WriteString("`bench/kinds_side_by_side.sh`: oneDNN 2.6's reduction (`bench/onednn/onednn_reduce_ext.c`, OpenMP threads)\n")
	sb.WriteString("and `gdnnbench --mode=P --alg` one right after the other, per round; times are medians over rounds, ratios\n")
	sb.WriteString("the median of the within-round ratios oneDNN µs / gdnn µs (above 1: gdnn faster). norm_lp_* run with p 2, eps 0;\n")
	sb.WriteString("logsumexp is Exp -> ReduceSum -> Log through gdnnbench's graph driver (oneDNN's reduction has no such alg).\n")
	sb.WriteString("\"x mean\" is the median of the within-round ratios gdnn µs / gdnn's mean µs (same shape, types and threads):\n")
	sb.WriteString("every alg reads the mean's bytes, so at 1.00 it has the mean's share of the roofline.\n\n")
	type cell struct{ o, g, x, m opt }
	rows := map[kindKey]map[int]cell{}
	var order []kindKey
	for _, key := range k.keys {
		row := kindKey{key.shape, key.alg, key.dt, 0}
		if _, ok := rows[row]; !ok {
			rows[row] = map[int]cell{}
			order = append(order, row)
		}
		rows[row][key.threads] = cell{k.time(k.onednn, key), k.time(k.gdnn, key), k.ratio(key), k.overMean(key)}
	}
	f := func(o opt, format string) string {
		if !o.ok {
			return "-"
		}
		return fmt.Sprintf(format, o.v)
	}
	sb.WriteString("| shape | dt | alg | oneDNN impl | oneDNN 1T µs | gdnn 1T µs | 1T ratio | 1T x mean | oneDNN 2T µs | gdnn 2T µs | 2T ratio | 2T x mean |\n")
	sb.WriteString("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	var slower, offMean []string
	met, cells, near, mcells := 0, 0, 0, 0
	for _, row := range order {
		c1, c2 := rows[row][1], rows[row][2]
		impl := k.impl[kindKey{row.shape, row.alg, row.dt, 1}]
		if impl == "" {
			impl = k.impl[kindKey{row.shape, row.alg, row.dt, 2}]
		}
		fmt.Fprintf(sb, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.shape, row.dt, row.alg, orDash(impl),
			f(c1.o, "%.1f"), f(c1.g, "%.1f"), f(c1.x, "%.2fx"), f(c1.m, "%.2f"), f(c2.o, "%.1f"), f(c2.g, "%.1f"), f(c2.x, "%.2fx"), f(c2.m, "%.2f"))
		for th, c := range map[int]cell{1: c1, 2: c2} {
			if b, ok := srcBytes[row.shape+" "+row.dt]; c.m.ok && ok && b >= bwMinSrc {
				mcells++
				if math.Round(c.m.v*100)/100 <= meanBand {
					near++
				} else {
					offMean = append(offMean, fmt.Sprintf("%s %s %s %dT %.2f", row.shape, row.dt, row.alg, th, c.m.v))
				}
			}
			if !c.x.ok {
				continue
			}
			cells++
			if c.x.v >= 1 {
				met++
			} else {
				slower = append(slower, fmt.Sprintf("%s %s %s %dT %.2fx", row.shape, row.dt, row.alg, th, c.x.v))
			}
		}
	}
	slices.Sort(slower)
	slices.Sort(offMean)
	fmt.Fprintf(sb, "\ngdnn at least as fast as oneDNN in %d of %d cells where both ran", met, cells)
	if len(slower) > 0 {
		fmt.Fprintf(sb, "; slower in: %s", strings.Join(slower, ", "))
	}
	sb.WriteString(".\n")
	if mcells > 0 {
		fmt.Fprintf(sb, "\nWhere src is at least 1 MiB (the roofline's shapes), at most %.2fx the mean's time (its share of the\nroofline, within the rounds' spread) in %d of %d cells", meanBand, near, mcells)
		if len(offMean) > 0 {
			fmt.Fprintf(sb, "; above it in: %s", strings.Join(offMean, ", "))
		}
		sb.WriteString(".\n")
	}
	sb.WriteString("\n")
}

package main

import "strings"

// The targets, and the thread counts they are judged at. gdnn's default on
// the 2-core benchmark machine is 2 threads; comparisons with another tool
// use the same thread count on both sides.
const (
	speedTarget   = 1.0      // t(reference) / t(gdnn): at least as fast
	bwTarget      = 75.0     // % of readbw best GB/s at 2 threads ...
	bwMinSrc      = 1 << 20  // ... for problems with at least this many src bytes
	lowpTarget    = 1.6      // t(f32) / t(bf16 or f16) at 2 threads ...
	lowpMinF32Src = 32 << 20 // ... on shapes this big in f32 (DRAM-bound: E-I)
	latencyShape  = "A"      // the latency target's shape ...
	latencyUS     = 1.0      // ... under this many µs per execute at 2 threads
	compileUS     = 200.0    // JIT compile of a new kernel: median under this many µs
	compileBench  = "BenchmarkCompileNew"
)

// dtOrder is the order of data type pairs in every table.
var dtOrder = []string{"f32:f32", "bf16:bf16", "bf16:f32", "f16:f16", "f16:f32"}

// lowpDTs are the pairs compared with f32:f32 for the low-precision target.
var lowpDTs = []string{"bf16:bf16", "bf16:f32", "f16:f16", "f16:f32"}

// verdict is the state of one target for one row or overall.
type verdict int

const (
	notApplicable verdict = iota
	met
	notMet
	notMeasured
)

func (v verdict) String() string {
	return [...]string{"n/a", "MET", "NOT MET", "NOT MEASURED"}[v]
}

// row is one shape and data type pair of the per-shape tables.
type row struct {
	shape, dt          string
	srcBytes, dstBytes int64
	gdnnImpl           string
	onednnImpl         string // impl name, or UNSUPPORTED(status), or "" if not run
	g2, g1             opt    // gdnn µs, 2 and 1 threads
	o2, o1             opt    // oneDNN µs
	np                 opt    // numpy µs (single-threaded)
	npDT               string // numpy's data type pair the row is compared with
	x2, x1             opt    // speed vs oneDNN at 2T / 1T: t(oneDNN)/t(gdnn)
	xnp                opt    // speed of gdnn 1T vs numpy: t(numpy)/t(gdnn 1T)
	gb2                opt    // gdnn 2T GB/s
	pct2, pct1         opt    // gdnn % of readbw best, 2T / 1T
	speed              verdict
	speedRef           string // "oneDNN", "numpy" or ""
	bw                 verdict
}

func gdnnKey(s, dt string, th int) seriesKey { return seriesKey{"gdnn", s, dt, th} }

// numpyDT is the numpy configuration a data type pair is compared with:
// numpy has f32 and f16 (f16 in, f16 out), no bf16.
func numpyDT(dt string) string {
	switch {
	case dt == "f32:f32":
		return "f32:f32"
	case strings.HasPrefix(dt, "f16:"):
		return "f16:f16"
	}
	return ""
}

// rows builds the per-shape rows with their verdicts.
func (d *dataset) rows() ([]row, error) {
	var out []row
	for _, s := range d.shapes {
		p, err := parsePrb(d.prb[s])
		if err != nil {
			return nil, err
		}
		for _, dt := range dtOrder {
			r, keep, err := d.row(s, dt, p)
			if err != nil {
				return nil, err
			}
			if keep {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// row computes one row; keep is false when no tool ran the pair.
func (d *dataset) row(s, dt string, p problem) (r row, keep bool, err error) {
	r = row{shape: s, dt: dt}
	if r.srcBytes, r.dstBytes, err = p.bytes(dt); err != nil {
		return r, false, err
	}
	ik := seriesKey{"onednn", s, dt, 0}
	if st, ok := d.status[ik]; ok {
		r.onednnImpl = "UNSUPPORTED(" + st + ")"
	}
	if im, ok := d.impl[ik]; ok {
		r.onednnImpl = im
	}
	r.gdnnImpl = d.impl[seriesKey{"gdnn", s, dt, 0}]
	g2, g1 := gdnnKey(s, dt, 2), gdnnKey(s, dt, 1)
	o2, o1 := seriesKey{"onednn", s, dt, 2}, seriesKey{"onednn", s, dt, 1}
	r.g2, r.g1, r.o2, r.o1 = d.time(g2), d.time(g1), d.time(o2), d.time(o1)
	r.x2, r.x1 = d.ratio(o2, g2), d.ratio(o1, g1)
	if r.npDT = numpyDT(dt); r.npDT != "" {
		nk := seriesKey{"numpy", s, r.npDT, 1}
		r.np, r.xnp = d.time(nk), d.ratio(nk, g1)
	}
	r.gb2 = d.gbps(g2, r.srcBytes, r.dstBytes)
	r.pct2, r.pct1 = d.pctReadBW(g2, r.srcBytes, r.dstBytes), d.pctReadBW(g1, r.srcBytes, r.dstBytes)
	keep = r.g2.ok || r.g1.ok || r.o2.ok || r.o1.ok || r.np.ok || r.onednnImpl != ""
	r.speed, r.speedRef = r.speedVerdict()
	r.bw = r.bwVerdict()
	return r, keep, nil
}

// speedVerdict: at least as fast as oneDNN at every thread count oneDNN
// ran; where oneDNN did not run the pair, gdnn 1T at least as fast as numpy.
func (r row) speedVerdict() (verdict, string) {
	var refs [][2]opt // (reference time, ratio)
	ref := ""
	switch {
	case r.o2.ok || r.o1.ok:
		ref = "oneDNN"
		if r.o2.ok {
			refs = append(refs, [2]opt{r.o2, r.x2})
		}
		if r.o1.ok {
			refs = append(refs, [2]opt{r.o1, r.x1})
		}
	case r.np.ok:
		ref = "numpy"
		refs = append(refs, [2]opt{r.np, r.xnp})
	default:
		return notApplicable, ""
	}
	v := met
	for _, x := range refs {
		switch {
		case !x[1].ok:
			return notMeasured, ref
		case x[1].v < speedTarget:
			v = notMet
		}
	}
	return v, ref
}

// bwVerdict: >= 75% of readbw at 2 threads for src >= 1 MiB.
func (r row) bwVerdict() verdict {
	switch {
	case r.srcBytes < bwMinSrc:
		return notApplicable
	case !r.pct2.ok:
		return notMeasured
	case r.pct2.v < bwTarget:
		return notMet
	}
	return met
}

// lowpRow is one low-precision pair on a DRAM-bound shape.
type lowpRow struct {
	shape, dt string
	f32, t    opt // gdnn 2T µs for f32:f32 and for dt
	x2, x1    opt // t(f32)/t(dt) within a round, 2T and 1T
	v         verdict
}

// lowpRows compares bf16/f16 with f32 on the shapes whose f32 src is at
// least 32 MiB (DRAM-bound on the benchmark machine).
func (d *dataset) lowpRows() ([]lowpRow, error) {
	var out []lowpRow
	for _, s := range d.shapes {
		p, err := parsePrb(d.prb[s])
		if err != nil {
			return nil, err
		}
		if nelem(p.src)*4 < lowpMinF32Src {
			continue
		}
		for _, dt := range lowpDTs {
			l := lowpRow{shape: s, dt: dt, f32: d.time(gdnnKey(s, "f32:f32", 2)), t: d.time(gdnnKey(s, dt, 2))}
			l.x2 = d.ratio(gdnnKey(s, "f32:f32", 2), gdnnKey(s, dt, 2))
			l.x1 = d.ratio(gdnnKey(s, "f32:f32", 1), gdnnKey(s, dt, 1))
			l.v = threshold(l.x2, lowpTarget, false)
			out = append(out, l)
		}
	}
	return out, nil
}

// threshold judges a figure: at least min (or, with below, under min).
func threshold(x opt, limit float64, below bool) verdict {
	switch {
	case !x.ok:
		return notMeasured
	case below && x.v < limit, !below && x.v >= limit:
		return met
	}
	return notMet
}

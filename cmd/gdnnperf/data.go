package main

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// seriesKey names one measured configuration; its values are per round.
type seriesKey struct {
	tool    string // "gdnn", "onednn" or "numpy"
	shape   string
	dt      string // "sdt:ddt"
	threads int
}

// rbKey names one read-bandwidth measurement: the harness probes every
// shape's src byte size (f32 and 16-bit) in every round.
type rbKey struct {
	round   int
	shape   string
	bytes   int64
	threads int
}

// dataset holds the raw results indexed for the report.
type dataset struct {
	rounds []int
	shapes []string                      // shapes with any result, sorted
	prb    map[string]string             // shape -> "SRC:DST"
	us     map[seriesKey]map[int]float64 // per-round median µs per execute
	impl   map[seriesKey]string          // gdnn variant / oneDNN impl (threads 0)
	status map[seriesKey]string          // oneDNN statuses other than ok (threads 0)
	readbw map[rbKey]float64             // best GB/s
	extra  map[string]bool               // tools seen that the report does not use
	l3     int64                         // L3 bytes for the roofline rule; 0: every src against its own size
}

// newDataset indexes the records. gdnn lines come from bench/anchors_extra.sh,
// the others from the harness's own tools.
func newDataset(recs []record) (*dataset, error) {
	d := &dataset{prb: map[string]string{}, us: map[seriesKey]map[int]float64{}, impl: map[seriesKey]string{},
		status: map[seriesKey]string{}, readbw: map[rbKey]float64{}, extra: map[string]bool{}}
	seenRound := map[int]bool{}
	seenShape := map[string]bool{}
	for _, r := range recs {
		if !seenRound[r.round] {
			seenRound[r.round] = true
			d.rounds = append(d.rounds, r.round)
		}
		if p := r.kv["prb"]; p != "" && r.shape != "BASE" {
			if _, err := parsePrb(p); err != nil {
				return nil, err
			}
			if old, ok := d.prb[r.shape]; ok && old != p {
				return nil, status.Errorf(status.InvalidArguments, "shape %s has two problems: %s and %s", r.shape, old, p)
			}
			d.prb[r.shape] = p
			if !seenShape[r.shape] {
				seenShape[r.shape] = true
				d.shapes = append(d.shapes, r.shape)
			}
		}
		if err := d.add(r); err != nil {
			return nil, err
		}
	}
	slices.Sort(d.rounds)
	slices.Sort(d.shapes)
	return d, nil
}

// add files one record under its tool.
func (d *dataset) add(r record) error {
	switch r.tool {
	case "readbw":
		b, err := r.num("bytes")
		if err != nil {
			return err
		}
		th, err := r.num("threads")
		if err != nil {
			return err
		}
		g, err := r.num("best_gbps")
		if err != nil {
			return err
		}
		d.readbw[rbKey{r.round, r.shape, int64(b), int(th)}] = g
	case "onednn", "gdnn":
		th, err := r.num("threads")
		if err != nil {
			return err
		}
		dt := r.kv["sdt"] + ":" + r.kv["ddt"]
		if r.kv["sdt"] == "" || r.kv["ddt"] == "" {
			return status.Errorf(status.InvalidArguments, "round %d shape %s %s: no sdt/ddt", r.round, r.shape, r.tool)
		}
		ik := seriesKey{r.tool, r.shape, dt, 0}
		if r.tool == "onednn" && r.kv["status"] != "ok" {
			d.status[ik] = r.kv["status"]
			return nil
		}
		d.impl[ik] = r.kv["impl"]
		if r.tool == "gdnn" {
			d.impl[ik] = r.kv["variant"]
		}
		return d.addTime(r, seriesKey{r.tool, r.shape, dt, int(th)})
	case "numpy":
		dt := map[string]string{"f32": "f32:f32", "f16": "f16:f16"}[r.kv["dtype"]]
		if dt == "" {
			return status.Errorf(status.InvalidArguments, "round %d shape %s numpy: dtype %q is not f32 or f16", r.round, r.shape, r.kv["dtype"])
		}
		return d.addTime(r, seriesKey{"numpy", r.shape, dt, 1})
	default:
		d.extra[r.tool] = true
	}
	return nil
}

// addTime stores a record's median_us for its round; a second value for
// the same configuration and round is an error (the harness writes one).
func (d *dataset) addTime(r record, k seriesKey) error {
	v, err := r.num("median_us")
	if err != nil {
		return err
	}
	if v <= 0 {
		return status.Errorf(status.InvalidArguments, "round %d shape %s %s: median_us=%v is not positive", r.round, r.shape, r.tool, v)
	}
	m := d.us[k]
	if m == nil {
		m = map[int]float64{}
		d.us[k] = m
	}
	if _, dup := m[r.round]; dup {
		return status.Errorf(status.InvalidArguments, "round %d shape %s: two %s results for %s threads=%d", r.round, r.shape, r.tool, k.dt, k.threads)
	}
	m[r.round] = v
	return nil
}

// problem is an anchor shape: src and dst dims (dst 1 where reduced).
type problem struct {
	src, dst []int64
}

// parsePrb parses "6x12x10x24:6x12x1x1".
func parsePrb(s string) (problem, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return problem{}, status.Errorf(status.InvalidArguments, "problem %q is not SRC:DST", s)
	}
	src, err1 := parseDims(a)
	dst, err2 := parseDims(b)
	if err1 != nil || err2 != nil || len(src) != len(dst) {
		return problem{}, status.Errorf(status.InvalidArguments, "problem %q: dims must be positive integers of equal rank", s)
	}
	for i := range src {
		if dst[i] != src[i] && dst[i] != 1 {
			return problem{}, status.Errorf(status.InvalidArguments, "problem %q: dst dim %d is %d, want 1 or %d", s, i, dst[i], src[i])
		}
	}
	return problem{src, dst}, nil
}

func parseDims(s string) ([]int64, error) {
	var dims []int64
	for _, f := range strings.Split(s, "x") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 1 || v > 1<<40 {
			return nil, status.Errorf(status.InvalidArguments, "dim %q", f)
		}
		dims = append(dims, v)
	}
	return dims, nil
}

// bytes returns the size in bytes of src (with sdt) and dst (with ddt)
// for a data type pair "sdt:ddt".
func (p problem) bytes(dt string) (src, dst int64, err error) {
	a, b, _ := strings.Cut(dt, ":")
	sdt, err1 := dtypes.Parse(a)
	ddt, err2 := dtypes.Parse(b)
	if err1 != nil || err2 != nil {
		return 0, 0, status.Errorf(status.InvalidArguments, "data type pair %q", dt)
	}
	return nelem(p.src) * int64(sdt.Size()), nelem(p.dst) * int64(ddt.Size()), nil
}

// axes lists the reduced axes, as bench_numpy.py derives them.
func (p problem) axes() []int {
	var ax []int
	for i := range p.src {
		if p.dst[i] == 1 && p.src[i] != 1 {
			ax = append(ax, i)
		}
	}
	return ax
}

func nelem(dims []int64) int64 {
	n := int64(1)
	for _, v := range dims {
		n *= v
	}
	return n
}

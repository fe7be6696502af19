package main

import "slices"

// opt is a figure that may be missing (a tool did not run a problem).
type opt struct {
	v  float64
	ok bool
}

func some(v float64) opt { return opt{v, true} }

// median is the median of xs (mean of the middle two for an even count),
// as Python's statistics.median, which make_table.py uses.
func median(xs []float64) opt {
	if len(xs) == 0 {
		return opt{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return some(s[n/2])
	}
	return some((s[n/2-1] + s[n/2]) / 2)
}

// time is the median over rounds of a configuration's per-round median µs.
func (d *dataset) time(k seriesKey) opt {
	var xs []float64
	for _, v := range d.us[k] {
		xs = append(xs, v)
	}
	return median(xs)
}

// ratio is the median over rounds of us[num]/us[den], each quotient taken
// within one round (the machine is shared; rounds differ more than tools
// within a round). Speed of den relative to num: ratio(ref, gdnn) > 1 means
// gdnn is faster than ref.
func (d *dataset) ratio(num, den seriesKey) opt {
	a, b := d.us[num], d.us[den]
	var xs []float64
	for r, x := range a {
		if y, ok := b[r]; ok {
			xs = append(xs, x/y)
		}
	}
	return median(xs)
}

// gbps is the median over rounds of (src+dst bytes)/time in GB/s (1e9 B/s).
func (d *dataset) gbps(k seriesKey, srcBytes, dstBytes int64) opt {
	var xs []float64
	for _, us := range d.us[k] {
		xs = append(xs, float64(srcBytes+dstBytes)/us*1e-3)
	}
	return median(xs)
}

// roofBytes is the probe size a src of srcBytes is compared with: its own
// size, except where the src is half the L3 or more (l3 > 0). There the
// probe's repeats at the src size are partly served by the L3, which a
// reduction keeping thousands of partial results cannot match, so the
// roofline is the DRAM probe at roofDRAM bytes.
func (d *dataset) roofBytes(srcBytes int64) int64 {
	if d.l3 > 0 && 2*srcBytes >= d.l3 {
		return roofDRAM
	}
	return srcBytes / 64 * 64 // readbw's own rounding; make_table.py's rb()
}

// roofDRAM is the probe size of the DRAM roofline: 256 MiB, shape G's f32 src.
const roofDRAM = 256 << 20

// probe returns readbw's best GB/s in round r at the roofline size for
// srcBytes and the thread count: the shape's own probe, or at roofDRAM
// any shape's probe of that size in the round.
func (d *dataset) probe(r int, shape string, srcBytes int64, threads int) (float64, bool) {
	b := d.roofBytes(srcBytes)
	if bw, ok := d.readbw[rbKey{r, shape, b, threads}]; ok && bw > 0 {
		return bw, true
	}
	if b != roofDRAM {
		return 0, false
	}
	for k, bw := range d.readbw {
		if k.round == r && k.bytes == b && k.threads == threads && bw > 0 {
			return bw, true
		}
	}
	return 0, false
}

// pctReadBW is the median over rounds of 100 * GB/s / readbw best GB/s,
// with readbw measured in the same round, at the roofline size for the
// src (roofBytes) and with the same thread count. Rounds without a
// matching readbw line do not count.
func (d *dataset) pctReadBW(k seriesKey, srcBytes, dstBytes int64) opt {
	var xs []float64
	for r, us := range d.us[k] {
		bw, ok := d.probe(r, k.shape, srcBytes, k.threads)
		if !ok {
			continue
		}
		xs = append(xs, 100*float64(srcBytes+dstBytes)/us*1e-3/bw)
	}
	return median(xs)
}

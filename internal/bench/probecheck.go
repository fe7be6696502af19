package bench

import "fmt"

// A problem that reads faster than the read-bandwidth probe (%bwpct%
// above 100%) is explained by a cache while its data fit in one: it
// stays there between executes, or sits just below a cache size that
// the probe's power-of-two buffer exceeds. Past the caches both read
// from memory, and a problem reading well faster than the probe says
// the probe was slowed: measured while something else kept the machine
// busy (the probe is measured once per power of two, when a problem of
// that size first needs it). checkProbe then measures the probe again,
// keeps the faster measurement (the one %bwpct% uses from there on), and
// if the problem still beats it, flags the probe as measured under load.

// probeSlack is how much faster than the probe a problem past the caches
// may read before the probe is suspect: the timing noise gdnnbench
// tolerates (noiseSpreadLimit), on the problem's side and on the
// probe's.
const probeSlack = 2 * noiseSpreadLimit

// pastCachesFactor: a problem is past the caches when its src is more
// than this many times the largest cache cpu0 reports (twice: so that a
// second socket's cache of the same size cannot hold it either).
const pastCachesFactor = 2

// busyProbeLabel is what the chart, the table and the warnings call a
// probe that a problem past the caches still beat after re-measuring.
const busyProbeLabel = "probe measured under load (busy machine)"

// cacheLevels are the CPU's data caches (read once per run; none where
// the OS does not give them).
func (r *runner) cacheLevels() []cacheLevel {
	if !r.cachesRead {
		r.caches, r.cachesRead = dataCaches("/sys/devices/system/cpu/cpu0/cache"), true
	}
	return r.caches
}

// checkProbe compares problem idx's bandwidth with the probe it was
// given (d.ReadBW, from r.bw) and, for a problem past the caches that
// beats the probe by more than probeSlack, re-measures the probe and
// updates d.ReadBW; if the problem beats even the re-measured probe, it
// sets d.ProbeBusy and marks the probe's point busy. Either way it warns
// on stderr: the first measurement was taken under load.
func (r *runner) checkProbe(idx int, d *PerfData) {
	if d.ReadBW <= 0 || d.Time.Min <= 0 || d.ProbeBytes <= 0 {
		return
	}
	caches := r.cacheLevels()
	if len(caches) == 0 {
		return // no telling whether the problem fits a cache
	}
	llc := caches[len(caches)-1]
	if d.ProbeBytes <= pastCachesFactor*llc.bytes {
		return
	}
	bw := float64(d.IBytes+d.OBytes) / (d.Time.Min / 1e3)
	if bw <= d.ReadBW*(1+probeSlack) {
		return
	}
	was := d.ReadBW
	now, again := r.bw.remeasure(d.ProbeBytes)
	d.ReadBW = now
	r.prog.clear()
	size := fmtBytes(int64(1) << bucket(d.ProbeBytes))
	if bw <= now*(1+probeSlack) {
		fmt.Fprintf(r.errw, "gdnnbench: warning: problem %d: the read-bandwidth probe at %s had measured %s GB/s under load (busy machine): "+
			"the problem, past the caches (%s %s), read %s GB/s; measured again it reads %s GB/s, which %%bwpct%% uses from here on\n",
			idx, size, fmtNum(was/1e9), llc.name, fmtBytes(llc.bytes), fmtNum(bw/1e9), fmtNum(now/1e9))
		return
	}
	d.ProbeBusy = true
	r.bw.markBusy(d.ProbeBytes)
	fmt.Fprintf(r.errw, "gdnnbench: warning: problem %d: %s: past the caches (%s %s) the problem read %s GB/s, %.0f%% of the "+
		"read-bandwidth probe at %s (%s GB/s first, %s GB/s measured again; the faster is kept); no cache explains that, so its %%bwpct%% is not worth reading\n",
		idx, busyProbeLabel, llc.name, fmtBytes(llc.bytes), fmtNum(bw/1e9), 100*bw/now, size, fmtNum(was/1e9), fmtNum(again/1e9))
}

// remeasure measures the probe at n bytes again and keeps the faster of
// that and the earlier measurement (load only slows a probe), returning
// the one kept and the new one.
func (p *bwProbe) remeasure(n int64) (kept, again float64) {
	b := bucket(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	again = p.measure(int64(1) << b)
	kept = max(again, p.cache[b])
	p.cache[b] = kept
	return kept, again
}

// markBusy flags the probe's point at n bytes as measured under load.
func (p *bwProbe) markBusy(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy == nil {
		p.busy = map[int]bool{}
	}
	p.busy[bucket(n)] = true
}

package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Timing noise. benchdnn reports a problem's min and avg time and its
// users read the min; a figure is only worth reading when repeated
// executes agree. gdnnbench measures the spread of one problem's timed
// executes as (median - min) / min, the median being robust to one
// stray sample (a GC pause, a page fault) but not to sustained
// interference (another process, frequency throttling), and warns above
// noiseSpreadLimit: 10%, about the run-to-run variation oneDNN's users
// accept in performance comparisons. With fewer than minTimesPerPrb
// executes there is no spread to speak of and no check.
const noiseSpreadLimit = 0.10

// slowerLimit: a problem run again (--repeats-per-prb, or the same repro
// line later in the batch) whose min time is more than this many times
// its first run's was slowed by something outside it; the figures of
// the run are not comparable.
const slowerLimit = 1.5

// noiseWarning says why t is noisy, or "" when it is not.
func noiseWarning(t Timing) string {
	if t.Times < minTimesPerPrb || t.Min <= 0 {
		return ""
	}
	spread := (t.Median - t.Min) / t.Min
	if spread <= noiseSpreadLimit {
		return ""
	}
	return fmt.Sprintf("noisy timing: median %s ms is %.0f%% above min %s ms over %d executes (limit %.0f%%)",
		fmtNum(t.Median), 100*spread, fmtNum(t.Min), t.Times, 100*noiseSpreadLimit)
}

// firstRun is a problem's first timing in this run.
type firstRun struct {
	idx int
	min float64
}

// checkTiming warns on stderr when problem idx's timing is noisy or much
// slower than the first run of the same repro line.
func (r *runner) checkTiming(idx int, repro string, t Timing) {
	var msgs []string
	if w := noiseWarning(t); w != "" {
		msgs = append(msgs, w)
	}
	if r.firsts == nil {
		r.firsts = map[string]firstRun{}
	}
	if f, ok := r.firsts[repro]; !ok {
		r.firsts[repro] = firstRun{idx, t.Min}
	} else if f.min > 0 && t.Min > slowerLimit*f.min {
		msgs = append(msgs, fmt.Sprintf("%.1fx slower than its first run (problem %d: min %s ms, now %s ms; limit %.1fx)",
			t.Min/f.min, f.idx, fmtNum(f.min), fmtNum(t.Min), slowerLimit))
	}
	if len(msgs) == 0 {
		return
	}
	r.noisy++
	r.prog.clear()
	for _, m := range msgs {
		fmt.Fprintf(r.errw, "gdnnbench: warning: problem %d: %s\n", idx, m)
	}
}

// busyWarning says whether other processes kept the CPUs busy while
// problems were timed, from /proc/loadavg's one-minute load (read at the
// start and end of the run, the larger kept): load beyond the threads gdnn
// itself runs, of more than half the CPUs, makes every figure slower than
// a quiet machine's, the likeliest reason one run is several times slower
// than another.
func busyWarning(load float64, ncpu, own int) string {
	if load <= 0 || ncpu <= 0 {
		return ""
	}
	if other := load - float64(min(own, ncpu)); other <= 0.5*float64(ncpu) {
		return ""
	}
	return fmt.Sprintf("the machine was busy while timing: load average %.1f on %d CPUs, of which gdnn accounts for at most %d; "+
		"the figures are slower than a quiet machine's", load, ncpu, min(own, ncpu))
}

// warnBusy warns on stderr when problems were timed on a busy machine.
func (r *runner) warnBusy() {
	if r.timed == 0 {
		return
	}
	if w := busyWarning(max(r.load, loadAvg()), runtime.NumCPU(), threads()); w != "" {
		fmt.Fprintf(r.errw, "gdnnbench: warning: %s\n", w)
	}
}

// loadAvg reads the one-minute load average (0 where there is none).
func loadAvg() float64 {
	data, err := readCapped("/proc/loadavg", 4096)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return v
}

package bench

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Progress on stderr: a run longer than progressDelay shows "[i/N]
// elapsed, ETA" lines, N being the problem count found by a dry pass
// over the arguments before the run (countProblems). On a terminal the
// line is redrawn in place, at most every progressTTYEvery, and erased
// before anything else is printed; elsewhere (a log file, a pipe, CI) a
// full line is written every progressLogEvery, so that a long batch is
// never silent.
const (
	progressDelay    = 3 * time.Second
	progressTTYEvery = 500 * time.Millisecond
	progressLogEvery = 5 * time.Second
)

// nowFunc is the progress clock; tests replace it.
var nowFunc = time.Now

type progress struct {
	w     io.Writer
	tty   bool
	total int // problems in the run; <= 0 when unknown
	start time.Time
	last  time.Time // last line written
	shown bool      // a terminal line is on screen
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: nowFunc()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// update reports that done problems have finished.
func (p *progress) update(done int) {
	if p == nil {
		return
	}
	now := nowFunc()
	elapsed := now.Sub(p.start)
	if elapsed < progressDelay {
		return
	}
	every := progressLogEvery
	if p.tty {
		every = progressTTYEvery
	}
	if !p.last.IsZero() && now.Sub(p.last) < every {
		return
	}
	p.last = now
	line := progressLine(done, p.total, elapsed)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.shown = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// clear erases a terminal progress line before other output.
func (p *progress) clear() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// progressLine formats "[i/N] 12s elapsed, ETA 34s" (the ETA assumes the
// remaining problems take the mean time of those done), or "[i] 12s
// elapsed" when the total is unknown.
func progressLine(done, total int, elapsed time.Duration) string {
	if total <= 0 || done > total {
		return fmt.Sprintf("[%d] %s elapsed", done, fmtDur(elapsed))
	}
	s := fmt.Sprintf("[%d/%d] %s elapsed", done, total, fmtDur(elapsed))
	if done > 0 {
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		s += ", ETA " + fmtDur(eta)
	}
	return s
}

// fmtDur prints whole seconds: 7s, 3m04s, 1h02m.
func fmtDur(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// countProblems runs the arguments dry: options are parsed and problems
// counted (after --match, with every knob combination and nested batch
// file) but nothing is compiled, run or printed, and options with effects
// outside the runner (--max-isa, --threads) are not applied. It returns
// the count up to the end or the first malformed argument (where the real
// run stops too).
func countProblems(args []Arg) (n int) {
	c := newRunner(io.Discard, io.Discard)
	c.counting = true
	defer func() {
		if recover() != nil {
			n = 0 // unknown
		}
	}()
	c.process(args)
	return c.stats.Tests
}

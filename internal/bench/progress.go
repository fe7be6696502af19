package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress on stderr: a run longer than progressDelay shows "[i/N]
// elapsed, ETA" lines, N being the problem count found by a dry pass
// over the arguments before the run (dryRun). On a terminal the
// line is redrawn in place, at most every progressTTYEvery, and erased
// before anything else is printed; elsewhere (a log file, a pipe, CI) a
// full line is written every progressLogEvery, so that a long batch is
// never silent. A ticker keeps it going while one long problem runs.
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

	mu     sync.Mutex
	done   int       // problems finished
	last   time.Time // last line written
	shown  bool      // a terminal line is on screen
	paused bool      // the runner is printing: the ticker keeps off w
	stop   chan struct{}
	wg     sync.WaitGroup
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

// tickEvery starts the ticker that redraws the line while a problem runs;
// close stops it.
func (p *progress) tickEvery(d time.Duration) {
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
}

// close stops the ticker and erases a terminal line.
func (p *progress) close() {
	if p == nil {
		return
	}
	if p.stop != nil {
		close(p.stop)
		p.wg.Wait()
		p.stop = nil
	}
	p.clear()
}

// update reports that done problems have finished; the runner's printing
// is over until the next clear.
func (p *progress) update(done int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.paused = done, false
	p.emit()
}

// tick redraws the line, unless the runner is printing.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.emit()
	}
}

// emit writes the line if the run is old enough and the last line is
// not too recent; p.mu is held.
func (p *progress) emit() {
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
	line := progressLine(p.done, p.total, elapsed)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", line)
		p.shown = true
		return
	}
	fmt.Fprintln(p.w, line)
}

// clear erases a terminal progress line before the runner prints, and
// keeps the ticker off until the next update.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	if p.shown {
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

// countProblems is the number of problems the dry pass (dryRun) finds:
// options are parsed and problems counted (after --match, with every
// knob combination and nested batch file) but nothing is compiled, run or
// printed, and options with effects outside the runner (--max-isa,
// --threads) are not applied. It counts up to the end or the first
// malformed argument (which the run refuses before any problem); 0 when
// unknown.
func countProblems(args []Arg) int {
	c, _ := dryRun(args, map[string][]byte{})
	if c == nil {
		return 0
	}
	return c.stats.Tests
}

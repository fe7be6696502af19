package bench

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdnn/gdnn/internal/jit"
)

// fakeClock replaces the progress clock with one that moves step on each
// reading, for the duration of the test.
func fakeClock(t *testing.T, step time.Duration) {
	t.Helper()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := nowFunc
	var mu sync.Mutex // the ticker reads the clock too
	nowFunc = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(step)
		return now
	}
	t.Cleanup(func() { nowFunc = old })
}

func TestProgressLine(t *testing.T) {
	cases := []struct {
		done, total int
		el          time.Duration
		want        string
	}{
		{2, 10, 4 * time.Second, "[2/10] 4s elapsed, ETA 16s"},
		{0, 10, 4 * time.Second, "[0/10] 4s elapsed"},
		{5, 0, 75 * time.Second, "[5] 1m15s elapsed"},
		{12, 10, time.Second, "[12] 1s elapsed"},
		{1, 100, 4000 * time.Second, "[1/100] 1h06m elapsed, ETA 110h00m"},
	}
	for _, c := range cases {
		if got := progressLine(c.done, c.total, c.el); got != c.want {
			t.Errorf("progressLine(%d, %d, %v) = %q, want %q", c.done, c.total, c.el, got, c.want)
		}
	}
}

// TestProgressNotTTY: with stderr a buffer (no terminal), a run longer
// than a few seconds writes whole "[i/N] elapsed, ETA" lines, N counted
// before the run; a short run writes none.
func TestProgressNotTTY(t *testing.T) {
	fakeClock(t, 2*time.Second) // every clock reading is 2 s later
	// 3 problems per shape (--sdt list) x 4 shapes, one dropped by --match:
	// 3 x 3 = 9 problems.
	args := []string{"--reduction", "--sdt=f32,bf16,f16", "--match=x1$", "2x3:2x1", "4x3:4x1", "5x3:5x1", "4x4:1x4"}
	var out, errw bytes.Buffer
	if code := Main(args, &out, &errw); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errw.String())
	}
	lines := strings.Split(strings.TrimSuffix(errw.String(), "\n"), "\n")
	// The ticker may draw before the first problem ends: no ETA yet.
	re := regexp.MustCompile(`^\[(\d+)/9\] \d+s elapsed(, ETA \d+s)?$`)
	if len(lines) < 2 {
		t.Fatalf("want several progress lines, got %q", errw.String())
	}
	for _, l := range lines {
		if !re.MatchString(l) {
			t.Errorf("progress line %q does not match %s", l, re)
		}
	}
	if strings.Contains(errw.String(), "\r") || strings.Contains(errw.String(), "\x1b") {
		t.Errorf("terminal control characters in a non-terminal stderr: %q", errw.String())
	}
	if !strings.Contains(out.String(), "tests:9 ") {
		t.Errorf("want 9 tests\n%s", out.String())
	}

	// A run that ends within the delay prints nothing on stderr.
	fakeClock(t, time.Millisecond)
	errw.Reset()
	if code := Main(args, &out, &errw); code != 0 || errw.Len() != 0 {
		t.Errorf("short run: exit %d, stderr %q", code, errw.String())
	}
}

// TestProgressTTY: on a terminal the line is redrawn in place and erased
// before other output.
func TestProgressTTY(t *testing.T) {
	fakeClock(t, 2*time.Second)
	var w bytes.Buffer
	p := &progress{w: &w, tty: true, total: 4, start: nowFunc()}
	p.update(1) // 2 s: within the delay
	p.update(2) // 4 s
	p.clear()
	p.clear()   // nothing on screen: nothing to erase
	p.update(3) // 6 s
	want := "\r\x1b[K[2/4] 4s elapsed, ETA 4s\r\x1b[K\r\x1b[K[3/4] 6s elapsed, ETA 2s"
	if w.String() != want {
		t.Errorf("tty output %q, want %q", w.String(), want)
	}
}

// TestProgressTick: while one long problem runs, the ticker keeps the
// line going; while the runner prints, it keeps off.
func TestProgressTick(t *testing.T) {
	fakeClock(t, 4*time.Second)
	var w bytes.Buffer
	p := &progress{w: &w, total: 3, start: nowFunc()}
	p.update(1) // 4 s
	p.tick()    // 8 s: within progressLogEvery of the last line
	p.tick()    // 12 s
	p.clear()
	p.tick() // paused
	want := "[1/3] 4s elapsed, ETA 8s\n[1/3] 12s elapsed, ETA 24s\n"
	if w.String() != want {
		t.Errorf("ticks wrote %q, want %q", w.String(), want)
	}
	// The goroutine starts and stops cleanly.
	p.tickEvery(time.Millisecond)
	p.update(2)
	time.Sleep(5 * time.Millisecond)
	p.close()
	p.close() // twice is harmless
}

// TestCountProblems: the dry pass counts every knob combination, nested
// batch, repeat and --start-skipped problem, drops --match misses, and
// leaves the process's ISA cap and threads alone.
func TestCountProblems(t *testing.T) {
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"--reduction", "--sdt=f32,bf16", "--stag=abx,axb", "2x3:2x1"}, 4},
		{[]string{"--repeats-per-prb=3", "--start=1", "--reduction", "2x3:2x1", "4x3:4x1"}, 6},
		{[]string{"--reduction", "--match=4x", "2x3:2x1", "4x3:4x1"}, 1},
		{[]string{"--max-isa=none", "--threads=1", "--reduction", "2x3:2x1"}, 1},
		// It counts up to a malformed argument, where the run stops too.
		{[]string{"--reduction", "2x3:2x1", "--bogus", "4x3:4x1"}, 1},
		{[]string{"--help"}, 0},
	}
	isa, n := jit.EffectiveISA(), jit.Threads()
	for _, c := range cases {
		if got := countProblems(CommandArgs(c.args)); got != c.want {
			t.Errorf("%v: counted %d, want %d", c.args, got, c.want)
		}
	}
	if jit.EffectiveISA() != isa || jit.Threads() != n {
		t.Errorf("the dry pass changed the ISA cap (%v, was %v) or threads (%d, was %d)", jit.EffectiveISA(), isa, jit.Threads(), n)
	}
}

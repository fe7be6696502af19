package bench

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestNoiseWarning(t *testing.T) {
	cases := []struct {
		t    Timing
		want string // "" for no warning
	}{
		{Timing{Times: 100, Min: 1, Median: 1.05, Avg: 3, Max: 50}, ""},  // stray samples move avg and max only
		{Timing{Times: 100, Min: 1, Median: 1.09, Avg: 1.2, Max: 2}, ""}, // just under the limit
		{Timing{Times: 100, Min: 1, Median: 1.3, Avg: 1.4, Max: 2}, "median 1.3 ms is 30% above min 1 ms over 100 executes (limit 10%)"},
		{Timing{Times: 4, Min: 1, Median: 3, Avg: 3, Max: 5}, ""}, // too few executes to judge
		{Timing{Times: 100, Min: 0, Median: 1}, ""},
	}
	for _, c := range cases {
		got := noiseWarning(c.t)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}

// TestCheckTiming feeds fake timings through the runner: a noisy one and a
// repeat much slower than the first run of the same repro line are
// warned about on stderr, and counted for the closing warning.
func TestCheckTiming(t *testing.T) {
	var out, errw bytes.Buffer
	r := newRunner(&out, &errw)
	steady := Timing{Times: 50, Min: 1, Median: 1.02, Avg: 1.1, Max: 1.5}
	r.checkTiming(0, "--reduction 8x8:8x1", steady)
	r.checkTiming(1, "--reduction 8x8:8x1", Timing{Times: 50, Min: 1.4, Median: 1.45, Avg: 1.5, Max: 2}) // 1.4x: under the limit
	r.checkTiming(2, "--reduction 4x4:4x1", Timing{Times: 50, Min: 5, Median: 5.1, Avg: 5.1, Max: 6})    // another problem: its own first run
	if errw.Len() != 0 || r.noisy != 0 {
		t.Fatalf("steady timings warned: %q", errw.String())
	}
	r.checkTiming(3, "--reduction 8x8:8x1", Timing{Times: 50, Min: 5, Median: 5.1, Avg: 5.2, Max: 6})
	r.checkTiming(4, "--reduction 2x2:2x1", Timing{Times: 50, Min: 1, Median: 2, Avg: 2, Max: 3})
	want := "gdnnbench: warning: problem 3: 5.0x slower than its first run (problem 0: min 1 ms, now 5 ms; limit 1.5x)\n" +
		"gdnnbench: warning: problem 4: noisy timing: median 2 ms is 100% above min 1 ms over 50 executes (limit 10%)\n"
	if errw.String() != want || r.noisy != 2 {
		t.Errorf("stderr %q (noisy %d), want %q (2)", errw.String(), r.noisy, want)
	}
	errw.Reset()
	r.stats.Tests = 5
	r.finish()
	if !strings.Contains(errw.String(), "2 of 5 problems had unreliable timings") {
		t.Errorf("no closing warning: %q", errw.String())
	}
}

func TestBusyWarning(t *testing.T) {
	cases := []struct {
		load      float64
		ncpu, own int
		busy      bool
	}{
		{0.3, 2, 2, false},
		{2.9, 2, 2, false}, // gdnn's own 2 threads plus a little
		{3.2, 2, 2, true},  // more than half the CPUs' worth of other work
		{27, 2, 2, true},
		{9, 64, 64, false},
		{41, 64, 8, true},
		{0, 2, 2, false}, // no load figure (not Linux)
	}
	for _, c := range cases {
		w := busyWarning(c.load, c.ncpu, c.own)
		if (w != "") != c.busy {
			t.Errorf("load %v on %d CPUs, %d own threads: %q, want busy=%v", c.load, c.ncpu, c.own, w, c.busy)
		}
		if c.busy && !strings.Contains(w, fmt.Sprintf("load average %.1f on %d CPUs", c.load, c.ncpu)) {
			t.Errorf("warning %q does not give the figures", w)
		}
	}
}

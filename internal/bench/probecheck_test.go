package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// probeRunner is a runner on a CPU with a 32 MiB L3 whose probe at every
// size first measured first bytes/s; measuring again gives again bytes/s.
// calls counts the measurements made after the first.
func probeRunner(first, again float64, calls *int) (*runner, *bytes.Buffer, *bytes.Buffer) {
	var out, errw bytes.Buffer
	r := newRunner(&out, &errw)
	r.caches, r.cachesRead = []cacheLevel{{"L1", 32 << 10}, {"L2", 1 << 20}, {"L3", 32 << 20}}, true
	r.bw = &bwProbe{cache: map[int]float64{}, name: "lib", lib: func(int64) (float64, error) {
		*calls++
		return again, nil
	}}
	for b := 12; b <= 30; b++ {
		r.bw.cache[b] = first
	}
	return r, &out, &errw
}

// perfAt is a timed problem reading n bytes at gbs GB/s, compared with
// the probe r gives at n bytes.
func perfAt(r *runner, n int64, gbs float64) *PerfData {
	return &PerfData{Driver: "reduction", Impl: "jit:avx512", Desc: "x", IBytes: n,
		Time: Timing{Times: 5, Min: float64(n) / (gbs * 1e9) * 1e3}, ProbeBytes: n, ReadBW: r.bw.readBW(n)}
}

// TestCheckProbe: only a problem past the caches that beats the probe by
// more than the noise allows has the probe measured again; if it beats
// even that, the probe is flagged as measured under load, never put down
// to a cache.
func TestCheckProbe(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name         string
		bytes        int64
		gbs          float64 // the problem's
		again        float64 // the probe measured again, bytes/s
		noCaches     bool
		wantCalls    int
		wantReadBW   float64
		wantBusy     bool
		wantWarnings []string
	}{
		// 98 MiB at 563% of a probe measured under load; measured again
		// the probe is faster than the problem.
		{name: "remeasured", bytes: 98 * mib, gbs: 20, again: 21e9, wantCalls: 1, wantReadBW: 21e9,
			wantWarnings: []string{"problem 3: the read-bandwidth probe at 128M had measured 3.55 GB/s under load (busy machine)",
				"past the caches (L3 32M)", "measured again it reads 21 GB/s"}},
		// Measured again, still slower (the machine is still busy): the
		// faster of the two is kept, and the problem is flagged.
		{name: "still busy", bytes: 98 * mib, gbs: 20, again: 3e9, wantCalls: 1, wantReadBW: 3.55e9, wantBusy: true,
			wantWarnings: []string{"problem 3: probe measured under load (busy machine): past the caches (L3 32M)", "563% of the read-bandwidth probe at 128M (3.55 GB/s first, 3 GB/s measured again; the faster is kept)"}},
		// Within twice the L3 a cache may explain it: not checked.
		{name: "cache-sized", bytes: 48 * mib, gbs: 20, again: 21e9, wantReadBW: 3.55e9},
		// Past the caches, but within the noise allowed (20%).
		{name: "within noise", bytes: 98 * mib, gbs: 3.55 * 1.19, again: 21e9, wantReadBW: 3.55e9},
		// Where the OS gives no cache sizes there is no telling.
		{name: "no caches", bytes: 98 * mib, gbs: 20, again: 21e9, noCaches: true, wantReadBW: 3.55e9},
	}
	for _, c := range cases {
		calls := 0
		r, _, errw := probeRunner(3.55e9, c.again, &calls)
		if c.noCaches {
			r.caches = nil
		}
		d := perfAt(r, c.bytes, c.gbs)
		r.checkProbe(3, d)
		if calls != c.wantCalls || d.ReadBW != c.wantReadBW || d.ProbeBusy != c.wantBusy {
			t.Errorf("%s: %d measurements, ReadBW %g, busy %v; want %d, %g, %v", c.name, calls, d.ReadBW, d.ProbeBusy, c.wantCalls, c.wantReadBW, c.wantBusy)
		}
		for _, w := range c.wantWarnings {
			if !strings.Contains(errw.String(), w) {
				t.Errorf("%s: %q missing from stderr %q", c.name, w, errw.String())
			}
		}
		if len(c.wantWarnings) == 0 && errw.Len() > 0 {
			t.Errorf("%s: unexpected warning %q", c.name, errw.String())
		}
		if strings.Contains(errw.String(), "cache between") {
			t.Errorf("%s: a problem past the caches put down to a cache: %q", c.name, errw.String())
		}
		busyPts := 0
		for _, p := range r.bw.points() {
			if p.busy {
				busyPts++
				if p.bytes != 128*mib {
					t.Errorf("%s: probe point %s flagged, want 128M", c.name, fmtBytes(p.bytes))
				}
			}
		}
		if want := map[bool]int{false: 0, true: 1}[c.wantBusy]; busyPts != want {
			t.Errorf("%s: %d probe points flagged busy, want %d", c.name, busyPts, want)
		}
	}
}

// TestBusyProbeReported: through report, a problem that beats even the
// re-measured probe is flagged in the perf line's %bwpct% figure (against
// the faster probe), the table and the chart, with the label, not a cache.
func TestBusyProbeReported(t *testing.T) {
	calls := 0
	r, out, _ := probeRunner(3.55e9, 3e9, &calls)
	r.g.plot = filepath.Join(t.TempDir(), "bw.svg")
	r.g.table = true
	d := perfAt(r, 98<<20, 20)
	r.report(0, "--reduction x", result{state: "PASSED", impl: "jit:avx512", perf: d}, "%-bwpct%")
	small := perfAt(r, 1<<20, 20) // inside the caches: a cache explains it
	r.report(1, "--reduction y", result{state: "PASSED", impl: "jit:avx512", perf: small}, "%-bwpct%")
	r.rows = []tableRow{{shape: "x", perf: d}, {shape: "y", perf: small}}
	if err := r.finish(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n563.38\n") || !strings.Contains(out.String(), "563%*") ||
		!strings.Contains(out.String(), "* "+busyProbeLabel) || strings.Count(out.String(), "%*") != 1 {
		t.Errorf("perf line or table without the busy probe flag:\n%s", out)
	}
	data, err := os.ReadFile(r.g.plot)
	if err != nil {
		t.Fatal(err)
	}
	marks, text := svgStats(t, data)
	if marks != 2 {
		t.Errorf("%d marks, want 2", marks)
	}
	if n := strings.Count(text, "("+busyProbeLabel+")"); n != 1 {
		t.Errorf("%d table rows flagged %q, want 1:\n%s", n, busyProbeLabel, text)
	}
	for _, want := range []string{"under load", "1 of 2 problems flagged: " + busyProbeLabel, "Past the caches (over 2x the L3 32M)"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q missing from the chart:\n%s", want, text)
		}
	}
	if !strings.Contains(string(data), "128M: 3.55 GB/s, "+busyProbeLabel) {
		t.Errorf("the probe point at 128M is not flagged in the chart")
	}
}

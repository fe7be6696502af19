package bench

import (
	"strings"
	"testing"
)

func TestExpandTemplate(t *testing.T) {
	d := &PerfData{
		Driver: "reduction", Engine: "cpu", Impl: "jit:avx512", Name: "gap", Prb: "--reduction 2x3:2x1",
		Desc: "2x3:2x1", Sdt: "f32", Ddt: "bf16", Stag: "abx", Dtag: "any", Alg: "mean", Attr: "relu", Idx: 7,
		IBytes: 3000, OBytes: 1000, Ops: 500,
		Time:    Timing{Times: 10, Min: 0.5, Avg: 1, Max: 2, Median: 0.8},
		CTimeMs: 0.25, ReadBW: 16e6, Threads: 2,
	}
	cases := map[string]string{
		"%-time%,%0time%,%+time%,%~time%":        "0.5,1,2,0.8",
		"%time%":                                 "0.5",
		"%-bw%":                                  "8e+06",
		"%-Mbw% %0Kbw% %Gbw%":                    "8 4000 0.008",
		"%iobytes% %Kibytes% %obytes%":           "4000 3 1000",
		"%ops% %-flops% %ctime%":                 "500 1e+06 0.25",
		"%-bwpct% %~bwpct% %Mrbw%":               "50 31.25 16",
		"%prb%|%desc%|%DESC%":                    "--reduction 2x3:2x1|2x3:2x1|2x3:2x1",
		"%sdt%:%ddt% %stag%/%dtag% %alg% %attr%": "f32:bf16 abx/any mean relu",
		"%driver% %engine% %impl% %name% %idx% %threads% %times%": "reduction cpu jit:avx512 gap 7 2 10",
		"no tokens": "no tokens",
	}
	for tpl, want := range cases {
		got, err := ExpandTemplate(tpl, d)
		if err != nil || got != want {
			t.Errorf("ExpandTemplate(%q) = %q, %v; want %q", tpl, got, err, want)
		}
	}
	for _, bad := range []string{"%nope%", "%-prb2%", "%time", "abc %", "%Xtime%", "100%%"} {
		if _, err := ExpandTemplate(bad, d); err == nil {
			t.Errorf("ExpandTemplate(%q) succeeded, want an error", bad)
		}
	}
	// --help writes the modifier's place as @: the error says what to write.
	if _, err := ExpandTemplate("%@time%", d); err == nil || !strings.Contains(err.Error(), "write %-time% (min)") {
		t.Errorf("ExpandTemplate(%%@time%%): %v, want the modifiers spelled out", err)
	}
	for _, tpl := range []string{TemplateDef, TemplateCSV, TemplateGraphCSV} {
		if err := ValidateTemplate(tpl); err != nil {
			t.Errorf("built-in template %q: %v", tpl, err)
		}
	}
}

func TestTemplateHeaderAndResolve(t *testing.T) {
	if got := TemplateHeader("perf,%-time%,%0Gbw%,%prb%,%~time%"); got != "perf,min_time,avg_Gbw,prb,med_time" {
		t.Errorf("header = %q", got)
	}
	if resolveTemplate("csv", TemplateCSV) != TemplateCSV || resolveTemplate("def", TemplateCSV) != TemplateDef {
		t.Error("csv/def not resolved to the built-ins")
	}
	if got := resolveTemplate("%prb%", TemplateCSV); got != "%prb%" {
		t.Errorf("custom template = %q", got)
	}
	if !strings.Contains(HelpText, "%@bwpct%") {
		t.Error("--help does not document %@bwpct%")
	}
}

func TestSummarize(t *testing.T) {
	tm := summarize([]float64{3, 1, 2, 10}, 4, 4)
	if tm.Min != 1 || tm.Max != 10 || tm.Median != 2.5 || tm.Avg != 4 || tm.Times != 4 {
		t.Errorf("summarize = %+v", tm)
	}
	calls := 0
	tm, err := measure(func() error { calls++; return nil }, 10, 7)
	if err != nil || tm.Times != 7 || calls != 8 {
		t.Errorf("measure fixed 7: %+v, %v, calls %d (want 7 timed + 1 warm-up)", tm, err, calls)
	}
}

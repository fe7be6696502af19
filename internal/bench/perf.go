package bench

import (
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// Timing summarises the timed executes of one problem (milliseconds per
// execute).
type Timing struct {
	Times                 int // executes timed
	Min, Avg, Max, Median float64
}

// PerfData is what a perf-template line can show about one problem.
type PerfData struct {
	Driver, Engine, Impl, Name string
	Prb                        string // the repro line (options and descriptor)
	Desc                       string // the descriptor alone
	Sdt, Ddt, Stag, Dtag, Alg  string
	Attr                       string // --attr-post-ops value
	DT                         string // graph driver --dt; lnorm and gnorm SRC:DST
	Dir, Axis, Flags           string // the normalization drivers' --dir, --axis (softmax), --flags
	Tag, StatTag               string // lnorm and gnorm --tag (SRC:DST), lnorm --stat_tag
	Idx                        int
	IBytes, OBytes             int64
	Ops                        float64 // adds and divides: one per src element plus one per dst element
	Time                       Timing
	CTimeMs                    float64 // partition compile time
	ReadBW                     float64 // probed read bandwidth at the src byte size, bytes/s (0: not probed)
	ProbeBytes                 int64   // the src byte size ReadBW was probed for
	ProbeBusy                  bool    // ReadBW was measured under load (checkProbe)
	Threads                    int
}

// Default templates (benchdnn's "def" and "csv", with bandwidth in place
// of GFLOPS since a reduction is bound by memory).
const (
	TemplateDef      = "perf,%engine%,%impl%,%name%,%prb%,%-time%,%-Gbw%,%-bwpct%,%0time%,%0Gbw%"
	TemplateCSV      = "perf,%engine%,%impl%,%name%,%sdt%,%ddt%,%stag%,%dtag%,%alg%,%attr%,%DESC%,%-time%,%-Gbw%,%-bwpct%,%0time%,%0Gbw%,%~time%"
	TemplateGraphCSV = "perf,%engine%,%impl%,%name%,%dt%,%DESC%,%-time%,%-Gbw%,%-bwpct%,%0time%,%0Gbw%,%~time%"
)

// TemplateTokens documents every %token% ExpandTemplate knows, for --help.
const TemplateTokens = `  Problem: %driver% %engine% %impl% %name% %prb% %desc% %DESC% %sdt% %ddt% %stag% %dtag%
           %alg% %attr% %dt% %idx% %threads% %times%
           %dir% %axis% %flags% %tag% %stat_tag% (the normalization drivers)
  Measured (take modifiers): %@time% (ms per execute) %@bw% (iobytes/time) %@ibytes% %@obytes%
           %@iobytes% %@ops% %@flops% (ops/time) %@ctime% (compile ms)
           %@bwpct% (bw as % of the probed read bandwidth at the src byte size) %@rbw% (that probe)
  Modifiers, in this order after the first %: time - min (default), 0 avg, + max, ~ median (gdnn);
           unit K 1e3, M 1e6, G 1e9 (divides), e.g. %-Gbw% = GB/s at the min time, %~time% = median ms.`

// resolveTemplate maps --perf-template values to a template: "def" and
// "csv" to the built-ins (benchdnn matches them by prefix), anything else
// is a custom template.
func resolveTemplate(v, csv string) string {
	switch {
	case strings.HasPrefix(v, "csv"):
		return csv
	case strings.HasPrefix(v, "def"):
		return TemplateDef
	}
	return v
}

// ValidateTemplate reports the first unknown or malformed token of tpl.
func ValidateTemplate(tpl string) error {
	_, err := ExpandTemplate(tpl, &PerfData{})
	return err
}

// ExpandTemplate fills a perf template with d. Text outside %...% is
// copied; each %token% is replaced by its value (see TemplateTokens).
func ExpandTemplate(tpl string, d *PerfData) (string, error) {
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '%')
		if i < 0 {
			b.WriteString(tpl)
			return b.String(), nil
		}
		b.WriteString(tpl[:i])
		rest := tpl[i+1:]
		j := strings.IndexByte(rest, '%')
		if j < 0 {
			return "", status.Errorf(status.InvalidArguments, "perf template: unterminated token %q", tpl[i:])
		}
		v, err := expandToken(rest[:j], d)
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		tpl = rest[j+1:]
	}
}

// TemplateHeader names the columns of tpl: each token becomes its name
// with the modifiers spelled out (min_, avg_, max_, med_ and the unit).
func TemplateHeader(tpl string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '%')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(tpl[i+1:], '%')
		}
		if i < 0 || j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		b.WriteString(tpl[:i])
		tok := tpl[i+1 : i+1+j]
		mode, unit, name := splitModifiers(tok)
		if measured[name] {
			b.WriteString(map[byte]string{'-': "min_", '0': "avg_", '+': "max_", '~': "med_"}[mode])
		}
		if unit != 0 {
			b.WriteByte(unit)
		}
		b.WriteString(name)
		tpl = tpl[i+2+j:]
	}
}

// benchdnnTokens are benchdnn's perf template tokens (knobs_perf_report.md)
// that gdnnbench does not expand, with why.
var benchdnnTokens = map[string]string{
	"clocks":     "gdnnbench does not read the CPU's cycle counter",
	"freq":       "gdnnbench does not read the CPU's cycle counter",
	"cpdtime":    "gdnn has no primitive descriptor; %ctime% is the compile time",
	"cptime":     "gdnn's primitive creation is its compile: use %ctime%",
	"cfg":        "not a reduction or graph driver token in benchdnn",
	"bia_dt":     "not a reduction or graph driver token in benchdnn",
	"tag":        "not a reduction or graph driver token in benchdnn (reduction: %stag% and %dtag%)",
	"wtag":       "not a reduction or graph driver token in benchdnn",
	"stat_tag":   "not a reduction or graph driver token in benchdnn",
	"activation": "not a reduction or graph driver token in benchdnn",
	"axis":       "not a reduction or graph driver token in benchdnn",
	"dir":        "not a reduction or graph driver token in benchdnn",
	"direction":  "not a reduction or graph driver token in benchdnn",
	"flags":      "not a reduction or graph driver token in benchdnn",
	"group":      "not a reduction or graph driver token in benchdnn",
	"mb":         "not a reduction or graph driver token in benchdnn",
	"prop":       "not a reduction or graph driver token in benchdnn",
}

// measured are the tokens that take the time and unit modifiers.
var measured = map[string]bool{"time": true, "bw": true, "ibytes": true, "obytes": true, "iobytes": true,
	"ops": true, "flops": true, "ctime": true, "bwpct": true, "rbw": true}

func splitModifiers(tok string) (mode, unit byte, name string) {
	mode = '-'
	if tok != "" && strings.IndexByte("-0+~", tok[0]) >= 0 {
		mode, tok = tok[0], tok[1:]
	}
	if tok != "" && strings.IndexByte("KMG", tok[0]) >= 0 && measured[tok[1:]] {
		unit, tok = tok[0], tok[1:]
	}
	return mode, unit, tok
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func expandToken(tok string, d *PerfData) (string, error) {
	switch tok {
	case "driver":
		return d.Driver, nil
	case "engine":
		return d.Engine, nil
	case "impl":
		return d.Impl, nil
	case "name":
		return d.Name, nil
	case "prb":
		return d.Prb, nil
	case "desc", "DESC":
		return d.Desc, nil
	case "sdt":
		return d.Sdt, nil
	case "ddt":
		return d.Ddt, nil
	case "stag":
		return d.Stag, nil
	case "dtag":
		return d.Dtag, nil
	case "alg":
		return d.Alg, nil
	case "attr":
		return d.Attr, nil
	case "dt":
		return d.DT, nil
	case "dir":
		return d.Dir, nil
	case "axis":
		return d.Axis, nil
	case "flags":
		return d.Flags, nil
	case "tag":
		return d.Tag, nil
	case "stat_tag":
		return d.StatTag, nil
	case "idx":
		return strconv.Itoa(d.Idx), nil
	case "threads":
		return strconv.Itoa(d.Threads), nil
	case "times":
		return strconv.Itoa(d.Time.Times), nil
	}
	mode, unit, name := splitModifiers(tok)
	if strings.HasPrefix(tok, "@") && measured[tok[1:]] {
		return "", status.Errorf(status.InvalidArguments,
			"perf template: in %%%s%% the @ stands for a modifier: write %%-%s%% (min), %%0%s%% (average), %%+%s%% (max), %%~%s%% (median) or %%%s%% (min)",
			tok, tok[1:], tok[1:], tok[1:], tok[1:], tok[1:])
	}
	if !measured[name] {
		if why, ok := benchdnnTokens[name]; ok {
			return "", status.Errorf(status.Unimplemented, "perf template: benchdnn's %%%s%% is not implemented by gdnnbench: %s", tok, why)
		}
		return "", status.Errorf(status.InvalidArguments, "perf template: unknown token %%%s%% (see --help for the list)", tok)
	}
	div := map[byte]float64{0: 1, 'K': 1e3, 'M': 1e6, 'G': 1e9}[unit]
	ms := map[byte]float64{'-': d.Time.Min, '0': d.Time.Avg, '+': d.Time.Max, '~': d.Time.Median}[mode]
	perSec := func(x float64) float64 {
		if ms <= 0 {
			return 0
		}
		return x / (ms / 1e3)
	}
	io := float64(d.IBytes + d.OBytes)
	var v float64
	switch name {
	case "time":
		v = ms
	case "ctime":
		v = d.CTimeMs
	case "ibytes":
		v = float64(d.IBytes)
	case "obytes":
		v = float64(d.OBytes)
	case "iobytes":
		v = io
	case "ops":
		v = d.Ops
	case "flops":
		v = perSec(d.Ops)
	case "bw":
		v = perSec(io)
	case "rbw":
		v = d.ReadBW
	case "bwpct":
		if d.ReadBW > 0 {
			v = 100 * perSec(io) / d.ReadBW
		}
		div = 1
	}
	return fmtNum(v / div), nil
}

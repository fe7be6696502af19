package bench

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

// Mode is benchdnn's --mode: which of list/init/run/correctness/
// performance/bitwise the driver does per problem.
type Mode struct {
	List, Init, Exec, Corr, Perf, Bitwise bool
	Fast                                  bool // F: performance with a 10 ms budget
}

// ParseMode reads benchdnn's --mode values: L, I, R, C, P, F, B and CP/PC
// (either case).
func ParseMode(s string) (Mode, error) {
	var m Mode
	switch strings.ToUpper(s) {
	case "L":
		m.List = true
	case "I":
		m.Init = true
	case "R":
		m.Exec = true
	case "C":
		m.Corr = true
	case "P":
		m.Perf = true
	case "F":
		m.Perf, m.Fast = true, true
	case "B":
		m.Bitwise = true
	case "CP", "PC":
		m.Corr, m.Perf = true, true
	default:
		return m, status.Errorf(status.InvalidArguments, "mode %q: want one of L, I, R, C, P, F, B, CP", s)
	}
	return m, nil
}

// String returns the mode as --mode spells it.
func (m Mode) String() string {
	switch {
	case m.List:
		return "L"
	case m.Init:
		return "I"
	case m.Exec:
		return "R"
	case m.Bitwise:
		return "B"
	case m.Corr && m.Perf:
		return "CP"
	case m.Fast:
		return "F"
	case m.Perf:
		return "P"
	}
	return "C"
}

// globalSettings are the options that --reset leaves alone.
type globalSettings struct {
	mode         Mode
	maxMs        float64
	fixTimes     int
	maxISA       string // "" = not capped
	threads      int    // gdnn threads (0 = default, GOMAXPROCS)
	verbose      int
	canonical    bool
	start        int
	repeats      int
	globalImpl   []string
	globalSkip   []string
	table        bool
	tableOnly    bool // --table=only: per-problem lines only for what did not pass
	caseDir      string
	inputsDir    string // --inputs-dir: searched for --batch files (see locateBatch)
	summary      summarySettings
	plot         string // --plot: SVG file for the bandwidth chart ("" = none)
	bwProbe      string // "auto", "go" or "lib"
	allowEnumTag bool
	modeModifier string // --mode-modifier: no effect, but M is refused by the graph driver
}

const defaultMaxMs = 3000

func defaultGlobals() globalSettings {
	return globalSettings{mode: Mode{Corr: true}, maxMs: defaultMaxMs, repeats: 1, bwProbe: "auto", allowEnumTag: true,
		summary: defaultSummary()}
}

// redSettings are the reduction driver's knobs; every list-valued knob
// multiplies the problems run.
type redSettings struct {
	sdt, ddt   []dtypes.DataType
	stag, dtag []string
	alg        []string
	p, eps     []float32
	postOps    []string          // raw --attr-post-ops alternatives
	knobs      map[string]string // other benchdnn attribute and context knobs, by name (see knobMet)
	match      *regexp.Regexp
	impl, skip []string
	perfTpl    string
}

func defaultRed(perfTpl string) redSettings {
	return redSettings{
		sdt: []dtypes.DataType{dtypes.F32}, ddt: []dtypes.DataType{dtypes.F32},
		stag: []string{"abx"}, dtag: []string{"any"}, alg: []string{"sum"},
		p: []float32{1}, eps: []float32{0}, postOps: []string{""}, perfTpl: perfTpl,
	}
}

// graphSettings are the graph driver's knobs.
type graphSettings struct {
	mb         []int64
	inShapes   []string
	opAttrs    []string
	dt         []string
	expectedN  []int
	opKind     []string
	tensorProp []string
	match      *regexp.Regexp
	impl, skip []string
	perfTpl    string
}

func defaultGraph(perfTpl string) graphSettings {
	return graphSettings{mb: []int64{0}, inShapes: []string{""}, opAttrs: []string{""}, dt: []string{""},
		expectedN: []int{1}, opKind: []string{""}, tensorProp: []string{""}, perfTpl: perfTpl}
}

// splitList splits a list-valued knob on commas; an empty value means the
// default (nil here).
func splitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func parseDTList(a Arg, opt, v string, def []dtypes.DataType) ([]dtypes.DataType, error) {
	items := splitList(v)
	if items == nil {
		return def, nil
	}
	out := make([]dtypes.DataType, len(items))
	for i, s := range items {
		dt, err := dtypes.Parse(s)
		if err != nil || !dt.Valid() {
			return nil, inputErr(a, "--%s: unknown data type %q (want f32, bf16, f16, s32, s8, u8, ...)", opt, s)
		}
		out[i] = dt
	}
	return out, nil
}

func parseTagList(a Arg, opt, v string, def []string) ([]string, error) {
	items := splitList(v)
	if items == nil {
		return def, nil
	}
	for _, t := range items {
		if _, err := ResolveTag(t, tagProbeRank(t)); err != nil && !errors.Is(err, status.Unimplemented) {
			return nil, inputErr(a, "--%s: unknown or invalid tag %q: %s", opt, t, reasonOf(err))
		}
	}
	return items, nil
}

func parseFloatList(a Arg, opt, v string, def []float32) ([]float32, error) {
	items := splitList(v)
	if items == nil {
		return def, nil
	}
	out := make([]float32, len(items))
	for i, s := range items {
		f, err := parseF32(s)
		if err != nil {
			return nil, inputErr(a, "--%s: %v", opt, err)
		}
		out[i] = f
	}
	return out, nil
}

func parseIntValue(a Arg, opt, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, inputErr(a, "--%s: %q is not an integer", opt, v)
	}
	return n, nil
}

func parseBoolValue(a Arg, opt, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, inputErr(a, "--%s: %q is not a boolean (want true, false, 1 or 0)", opt, v)
}

// knownAlgs are benchdnn's reduction algorithms, by every spelling.
var knownAlgs = map[string]string{}

func init() {
	for _, a := range []string{"amax", "max", "min", "sum", "mul", "mean", "norm_lp_max", "norm_lp_sum",
		"norm_lp_power_p_max", "norm_lp_power_p_sum"} {
		knownAlgs[a] = a
		knownAlgs["reduction_"+a] = a
	}
}

func parseAlgList(a Arg, v string, def []string) ([]string, error) {
	items := splitList(v)
	if items == nil {
		return def, nil
	}
	out := make([]string, len(items))
	for i, s := range items {
		c, ok := knownAlgs[strings.ToLower(s)]
		if !ok {
			return nil, inputErr(a, "--alg: unknown reduction algorithm %q", s)
		}
		out[i] = c
	}
	return out, nil
}

func parsePostOpsList(a Arg, v string) ([]string, error) {
	if v == "" {
		return []string{""}, nil
	}
	items := strings.Split(v, ",")
	for _, s := range items {
		if _, err := ParsePostOps(s); err != nil {
			return nil, wrapInput(a, err)
		}
	}
	return items, nil
}

// implMatches reports whether an implementation name contains any of the
// given substrings (benchdnn's --impl/--skip-impl semantics).
func implMatches(impl string, list []string) bool {
	for _, s := range list {
		s = strings.Trim(s, `"'`)
		if s != "" && strings.Contains(impl, s) {
			return true
		}
	}
	return false
}

func isStatus(err error, s status.Status) bool { return errors.Is(err, s) }

package bench

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/partition"
)

// Stats counts results the way benchdnn's summary line does.
type Stats struct {
	Tests, Passed, Skipped, Mistrusted, Unimplemented, InvalidArguments, Failed, Listed int
}

// runner holds the state of one gdnnbench invocation.
type runner struct {
	out, errw io.Writer
	g         globalSettings
	driver    string // "reduction", "graph", "softmax", "lnorm" or "gnorm"
	red       redSettings
	gr        graphSettings
	// norm are the normalization drivers' settings, each made when its
	// driver is first chosen (normS).
	norm map[string]*normSettings
	// normBackend, when set (by tests), builds what normalization problems
	// run on in place of gdnn's graph (graphNormBackend).
	normBackend normBackendFunc
	stats       Stats
	depth       int
	// trailing are the options read since the last problem (the whole-run
	// ones and --batch aside): at the end, options no problem followed.
	trailing []Arg
	// wholeRunSet: the whole-run options were taken from the dry pass.
	wholeRunSet bool
	perfTpls    map[string]bool // templates whose header was printed
	bw          *bwProbe
	rows        []tableRow
	prog        *progress // nil in a counting pass
	// counting: the dry pass that reads every argument before the run (dryRun).
	counting bool
	started  time.Time
	perfMin  float64 // total of min times, ms (benchdnn's "total perf")
	perfAvg  float64
	summary  runSummary
	firsts   map[string]firstRun // first timing of each repro line (checkTiming)
	noisy    int                 // problems warned about by checkTiming
	plotPts  []plotPoint         // timed problems, for --plot
	load     float64             // load average at the start of the run
	timed    int                 // problems timed (P mode)
	// plotProbes are the probes plotPts were compared with.
	plotProbes []*bwProbe
	// caches are the CPU's data caches, once cachesRead (cacheLevels).
	caches     []cacheLevel
	cachesRead bool
	// srcOverride, when set (by tests), replaces the src data of every
	// correctness check after the fill, so that chosen values (every 8-bit
	// value, ties, sums past the s32 range) go through the whole driver.
	srcOverride func(src buffer, dims, strides []int64)
	// files are the batch and case files read so far, by path, shared
	// with the dry pass (readOnce).
	files map[string][]byte
}

// wholeRunOptions are the options that say how the whole run is
// reported, not how a problem runs: --plot (the chart written at the
// end), --summary (the sections printed before the tests line) and
// --table (the table printed at the end; "only" also drops the lines of
// problems that passed). Each takes the last value given anywhere on the
// command line or in a batch file, before or after the problems (the dry
// pass finds it). Every other option applies, as in benchdnn, to the
// problems that follow it.
var wholeRunOptions = map[string]bool{"plot": true, "summary": true, "table": true}

// wholeRunFrom takes the whole-run options' final values from the dry
// pass dry; the run then skips them where they stand.
func (r *runner) wholeRunFrom(dry *runner) {
	r.g.plot, r.g.summary = dry.g.plot, dry.g.summary
	r.g.table, r.g.tableOnly = dry.g.table, dry.g.tableOnly
	r.wholeRunSet = true
}

// dryRun reads args as the run will, without compiling, running or
// printing anything, and returns the dry runner (its
// problem count and final whole-run options) or the first malformed
// argument's error. The files it reads are kept in files for the run.
// A panic in the dry pass gives neither (the run reports it).
func dryRun(args []Arg, files map[string][]byte) (c *runner, err error) {
	c = newRunner(io.Discard, io.Discard)
	c.counting, c.files = true, files
	defer func() {
		if recover() != nil {
			c, err = nil, nil
		}
	}()
	err = c.process(args)
	return c, err
}

// trailingWarning says which options after the last problem had no
// problem to apply to ("" when none).
func trailingWarning(opts []Arg) string {
	if len(opts) == 0 {
		return ""
	}
	const most = 3
	var names []string
	for i, a := range opts {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(opts)-most))
			break
		}
		names = append(names, fmt.Sprintf("%s (%s)", a.Text, a.Where))
	}
	return "no problem follows " + strings.Join(names, ", ") +
		": options apply to the problems after them (only --plot, --summary and --table apply to the whole run wherever they stand)"
}

// maxBatchDepth bounds nested --batch files (a file including itself).
const maxBatchDepth = 16

// errHelp ends the run successfully after --help.
var errHelp = errors.New("help")

func newRunner(stdout, stderr io.Writer) *runner {
	r := &runner{out: stdout, errw: stderr, g: defaultGlobals(), perfTpls: map[string]bool{}, bw: newBWProbe(),
		started: time.Now(), files: map[string][]byte{}}
	r.red = defaultRed(TemplateDef)
	r.gr = defaultGraph(TemplateDef)
	return r
}

// Main runs gdnnbench with args (without the program name), writing
// results to stdout and diagnostics to stderr. It returns the exit status:
// 0 when every problem passed or was honestly skipped/unimplemented, 1 when
// any failed (or was rejected as invalid), 2 for malformed input (unknown
// options, bad values, unreadable batch files) or an internal error.
func Main(args []string, stdout, stderr io.Writer) int {
	return run(CommandArgs(args), stdout, stderr)
}

// MainBatch runs the batch text (named name in messages) as if it were
// given with --batch, followed by args.
func MainBatch(text, name string, args []string, stdout, stderr io.Writer) int {
	toks := TokenizeBatch(text, name, "")
	return run(append(toks, CommandArgs(args)...), stdout, stderr)
}

func run(args []Arg, stdout, stderr io.Writer) (status int) {
	return runWith(args, stdout, stderr, nil)
}

// runWith is run with setup applied to the runner first (tests).
func runWith(args []Arg, stdout, stderr io.Writer, setup func(*runner)) (status int) {
	r := newRunner(stdout, stderr)
	if setup != nil {
		setup(r)
	}
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "gdnnbench: internal error: %v\n", p)
			status = 2
		}
	}()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "gdnnbench: no arguments (try --help)")
		return 2
	}
	// The dry pass reads every option and batch file first: malformed
	// input is refused before any problem runs, and the whole-run
	// options take their last values wherever they stand.
	dry, err := dryRun(args, r.files)
	if errors.Is(err, errHelp) {
		io.WriteString(stdout, HelpText)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "gdnnbench: %v (no problem was run)\n", err)
		return 2
	}
	total := 0
	if dry != nil {
		total = dry.stats.Tests
		r.wholeRunFrom(dry)
	}
	r.prog = newProgress(stderr, total)
	r.prog.tickEvery(progressTTYEvery)
	defer r.prog.close() // before the recover above prints
	r.load = loadAvg()
	err = r.process(args)
	r.prog.close()
	if errors.Is(err, errHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "gdnnbench: %v\n", err)
		return 2
	}
	if w := trailingWarning(r.trailing); w != "" {
		fmt.Fprintf(stderr, "gdnnbench: warning: %s\n", w)
	}
	if err := r.finish(); err != nil {
		fmt.Fprintf(stderr, "gdnnbench: %v\n", err)
		return 2
	}
	if r.stats.Failed > 0 || r.stats.InvalidArguments > 0 {
		return 1
	}
	return 0
}

// finish prints the table (if asked) and benchdnn's summary lines, and
// writes the --plot chart.
func (r *runner) finish() error {
	if r.g.table && len(r.rows) > 0 {
		printTable(r.out, r.rows)
	}
	r.summary.print(r.out, r.g.summary, r.g.mode.Perf)
	r.warnBusy()
	if r.noisy > 0 {
		fmt.Fprintf(r.errw, "gdnnbench: warning: %d of %d problems had unreliable timings (see above): something else is using "+
			"the machine (check with top), it is throttling, or short problems need a longer --max-ms-per-prb; "+
			"their figures are not worth comparing\n", r.noisy, r.stats.Tests)
	}
	s := r.stats
	fmt.Fprintf(r.out, "tests:%d passed:%d skipped:%d mistrusted:%d unimplemented:%d invalid_arguments:%d failed:%d listed:%d\n",
		s.Tests, s.Passed, s.Skipped, s.Mistrusted, s.Unimplemented, s.InvalidArguments, s.Failed, s.Listed)
	if r.g.mode.Perf {
		fmt.Fprintf(r.out, "total perf: min(ms):%s avg(ms):%s\n", fmtNum(r.perfMin), fmtNum(r.perfAvg))
	}
	fmt.Fprintf(r.out, "total: %.2fs\n", time.Since(r.started).Seconds())
	if r.g.plot != "" {
		return r.writePlot()
	}
	return nil
}

// process handles a list of tokens in order: options change the state,
// problem descriptors (and --case for the graph driver) run.
func (r *runner) process(args []Arg) error {
	for _, a := range args {
		if err := r.processOne(a); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) processOne(a Arg) error {
	t := a.Text
	if t == "--help" || t == "-h" {
		io.WriteString(r.out, HelpText)
		return errHelp
	}
	if strings.HasPrefix(t, "-v") && !strings.HasPrefix(t, "--") {
		n, err := strconv.Atoi(t[2:])
		if err != nil || n < 0 {
			return inputErr(a, "verbosity %q: want -vN with N a non-negative integer", t)
		}
		r.g.verbose = n
		r.trailing = append(r.trailing, a)
		return nil
	}
	if !strings.HasPrefix(t, "--") {
		if strings.HasPrefix(t, "-") {
			return inputErr(a, "options should be passed with the `--` prefix, got %q", t)
		}
		r.trailing = nil
		switch r.driver {
		case "reduction":
			return r.runReductionDesc(a)
		case "graph":
			return inputErr(a, "the graph driver takes its case as --case=FILE.json, not %q", t)
		case "softmax", "lnorm", "gnorm":
			return r.runNormDesc(a)
		}
		return inputErr(a, "problem %q given before a driver was chosen (--reduction, --graph, --softmax, --lnorm or --gnorm)", t)
	}
	name, val, hasVal := strings.Cut(t[2:], "=")
	if wholeRunOptions[name] {
		if r.wholeRunSet {
			// The dry pass has read every occurrence and set the last.
			return nil
		}
	} else if name != "batch" {
		r.trailing = append(r.trailing, a)
	}
	needVal := func() error {
		if !hasVal {
			return inputErr(a, "option --%s needs a value (--%s=VALUE)", name, name)
		}
		return nil
	}
	switch name {
	case "reduction", "graph", "softmax", "lnorm", "gnorm":
		if hasVal {
			return inputErr(a, "driver option --%s takes no value", name)
		}
		r.driver = name
		return nil
	case "batch":
		if err := needVal(); err != nil {
			return err
		}
		if r.depth >= maxBatchDepth {
			return inputErr(a, "--batch=%s: batch files nest deeper than %d (a file including itself?)", val, maxBatchDepth)
		}
		toks, err := r.readBatch(a, val)
		if err != nil {
			return err
		}
		r.depth++
		err = r.process(toks)
		r.depth--
		return err
	case "reset":
		if hasVal {
			return inputErr(a, "--reset takes no value")
		}
		r.red = defaultRed(r.red.perfTpl)
		r.gr = defaultGraph(r.gr.perfTpl)
		if normDrivers[r.driver] {
			s := r.normS()
			*s = defaultNorm(r.driver, s.perfTpl)
		}
		return nil
	}
	if handled, err := r.globalOption(a, name, val, hasVal); handled || err != nil {
		return err
	}
	switch r.driver {
	case "reduction":
		if handled, err := r.reductionOption(a, name, val, hasVal); handled || err != nil {
			return err
		}
	case "graph":
		if handled, err := r.graphOption(a, name, val, hasVal); handled || err != nil {
			return err
		}
	case "softmax", "lnorm", "gnorm":
		if handled, err := r.normOption(a, name, val, hasVal); handled || err != nil {
			return err
		}
	}
	if why, ok := benchdnnUnimplemented[name]; ok {
		return &InputError{Where: a.Where, Err: status.Errorf(status.Unimplemented,
			"%s: benchdnn's --%s is not implemented by gdnnbench: %s", t, name, why)}
	}
	if r.driver == "" {
		return inputErr(a, "unknown option %q (driver options need a driver first: --reduction, --graph, --softmax, --lnorm or --gnorm)", t)
	}
	return inputErr(a, "unknown option for the %s driver: %q", r.driver, t)
}

// benchdnnUnimplemented are benchdnn's common options that gdnnbench does
// not take (knobs_common.md), with why: an input error that says so, not
// "unknown option".
var benchdnnUnimplemented = map[string]string{
	"buffer-prefix":      "buffers hold gdnnbench's own exact and random fills",
	"mem-check":          "a problem larger than half the memory gdnn may use is always SKIPPED",
	"stream-kind":        "a DPC++ and OpenCL setting; gdnn runs on the CPU",
	"num-streams":        "a GPU setting; gdnn runs on the CPU",
	"execution-mode":     "a SYCL Graph setting; gdnn runs on the CPU",
	"attr-same-pd-check": "gdnn has no primitive descriptors (--impl and --skip-impl filter by implementation)",
	"check-ref-impl":     "gdnn has no reference implementation; --skip-impl=interp leaves out what its interpreter runs",
	"fast-ref":           "the reference is always gdnnbench's float64 one",
	"fast-ref-gpu":       "the reference is always gdnnbench's float64 one",
	"cold-cache":         "executes are timed back to back, with whatever the caches hold",
	"ctx-init":           "gdnn's threads are set by --threads",
	"ctx-exe":            "gdnn's threads are set by --threads",
}

// globalOption handles options that --reset keeps.
func (r *runner) globalOption(a Arg, name, val string, hasVal bool) (bool, error) {
	known := map[string]bool{"mode": true, "max-ms-per-prb": true, "fix-times-per-prb": true, "max-isa": true,
		"verbose": true, "canonical": true, "start": true, "repeats-per-prb": true, "global-impl": true,
		"global-skip-impl": true, "table": true, "case-dir": true, "bw-probe": true, "allow-enum-tags-only": true,
		"engine": true, "threads": true, "inputs-dir": true, "summary": true, "plot": true, "mode-modifier": true, "memory-kind": true, "cpu-isa-hints": true}
	if !known[name] {
		return false, nil
	}
	if !hasVal && name != "table" {
		return true, inputErr(a, "option --%s needs a value (--%s=VALUE)", name, name)
	}
	switch name {
	case "mode":
		m, err := ParseMode(val)
		if err != nil {
			return true, wrapInput(a, err)
		}
		if m.Fast {
			r.g.maxMs = 10
		}
		r.g.mode = m
	case "max-ms-per-prb":
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f != f {
			return true, inputErr(a, "--max-ms-per-prb: %q is not a number", val)
		}
		r.g.maxMs = min(max(f, 10), 60e3)
	case "fix-times-per-prb":
		n, err := parseIntValue(a, name, val)
		if err != nil {
			return true, err
		}
		if n < 0 {
			return true, inputErr(a, "--fix-times-per-prb: %d is negative (0: time by --max-ms-per-prb)", n)
		}
		r.g.fixTimes = int(min(n, 1<<30))
	case "max-isa":
		spec := val
		if spec == "" {
			// The default: no cap of its own, GDNN_MAX_CPU_ISA's only
			// (jit.SetMaxISA never lifts it).
			spec = "all"
		}
		isa, err := jit.ParseISA(spec)
		if err != nil {
			return true, inputErr(a, "--max-isa: %q is not one of avx512 (or avx512_*), avx2 (or avx2_*), neon, none (interp) or all", val)
		}
		if !r.counting { // a dry pass leaves the process's ISA cap alone
			jit.SetMaxISA(isa)
			// Compiled partitions cached under the old cap would keep its kernels.
			prev, _ := partition.SetCompiledPartitionCacheCapacity(0)
			partition.SetCompiledPartitionCacheCapacity(prev)
		}
		r.g.maxISA = strings.ToLower(val)
	case "verbose":
		n, err := parseIntValue(a, name, val)
		if err != nil || n < 0 {
			return true, inputErr(a, "--verbose: %q is not a non-negative integer", val)
		}
		r.g.verbose = int(n)
	case "canonical":
		b, err := parseBoolValue(a, name, val)
		r.g.canonical = b
		return true, err
	case "start":
		n, err := parseIntValue(a, name, val)
		if err == nil && n < 0 {
			return true, inputErr(a, "--start: %d is negative (problems count from 0)", n)
		}
		r.g.start = int(min(n, 1<<30))
		return true, err
	case "repeats-per-prb":
		n, err := parseIntValue(a, name, val)
		if err == nil && n < 1 {
			return true, inputErr(a, "--repeats-per-prb: %d, want 1 or more", n)
		}
		r.g.repeats = int(min(n, 1<<20))
		return true, err
	case "global-impl":
		r.g.globalImpl, r.g.globalSkip = splitList(val), nil
	case "global-skip-impl":
		r.g.globalSkip, r.g.globalImpl = splitList(val), nil
	case "table":
		if !hasVal {
			val = "true"
		}
		if val == "only" {
			r.g.table, r.g.tableOnly = true, true
			return true, nil
		}
		b, err := parseBoolValue(a, name, val)
		r.g.table, r.g.tableOnly = b, false
		return true, err
	case "case-dir":
		r.g.caseDir = val
	case "inputs-dir":
		r.g.inputsDir = val
	case "plot":
		if val != "" {
			if err := checkPlotPath(val); err != nil {
				return true, inputErr(a, "%v", err)
			}
		}
		r.g.plot = val
	case "summary":
		set, err := parseSummary(val)
		if err != nil {
			return true, wrapInput(a, err)
		}
		r.g.summary = set
	case "threads":
		n, err := parseIntValue(a, name, val)
		if err != nil || n < 0 || n > 4096 {
			return true, inputErr(a, "--threads: %q is not a thread count in [0, 4096]", val)
		}
		if !r.counting {
			jit.SetThreads(int(n))
		}
		r.g.threads = int(n)
	case "bw-probe":
		if val != "auto" && val != "go" && val != "lib" {
			return true, inputErr(a, "--bw-probe: %q is not auto, go or lib", val)
		}
		r.g.bwProbe = val
		r.bw = newBWProbe() // measurements of the other probe do not carry over
	case "allow-enum-tags-only":
		b, err := parseBoolValue(a, name, val)
		r.g.allowEnumTag = b
		return true, err
	case "engine":
		if kind, _, _ := strings.Cut(val, ":"); !strings.EqualFold(kind, "cpu") {
			return true, inputErr(a, "--engine=%s: gdnn runs on the cpu engine only", val)
		}
	case "mode-modifier", "memory-kind", "cpu-isa-hints":
		// How benchdnn creates primitives, GPU memory kinds and ISA
		// hints for oneDNN's dispatcher: none changes what gdnn
		// computes (--max-isa caps its JIT), so they are accepted and
		// have no effect, but for the graph driver's refusal of M.
		if name == "mode-modifier" {
			r.g.modeModifier = val
		}
	}
	return true, nil
}

// reductionOption handles the reduction driver's knobs.
func (r *runner) reductionOption(a Arg, name, val string, hasVal bool) (bool, error) {
	s := &r.red
	def := defaultRed(s.perfTpl)
	var err error
	switch name {
	case "sdt":
		s.sdt, err = parseDTList(a, name, val, def.sdt)
	case "ddt":
		s.ddt, err = parseDTList(a, name, val, def.ddt)
	case "stag":
		s.stag, err = parseTagList(a, name, val, def.stag)
	case "dtag":
		s.dtag, err = parseTagList(a, name, val, def.dtag)
	case "alg":
		s.alg, err = parseAlgList(a, val, def.alg)
	case "p":
		s.p, err = parseFloatList(a, name, val, def.p)
	case "eps":
		s.eps, err = parseFloatList(a, name, val, def.eps)
	case "attr-post-ops":
		s.postOps, err = parsePostOpsList(a, val)
	case "attr-scales", "attr-zero-points", "attr-scratchpad", "attr-fpmath", "attr-deterministic",
		"attr-acc-mode", "attr-rounding-mode", "attr-dropout", "ctx-init", "ctx-exe", "inplace":
		if hasVal {
			if err := checkKnob(name, val); err != nil {
				return true, inputErr(a, "--%s: %v", name, err)
			}
			s.knobs = maps.Clone(s.knobs)
			if s.knobs == nil {
				s.knobs = map[string]string{}
			}
			s.knobs[name] = val
			if val == "" {
				delete(s.knobs, name)
			}
		}
	default:
		return r.commonDriverOption(a, name, val, hasVal, &s.match, &s.impl, &s.skip, &s.perfTpl, TemplateCSV)
	}
	if err == nil && !hasVal {
		err = inputErr(a, "option --%s needs a value (--%s=VALUE)", name, name)
	}
	return true, err
}

// commonDriverOption handles --match, --impl, --skip-impl and
// --perf-template, which both drivers have.
func (r *runner) commonDriverOption(a Arg, name, val string, hasVal bool, match **regexp.Regexp,
	impl, skip *[]string, tpl *string, csv string) (bool, error) {
	switch name {
	case "match", "impl", "skip-impl", "perf-template":
	default:
		return false, nil
	}
	if !hasVal {
		return true, inputErr(a, "option --%s needs a value (--%s=VALUE)", name, name)
	}
	switch name {
	case "match":
		if val == "" {
			*match = nil
			return true, nil
		}
		re, err := compileMatch(val)
		if err != nil {
			return true, wrapInput(a, err)
		}
		*match = re
	case "impl":
		*impl, *skip = splitList(val), nil
	case "skip-impl":
		*skip, *impl = splitList(val), nil
	case "perf-template":
		t := resolveTemplate(val, csv)
		if val == "" {
			t = TemplateDef
		}
		if err := ValidateTemplate(t); err != nil {
			return true, wrapInput(a, err)
		}
		*tpl = t
	}
	return true, nil
}

// globalRepro is the part of a repro line before the driver: the global
// options that differ from their defaults.
func (r *runner) globalRepro() string {
	var b strings.Builder
	d := defaultGlobals()
	if r.g.canonical || r.g.mode != d.mode {
		fmt.Fprintf(&b, "--mode=%s ", r.g.mode)
	}
	if r.g.canonical || (r.g.maxMs != d.maxMs && !r.g.mode.Fast) {
		fmt.Fprintf(&b, "--max-ms-per-prb=%s ", fmtNum(r.g.maxMs))
	}
	if r.g.canonical || r.g.fixTimes != 0 {
		fmt.Fprintf(&b, "--fix-times-per-prb=%d ", r.g.fixTimes)
	}
	if r.g.maxISA != "" {
		fmt.Fprintf(&b, "--max-isa=%s ", r.g.maxISA)
	}
	if r.g.threads != 0 {
		fmt.Fprintf(&b, "--threads=%d ", r.g.threads)
	}
	return b.String()
}

// implFilter says whether an implementation is excluded by --impl,
// --skip-impl or their --global- forms (which win).
func (r *runner) implFilter(impl string, incl, excl []string) string {
	if len(r.g.globalImpl) > 0 || len(r.g.globalSkip) > 0 {
		incl, excl = r.g.globalImpl, r.g.globalSkip
	}
	if len(incl) > 0 && !implMatches(impl, incl) {
		return fmt.Sprintf("implementation %s is not in --impl=%s", impl, strings.Join(incl, ","))
	}
	if implMatches(impl, excl) {
		return fmt.Sprintf("implementation %s hit --skip-impl=%s", impl, strings.Join(excl, ","))
	}
	return ""
}

// result is the outcome of one problem.
type result struct {
	state  string // PASSED, SKIPPED, UNIMPLEMENTED, INVALID_ARGUMENTS, FAILED, LISTED, ...
	reason string
	quiet  bool // skipped by --start: counted, printed only with -v1
	impl   string
	detail []string // lines printed before the result line (mismatches)
	perf   *PerfData
}

// stateOf classifies a library error: unimplemented features and data
// types are UNIMPLEMENTED, other rejections INVALID_ARGUMENTS, run-time
// failures FAILED.
func stateOf(err error) string {
	switch {
	case errors.Is(err, status.Unimplemented), errors.Is(err, status.InvalidDataType):
		return "UNIMPLEMENTED"
	case errors.Is(err, status.OutOfMemory):
		return "SKIPPED"
	case errors.Is(err, status.RuntimeError):
		return "FAILED"
	}
	return "INVALID_ARGUMENTS"
}

// report prints and counts one result.
func (r *runner) report(idx int, repro string, res result, tpl string) {
	switch res.state {
	case "PASSED", "EXECUTED", "INITIALIZED":
		r.stats.Passed++
	case "SKIPPED":
		r.stats.Skipped++
	case "UNIMPLEMENTED":
		r.stats.Unimplemented++
	case "INVALID_ARGUMENTS":
		r.stats.InvalidArguments++
	case "LISTED":
		r.stats.Listed++
	case "MISTRUSTED":
		r.stats.Mistrusted++
	default:
		r.stats.Failed++
	}
	reason := ""
	if res.reason != "" {
		reason = " (" + res.reason + ")"
	}
	line := fmt.Sprintf("%d:%s%s __REPRO: %s", idx, res.state, reason, repro)
	r.summary.add(idx, res, line)
	r.prog.clear()
	for _, l := range res.detail {
		fmt.Fprintln(r.out, l)
	}
	if res.quiet && r.g.verbose < 1 {
		r.prog.update(r.stats.Tests)
		return
	}
	if res.perf != nil {
		r.perfMin += res.perf.Time.Min
		r.perfAvg += res.perf.Time.Avg
		r.checkTiming(idx, repro, res.perf.Time)
		r.checkProbe(idx, res.perf)
		r.timed++
		if r.g.plot != "" {
			r.addPlotPoint(res.perf)
		}
	}
	if r.g.tableOnly && res.state == "PASSED" {
		// The table shows it; lines are kept for what needs a look.
		r.prog.update(r.stats.Tests)
		return
	}
	// In pure performance mode benchdnn prints only the perf line for
	// problems that ran.
	if !(r.g.mode.Perf && !r.g.mode.Corr && res.perf != nil && res.state == "PASSED") {
		fmt.Fprintln(r.out, line)
	}
	if res.perf != nil {
		if !r.perfTpls[tpl] {
			r.perfTpls[tpl] = true
			fmt.Fprintf(r.out, "Output template: %s\n%s\n", tpl, TemplateHeader(tpl))
		}
		line, err := ExpandTemplate(tpl, res.perf)
		if err != nil {
			line = err.Error()
		}
		fmt.Fprintln(r.out, line)
	}
	r.prog.update(r.stats.Tests)
}

// dropped says whether --match drops the problem whose repro line is
// repro. Like benchdnn, it matches the problem string: the repro line
// from the driver's options on, without the global options and the
// driver name. A dropped problem is neither run nor counted.
func dropped(match *regexp.Regexp, driver, repro string) bool {
	if match == nil {
		return false
	}
	_, prb, ok := strings.Cut(repro, "--"+driver+" ")
	if !ok {
		prb = repro
	}
	return !match.MatchString(prb)
}

// threads is the number of threads gdnn's worker pool uses.
func threads() int { return jit.Threads() }

// reasonOf is an error's message without the status prefix (the state
// already says it).
func reasonOf(err error) string {
	var ge *status.Error
	if errors.As(err, &ge) {
		return ge.Msg
	}
	return err.Error()
}

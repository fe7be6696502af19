package bench

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gdnn/gdnn/internal/status"
)

// The normalization drivers: benchdnn's --softmax, --lnorm and --gnorm.
// Their options, defaults, the order in which list-valued options
// multiply problems and their repro lines follow benchdnn's
// (tests/benchdnn/{softmax,lnorm,gnorm}/bench_*.cpp and *_aux.cpp), so
// that oneDNN's batch files run unchanged and a repro line runs in either
// tool. normrun.go builds and checks each problem.

// normDrivers are the drivers this file serves.
var normDrivers = map[string]bool{"softmax": true, "lnorm": true, "gnorm": true}

// normAttrOrder are benchdnn's attribute options in the order
// settings_attributes_t::init nests them (the first one outermost).
var normAttrOrder = []string{"attr-scales", "attr-zero-points", "attr-precomputed-reductions", "attr-post-ops",
	"attr-scratchpad", "attr-fpmath", "attr-acc-mode", "attr-deterministic", "attr-dropout", "attr-rounding-mode"}

// normAttrRepro are the same options in the order benchdnn's attr_t
// printer writes them into a repro line.
var normAttrRepro = []string{"attr-scales", "attr-zero-points", "attr-precomputed-reductions", "attr-post-ops",
	"attr-scratchpad", "attr-fpmath", "attr-acc-mode", "attr-rounding-mode", "attr-deterministic", "attr-dropout"}

// normAttrDefault is the value of an attribute option that benchdnn
// leaves out of a repro line ("" everywhere: no value given).
var normAttrDefault = map[string]string{"attr-scratchpad": "library", "attr-fpmath": "strict",
	"attr-acc-mode": "strict", "attr-deterministic": "false"}

// normSettings are one normalization driver's knobs; every list
// multiplies the problems run. Data types and tags are kept as benchdnn
// spells them: a type gdnn does not have (f64, f8_e5m2) is a problem
// reported UNIMPLEMENTED, not a malformed option.
type normSettings struct {
	driver     string
	dir        []string
	sdt, ddt   []string   // softmax
	stag, dtag []string   // softmax
	alg        []string   // softmax: SOFTMAX, LOGSOFTMAX, SOFTMAX_INF_AS_ZERO
	axis       []int64    // softmax
	dt         [][]string // lnorm, gnorm: SRC[:DST]
	tag        [][]string // lnorm, gnorm: SRC[:DST]
	statTag    []string   // lnorm
	ssDT       []string   // lnorm
	flags      []string   // lnorm (GCHM), gnorm (GCH), in benchdnn's order
	mb         []int64    // softmax, gnorm
	inplace    []bool
	attrs      map[string][]string // by option name (normAttrOrder); [""] when not given
	ctxInit    []string
	ctxExe     []string
	match      *regexp.Regexp
	impl, skip []string
	perfTpl    string
}

func defaultNorm(driver, perfTpl string) normSettings {
	s := normSettings{driver: driver, dir: []string{"FWD_D"}, inplace: []bool{false}, attrs: map[string][]string{},
		ctxInit: []string{""}, ctxExe: []string{""}, perfTpl: perfTpl}
	for _, n := range normAttrOrder {
		s.attrs[n] = []string{""}
	}
	switch driver {
	case "softmax":
		s.sdt, s.ddt = []string{"f32"}, []string{"f32"}
		s.stag, s.dtag = []string{"abx"}, []string{"any"}
		s.alg, s.axis, s.mb = []string{"SOFTMAX"}, []int64{1}, []int64{0}
	case "lnorm":
		s.dt, s.tag = [][]string{{"f32"}}, [][]string{{"abx", "any"}}
		s.statTag, s.ssDT, s.flags = []string{"any"}, []string{"f32"}, []string{""}
	case "gnorm":
		s.dt, s.tag = [][]string{{"f32"}}, [][]string{{"abx", "any"}}
		s.flags, s.mb = []string{""}, []int64{0}
	}
	return s
}

// normCSV are the drivers' csv perf templates, benchdnn's columns for
// each, with bandwidth in place of GFLOPS (the ops are memory bound).
var normCSV = map[string]string{
	"softmax": "perf,%engine%,%impl%,%name%,%dir%,%sdt%,%ddt%,%stag%,%dtag%,%alg%,%axis%,%attr%,%DESC%,%-time%,%-Gbw%,%-bwpct%,%0time%,%0Gbw%,%~time%",
	"lnorm":   "perf,%engine%,%impl%,%name%,%dir%,%dt%,%tag%,%stat_tag%,%flags%,%attr%,%DESC%,%-time%,%-Gbw%,%-bwpct%,%0time%,%0Gbw%,%~time%",
	"gnorm":   "perf,%engine%,%impl%,%name%,%dir%,%dt%,%tag%,%flags%,%attr%,%DESC%,%-time%,%-Gbw%,%-bwpct%,%0time%,%0Gbw%,%~time%",
}

// benchdnnDTs are the data type names benchdnn's options take.
var benchdnnDTs = []string{"f32", "f64", "bf16", "f16", "s32", "s8", "u8", "s4", "u4",
	"f8_e5m2", "f8_e4m3", "f4_e2m1", "f4_e3m0", "e8m0"}

// benchdnnDirs are benchdnn's propagation kinds (--dir).
var benchdnnDirs = []string{"FWD_B", "FWD_D", "FWD_I", "BWD_D", "BWD_DW", "BWD_W", "BWD_WB"}

// softmaxAlgs maps benchdnn's softmax algorithm spellings (either case)
// to the name its repro line prints.
var softmaxAlgs = map[string]string{
	"softmax": "SOFTMAX", "softmax_accurate": "SOFTMAX",
	"logsoftmax": "LOGSOFTMAX", "softmax_log": "LOGSOFTMAX",
	"softmax_inf_as_zero": "SOFTMAX_INF_AS_ZERO", "softmax_accurate_inf_as_zero": "SOFTMAX_INF_AS_ZERO",
}

// normOption handles a normalization driver's knobs.
func (r *runner) normOption(a Arg, name, val string, hasVal bool) (bool, error) {
	s := r.normS()
	def := defaultNorm(s.driver, s.perfTpl)
	known := map[string][]string{
		"softmax": {"dir", "sdt", "ddt", "stag", "dtag", "alg", "axis", "inplace", "mb"},
		"lnorm":   {"dir", "dt", "tag", "stat_tag", "ss_dt", "flags", "inplace"},
		"gnorm":   {"dir", "dt", "tag", "flags", "inplace", "mb"},
	}[s.driver]
	_, isAttr := s.attrs[name]
	if !slices.Contains(known, name) && !isAttr && name != "ctx-init" && name != "ctx-exe" {
		return r.commonDriverOption(a, name, val, hasVal, &s.match, &s.impl, &s.skip, &s.perfTpl, normCSV[s.driver])
	}
	if !hasVal {
		return true, inputErr(a, "option --%s needs a value (--%s=VALUE)", name, name)
	}
	items := splitList(val)
	var err error
	switch {
	case isAttr:
		s.attrs[name], err = parseAttrList(a, name, val)
		return true, err
	case name == "ctx-init" || name == "ctx-exe":
		l := []string{""}
		if items != nil {
			l = items
			for _, it := range items {
				if err := checkCtx(it); err != nil {
					return true, inputErr(a, "--%s: %v", name, err)
				}
			}
		}
		if name == "ctx-init" {
			s.ctxInit = l
		} else {
			s.ctxExe = l
		}
		return true, nil
	}
	switch name {
	case "dir":
		s.dir, err = parseNames(a, name, items, def.dir, func(v string) (string, bool) {
			u := strings.ToUpper(v)
			return u, slices.Contains(benchdnnDirs, u)
		}, "FWD_D, FWD_I, BWD_D, BWD_DW, ...")
	case "sdt", "ddt", "ss_dt":
		d := map[string][]string{"sdt": def.sdt, "ddt": def.ddt, "ss_dt": def.ssDT}[name]
		var l []string
		l, err = parseNames(a, name, items, d, dtName, strings.Join(benchdnnDTs, ", "))
		switch name {
		case "sdt":
			s.sdt = l
		case "ddt":
			s.ddt = l
		default:
			s.ssDT = l
		}
	case "stag", "dtag", "stat_tag":
		d := map[string][]string{"stag": def.stag, "dtag": def.dtag, "stat_tag": def.statTag}[name]
		var l []string
		l, err = parseNames(a, name, items, d, tagName(name == "stat_tag"), "a format tag such as abx, axb, any")
		switch name {
		case "stag":
			s.stag = l
		case "dtag":
			s.dtag = l
		default:
			s.statTag = l
		}
	case "alg":
		s.alg, err = parseNames(a, name, items, def.alg, func(v string) (string, bool) {
			c, ok := softmaxAlgs[strings.ToLower(v)]
			return c, ok
		}, "SOFTMAX (softmax_accurate), LOGSOFTMAX (softmax_log), SOFTMAX_INF_AS_ZERO")
	case "axis", "mb":
		d := map[string][]int64{"axis": def.axis, "mb": def.mb}[name]
		l := d
		if items != nil {
			l = nil
			for _, it := range items {
				n, perr := strconv.ParseInt(it, 10, 64)
				if perr != nil || n < 0 || n > 1<<40 {
					return true, inputErr(a, "--%s: %q is not a non-negative integer", name, it)
				}
				l = append(l, n)
			}
		}
		if name == "axis" {
			s.axis = l
		} else {
			s.mb = l
		}
	case "inplace":
		s.inplace = def.inplace
		if items != nil {
			s.inplace = nil
			for _, it := range items {
				b, berr := parseBoolValue(a, name, it)
				if berr != nil {
					return true, berr
				}
				s.inplace = append(s.inplace, b)
			}
		}
	case "dt", "tag":
		d := def.dt
		check := dtName
		want := strings.Join(benchdnnDTs, ", ")
		if name == "tag" {
			d, check, want = def.tag, tagName(false), "format tags such as abx, axb, any"
		}
		var l [][]string
		l, err = parseMulti(a, name, val, d, check, want)
		if name == "dt" {
			s.dt = l
		} else {
			s.tag = l
		}
	case "flags":
		allowed := "GCH"
		if s.driver == "lnorm" {
			allowed = "GCHM"
		}
		s.flags = def.flags
		if items != nil {
			s.flags = nil
			for _, it := range items {
				f, ferr := canonicalFlags(it, allowed)
				if ferr != nil {
					return true, inputErr(a, "--flags: %v", ferr)
				}
				s.flags = append(s.flags, f)
			}
		}
	}
	return true, err
}

// normS returns the current normalization driver's settings, made on
// first use: as benchdnn's per-driver static settings, they persist
// when the driver is chosen again.
func (r *runner) normS() *normSettings {
	if r.norm == nil {
		r.norm = map[string]*normSettings{}
	}
	s := r.norm[r.driver]
	if s == nil {
		d := defaultNorm(r.driver, TemplateDef)
		s = &d
		r.norm[r.driver] = s
	}
	return s
}

// parseNames checks each item with canon (which returns its canonical
// spelling), an empty value giving the default.
func parseNames(a Arg, opt string, items, def []string, canon func(string) (string, bool), want string) ([]string, error) {
	if items == nil {
		return def, nil
	}
	out := make([]string, len(items))
	for i, it := range items {
		c, ok := canon(it)
		if !ok {
			return nil, inputErr(a, "--%s: unknown value %q (want %s)", opt, it, want)
		}
		out[i] = c
	}
	return out, nil
}

// parseMulti parses benchdnn's multi-vector options (--dt=SRC[:DST],...,
// --tag=SRC[:DST],...): 1 or 2 ':'-separated values per item, as
// benchdnn's verify_input requires of lnorm and gnorm.
func parseMulti(a Arg, opt, val string, def [][]string, canon func(string) (string, bool), want string) ([][]string, error) {
	items := splitList(val)
	if items == nil {
		return def, nil
	}
	var out [][]string
	for _, it := range items {
		parts := strings.Split(it, ":")
		if len(parts) > 2 || it == "" {
			return nil, inputErr(a, "--%s: %q: want SRC or SRC:DST", opt, it)
		}
		var l []string
		for _, p := range parts {
			c, ok := canon(p)
			if !ok {
				return nil, inputErr(a, "--%s: unknown value %q in %q (want %s)", opt, p, it, want)
			}
			l = append(l, c)
		}
		out = append(out, l)
	}
	return out, nil
}

func dtName(v string) (string, bool) { return v, slices.Contains(benchdnnDTs, v) }

// tagName checks a format tag; stats take "undef" too (benchdnn: no
// stats memory descriptor, the library chooses).
func tagName(stats bool) func(string) (string, bool) {
	return func(v string) (string, bool) {
		if v == "any" || (stats && v == "undef") {
			return v, true
		}
		_, err := ResolveTag(v, tagProbeRank(v))
		return v, err == nil || isStatus(err, status.Unimplemented)
	}
}

// canonicalFlags checks normalization flags against allowed and returns
// them in benchdnn's order (flags2str: G, C, H, M), which repro lines use.
func canonicalFlags(v, allowed string) (string, error) {
	for _, c := range v {
		if !strings.ContainsRune(allowed, c) {
			return "", fmt.Errorf("%q: flag %q is not one of %s", v, c, strings.Join(strings.Split(allowed, ""), ", "))
		}
	}
	var b strings.Builder
	for _, c := range "GCHM" {
		if strings.ContainsRune(v, c) {
			b.WriteRune(c)
		}
	}
	return b.String(), nil
}

// checkCtx checks a thread context, benchdnn's
// MAX_CONCURRENCY[:CORE_TYPE[:THREADS_PER_CORE]] or auto.
// isDefaultCtx reports whether a --ctx-init or --ctx-exe value is
// benchdnn's default, auto in every field: gdnn's own threads.
func isDefaultCtx(v string) bool {
	for _, f := range strings.Split(v, ":") {
		if f != "auto" {
			return false
		}
	}
	return true
}

// checkKnob checks the syntax of a reduction driver's attribute, context
// or inplace value, each item of a comma-separated list, as the
// normalization drivers do.
func checkKnob(name, val string) error {
	for _, it := range strings.Split(val, ",") {
		var err error
		switch {
		case it == "":
		case name == "ctx-init" || name == "ctx-exe":
			err = checkCtx(it)
		case name == "inplace":
			if !slices.Contains([]string{"true", "false", "1", "0"}, strings.ToLower(it)) {
				err = fmt.Errorf("%q is not a boolean (want true, false, 1 or 0)", it)
			}
		default:
			err = checkAttr(name, it)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkCtx(v string) error {
	for i, f := range strings.Split(v, ":") {
		if f == "auto" {
			continue
		}
		if _, err := strconv.Atoi(f); err != nil || i > 2 {
			return fmt.Errorf("%q is not MAX_CONCURRENCY[:CORE_TYPE[:THREADS_PER_CORE]] (integers or auto)", v)
		}
	}
	return nil
}

// parseAttrList parses a benchdnn attribute option's list (every item a
// problem variant; "" the default) and checks each item's syntax.
func parseAttrList(a Arg, name, val string) ([]string, error) {
	items := strings.Split(val, ",")
	for _, it := range items {
		if it == "" {
			continue
		}
		if err := checkAttr(name, it); err != nil {
			if name == "attr-post-ops" {
				// ParsePostOps names the post-ops and the entry itself, as
				// the reduction driver prints it.
				return nil, wrapInput(a, err)
			}
			return nil, inputErr(a, "--%s: %q: %s", name, it, reasonOf(err))
		}
	}
	return items, nil
}

// checkAttr checks one attribute value's syntax (knobs_attr.md).
func checkAttr(name, v string) error {
	floatOK := func(s string) bool { _, err := strconv.ParseFloat(s, 64); return err == nil }
	switch name {
	case "attr-post-ops":
		_, err := ParsePostOps(v)
		return err
	case "attr-scales", "attr-zero-points", "attr-precomputed-reductions":
		// ARG:POLICY[:VALUE[:DT[:GROUPS]]][+...]
		for _, e := range strings.Split(v, "+") {
			f := strings.Split(e, ":")
			if len(f) < 2 || f[0] == "" || f[1] == "" {
				return fmt.Errorf("entry %q: want ARG:POLICY[:VALUE...] (e.g. src:common:0.5)", e)
			}
			if len(f) > 2 && name == "attr-scales" && !floatOK(f[2]) {
				return fmt.Errorf("entry %q: scale %q is not a number", e, f[2])
			}
		}
	case "attr-scratchpad":
		if v != "library" && v != "user" {
			return fmt.Errorf("want library or user")
		}
	case "attr-fpmath":
		m, b, hasB := strings.Cut(v, ":")
		if !slices.Contains([]string{"strict", "bf16", "f16", "tf32", "any"}, m) || (hasB && b != "true" && b != "false") {
			return fmt.Errorf("want MODE[:true|false], MODE one of strict, bf16, f16, tf32, any")
		}
	case "attr-acc-mode":
		if !slices.Contains([]string{"strict", "relaxed", "any", "f32", "s32", "f16"}, v) {
			return fmt.Errorf("want strict, relaxed, any, f32, s32 or f16")
		}
	case "attr-deterministic":
		if v != "true" && v != "false" {
			return fmt.Errorf("want true or false")
		}
	case "attr-dropout":
		// PROBABILITY[:SEED[:TAG[:OFFSET[:HOST_SCALARS]]]]
		f := strings.Split(v, ":")
		p, err := strconv.ParseFloat(f[0], 64)
		if err != nil || p < 0 || p > 1 || len(f) > 5 {
			return fmt.Errorf("want PROBABILITY[:SEED[:TAG[:OFFSET[:HOST_SCALARS]]]] with a probability in [0, 1]")
		}
	case "attr-rounding-mode":
		for _, e := range strings.Split(v, "+") {
			arg, mode, ok := strings.Cut(e, ":")
			if !ok || arg == "" || (mode != "environment" && mode != "stochastic") {
				return fmt.Errorf("entry %q: want ARG:environment or ARG:stochastic", e)
			}
		}
	}
	return nil
}

// normCase is one fully specified normalization problem.
type normCase struct {
	driver  string
	dims    []int64 // softmax, lnorm: the descriptor's dims (mb applied)
	name    string
	g       gnormDesc // gnorm
	dir     string
	sdt     string
	ddt     string
	stag    string
	dtag    string
	alg     string
	axis    int64
	statTag string
	ssDT    string
	flags   string
	inplace bool
	attrs   map[string]string // the attribute options' values, "" when not given
	ctxInit string
	ctxExe  string
}

// dataDims returns the src (and dst) dims.
func (c *normCase) dataDims() []int64 {
	if c.driver == "gnorm" {
		return c.g.dataDims()
	}
	return c.dims
}

// desc returns the descriptor as benchdnn prints it (canonical: as its
// --canonical=true does).
func (c *normCase) desc(canonical bool) string {
	if c.driver == "gnorm" {
		return c.g.format(canonical)
	}
	s := dimsString(c.dims)
	if c.name != "" {
		s += "_n" + c.name
	}
	return s
}

// has reports whether the flag letter f is set.
func (c *normCase) has(f rune) bool { return strings.ContainsRune(c.flags, f) }

// runNormDesc parses a descriptor and runs it for every combination of
// the current knobs, nested in benchdnn's order for the driver.
func (r *runner) runNormDesc(a Arg) error {
	s := r.normS()
	base := normCase{driver: s.driver}
	if s.driver == "gnorm" {
		g, err := ParseGnormDesc(a.Text)
		if err != nil {
			return wrapInput(a, err)
		}
		base.g = g
	} else {
		dims, name, err := ParsePrbDims(a.Text)
		if err != nil {
			return wrapInput(a, err)
		}
		base.dims, base.name = dims, name
	}
	// The tail benchdnn nests innermost: attributes, thread contexts,
	// in place.
	tail := func(c normCase) {
		for _, at := range s.attrCombos() {
			for _, ci := range s.ctxInit {
				for _, ce := range s.ctxExe {
					for _, ip := range s.inplace {
						c := c
						c.attrs, c.ctxInit, c.ctxExe, c.inplace = at, ci, ce, ip
						for rep := 0; rep < r.g.repeats; rep++ {
							r.runNorm(c)
						}
					}
				}
			}
		}
	}
	c := base
	for _, dir := range s.dir {
		c.dir = dir
		switch s.driver {
		case "softmax":
			for _, sdt := range s.sdt {
				for _, ddt := range s.ddt {
					for _, stag := range s.stag {
						for _, dtag := range s.dtag {
							for _, alg := range s.alg {
								for _, axis := range s.axis {
									for _, mb := range s.mb {
										c.sdt, c.ddt, c.stag, c.dtag, c.alg, c.axis = sdt, ddt, stag, dtag, alg, axis
										c.dims = slices.Clone(base.dims)
										if mb != 0 && len(c.dims) > 0 {
											c.dims[0] = mb
										}
										tail(c)
									}
								}
							}
						}
					}
				}
			}
		case "lnorm":
			for _, dt := range s.dt {
				for _, tag := range s.tag {
					for _, st := range s.statTag {
						for _, ss := range s.ssDT {
							for _, fl := range s.flags {
								c.sdt, c.ddt = pair(dt)
								c.stag, c.dtag = tag[0], "any"
								if len(tag) > 1 {
									c.dtag = tag[1]
								}
								c.statTag, c.ssDT, c.flags = st, ss, fl
								tail(c)
							}
						}
					}
				}
			}
		case "gnorm":
			for _, dt := range s.dt {
				for _, tag := range s.tag {
					for _, fl := range s.flags {
						for _, mb := range s.mb {
							c.sdt, c.ddt = pair(dt)
							// benchdnn broadcasts a single tag to dst.
							c.stag, c.dtag = pair(tag)
							c.flags, c.ssDT = fl, "f32"
							c.g = base.g
							if mb != 0 {
								c.g.MB = mb
							}
							tail(c)
						}
					}
				}
			}
		}
	}
	return nil
}

// pair returns a SRC[:DST] list's two values, broadcasting one.
func pair(l []string) (string, string) {
	if len(l) == 1 {
		return l[0], l[0]
	}
	return l[0], l[1]
}

// attrCombos returns every combination of the attribute options' items,
// nested in benchdnn's order.
func (s *normSettings) attrCombos() []map[string]string {
	combos := []map[string]string{{}}
	for _, n := range normAttrOrder {
		var next []map[string]string
		for _, c := range combos {
			for _, v := range s.attrs[n] {
				m := make(map[string]string, len(c)+1)
				for k, x := range c {
					m[k] = x
				}
				m[n] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	return combos
}

// reproNorm is the command line that reproduces c, in benchdnn's form
// (softmax_aux.cpp, lnorm_aux.cpp, gnorm_aux.cpp: set_repro_line).
func (r *runner) reproNorm(c normCase) string {
	var b strings.Builder
	b.WriteString(r.globalRepro())
	b.WriteString("--" + c.driver + " ")
	canon := r.g.canonical
	s := r.normS()
	opt := func(name, v string, differs bool) {
		if canon || differs {
			fmt.Fprintf(&b, "--%s=%s ", name, v)
		}
	}
	opt("dir", c.dir, c.dir != "FWD_D")
	switch c.driver {
	case "softmax":
		opt("sdt", c.sdt, c.sdt != "f32")
		opt("ddt", c.ddt, c.ddt != "f32")
		opt("stag", c.stag, c.stag != "abx")
		opt("dtag", c.dtag, c.dtag != "any")
		opt("alg", c.alg, c.alg != "SOFTMAX")
		opt("axis", strconv.FormatInt(c.axis, 10), c.axis != 1)
	default:
		opt("dt", c.sdt+":"+c.ddt, c.sdt != "f32" || c.ddt != "f32")
		tag := c.stag
		if c.dtag != "any" {
			tag += ":" + c.dtag
		}
		opt("tag", tag, c.stag != "abx" || c.dtag != "any")
		if c.driver == "lnorm" {
			opt("stat_tag", c.statTag, c.statTag != "any")
			opt("ss_dt", c.ssDT, c.ssDT != "f32")
		}
		opt("flags", c.flags, c.flags != "")
	}
	opt("inplace", strconv.FormatBool(c.inplace), c.inplace)
	for _, n := range normAttrRepro {
		v := c.attrs[n]
		if v == "" || v == normAttrDefault[n] {
			continue
		}
		if n == "attr-post-ops" {
			if ops, err := ParsePostOps(v); err == nil {
				v = FormatPostOps(ops)
			}
		}
		fmt.Fprintf(&b, "--%s=%s ", n, v)
	}
	// The default thread contexts are left out even with --canonical:
	// gdnnbench has no name for them.
	if c.ctxInit != "" {
		fmt.Fprintf(&b, "--ctx-init=%s ", c.ctxInit)
	}
	if c.ctxExe != "" {
		fmt.Fprintf(&b, "--ctx-exe=%s ", c.ctxExe)
	}
	if len(s.impl) > 0 {
		fmt.Fprintf(&b, "--impl=%s ", strings.Join(s.impl, ","))
	}
	if len(s.skip) > 0 {
		fmt.Fprintf(&b, "--skip-impl=%s ", strings.Join(s.skip, ","))
	}
	b.WriteString(c.desc(canon))
	return b.String()
}

// runNorm counts, runs and reports one problem.
func (r *runner) runNorm(c normCase) {
	repro := r.reproNorm(c)
	s := r.normS()
	if dropped(s.match, c.driver, repro) {
		return
	}
	idx := r.stats.Tests
	r.stats.Tests++
	if r.counting {
		return
	}
	res := r.doNorm(idx, c)
	if res.perf != nil {
		res.perf.Prb = repro
	}
	r.report(idx, repro, res, s.perfTpl)
}

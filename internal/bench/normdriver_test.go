package bench

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
)

func TestParsePrbDims(t *testing.T) {
	for _, c := range []struct {
		in, dims, name string
	}{
		{"16x16", "16x16", ""},
		{`2x19x17x13_n"softmax_ci_2d:0"`, "2x19x17x13", `"softmax_ci_2d:0"`},
		{"8x3x8320nabc", "8x3x8320", "abc"},
		{"7", "7", ""},
	} {
		dims, name, err := ParsePrbDims(c.in)
		if err != nil || dimsString(dims) != c.dims || name != c.name {
			t.Errorf("%q: %v %q %v, want %s %q", c.in, dims, name, err, c.dims, c.name)
		}
	}
	for _, in := range []string{"", "x3", "3x", "3xx4", "-3x4", "3x+4", "abc", "_n\"x\"", "1x2x3x4x5x6x7x8x9x10x11x12x13"} {
		if _, _, err := ParsePrbDims(in); err == nil {
			t.Errorf("%q: parsed, want an error", in)
		}
	}
}

func TestParseGnormDesc(t *testing.T) {
	for _, c := range []struct {
		in, dims, out string
	}{
		{`g2mb2ic2iw4_n"gnorm_ci_1d:1"`, "2x2x4", `g2ic2iw4n"gnorm_ci_1d:1"`},
		{"g7mb2ic7ih3iw4", "2x7x3x4", "g7ic7ih3iw4"},
		{"g5mb2ic10id9ih1iw10", "2x10x9x1x10", "g5ic10id9ih1iw10"},
		{"g32mb1ic128ih768iw768", "1x128x768x768", "mb1g32ic128ih768"},
		{"g2ic8ih3", "2x8x3x3", "g2ic8ih3"},
		{"g2ic8id3", "2x8x3x3x3", "g2ic8id3"},
		{"g2mb2ic30", "2x30", "g2ic30"},
		{"mb4_g2_ic8_iw5_eps0.001", "4x8x5", "mb4g2ic8iw5eps0.001"},
		{"g1ic2iw4eps1e-05", "2x2x4", "g1ic2iw4eps1e-05"},
	} {
		d, err := ParseGnormDesc(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := dimsString(d.dataDims()); got != c.dims {
			t.Errorf("%q: dims %s, want %s", c.in, got, c.dims)
		}
		if got := d.String(); got != c.out {
			t.Errorf("%q: prints %q, want %q", c.in, got, c.out)
		}
		if again, err := ParseGnormDesc(d.String()); err != nil || again.String() != d.String() ||
			dimsString(again.dataDims()) != c.dims {
			t.Errorf("%q: %q does not parse back: %v", c.in, d.String(), err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", "ic was not given"},
		{"g2", "ic was not given"},
		{"ic8", "g was not given"},
		{"g0ic8", "g was not given"},
		{"g2ic", "no value for ic"},
		{"g2ic8ihx", "no value for ih"},
		{"g2ic-8", "must be positive"},
		{"g2ic8id3ih2", "both ih and iw"},
		{"g2ic8zz", "unrecognized field"},
		{"g2ic8eps", "no value for eps"},
		{"g2ic8eps1e40", "eps \"1e40\" is out of f32's range"},
		{"g2ic99999999999999999999", "not an integer in range"},
	} {
		_, err := ParseGnormDesc(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// TestNormRepro checks repro lines against benchdnn's set_repro_line:
// defaults left out, the attributes in benchdnn's order, gnorm's tag
// broadcast to dst (so --tag=abx:abx), lnorm's dst tag any.
func TestNormRepro(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--softmax", "16x16"}, "--softmax 16x16"},
		{[]string{"--softmax", "--dir=fwd_i", "--sdt=bf16", "--stag=axb", "--alg=softmax_log", "--axis=0", "--inplace=true",
			"--attr-post-ops=add:f32:per_oc", "--attr-scales=src:common:2", "--attr-acc-mode=relaxed", "--mb=5", `2x3x4_n"x"`},
			`--softmax --dir=FWD_I --sdt=bf16 --stag=axb --alg=LOGSOFTMAX --axis=0 --inplace=true --attr-scales=src:common:2 --attr-post-ops=add:f32:per_oc --attr-acc-mode=relaxed 5x3x4_n"x"`},
		{[]string{"--softmax", "--attr-acc-mode=strict", "--attr-scratchpad=library", "--attr-deterministic=false", "3x4"}, "--softmax 3x4"},
		{[]string{"--lnorm", "8x32"}, "--lnorm 8x32"},
		{[]string{"--lnorm", "--dt=bf16", "--tag=ntc", "--stat_tag=tn", "--ss_dt=bf16", "--flags=HMC", "8x32x16"},
			"--lnorm --dt=bf16:bf16 --tag=ntc --stat_tag=tn --ss_dt=bf16 --flags=CHM 8x32x16"},
		{[]string{"--lnorm", "--dt=f32:bf16", "--tag=abx:axb", "8x32x16"}, "--lnorm --dt=f32:bf16 --tag=abx:axb 8x32x16"},
		{[]string{"--gnorm", "g2ic8ih3iw4"}, "--gnorm g2ic8ih3iw4"},
		{[]string{"--gnorm", "--tag=abx", "g2ic8ih3iw4"}, "--gnorm --tag=abx:abx g2ic8ih3iw4"},
		{[]string{"--gnorm", "--tag=axb", "--flags=HC", "--mb=3", "--dir=BWD_DW", "g2ic8ih3iw4"},
			"--gnorm --dir=BWD_DW --tag=axb:axb --flags=CH mb3g2ic8ih3iw4"},
		{[]string{"--gnorm", "--tag=abx:any", "--skip-impl=ref", "g2ic8iw4"}, "--gnorm --skip-impl=ref g2ic8iw4"},
		// benchdnn's canonical gnorm descriptor prints mb, every spatial
		// dim of the rank and eps whatever their values.
		{[]string{"--mode=L", "--canonical=true", "--gnorm", "g2ic8ih3iw3_n\"x\""},
			"--mode=L --max-ms-per-prb=3000 --fix-times-per-prb=0 --gnorm --dir=FWD_D --dt=f32:f32 --tag=abx --flags= --inplace=false mb2g2ic8ih3iw3eps0.0625n\"x\""},
		{[]string{"--mode=L", "--canonical=true", "--gnorm", "--mb=3", "g2ic8id4"},
			"--mode=L --max-ms-per-prb=3000 --fix-times-per-prb=0 --gnorm --dir=FWD_D --dt=f32:f32 --tag=abx --flags= --inplace=false mb3g2ic8id4ih4iw4eps0.0625"},
		{[]string{"--mode=L", "--canonical=true", "--softmax", "3x4"},
			"--mode=L --max-ms-per-prb=3000 --fix-times-per-prb=0 --softmax --dir=FWD_D --sdt=f32 --ddt=f32 --stag=abx --dtag=any --alg=SOFTMAX --axis=1 --inplace=false 3x4"},
	} {
		args := c.args
		if args[0] != "--mode=L" {
			args = append([]string{"--mode=L"}, args...)
		}
		code, out, errw := runMain(t, args...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errw)
			continue
		}
		_, repro, _ := strings.Cut(strings.Split(out, "\n")[0], "__REPRO: ")
		want := c.want
		if c.args[0] != "--mode=L" {
			want = "--mode=L " + want
		}
		if repro != want {
			t.Errorf("%v:\nrepro %q\nwant  %q", c.args, repro, want)
		}
	}
}

// TestNormOptionRefusals: every malformed option or descriptor is an
// input error (exit status 2, nothing run) naming the position.
func TestNormOptionRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--softmax", "--sdt=f31", "3x4"}, `--sdt: unknown value "f31"`},
		{[]string{"--softmax", "--alg=softmin", "3x4"}, `--alg: unknown value "softmin"`},
		{[]string{"--softmax", "--dir=SIDEWAYS", "3x4"}, `--dir: unknown value "SIDEWAYS"`},
		{[]string{"--softmax", "--axis=-1", "3x4"}, `--axis: "-1" is not a non-negative integer`},
		{[]string{"--softmax", "--mb=x", "3x4"}, `--mb: "x" is not a non-negative integer`},
		{[]string{"--softmax", "--inplace=maybe", "3x4"}, `--inplace: "maybe" is not a boolean`},
		{[]string{"--softmax", "--stag=abq", "3x4"}, `--stag: unknown value "abq"`},
		{[]string{"--softmax", "--dt=f32", "3x4"}, `unknown option for the softmax driver: "--dt=f32"`},
		{[]string{"--softmax", "--flags=C", "3x4"}, `unknown option for the softmax driver`},
		{[]string{"--softmax", "--axis", "3x4"}, `--axis needs a value`},
		{[]string{"--softmax", "3y4"}, `problem "3y4"`},
		{[]string{"--lnorm", "--dt=f32:f32:f32", "3x4"}, `--dt: "f32:f32:f32": want SRC or SRC:DST`},
		{[]string{"--lnorm", "--dt=f32:x", "3x4"}, `unknown value "x"`},
		{[]string{"--lnorm", "--tag=abx:any:any", "3x4"}, `want SRC or SRC:DST`},
		{[]string{"--lnorm", "--flags=GX", "3x4"}, `--flags: "GX": flag 'X' is not one of G, C, H, M`},
		{[]string{"--lnorm", "--stat_tag=zz", "3x4"}, `--stat_tag: unknown value "zz"`},
		{[]string{"--lnorm", "--ss_dt=f7", "3x4"}, `--ss_dt: unknown value "f7"`},
		{[]string{"--lnorm", "--mb=2", "3x4"}, `unknown option for the lnorm driver: "--mb=2"`},
		{[]string{"--gnorm", "--flags=M", "g2ic4iw3"}, `flag 'M' is not one of G, C, H`},
		{[]string{"--gnorm", "--stat_tag=abx", "g2ic4iw3"}, `unknown option for the gnorm driver`},
		{[]string{"--gnorm", "g2ic4zz3"}, `unrecognized field at "zz3"`},
		{[]string{"--gnorm", "4x5"}, `unrecognized field at "4x5"`},
		{[]string{"--softmax", "--attr-scales=src", "3x4"}, `want ARG:POLICY`},
		{[]string{"--softmax", "--attr-scales=src:common:x", "3x4"}, `scale "x" is not a number`},
		{[]string{"--softmax", "--attr-post-ops=frobnicate", "3x4"}, `frobnicate`},
		{[]string{"--softmax", "--attr-acc-mode=loose", "3x4"}, `want strict, relaxed`},
		{[]string{"--softmax", "--attr-dropout=1.5", "3x4"}, `probability in [0, 1]`},
		{[]string{"--softmax", "--attr-scratchpad=heap", "3x4"}, `want library or user`},
		{[]string{"--softmax", "--attr-fpmath=fast", "3x4"}, `want MODE[:true|false]`},
		{[]string{"--softmax", "--attr-deterministic=yes", "3x4"}, `want true or false`},
		{[]string{"--softmax", "--attr-rounding-mode=dst:up", "3x4"}, `ARG:environment or ARG:stochastic`},
		{[]string{"--softmax", "--ctx-init=a:b", "3x4"}, `MAX_CONCURRENCY`},
		{[]string{"--softmax", "--perf-template=%nope%", "3x4"}, `unknown token`},
	} {
		code, out, errw := runMain(t, c.args...)
		if code != 2 || !strings.Contains(errw, c.want) || !strings.Contains(errw, "argument") || strings.Contains(out, "__REPRO") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q, nothing run", c.args, code, errw, c.want)
		}
	}
}

// TestNormBatchCounts runs every test_* batch file oneDNN ships for the
// three drivers, unchanged, in list mode: each parses and enumerates the
// problems benchdnn does (its nested loops; --match-dropped problems not
// counted), with no input error.
func TestNormBatchCounts(t *testing.T) {
	needShared(t)
	if testing.Short() {
		t.Skip("short")
	}
	for _, c := range []struct {
		driver, file string
		n            int
	}{
		{"softmax", "test_softmax_smoke", 104},
		{"softmax", "test_softmax_ci", 13888},
		{"softmax", "test_softmax_all", 39519},
		{"softmax", "test_softmax_bfloat16", 9237},
		{"softmax", "test_softmax_float16", 9237},
		{"softmax", "test_softmax_gpu", 17039},
		{"softmax", "test_softmax_acl", 316},
		{"softmax", "harness_softmax_dropout", 64},
		{"softmax", "harness_softmax_regression", 5},
		{"softmax", "option_set_fwks_key_gpu", 25},
		{"softmax", "option_set_fwks_ext_gpu", 14},
		{"lnorm", "test_lnorm_smoke", 188},
		{"lnorm", "test_lnorm_ci", 10128},
		{"lnorm", "test_lnorm_all", 25886},
		{"lnorm", "test_lnorm_bfloat16", 5934},
		{"lnorm", "test_lnorm_float16", 5934},
		{"lnorm", "test_lnorm_int8", 12384},
		{"lnorm", "test_lnorm_gpu", 13843},
		{"lnorm", "option_set_fwks_key_gpu", 25},
		{"lnorm", "option_set_fwks_ext_gpu", 7},
		{"gnorm", "test_gnorm_smoke", 188},
		{"gnorm", "test_gnorm_ci", 3440},
		{"gnorm", "test_gnorm_all", 4364},
	} {
		code, out, errw := runMain(t, "--mode=L", "--"+c.driver, "--inputs-dir="+sharedInputs, "--batch="+c.file)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", c.file, code, errw)
			continue
		}
		s := summary(t, out)
		if s[0] != s[6] || s[0] != strconv.Itoa(c.n) {
			t.Errorf("%s: tests %s listed %s, want %d", c.file, s[0], s[6], c.n)
		}
	}
}

// TestGnormChannelsLastAtTheMean: GroupNorm over channels-last data from
// a 16-bit src into f32, with a shift, maps the element that equals its
// group's mean to beta itself, as benchdnn's check wants (it excuses no
// error where the expected value is beta): the per-channel sums are
// divided in float64, not rounded to f32 means first. The problems are
// those that failed when they were, under every ISA cap.
func TestGnormChannelsLastAtTheMean(t *testing.T) {
	// Caps this CPU lacks fall back to the next, still a valid run.
	for _, isa := range []jit.ISA{jit.AVX512, jit.AVX2, jit.None} {
		t.Run(isa.String(), func(t *testing.T) {
			prev := jit.SetMaxISA(isa)
			defer jit.SetMaxISA(prev)
			code, out, errw := runMain(t, "--gnorm", "--dir=FWD_I,FWD_D", "--dt=f16:f32,bf16:f32", "--tag=axb", "--flags=H,CH",
				"g1ic3iw3", "g1ic3iw7", "g1ic3iw33", "g1ic3ih3", "g1ic3id3", "g2ic6iw9", "g1ic33iw3", "g2ic6iw5")
			s := summary(t, out)
			if code != 0 || s[0] != "64" || s[1] != "64" {
				t.Fatalf("exit %d, tests %s passed %s:\n%s%s", code, s[0], s[1], out, errw)
			}
		})
	}
}

// TestNamedReproRoundTrip: a named problem's repro line prints the name
// as benchdnn does, _n"NAME" after the dims of the reduction, softmax and
// lnorm descriptors (prb_dims) and n"NAME" at the end of a gnorm
// descriptor (whose fields run together, as conv's and bnorm's), and
// running the repro line prints that same line again.
func TestNamedReproRoundTrip(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`--reduction 2x3:2x1_n"red:0"`, `--reduction 2x3:2x1_n"red:0"`},
		{`--reduction 2x3:2x1n"red:1"`, `--reduction 2x3:2x1_n"red:1"`},
		{`--softmax --axis=2 2x19x17x13_n"softmax_ci_2d:0"`, `--softmax --axis=2 2x19x17x13_n"softmax_ci_2d:0"`},
		{`--softmax 8x3n"abc"`, `--softmax 8x3_n"abc"`},
		{`--lnorm 2x3x4_n"lnorm_ci:1"`, `--lnorm 2x3x4_n"lnorm_ci:1"`},
		{`--gnorm g2mb2ic2iw4_n"gnorm_ci_1d:1"`, `--gnorm g2ic2iw4n"gnorm_ci_1d:1"`},
		{`--gnorm g2mb3ic4ih3iw5_eps0.001_n"gn"`, `--gnorm mb3g2ic4ih3iw5eps0.001n"gn"`},
	} {
		repro := func(args []string) string {
			code, out, errw := runMain(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s%s", args, code, out, errw)
			}
			_, r, _ := strings.Cut(strings.Split(out, "\n")[0], "0:PASSED __REPRO: ")
			return r
		}
		got := repro(strings.Fields(c.in))
		if got != c.want {
			t.Errorf("%s: repro %q, want %q", c.in, got, c.want)
			continue
		}
		if again := repro(strings.Fields(got)); again != got {
			t.Errorf("%s: repro %q runs as %q", c.in, got, again)
		}
	}
}

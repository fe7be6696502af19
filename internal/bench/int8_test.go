package bench

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/shape"
)

var (
	int8Types = []dtypes.DataType{dtypes.S8, dtypes.U8}
	int8Dsts  = []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32, dtypes.F32, dtypes.BF16, dtypes.F16}
	int8Algs  = []string{"sum", "mul", "max", "min", "mean"}
)

// TestInt8ReferencePerAlg: for 8-bit src, a correct f32 computation (in
// order, every step in f32, then rounded to nearest even and saturated)
// passes the reference exactly, with both fills, and an integer dst one
// unit off fails.
func TestInt8ReferencePerAlg(t *testing.T) {
	dims := []int64{6, 40, 5}
	for _, reduced := range [][]bool{{false, true, false}, {true, true, true}} {
		for _, sdt := range int8Types {
			for _, ddt := range int8Dsts {
				for _, alg := range int8Algs {
					for _, mode := range []fillMode{fillExact, fillRandom} {
						name := fmt.Sprintf("%s %s:%s %v %s", alg, sdt, ddt, reduced, fillName(mode))
						b := algBuilt(t, alg, 1, 0, sdt, ddt, dims, reduced)
						b.fill.dst = ddt
						fillSrc(b.src, dims, b.srcLT.Strides, reduced, mode, b.fill, 9)
						out := f32Reduce(b, ddt)
						outDims := shape.ReduceDims(dims, reduced, true)
						ref, allow, alts := reductionReference(b, ddt, mode)
						chk := compareOutput(out, outDims, graph.DenseStrides(outDims), ref, allow, alts)
						if chk.errors != 0 {
							t.Fatalf("%s: a correct result fails: %v", name, chk.lines)
						}
						if !ddt.IsInt() {
							continue
						}
						for i, a := range allow {
							if a != 0 {
								t.Fatalf("%s: output %d allowed %v, want exact", name, i, a)
							}
						}
						// One unit off, towards the inside of the type's range.
						v := out.get(0)
						if v == roundTo(ddt, 1e300) {
							out.set(0, v-1)
						} else {
							out.set(0, v+1)
						}
						if chk := compareOutput(out, outDims, graph.DenseStrides(outDims), ref, allow, alts); chk.errors != 1 {
							t.Fatalf("%s: one unit off (%v -> %v) gives %d errors, want 1", name, v, out.get(0), chk.errors)
						}
					}
				}
			}
		}
	}
}

// TestInt8FillBounds: the 8-bit fill keeps every output exact (sums of
// magnitudes and products below 2^24) even for long reductions, and the
// random fill has at most 10 non-neutral elements per output.
func TestInt8FillBounds(t *testing.T) {
	dims := []int64{2, 300000}
	reduced := []bool{false, true}
	strides := graph.DenseStrides(dims)
	for _, sdt := range int8Types {
		for _, alg := range []string{"sum", "mean", "mul"} {
			ap, _ := planAlg(alg, 1, 0)
			for _, mode := range []fillMode{fillExact, fillRandom} {
				b, err := newBuffer(sdt, 600000)
				if err != nil {
					t.Fatal(err)
				}
				f := srcFill{kind: ap.kind, dst: dtypes.S8}
				fillSrc(b, dims, strides, reduced, mode, f, 3)
				acc, mag, _ := refReduce(b, dims, strides, reduced, ap.kind)
				if !exactInts(ap.kind, acc, mag) {
					t.Errorf("%s %s %s: not exact: acc %v mag %v", sdt, alg, fillName(mode), acc, mag)
				}
				nonNeutral := 0
				neutral := ap.kind.identity()
				for i := int64(0); i < 300000; i++ {
					if b.get(i) != neutral {
						nonNeutral++
					}
				}
				if mode == fillRandom && nonNeutral > 10 || nonNeutral == 0 {
					t.Errorf("%s %s %s: %d non-neutral elements in the first output", sdt, alg, fillName(mode), nonNeutral)
				}
			}
		}
	}
}

// runWithSrc runs gdnnbench's Main with src replaced by set(logical
// index) in every correctness check, and returns the exit status and
// stdout.
func runWithSrc(t *testing.T, set func(pos int64) float64, args ...string) (int, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := runWith(CommandArgs(args), &out, &errw, func(r *runner) {
		r.srcOverride = func(src buffer, dims, strides []int64) {
			forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) { src.set(offs[0], set(pos)) })
		}
	})
	if errw.Len() > 0 && code != 0 {
		t.Logf("stderr: %s", errw.String())
	}
	return code, out.String()
}

// wantAllPassed checks that every problem of a run passed.
func wantAllPassed(t *testing.T, code int, out string, n int) {
	t.Helper()
	got := summary(t, out)
	if code != 0 || got[0] != fmt.Sprint(n) || got[1] != fmt.Sprint(n) {
		t.Fatalf("exit %d, summary %v, want %d tests all passed\n%s", code, got, n, out)
	}
}

// TestInt8EveryValueCLI: every s8 and u8 value, twice per output, through
// every alg into every dst type (saturating sums and products, exact max,
// min and mean), through the whole driver.
func TestInt8EveryValueCLI(t *testing.T) {
	for _, sdt := range int8Types {
		lo := -128.0
		if sdt == dtypes.U8 {
			lo = 0
		}
		code, out := runWithSrc(t, func(pos int64) float64 { return lo + float64(pos/2) },
			"--reduction", "--sdt="+sdt.String(), "--ddt=s8,u8,s32,f32,bf16,f16", "--alg=sum,mul,max,min,mean", "256x2:256x1")
		wantAllPassed(t, code, out, 30)
	}
}

// TestInt8MeansOnHalfCLI: means landing exactly on .5 round to even (a
// mean of 2 and 3 is 2, of 3 and 4 is 4), for every pair of neighbours.
func TestInt8MeansOnHalfCLI(t *testing.T) {
	for _, sdt := range int8Types {
		lo := -128.0
		if sdt == dtypes.U8 {
			lo = 0
		}
		// Row i holds lo+i and lo+i+1: the mean is lo+i+0.5.
		code, out := runWithSrc(t, func(pos int64) float64 { return lo + float64(pos/2+pos%2) },
			"--reduction", "--sdt="+sdt.String(), "--ddt=s8,u8,s32", "--alg=mean", "255x2:255x1")
		wantAllPassed(t, code, out, 3)
	}
}

// TestInt8SumsPastS32CLI: sums beyond the s32 range saturate (u8: 255 *
// 9e6 > 2^31-1; s8: -128 * 1.7e7 < -2^31).
func TestInt8SumsPastS32CLI(t *testing.T) {
	if testing.Short() {
		t.Skip("26 MB of src through the interpreter")
	}
	code, out := runWithSrc(t, func(int64) float64 { return 255 },
		"--reduction", "--sdt=u8", "--ddt=s32,u8,f32", "--alg=sum", "9000000:1")
	wantAllPassed(t, code, out, 3)
	code, out = runWithSrc(t, func(int64) float64 { return -128 },
		"--reduction", "--sdt=s8", "--ddt=s32", "--alg=sum", "17000000:1")
	wantAllPassed(t, code, out, 1)
}

// TestInt8WrongByOneFailsCLI: the driver itself reports FAILED for an s8
// dst one unit off: the reference's exactness is not lost on the way.
func TestInt8WrongByOneFailsCLI(t *testing.T) {
	b := &built{fill: srcFill{kind: meanKind}}
	src, _ := newBuffer(dtypes.S8, 4)
	for i, v := range []float64{2, 3, 3, 4} {
		src.set(int64(i), v)
	}
	b.src, b.reduced = src, []bool{false, true}
	b.srcLT = graph.NewLogicalTensorStrided(0, dtypes.S8, []int64{2, 2}, []int64{2, 1})
	ref, allow, alts := reductionReference(b, dtypes.S8, fillExact)
	if ref[0] != 2 || ref[1] != 4 || allow[0] != 0 || allow[1] != 0 {
		t.Fatalf("reference %v allowed %v, want [2 4] exactly (ties to even)", ref, allow)
	}
	got, _ := newBuffer(dtypes.S8, 2)
	got.set(0, 3) // round half up: wrong
	got.set(1, 4)
	if chk := compareOutput(got, []int64{2, 1}, []int64{1, 1}, ref, allow, alts); chk.errors != 1 {
		t.Fatalf("errors %d, want 1: %v", chk.errors, chk.lines)
	}
}

// TestInt8Driver: int8 problems through the driver in every mode, the
// post-ops that go with them, and what stays out.
func TestInt8Driver(t *testing.T) {
	code, out, errw := runMain(t, "--reduction", "--sdt=s8,u8", "--ddt=s8,u8,s32,f32", "--alg=sum,mean,max",
		"--attr-post-ops=,add:f32:per_oc,relu+mul:f32", "--stag=abx,axb", "2x16x3x4:2x16x1x1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	wantAllPassed(t, code, out, 2*4*3*3*2)
	// Bitwise and performance modes take int8 problems too.
	for _, mode := range []string{"--mode=B", "--mode=P"} {
		code, out, errw = runMain(t, mode, "--max-ms-per-prb=20", "--reduction", "--sdt=u8", "--ddt=s32", "--alg=sum", "4x4096:4x1")
		if code != 0 || !strings.Contains(out, "tests:1 passed:1") {
			t.Fatalf("%s: exit %d\n%s\n%s", mode, code, out, errw)
		}
	}
	cases := []struct {
		args  []string
		state string
		why   string
	}{
		{[]string{"--sdt=s8", "--ddt=s8", "--alg=norm_lp_sum", "--p=2"}, "SKIPPED", "invalid case: --alg=norm_lp_sum of s8 src"},
		{[]string{"--sdt=u8", "--ddt=f32", "--alg=norm_lp_max", "--p=1"}, "SKIPPED", "invalid case: --alg=norm_lp_max of u8 src"},
		// As benchdnn: only an integer src makes a norm invalid.
		{[]string{"--sdt=f32", "--ddt=s32", "--alg=norm_lp_max", "--p=1"}, "PASSED", ""},
		{[]string{"--sdt=bf16", "--ddt=s8", "--alg=norm_lp_sum", "--p=2"}, "PASSED", ""},
		{[]string{"--sdt=f16", "--ddt=u8", "--alg=norm_lp_power_p_sum", "--p=2", "--eps=0.5"}, "PASSED", ""},
		{[]string{"--sdt=f32", "--ddt=s8", "--alg=sum"}, "PASSED", ""},
		{[]string{"--sdt=bf16", "--ddt=u8", "--alg=mean"}, "PASSED", ""},
		{[]string{"--sdt=s32", "--ddt=f32", "--alg=sum"}, "UNIMPLEMENTED", "--alg=sum of s32 data into f32: a sum of s32 data writes s32, not f32"},
		{[]string{"--sdt=u8", "--ddt=u8", "--alg=amax"}, "UNIMPLEMENTED", "--alg=amax of u8 data"},
	}
	for _, c := range cases {
		args := append([]string{"--reduction"}, c.args...)
		_, out, _ := runMain(t, append(args, "4x8:4x1")...)
		if !strings.Contains(out, "0:"+c.state) || !strings.Contains(out, c.why) {
			t.Errorf("%v: want %s (%s), got\n%s", c.args, c.state, c.why, out)
		}
	}
}

// TestInt8GraphCases: a graph case with an 8-bit src and an integer dst
// (ReduceMean alone; ReduceMean -> Add of an f32 operand storing s8) runs
// through the graph driver with the same exact reference.
func TestInt8GraphCases(t *testing.T) {
	setDT := func(in, out string) func(map[string]any) {
		return func(doc map[string]any) {
			tensorAt(doc, 0, false, 0)["dtype"] = in
			tensorAt(doc, 0, true, 0)["dtype"] = out
		}
	}
	for _, c := range []struct {
		name, base string
		edit       func(map[string]any)
	}{
		{"u8 mean to u8", meanCase, setDT("u8", "u8")},
		{"s8 mean to s32", meanCase, setDT("s8", "s32")},
		{"s8 mean+add to s8", meanAddCase, func(doc map[string]any) {
			tensorAt(doc, 0, false, 0)["dtype"] = "s8"
			tensorAt(doc, 1, true, 0)["dtype"] = "s8"
		}},
	} {
		code, out, errw := runGraph(t, writeCase(t, c.base, c.edit))
		if code != 0 || !strings.Contains(out, "0:PASSED") {
			t.Errorf("%s: exit %d\n%s\n%s", c.name, code, out, errw)
		}
	}
}

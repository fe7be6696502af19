package bench

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

func TestParseNormScales(t *testing.T) {
	s, err := parseNormScales("src:common:64+dst:common:0.5")
	if err != nil || s != (normScales{src: 64, dst: 0.5, hasSrc: true, hasDst: true}) {
		t.Errorf("src and dst: %+v %v", s, err)
	}
	s, err = parseNormScales("dst:common:0.125:f32")
	if err != nil || s != (normScales{src: 1, dst: 0.125, hasDst: true}) {
		t.Errorf("dst: %+v %v", s, err)
	}
	if s, err = parseNormScales(""); err != nil || s != (normScales{src: 1, dst: 1}) {
		t.Errorf("none: %+v %v", s, err)
	}
	for _, c := range []struct{ in, state, want string }{
		{"wei:common:2", "UNIMPLEMENTED", "src and dst scales, not wei"},
		{"src:per_oc:2", "UNIMPLEMENTED", "per-tensor (common)"},
		{"dst:common:2:s8", "UNIMPLEMENTED", "scales of type s8"},
		{"src:common:2:f32:1x4", "UNIMPLEMENTED", "grouped scales"},
		{"dst:common:0", "INVALID_ARGUMENTS", "not 0"},
		{"src:common:inf", "INVALID_ARGUMENTS", "must be finite"},
		{"src", "INVALID_ARGUMENTS", "want ARG:POLICY"},
	} {
		_, err := parseNormScales(c.in)
		if err == nil || stateOf(err) != c.state || !strings.Contains(reasonOf(err), c.want) {
			t.Errorf("%q: %v, want %s with %q", c.in, err, c.state, c.want)
		}
	}
}

// TestNormChainMapping: scales, post-ops and the dst type become the
// ops oneDNN's primitive applies, in its order: the src scale, the
// post-ops (linear as a Multiply and an Add of its constants; per_oc
// the channels: dim 1, lnorm's last dim), then a Quantize by the dst
// scale into an int8 dst, a Divide and a TypeCast into a float one.
func TestNormChainMapping(t *testing.T) {
	build := func(c normCase) *normBuilt {
		t.Helper()
		c.dir = "FWD_I"
		if c.stag == "" {
			c.stag, c.dtag = "abx", "any"
		}
		b, err := buildNorm(&c)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		return b
	}
	attrs := map[string]string{"attr-scales": "src:common:64+dst:common:0.5", "attr-post-ops": "add:f32:per_oc+linear:0.5:-1+relu"}
	for _, c := range []struct {
		driver, ddt string
		dims        []int64
		operand     []int64 // the add's operand dims
		kinds       string  // the chain's ops
	}{
		{"softmax", "s8", []int64{2, 16, 3}, []int64{1, 16, 1}, "Multiply Add Multiply Add ReLU Quantize"},
		{"lnorm", "u8", []int64{2, 3, 8}, []int64{1, 1, 8}, "Multiply Add Multiply Add ReLU Quantize"},
		{"softmax", "f32", []int64{4, 5}, []int64{1, 5}, "Multiply Add Multiply Add ReLU Divide"},
		{"lnorm", "bf16", []int64{4, 5}, []int64{1, 5}, "Multiply Add Multiply Add ReLU Divide TypeCast"},
	} {
		b := build(normCase{driver: c.driver, dims: c.dims, sdt: "f32", ddt: c.ddt, attrs: attrs})
		ops := b.chainOps(graph.NewLogicalTensorAny(20, dtypes.F32, c.dims))
		var kinds []string
		for _, op := range ops {
			kinds = append(kinds, op.Kind.String())
		}
		if got := strings.Join(kinds, " "); got != c.kinds {
			t.Errorf("%s %s: chain %s, want %s", c.driver, c.ddt, got, c.kinds)
			continue
		}
		if last := ops[len(ops)-1]; last.Outputs[0].ID != b.dstLT.ID || last.Outputs[0].DataType.String() != c.ddt {
			t.Errorf("%s %s: the chain ends in %v, want dst", c.driver, c.ddt, last.Outputs[0])
		}
		if got := b.opLTs[b.stepLT[1]].Dims; !sameDims(got, c.operand) {
			t.Errorf("%s %s: add:f32:per_oc operand dims %v, want %v", c.driver, c.ddt, got, c.operand)
		}
		want := []float64{64, 0, 0.5, -1, 0, 0.5}
		for i, st := range b.steps {
			if st.konst && st.value != want[i] {
				t.Errorf("%s %s: step %d holds %v, want %v", c.driver, c.ddt, i, st.value, want[i])
			}
		}
		if q := ops[len(ops)-1]; q.Kind == graph.Quantize {
			p, err := graph.QuantParamsOf(q, len(c.dims))
			if err != nil || p.Scales[0] != 0.5 || p.Zps[0] != 0 || p.PerChannel {
				t.Errorf("%s: Quantize %+v %v, want per-tensor scale 0.5, zero point 0", c.driver, p, err)
			}
		}
	}
	// An int8 dst alone: the normalization, then the Quantize by 1.
	b := build(normCase{driver: "gnorm", g: gnormDesc{G: 2, MB: 2, IC: 4, IW: 3, NDims: 3, Eps: gnormDefEps}, sdt: "bf16", ddt: "u8", attrs: map[string]string{}})
	if ops := b.chainOps(graph.NewLogicalTensorAny(20, dtypes.F32, nil)); len(ops) != 1 || ops[0].Kind != graph.Quantize || !b.fused() {
		t.Errorf("gnorm u8: chain %v", ops)
	}
	// Neither: no chain at all.
	if b := build(normCase{driver: "softmax", dims: []int64{4, 4}, sdt: "f32", ddt: "f16", attrs: map[string]string{}}); b.fused() {
		t.Errorf("softmax f16 without attributes fuses %d steps", len(b.steps))
	}
}

// TestNormChainRefusals: what the chain does not build keeps a reason
// that names it.
func TestNormChainRefusals(t *testing.T) {
	for _, c := range []struct {
		args  []string
		state string
		want  string
	}{
		{[]string{"--softmax", "--attr-post-ops=sum", "4x4"}, "UNIMPLEMENTED", "a sum reads dst as it was before the run"},
		{[]string{"--softmax", "--attr-post-ops=prelu", "4x4"}, "UNIMPLEMENTED", "PReLU"},
		{[]string{"--softmax", "--attr-post-ops=eq:f32", "4x4"}, "UNIMPLEMENTED", "binary eq"},
		{[]string{"--softmax", "--attr-post-ops=add:f32:per_oc:aBx16b", "4x32"}, "UNIMPLEMENTED", "blocked layout"},
		{[]string{"--softmax", "--attr-scales=src:per_oc", "4x4"}, "UNIMPLEMENTED", "per-tensor (common)"},
		{[]string{"--softmax", "--ddt=s8", "--attr-scales=dst:common:0", "4x4"}, "INVALID_ARGUMENTS", "not 0"},
		{[]string{"--softmax", "--ddt=s8", "--attr-zero-points=dst:common:1", "4x4"}, "UNIMPLEMENTED", "--attr-zero-points=dst:common:1"},
	} {
		_, out, errw := runMain(t, c.args...)
		line := strings.Split(out, "\n")[0]
		if !strings.HasPrefix(line, "0:"+c.state+" (") || !strings.Contains(line, c.want) {
			t.Errorf("%v: %q, want %s with %q (%s)", c.args, line, c.state, c.want, errw)
		}
	}
}

// TestNormInt8Src: an s8 or u8 src runs in each driver, a Dequantize
// fused before the normalization, with scales, post-ops and an int8 dst,
// and passes benchdnn's check.
func TestNormInt8Src(t *testing.T) {
	for _, args := range [][]string{
		{"--softmax", "--dir=FWD_I", "--sdt=s8", "--ddt=s8", "--attr-scales=src:common:64+dst:common:0.5", "4x37"},
		{"--softmax", "--dir=FWD_I", "--sdt=u8", "--ddt=f32", "--alg=LOGSOFTMAX", "--axis=1", "--attr-scales=src:common:64", "2x5x7"},
		{"--softmax", "--inplace=true", "--dir=FWD_I", "--sdt=u8", "--ddt=u8", "--attr-post-ops=add:f32:per_oc", "3x19"},
		{"--lnorm", "--dir=FWD_I", "--dt=u8:f32", "--flags=CH", "--attr-scales=src:common:128", "3x100"},
		{"--lnorm", "--dir=FWD_D", "--dt=s8:f32", "--flags=M", "2x3x17"},
		{"--gnorm", "--dir=FWD_I", "--dt=s8:s8", "--flags=CH", "--attr-scales=src:common:64+dst:common:0.5", "--attr-post-ops=linear:0.5:-1", "g2mb2ic4iw5"},
		{"--gnorm", "--dir=FWD_D", "--dt=u8:bf16", "--tag=axb", "g3mb2ic6ih3iw4"},
	} {
		_, out, errw := runMain(t, args...)
		if line := strings.Split(out, "\n")[0]; !strings.HasPrefix(line, "0:PASSED") {
			t.Errorf("%v: %q, want PASSED (%s)", args, line, errw)
		}
	}
}

// intOff is a normalization executor that runs gdnn's compiled
// partition, then moves every integer output one step (down from the
// top of the type): the check must fail it.
type intOff struct{ normExec }

func (e intOff) Run(b *normBuilt, i int) error {
	if err := e.normExec.Run(b, i); err != nil {
		return err
	}
	d := b.dst[i]
	forEachIndex(b.dstLT.Dims, [][]int64{b.dstLT.Strides}, func(_ int64, offs []int64) {
		v := d.get(offs[0])
		if v == roundTo(d.dt, 1e9) {
			d.set(offs[0], v-1)
		} else {
			d.set(offs[0], v+1)
		}
	})
	return nil
}

// TestNormInt8Dst runs int8 dst problems with scales and post-ops on
// gdnn's graph (the JIT of this machine, or GDNN_MAX_CPU_ISA's): they
// pass, and the same results one step off FAIL with the mismatches
// listed.
func TestNormInt8Dst(t *testing.T) {
	problems := [][]string{
		{"--softmax", "--dir=FWD_I", "--sdt=f32,bf16,f16", "--ddt=s8,u8", "--alg=SOFTMAX,LOGSOFTMAX", "--axis=0,1",
			"--attr-scales=,src:common:64+dst:common:0.5", "--attr-post-ops=,add:f32:per_oc,mul:f32:per_tensor,linear:0.5:2", "2x16x3x4", "3x40"},
		{"--lnorm", "--dir=FWD_I", "--dt=f32:s8,f32:u8,bf16:s8,bf16:u8", "--tag=abx,axb", "--flags=,CH,M",
			"--attr-scales=,src:common:128,dst:common:0.125,src:common:64+dst:common:0.5", "--attr-post-ops=,add:f32:per_oc,linear:0.5:-1", "5x2x77", "3x129"},
		{"--gnorm", "--dir=FWD_I", "--dt=f32:s8,bf16:u8", "--tag=abx,axb", "--flags=,CH",
			"--attr-scales=,dst:common:0.5,src:common:64+dst:common:0.5", "--attr-post-ops=,add:f32:per_oc,mul:f32:per_tensor+linear:0.5:-1", "g2ic6ih3iw4", "g4mb3ic8iw5"},
		// A float dst after scales and post-ops.
		{"--softmax", "--dir=FWD_I", "--ddt=f32,bf16", "--attr-scales=src:common:2+dst:common:0.25", "--attr-post-ops=add:f32:per_oc+tanh", "4x33x5"},
	}
	for _, p := range problems {
		code, out, errw := runMain(t, append([]string{"--mode=C"}, p...)...)
		s := summary(t, out)
		if code != 0 || s[0] != s[1] {
			t.Errorf("%v: exit %d, summary %v\n%s\n%s", p, code, s, lastLines(out, 12), errw)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "(100%)") {
				t.Logf("%s: %s", p[0], l) // which code ran (jit:avx512, jit:avx2, interp, jit:neon)
			}
		}
	}
	off := func(r *runner) {
		r.normBackend = func(b *normBuilt) (normExec, error) {
			e, err := graphNormBackend(b)
			return intOff{e}, err
		}
	}
	// Softmax's int8 threshold is 0: every problem fails. lnorm's and
	// gnorm's is relative, 2^17 (s8) or 2^16 (u8) times their f32 one,
	// as benchdnn's: one step off passes on values of 16 (32) and more,
	// which scales and an added operand of 4 to 16 make most values of
	// some problems; the rest fail.
	for i, p := range problems[:3] {
		var out, errw bytes.Buffer
		code := runWith(CommandArgs(append([]string{"--mode=C"}, p...)), &out, &errw, off)
		s := summary(t, out.String())
		failed, _ := strconv.Atoi(s[5])
		total, _ := strconv.Atoi(s[0])
		if code != 1 || (i == 0 && failed != total) || failed < total*9/10 || !strings.Contains(out.String(), "[DST] exp_f64:") {
			t.Errorf("%v one step off: exit %d, summary %v\n%s", p, code, s, lastLines(out.String(), 12))
		}
	}
	// Small values: every one of them one step off fails.
	var out, errw bytes.Buffer
	code := runWith(CommandArgs([]string{"--mode=C", "--lnorm", "--dir=FWD_I", "--dt=f32:s8", "--flags=CH", "5x2x77"}), &out, &errw, off)
	if code != 1 || !strings.Contains(out.String(), "FAILED (DST errors:770 total:770)") {
		t.Errorf("lnorm s8 one step off: exit %d\n%s", code, lastLines(out.String(), 12))
	}
}

// TestCompareNormErrs: with an error bound, an int8 output passes when
// the interval around the reference rounds to it, and only then.
func TestCompareNormErrs(t *testing.T) {
	got, err := newBuffer(dtypes.S8, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{2, 3, 4, 127} {
		got.set(int64(i), v)
	}
	ref := []float64{2.5 - 1e-6, 2.5 + 1e-6, 2.5, 300}
	dims, strides := []int64{4}, []int64{1}
	res := compareNorm(got, dims, strides, ref, normRule{errs: []float64{1e-5, 1e-5, 1e-5, 0}}, "DST")
	if res.errors != 1 || !strings.Contains(strings.Join(res.lines, "\n"), "[     2]") {
		t.Errorf("errors %d, want 1 (the 4 for 2.5):\n%s", res.errors, strings.Join(res.lines, "\n"))
	}
	// Without the bound, 2.5-1e-6 must be 2 and 2.5+1e-6 must be 3: the
	// 3 and the 2 swapped fail.
	got.set(0, 3)
	got.set(1, 2)
	if res := compareNorm(got, dims, strides, ref, normRule{errs: []float64{0, 0, 1e-5, 0}}, "DST"); res.errors != 3 {
		t.Errorf("errors %d, want 3", res.errors)
	}
}

// TestCompareNormOverflowOutcomes: where a fused op may or may not
// overflow f32, a normalization's output is checked against both
// outcomes, each as strictly as any value: the finite one within its
// bound, the overflow carried through the ops after it; no other value
// passes, as none did not while the bound was lost (infinite).
func TestCompareNormOverflowOutcomes(t *testing.T) {
	scalar := func(v float64) buffer {
		b, _ := newBuffer(dtypes.F32, 1)
		b.set(0, v)
		return b
	}
	mul := refPostOp{g: graphPostOp{bin: "mul"}, operand: scalar(1e38), view: []int64{0}}
	tanh := refPostOp{g: graphPostOp{elt: "tanh"}}
	sub := refPostOp{g: graphPostOp{bin: "sub"}, operand: scalar(1e38), view: []int64{0}}
	for _, c := range []struct {
		chain []refPostOp
		got   []float64
		ok    []bool
	}{
		// x*1e38 near the f32 maximum: ~3.4028e38 or +Inf.
		{[]refPostOp{mul}, []float64{3.4028e38, math.Inf(1), 1, 3e38, math.NaN(), math.Inf(-1)},
			[]bool{true, true, false, false, false, false}},
		// then tanh: 1 either way.
		{[]refPostOp{mul, tanh}, []float64{1, 0.5, math.Inf(1), math.NaN()}, []bool{true, false, false, false}},
		// then - 1e38: ~2.4028e38, or +Inf - 1e38 = +Inf.
		{[]refPostOp{mul, sub}, []float64{2.4028e38, math.Inf(1), 3.4028e38, 1}, []bool{true, true, false, false}},
	} {
		n := int64(len(c.got))
		vals, errs := make([]float64, n), make([]float64, n)
		for i := range vals {
			vals[i], errs[i] = 3.4028, 1e-4
		}
		alts := chainOutput(vals, []int64{n}, c.chain, false, errs)
		for i, g := range c.got {
			got, _ := newBuffer(dtypes.F32, 1)
			got.set(0, g)
			rule := normRule{trh: 1e-6, errs: errs[i : i+1], alts: map[int64][]outcome{0: alts[int64(i)]}}
			r := compareNorm(got, []int64{1}, []int64{1}, vals[i:i+1], rule, "DST")
			if ok := r.errors == 0; ok != c.ok[i] {
				t.Errorf("3.4028 through %d ops (reference %g, bound %g, other outcomes %v): %v passes %v, want %v",
					len(c.chain), vals[i], errs[i], alts[int64(i)], g, ok, c.ok[i])
			}
		}
	}
}

// statsOff is a normalization executor that runs gdnn's compiled
// partition, then moves every kept mean by 1/64: the check must fail it.
type statsOff struct{ normExec }

func (e statsOff) Run(b *normBuilt, i int) error {
	if err := e.normExec.Run(b, i); err != nil {
		return err
	}
	m := b.mean[i]
	forEachIndex(b.meanLT.Dims, [][]int64{b.meanLT.Strides}, func(_ int64, offs []int64) {
		m.set(offs[0], m.get(offs[0])+1.0/64)
	})
	return nil
}

// TestNormKeptStatsChain runs FWD_D layer and group norms, which keep
// their mean and variance, with scales, post-ops (binary operands per
// tensor, per channel and of dst's shape) and float or int8 dst on
// gdnn's graph (the JIT of this machine, or GDNN_MAX_CPU_ISA's): dst and
// the statistics pass benchdnn's check; with every mean moved they FAIL.
func TestNormKeptStatsChain(t *testing.T) {
	problems := [][]string{
		{"--lnorm", "--dir=FWD_D", "--dt=f32,bf16,f16,f32:s8,bf16:u8", "--tag=abx,axb", "--flags=,CH",
			"--attr-scales=,src:common:64+dst:common:0.5", "--attr-post-ops=,relu,add:f32:per_oc,mul:f32:per_tensor+linear:0.5:-1,add:f32:per_tensor+sub:bf16:per_oc", "5x2x77", "3x129"},
		{"--lnorm", "--dir=FWD_D", "--dt=f32:u8,f16", "--stat_tag=abx,bax", "--flags=,C", "--attr-post-ops=mul:f32:per_oc+tanh", "4x3x40"},
		{"--gnorm", "--dir=FWD_D", "--dt=f32,bf16,f16,f32:s8,bf16:u8", "--tag=abx,axb", "--flags=,CH",
			"--attr-scales=,dst:common:0.5,src:common:64+dst:common:0.5", "--attr-post-ops=,relu,add:f32:per_oc,mul:f32:per_tensor+linear:0.5:-1", "g2ic6ih3iw4", "g4mb3ic8iw5"},
		// An int8 src: a Dequantize fused before the normalization too.
		{"--lnorm", "--dir=FWD_D", "--dt=s8:f32,u8:s8", "--flags=,CH", "--attr-scales=src:common:64+dst:common:0.5", "--attr-post-ops=,add:f32:per_oc", "3x100"},
		{"--gnorm", "--dir=FWD_D", "--dt=u8:s8,s8:f32", "--tag=abx,axb", "--attr-post-ops=relu,mul:f32:per_tensor", "g2mb2ic4iw5"},
	}
	for _, p := range problems {
		code, out, errw := runMain(t, append([]string{"--mode=C"}, p...)...)
		s := summary(t, out)
		if code != 0 || s[0] != s[1] || s[0] == "0" {
			t.Errorf("%v: exit %d, summary %v\n%s\n%s", p, code, s, lastLines(out, 12), errw)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "(100%)") {
				t.Logf("%s: %s", p[0], l) // which code ran (jit:avx512, jit:avx2, interp, jit:neon)
			}
		}
	}
	off := func(r *runner) {
		r.normBackend = func(b *normBuilt) (normExec, error) {
			e, err := graphNormBackend(b)
			return statsOff{e}, err
		}
	}
	for _, p := range problems {
		var out, errw bytes.Buffer
		code := runWith(CommandArgs(append([]string{"--mode=C"}, p...)), &out, &errw, off)
		s := summary(t, out.String())
		total, _ := strconv.Atoi(s[0])
		unimpl, _ := strconv.Atoi(s[3])
		failed, _ := strconv.Atoi(s[5])
		if code != 1 || failed != total-unimpl || unimpl != 0 || !strings.Contains(out.String(), "FAILED (MEAN errors:") {
			t.Errorf("%v with the means moved: exit %d, summary %v\n%s", p, code, s, lastLines(out.String(), 12))
		}
	}
}

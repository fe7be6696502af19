package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/shape"
)

// TestPlanAlg checks how every benchdnn alg is built from gdnn ops, and
// the refusals: p below 1 is benchdnn's invalid case, p other than 1 and
// 2 and a non-finite eps are UNIMPLEMENTED.
func TestPlanAlg(t *testing.T) {
	type want struct {
		pre, op graph.OpKind
		eps     string
		root    bool
	}
	cases := []struct {
		alg    string
		p, eps float32
		want   want
	}{
		{"sum", 1, 0, want{op: graph.ReduceSum}},
		{"mul", 1, 0, want{op: graph.ReduceProd}},
		{"max", 1, 0, want{op: graph.ReduceMax}},
		{"min", 1, 0, want{op: graph.ReduceMin}},
		{"mean", 1, 0, want{op: graph.ReduceMean}},
		{"amax", 1, 0, want{pre: graph.Abs, op: graph.ReduceMax}},
		// p and eps are read by the norms only.
		{"sum", 7, float32(math.NaN()), want{op: graph.ReduceSum}},
		{"norm_lp_max", 1, 0.5, want{graph.Abs, graph.ReduceSum, "max", false}},
		{"norm_lp_max", 2, 0.5, want{graph.Square, graph.ReduceSum, "max", true}},
		{"norm_lp_sum", 1, 0.5, want{graph.Abs, graph.ReduceSum, "add", false}},
		{"norm_lp_sum", 2, 0, want{graph.Square, graph.ReduceSum, "add", true}},
		{"norm_lp_power_p_max", 1, 0.5, want{graph.Abs, graph.ReduceSum, "max", false}},
		{"norm_lp_power_p_max", 2, 0.5, want{graph.Square, graph.ReduceSum, "max", false}},
		{"norm_lp_power_p_sum", 1, 0.5, want{graph.Abs, graph.ReduceSum, "add", false}},
		{"norm_lp_power_p_sum", 2, -3, want{graph.Square, graph.ReduceSum, "add", false}},
	}
	for _, c := range cases {
		ap, res := planAlg(c.alg, c.p, c.eps)
		got := want{ap.pre, ap.op, ap.eps, ap.root}
		if res.state != "" || got != c.want {
			t.Errorf("%s p=%v eps=%v: %+v (%s %s), want %+v", c.alg, c.p, c.eps, got, res.state, res.reason, c.want)
		}
		if ap.kind.name != c.alg || ap.kind.norm != strings.HasPrefix(c.alg, "norm") {
			t.Errorf("%s: kind %+v", c.alg, ap.kind)
		}
		if n := len(ap.finalOps()); n != map[bool]int{false: 0, true: 1}[ap.eps != ""]+map[bool]int{false: 0, true: 1}[ap.root] {
			t.Errorf("%s p=%v: %d final ops", c.alg, c.p, n)
		}
	}
	refusals := []struct {
		alg    string
		p, eps float32
		state  string
		why    string
	}{
		{"norm_lp_max", 0.5, 0, "SKIPPED", "invalid case"},
		{"norm_lp_sum", float32(math.NaN()), 0, "SKIPPED", "invalid case"},
		{"norm_lp_power_p_sum", -1, 0, "SKIPPED", "invalid case"},
		{"norm_lp_max", 3, 0, "UNIMPLEMENTED", "p=1 and p=2 only"},
		{"norm_lp_power_p_max", 1.5, 0, "UNIMPLEMENTED", "p=1 and p=2 only"},
		{"norm_lp_sum", 2, float32(math.Inf(1)), "UNIMPLEMENTED", "finite eps"},
		{"bogus", 1, 0, "UNIMPLEMENTED", "does not know"},
	}
	for _, c := range refusals {
		_, res := planAlg(c.alg, c.p, c.eps)
		if res.state != c.state || !strings.Contains(res.reason, c.why) {
			t.Errorf("%s p=%v eps=%v: %s (%s), want %s with %q", c.alg, c.p, c.eps, res.state, res.reason, c.state, c.why)
		}
	}
}

// TestAlgParsing checks the spellings --alg takes (benchdnn's, with and
// without the reduction_ prefix, any case) and that --p and --eps reach
// the repro line when they differ from the defaults.
func TestAlgParsing(t *testing.T) {
	code, out, errw := runMain(t, "--reduction", "--mode=L", "--alg=Reduction_Norm_LP_Max,mul,AMAX", "--p=2", "--eps=0.5", "4x3:4x1")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errw)
	}
	for _, want := range []string{
		"0:LISTED __REPRO: --mode=L --reduction --alg=norm_lp_max --p=2 --eps=0.5 4x3:4x1",
		"1:LISTED __REPRO: --mode=L --reduction --alg=mul --p=2 --eps=0.5 4x3:4x1",
		"2:LISTED __REPRO: --mode=L --reduction --alg=amax --p=2 --eps=0.5 4x3:4x1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, bad := range [][]string{{"--alg=median"}, {"--p=two"}, {"--eps=x"}} {
		if code, _, errw := runMain(t, append(append([]string{"--reduction"}, bad...), "4x3:4x1")...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, errw)
		}
	}
	// Refusals are counted, with their reason, and do not fail the run.
	code, out, _ = runMain(t, "--reduction", "--alg=norm_lp_max", "--p=0.5,3", "4x3:4x1")
	if code != 0 || !strings.Contains(out, "0:SKIPPED (invalid case") || !strings.Contains(out, "1:UNIMPLEMENTED (--alg=norm_lp_max with --p=3") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// algBuilt makes the part of a built reduction the reference reads, for
// alg over a dense src of dims, as build does: the kind, the fill and the
// reference chain of the alg's final ops (the eps operand holds eps).
func algBuilt(t *testing.T, alg string, p, eps float32, sdt, ddt dtypes.DataType, dims []int64, reduced []bool) *built {
	t.Helper()
	ap, res := planAlg(alg, p, eps)
	if res.state != "" {
		t.Fatalf("%s: %s %s", alg, res.state, res.reason)
	}
	n, _ := numElements(dims)
	src, err := newBuffer(sdt, n)
	if err != nil {
		t.Fatal(err)
	}
	b := &built{srcLT: graph.NewLogicalTensorStrided(0, sdt, dims, graph.DenseStrides(dims)), src: src, reduced: reduced}
	b.fill = srcFill{kind: ap.kind, narrow: sdt == dtypes.F16 || ddt == dtypes.F16}
	for _, gp := range ap.finalOps() {
		rp := refPostOp{g: gp}
		if gp.bin != "" {
			rp.operand, _ = newBuffer(dtypes.F32, 1)
			rp.operand.set(0, float64(eps))
			rp.view = make([]int64, len(dims))
		}
		b.chain = append(b.chain, rp)
	}
	return b
}

// f32Reduce computes what b reduces the way a correct f32 kernel may:
// elements in order, every step rounded to f32 (the pre-op, the combine,
// the mean's division, the eps op and the root), the result rounded to
// ddt into out (dense over the keep-dims dst).
func f32Reduce(b *built, ddt dtypes.DataType) buffer {
	k := b.fill.kind
	dims := b.srcLT.Dims
	_, oview, n, _ := reductionViews(dims, b.reduced)
	outs := shape.ReduceDims(dims, b.reduced, true)
	nOut, _ := numElements(outs)
	acc := make([]float32, nOut)
	for i := range acc {
		acc[i] = float32(k.identity())
	}
	forEachIndex(dims, [][]int64{b.srcLT.Strides, oview}, func(_ int64, offs []int64) {
		x := float32(b.src.get(offs[0]))
		switch k.pre {
		case "abs":
			x = float32(math.Abs(float64(x)))
		case "square":
			x *= x
		}
		a := &acc[offs[1]]
		switch k.combine {
		case combineSum:
			*a += x
		case combineMul:
			*a *= x
		case combineMax:
			*a = max(*a, x)
		case combineMin:
			*a = min(*a, x)
		}
	})
	out, _ := newBuffer(ddt, nOut)
	for i, a := range acc {
		if k.mean {
			a /= float32(n)
		}
		for _, rp := range b.chain {
			switch {
			case rp.g.bin == "max":
				a = max(a, float32(rp.operand.get(0)))
			case rp.g.bin == "add":
				a += float32(rp.operand.get(0))
			case rp.g.elt == "sqrt":
				a = float32(math.Sqrt(float64(a)))
			}
		}
		out.set(int64(i), float64(a))
	}
	return out
}

// TestReferencePerAlg checks the reference of every alg, in every data
// type, with both fills: a correct f32 computation passes, and the same
// output with one value moved a few steps of the dst type fails.
func TestReferencePerAlg(t *testing.T) {
	algs := []struct {
		alg    string
		p, eps float32
	}{
		{"sum", 1, 0}, {"mul", 1, 0}, {"max", 1, 0}, {"min", 1, 0}, {"mean", 1, 0}, {"amax", 1, 0},
		{"norm_lp_max", 1, 0.5}, {"norm_lp_max", 2, 0.5}, {"norm_lp_sum", 1, 0.5}, {"norm_lp_sum", 2, 0.5},
		{"norm_lp_power_p_max", 1, 0.5}, {"norm_lp_power_p_max", 2, 100}, {"norm_lp_power_p_sum", 1, 0.5},
		{"norm_lp_power_p_sum", 2, 0.5}, {"norm_lp_max", 2, 0}, {"norm_lp_sum", 1, 0},
	}
	shapes := []struct {
		dims    []int64
		reduced []bool
	}{
		{[]int64{6, 37}, []bool{false, true}},
		{[]int64{5, 3, 40}, []bool{true, false, true}},
		{[]int64{700, 3}, []bool{true, false}},
	}
	dts := [][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.F16, dtypes.F16}, {dtypes.BF16, dtypes.F32}, {dtypes.F16, dtypes.F32}}
	for _, a := range algs {
		for _, dt := range dts {
			for si, sh := range shapes {
				for _, mode := range []fillMode{fillExact, fillRandom} {
					name := fmt.Sprintf("%s p=%v eps=%v %s:%s shape %d %s fill", a.alg, a.p, a.eps, dt[0], dt[1], si, fillName(mode))
					b := algBuilt(t, a.alg, a.p, a.eps, dt[0], dt[1], sh.dims, sh.reduced)
					fillSrc(b.src, b.srcLT.Dims, b.srcLT.Strides, b.reduced, mode, b.fill, uint64(si)+3)
					out := f32Reduce(b, dt[1])
					outDims := shape.ReduceDims(sh.dims, sh.reduced, true)
					strides := graph.DenseStrides(outDims)
					ref, allow, alts := reductionReference(b, dt[1], mode)
					if chk := compareOutput(out, outDims, strides, ref, allow, alts); chk.errors != 0 {
						t.Errorf("%s: a correct result fails: %v", name, chk.lines)
						continue
					}
					// A wrong result: one output moved by more than its
					// allowance and at least 8 steps of the dst type.
					k := int64(len(ref) / 2)
					v := out.get(k)
					out.set(k, v+4*allow[k]+8*epsilon(dt[1])*max(math.Abs(v), 1))
					if chk := compareOutput(out, outDims, strides, ref, allow, alts); chk.errors != 1 {
						t.Errorf("%s: a wrong result gives %d errors, want 1 (ref %v, allowed %v)", name, chk.errors, ref[k], allow[k])
					}
				}
			}
		}
	}
}

// TestFillsPerKind checks what the exact fill promises each kind: sums
// of squares and products exact in f32 in any order, max data all
// negative and min data all positive, and products within range.
func TestFillsPerKind(t *testing.T) {
	dims := []int64{3, 5000}
	reduced := []bool{false, true}
	for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
		for _, alg := range []string{"norm_lp_sum", "mul", "max", "min"} {
			b := algBuilt(t, alg, 2, 0, dt, dt, dims, reduced)
			fillSrc(b.src, dims, b.srcLT.Strides, reduced, fillExact, b.fill, 5)
			acc, _, _ := refReduce(b.src, dims, b.srcLT.Strides, reduced, b.fill.kind)
			for o := int64(0); o < dims[0]; o++ {
				fwd, bwd := float32(b.fill.kind.identity()), float32(b.fill.kind.identity())
				for i := int64(0); i < dims[1]; i++ {
					x, y := float32(b.src.get(o*dims[1]+i)), float32(b.src.get(o*dims[1]+dims[1]-1-i))
					switch alg {
					case "norm_lp_sum":
						fwd, bwd = fwd+x*x, bwd+y*y
					case "mul":
						fwd, bwd = fwd*x, bwd*y
					case "max":
						if x >= 0 {
							t.Fatalf("%s %s: max data %v not negative", dt, alg, x)
						}
					case "min":
						if x <= 0 {
							t.Fatalf("%s %s: min data %v not positive", dt, alg, x)
						}
					}
				}
				if alg == "max" || alg == "min" {
					continue
				}
				if float64(fwd) != acc[o] || float64(bwd) != acc[o] || acc[o] == 0 || math.IsInf(roundTo(dt, acc[o]), 0) {
					t.Errorf("%s %s output %d: f32 %v / %v, exact %v", dt, alg, o, fwd, bwd, acc[o])
				}
			}
		}
	}
}

// TestKindOfOp checks the graph driver's reading of each Reduce* op:
// ReduceL1 sums |x|, ReduceL2 sums x*x and takes the root; other kinds
// are not reductions.
func TestKindOfOp(t *testing.T) {
	cases := []struct {
		op   graph.OpKind
		pre  string
		comb combineOp
		mean bool
		root bool
	}{
		{graph.ReduceSum, "", combineSum, false, false},
		{graph.ReduceProd, "", combineMul, false, false},
		{graph.ReduceMax, "", combineMax, false, false},
		{graph.ReduceMin, "", combineMin, false, false},
		{graph.ReduceMean, "", combineSum, true, false},
		{graph.ReduceL1, "abs", combineSum, false, false},
		{graph.ReduceL2, "square", combineSum, false, true},
	}
	for _, c := range cases {
		k, root, ok := kindOfOp(c.op)
		if !ok || k.pre != c.pre || k.combine != c.comb || k.mean != c.mean || root != c.root {
			t.Errorf("%s: %+v root %v ok %v", c.op, k, root, ok)
		}
	}
	if _, _, ok := kindOfOp(graph.Add); ok {
		t.Error("Add read as a reduction")
	}
}

// TestEveryAlgSmallBatch runs every alg, in every pair of data types
// gdnn takes (dst the src type or f32), plain and channels-last, with and
// without a fused binary post-op, over shapes that reduce inner, outer,
// several and no dims, and an empty dim: every problem must be checked
// and PASS (whichever backend runs it).
func TestEveryAlgSmallBatch(t *testing.T) {
	for _, dts := range [][2]string{{"f32", "f32"}, {"bf16", "bf16,f32"}, {"f16", "f16,f32"}} {
		code, out, errw := runMain(t, "--reduction", "--sdt="+dts[0], "--ddt="+dts[1],
			"--alg=sum,mul,max,min,mean,amax", "--stag=abx,axb", "--attr-post-ops=,add:f32:per_oc",
			"2x16x3x4:2x1x3x1", "3x5x7:1x5x1", "4x33:4x1", "6x2:6x2", "3x0:3x1",
			"--alg=norm_lp_max,norm_lp_sum,norm_lp_power_p_max,norm_lp_power_p_sum", "--p=1,2", "--eps=0,0.5",
			"2x16x3x4:2x1x3x1", "3x5x7:1x5x1", "4x33:4x1", "0x4:1x4")
		// ddts x 2 stags x 2 post-ops x (6 algs x 5 shapes + 4 algs x 2 p x 2 eps x 4 shapes).
		want := fmt.Sprint(len(strings.Split(dts[1], ",")) * 2 * 2 * (6*5 + 4*2*2*4))
		if got := summary(t, out); code != 0 || got[0] != want || got[1] != want {
			t.Errorf("%s: exit %d, summary %v, want %s tests all passed\n%s%s", dts, code, got, want, out, errw)
		}
	}
}

// TestOptionSetAllAlgs runs oneDNN's option_set_all_algs: every problem
// passes, those with blocked layouts (aBx8b, aBx16b, ABx16a16b, src and
// dst blocked apart) included.
func TestOptionSetAllAlgs(t *testing.T) {
	needShared(t)
	code, out, errw := runMain(t, "--reduction", "--batch="+sharedInputs+"/reduction/option_set_all_algs")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errw)
	}
	passed := 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, ":PASSED "):
			passed++
		case strings.Contains(line, "__REPRO"):
			t.Errorf("unexpected result: %s", line)
		}
	}
	if passed != 689 {
		t.Errorf("%d passed, want 689:\n%s", passed, out)
	}
}

// TestEmptyReductionReference checks the reference of a reduction over an
// axis of size 0: sum 0, product 1, max -Inf, min +Inf, mean NaN, and the
// norms their finalize of 0 (root(max(0, eps)), eps + 0).
func TestEmptyReductionReference(t *testing.T) {
	cases := []struct {
		alg  string
		p    float32
		want float64
	}{
		{"sum", 1, 0}, {"mul", 1, 1}, {"max", 1, math.Inf(-1)}, {"min", 1, math.Inf(1)}, {"mean", 1, math.NaN()},
		{"amax", 1, math.Inf(-1)}, {"norm_lp_max", 2, 0.5}, {"norm_lp_power_p_sum", 1, 0.25},
	}
	for _, c := range cases {
		b := algBuilt(t, c.alg, c.p, 0.25, dtypes.F32, dtypes.F32, []int64{3, 0}, []bool{false, true})
		for _, mode := range []fillMode{fillExact, fillRandom} {
			ref, _, _ := reductionReference(b, dtypes.F32, mode)
			for i, v := range ref {
				if !(v == c.want || math.IsNaN(v) && math.IsNaN(c.want)) || len(ref) != 3 {
					t.Errorf("%s %s fill: output %d of %d is %v, want %v", c.alg, fillName(mode), i, len(ref), v, c.want)
				}
			}
		}
	}
}

// TestTableNamesAlg checks that the --table summary names each row's alg,
// with p and eps for the norms.
func TestTableNamesAlg(t *testing.T) {
	code, out, _ := runMain(t, "--reduction", "--table", "--alg=max,norm_lp_sum", "--p=2", "4x5:4x1")
	if code != 0 || !strings.Contains(out, " alg ") || !strings.Contains(out, "[1]   max ") || !strings.Contains(out, "norm_lp_sum p=2 eps=0 ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestRefLogSumExp checks the graph driver's log-sum-exp reference: it is
// stable (a row of 1000s gives 1000 + log(n), where exp alone overflows
// f32), agrees with the direct formula where that is safe, gives NaN, +Inf
// and -Inf as gdnn's semantics say (-Inf for an empty reduction too), and
// allows an error that is small beside the result.
func TestRefLogSumExp(t *testing.T) {
	const n = 1000
	src, err := newBuffer(dtypes.F32, 5*n)
	if err != nil {
		t.Fatal(err)
	}
	direct := 0.0
	for i := 0; i < n; i++ {
		src.set(int64(i), 1000)
		x := float64(float32(math.Sin(float64(i))))
		src.set(int64(n+i), x)
		direct += math.Exp(x)
		src.set(int64(2*n+i), x)
		src.set(int64(3*n+i), x)
		src.set(int64(4*n+i), math.Inf(-1))
	}
	src.set(2*n+7, math.NaN())
	src.set(3*n+9, math.Inf(1))
	vals, errs := refLogSumExp(src, []int64{5, n}, []int64{n, 1}, []bool{false, true})
	want := []float64{1000 + math.Log(n), math.Log(direct), math.NaN(), math.Inf(1), math.Inf(-1)}
	for i, w := range want {
		v := vals[i]
		if !(math.Abs(v-w) <= 1e-12*math.Abs(w) || v == w || math.IsNaN(v) && math.IsNaN(w)) {
			t.Errorf("row %d: %v, want %v", i, v, w)
		}
		if finite := !math.IsInf(w, 0) && !math.IsNaN(w); finite && !(errs[i] > 0 && errs[i] < 1e-3*math.Abs(w)) {
			t.Errorf("row %d: allowed error %v for %v", i, errs[i], w)
		}
	}
	empty, _ := newBuffer(dtypes.F32, 0)
	if vals, _ := refLogSumExp(empty, []int64{3, 0}, []int64{0, 1}, []bool{false, true}); len(vals) != 3 || !math.IsInf(vals[0], -1) {
		t.Errorf("empty reduction: %v, want three -Inf", vals)
	}
}

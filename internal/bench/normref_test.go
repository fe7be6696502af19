package bench

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
)

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > tol {
			t.Errorf("%s[%d] = %.10g, want %.10g", what, i, got[i], want[i])
		}
	}
}

func TestRefSoftmax(t *testing.T) {
	// softmax(1, 2, 3) = e^k / (e + e^2 + e^3); log-softmax = x - 3 - log(1 + e^-1 + e^-2).
	near(t, "softmax", refSoftmax([]float64{1, 2, 3}, []int64{3}, 0, false, false),
		[]float64{0.09003057317, 0.2447284711, 0.6652409558}, 1e-10)
	near(t, "logsoftmax", refSoftmax([]float64{1, 2, 3}, []int64{3}, 0, true, false),
		[]float64{-2.407605964, -1.407605964, -0.4076059644}, 1e-9)
	// Shifted by the max: exp(1000) overflows float64, the result does not.
	near(t, "overflow", refSoftmax([]float64{1000, 1000}, []int64{2}, 0, false, false), []float64{0.5, 0.5}, 0)
	near(t, "log overflow", refSoftmax([]float64{1000, 1000}, []int64{2}, 0, true, false), []float64{-math.Ln2, -math.Ln2}, 1e-15)
	// -Inf gives exact 0s; an all -Inf row NaN, or 0 in inf_as_zero mode.
	inf := math.Inf(-1)
	near(t, "-inf", refSoftmax([]float64{inf, 0}, []int64{2}, 0, false, false), []float64{0, 1}, 0)
	near(t, "all -inf", refSoftmax([]float64{inf, inf}, []int64{2}, 0, false, false), []float64{math.NaN(), math.NaN()}, 0)
	near(t, "inf_as_zero", refSoftmax([]float64{inf, inf}, []int64{2}, 0, false, true), []float64{0, 0}, 0)
	// Along axis 0 of 2x2: columns (0, ln3) and (1, 1).
	near(t, "axis 0", refSoftmax([]float64{0, 1, math.Log(3), 1}, []int64{2, 2}, 0, false, false),
		[]float64{0.25, 0.5, 0.75, 0.5}, 1e-15)
	// Along the middle axis of 1x2x2: pairs (x[0], x[2]) and (x[1], x[3]).
	near(t, "middle axis", refSoftmax([]float64{0, 5, 0, 5}, []int64{1, 2, 2}, 1, false, false),
		[]float64{0.5, 0.5, 0.5, 0.5}, 0)
}

func TestRefLayerNorm(t *testing.T) {
	// Row (1, 2, 3, 4): mean 2.5, variance 1.25 (biased).
	x := []float64{1, 2, 3, 4}
	s := 1 / math.Sqrt(1.25)
	dst, mean, vari := refLayerNorm(x, 1, 4, 0, nil, nil, false)
	near(t, "dst", dst, []float64{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}, 1e-15)
	near(t, "mean", mean, []float64{2.5}, 0)
	near(t, "variance", vari, []float64{1.25}, 0)
	// Scale and shift per element of the row.
	dst, _, _ = refLayerNorm(x, 1, 4, 0, []float64{2, 2, 1, 1}, []float64{1, 0, 0, -1}, false)
	near(t, "affine", dst, []float64{-3*s + 1, -s, 0.5 * s, 1.5*s - 1}, 1e-15)
	// Epsilon inside the square root: (0, 2) has mean 1, variance 1, so
	// with eps 1 the dst is -+1/sqrt(2).
	dst, _, _ = refLayerNorm([]float64{0, 2}, 1, 2, 1, nil, nil, false)
	near(t, "eps", dst, []float64{-1 / math.Sqrt2, 1 / math.Sqrt2}, 1e-15)
	// RMS norm: no mean; the variance is the mean square, 7.5.
	dst, _, vari = refLayerNorm(x, 1, 4, 0.5, nil, nil, true)
	r := 1 / math.Sqrt(8)
	near(t, "rms", dst, []float64{r, 2 * r, 3 * r, 4 * r}, 1e-15)
	near(t, "rms variance", vari, []float64{7.5}, 0)
	// Two rows are independent.
	_, mean, _ = refLayerNorm([]float64{1, 3, 10, 30}, 2, 2, 0, nil, nil, false)
	near(t, "rows", mean, []float64{2, 20}, 0)
}

func TestRefGroupNorm(t *testing.T) {
	// 1 batch, 4 channels of 1 element, 2 groups: (1, 3) has mean 2,
	// variance 1; (10, 20) mean 15, variance 25.
	dst, mean, vari := refGroupNorm([]float64{1, 3, 10, 20}, 1, 4, 1, 2, 0, nil, nil)
	near(t, "dst", dst, []float64{-1, 1, -1, 1}, 1e-15)
	near(t, "mean", mean, []float64{2, 15}, 0)
	near(t, "variance", vari, []float64{1, 25}, 0)
	// Per-channel scale and shift.
	dst, _, _ = refGroupNorm([]float64{1, 3, 10, 20}, 1, 4, 1, 2, 0, []float64{1, 2, 3, 4}, []float64{0, 0, 0, 1})
	near(t, "affine", dst, []float64{-1, 2, -3, 5}, 1e-15)
	// 2 batches, 2 channels of 2 elements, 1 group: each batch's 4 values.
	_, mean, vari = refGroupNorm([]float64{1, 1, 3, 3, 0, 0, 0, 8}, 2, 2, 2, 1, 0, nil, nil)
	near(t, "batches mean", mean, []float64{2, 2}, 0)
	near(t, "batches variance", vari, []float64{1, 12}, 0)
}

// TestSoftmaxFill: every row holds one contiguous run of 1-2 a+2, 2-5
// a+1, 5-8 a (fewer on short axes), everything else the lowest value;
// the negative mode is all negative, the overflow mode past exp's f32
// range.
func TestSoftmaxFill(t *testing.T) {
	for _, negative := range []bool{false, true} {
		for _, dims := range [][]int64{{3, 40, 2}, {5, 1}, {2, 3}, {7, 9}} {
			axis := 1
			vals := softmaxFill(dims, axis, negative, -1e30, 42)
			outer, n, inner := splitAt(dims, axis)
			for o := int64(0); o < outer; o++ {
				for in := int64(0); in < inner; in++ {
					var row []float64
					for k := int64(0); k < n; k++ {
						row = append(row, vals[(o*n+k)*inner+in])
					}
					a := 88.0
					if negative {
						a = -88
					}
					counts := map[float64]int{}
					start, end := -1, -1
					for k, v := range row {
						if v != -1e30 {
							counts[v]++
							if start < 0 {
								start = k
							}
							end = k
						}
					}
					run := counts[a+2] + counts[a+1] + counts[a]
					if counts[a+2] < 1 || counts[a+2] > 2 || run > 15 || run != end-start+1 || run != min(int(n), run) ||
						(n >= 15 && (counts[a+1] < 2 || counts[a] < 5)) || len(counts) > 3 {
						t.Errorf("dims %v negative %v: row %v", dims, negative, row)
					}
					if row[start] != a+2 {
						t.Errorf("dims %v: the run starts with %v, want %v", dims, row[start], a+2)
					}
				}
			}
		}
	}
}

// TestStatsFill: the data's sums are exact in f32 in any order, so the
// mean is exact; the values are exact in the src type.
func TestStatsFill(t *testing.T) {
	for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
		for _, l := range []int64{1, 3, 15, 300, 768, 1024, 4097, 100000} {
			rows := int64(9)
			vals := statsFill(rows, l, dt, 5)
			for r := int64(0); r < rows; r++ {
				row := vals[r*l : (r+1)*l]
				m, v := meanVar(row, false)
				var fwd, bwd, sq float32
				exactSq := 0.0
				for i := range row {
					if roundTo(dt, row[i]) != row[i] {
						t.Fatalf("%s L=%d: %v is not a %s", dt, l, row[i], dt)
					}
					fwd += float32(row[i])
					bwd += float32(row[len(row)-1-i])
					d := float32(row[i] - m)
					sq += d * d
					exactSq += (row[i] - m) * (row[i] - m)
				}
				if float64(fwd) != m*float64(l) || float64(bwd) != m*float64(l) {
					t.Errorf("%s L=%d row %d: f32 sums %v %v, exact %v", dt, l, r, fwd, bwd, m*float64(l))
				}
				if dt == dtypes.F32 && float64(sq) != exactSq {
					t.Errorf("%s L=%d row %d: f32 sum of squares %v, exact %v", dt, l, r, sq, exactSq)
				}
				if math.Abs(v*float64(l)-exactSq) > 1e-12*exactSq {
					t.Errorf("%s L=%d row %d: variance %v", dt, l, r, v)
				}
			}
		}
	}
}

func TestCompareNorm(t *testing.T) {
	buf := func(dt dtypes.DataType, vals ...float64) buffer {
		b, _ := newBuffer(dt, int64(len(vals)))
		for i, v := range vals {
			b.set(int64(i), v)
		}
		return b
	}
	dims, st := []int64{1}, []int64{1}
	for _, c := range []struct {
		name      string
		dt        dtypes.DataType
		got, want float64
		rule      normRule
		ok        bool
	}{
		{"exact", dtypes.F32, 0.25, 0.25, normRule{}, true},
		{"within trh", dtypes.F32, 1 + 4*epsF32, 1, normRule{trh: 5e-7}, true},
		{"past trh", dtypes.F32, 1 + 8*epsF32, 1, normRule{trh: 5e-7}, false},
		{"tiny", dtypes.F32, 1e-6 + 1e-7, 1e-6, normRule{}, true},
		{"tiny but off", dtypes.F32, 1e-6 + 2e-7, 1e-6, normRule{}, false},
		{"softmax abs", dtypes.F32, 0.5 + 5e-8, 0.5, normRule{absF32: true}, true},
		{"softmax abs past", dtypes.F32, 0.5 + 2e-7, 0.5, normRule{absF32: true}, false},
		{"nan", dtypes.F32, math.NaN(), math.NaN(), normRule{}, true},
		{"nan got", dtypes.F32, math.NaN(), 1, normRule{trh: 1}, false},
		{"inf", dtypes.F32, math.Inf(1), 1, normRule{trh: 1}, false},
		// A bf16 dst under strict accumulation: the reference rounded, or
		// the neighbour its f32-slack interval reaches at a tie.
		{"bf16 rounded", dtypes.BF16, 1, 1 + 1.0/512, normRule{slack: 10 * epsF32}, true},
		{"bf16 at a tie", dtypes.BF16, 1 + 1.0/128, 1 + 1.0/256, normRule{slack: 10 * epsF32}, true},
		{"bf16 a step off", dtypes.BF16, 1 + 1.0/128, 1, normRule{slack: 10 * epsF32}, false},
		// gamma*x + beta cancelling: judged against |exp - beta|.
		{"cancellation", dtypes.F32, 1e-3 + 1e-9, 1e-3, normRule{trh: 5e-7, shift: []float64{-1}}, true},
		{"no cancellation", dtypes.F32, 1e-3 + 1e-9, 1e-3, normRule{trh: 5e-7, shift: []float64{1e-3}}, false},
	} {
		r := compareNorm(buf(c.dt, c.got), dims, st, []float64{c.want}, c.rule, "DST")
		if (r.errors == 0) != c.ok {
			t.Errorf("%s: errors %d %v, want ok=%v", c.name, r.errors, r.lines, c.ok)
		}
	}
}

func TestNormRules(t *testing.T) {
	if r := softmaxRule(dtypes.F32, false, ""); r.trh != 10*epsF32 {
		t.Errorf("softmax f32 trh %g", r.trh)
	}
	if r := softmaxRule(dtypes.F32, true, ""); r.trh != 50*epsF32 {
		t.Errorf("logsoftmax f32 trh %g", r.trh)
	}
	if r := softmaxRule(dtypes.BF16, false, "strict"); r.trh != 0 || r.slack == 0 {
		t.Errorf("softmax bf16 strict %+v", r)
	}
	if r := softmaxRule(dtypes.F16, true, "relaxed"); r.trh != 5.0/1024 {
		t.Errorf("logsoftmax f16 relaxed trh %g", r.trh)
	}
	if r := statsRule(dtypes.BF16, 5e-7); r.trh != 5e-7*65536 {
		t.Errorf("lnorm bf16 trh %g", r.trh)
	}
	if r := statsRule(dtypes.F16, 6e-7); r.trh != 6e-7*8192 {
		t.Errorf("gnorm f16 trh %g", r.trh)
	}
}

// fakeNorm computes the problems in plain float32, independently of the
// reference, with perturb (when set) applied to the dst: the harness's
// fills, layouts and comparison run end to end without gdnn's ops.
type fakeNorm struct {
	perturb func(pos int64, v float64) float64
}

func (f *fakeNorm) Impl() string   { return "fake" }
func (f *fakeNorm) Reason() string { return "" }

func fakeBackend(perturb func(int64, float64) float64) normBackendFunc {
	return func(b *normBuilt) (normExec, error) {
		for _, lt := range []*graph.LogicalTensor{&b.dstLT, &b.meanLT, &b.varLT} {
			if lt.Layout == graph.LayoutAny && lt.ID != 0 {
				*lt = graph.NewLogicalTensorStrided(lt.ID, lt.DataType, lt.Dims, graph.DenseStrides(lt.Dims))
			}
		}
		return &fakeNorm{perturb: perturb}, nil
	}
}

func (f *fakeNorm) Run(b *normBuilt, i int) error {
	dims := b.srcLT.Dims
	x := loadLogical(b.src, dims, b.srcLT.Strides)
	var gamma, beta []float64
	if b.scale {
		gamma = loadLogical(b.gamma, b.gammaLT.Dims, b.gammaLT.Strides)
	}
	if b.shift {
		beta = loadLogical(b.beta, b.betaLT.Dims, b.betaLT.Strides)
	}
	f32 := func(v float64) float32 { return float32(v) }
	dst := make([]float64, len(x))
	var mean, vari []float64
	// norm normalizes the elements idx (channel ch(k) of each) in f32.
	norm := func(idx []int64, ch func(k int) int64, zeroMean bool) (float64, float64) {
		var m, v float32
		if len(idx) == 0 {
			return 0, 0
		}
		if !zeroMean {
			for _, p := range idx {
				m += f32(x[p])
			}
			m /= float32(len(idx))
		}
		for _, p := range idx {
			d := f32(x[p]) - m
			v += d * d
		}
		v /= float32(len(idx))
		den := float32(math.Sqrt(float64(v + b.eps)))
		for k, p := range idx {
			y := (f32(x[p]) - m) / den
			if gamma != nil {
				y *= f32(gamma[ch(k)])
			}
			if beta != nil {
				y += f32(beta[ch(k)])
			}
			dst[p] = float64(y)
		}
		return float64(m), float64(v)
	}
	switch b.c.driver {
	case "softmax":
		outer, n, inner := splitAt(dims, b.axis)
		for o := int64(0); o < outer; o++ {
			for in := int64(0); in < inner; in++ {
				at := func(k int64) int64 { return (o*n+k)*inner + in }
				mx := float32(math.Inf(-1))
				for k := int64(0); k < n; k++ {
					mx = max(mx, f32(x[at(k)]))
				}
				var sum float32
				for k := int64(0); k < n; k++ {
					sum += float32(math.Exp(float64(f32(x[at(k)]) - mx)))
				}
				for k := int64(0); k < n; k++ {
					d := f32(x[at(k)]) - mx
					if b.op == "LogSoftmax" {
						dst[at(k)] = float64(d - float32(math.Log(float64(sum))))
					} else {
						dst[at(k)] = float64(float32(math.Exp(float64(d))) / sum)
					}
				}
			}
		}
	case "lnorm":
		l := dims[len(dims)-1]
		for r := int64(0); r < rows(dims[:len(dims)-1]); r++ {
			idx := make([]int64, l)
			for k := range idx {
				idx[k] = r*l + int64(k)
			}
			m, v := norm(idx, func(k int) int64 { return int64(k) }, b.rms)
			mean, vari = append(mean, m), append(vari, v)
		}
	case "gnorm":
		n, c, g := dims[0], dims[1], b.groups
		sp := int64(1)
		for _, d := range dims[2:] {
			sp *= d
		}
		for bi := int64(0); bi < n; bi++ {
			for gi := int64(0); gi < g; gi++ {
				lo := (bi*c + gi*(c/g)) * sp
				idx := make([]int64, (c/g)*sp)
				for k := range idx {
					idx[k] = lo + int64(k)
				}
				m, v := norm(idx, func(k int) int64 { return (idx[k] / sp) % c }, false)
				mean, vari = append(mean, m), append(vari, v)
			}
		}
	}
	if f.perturb != nil {
		for p := range dst {
			dst[p] = f.perturb(int64(p), dst[p])
		}
	}
	storeLogical(b.dst[i], b.dstLT.Dims, b.dstLT.Strides, dst)
	if b.keepStats {
		storeLogical(b.mean[i], b.meanLT.Dims, b.meanLT.Strides, mean)
		storeLogical(b.vari[i], b.varLT.Dims, b.varLT.Strides, vari)
	}
	return nil
}

func runFake(t *testing.T, perturb func(int64, float64) float64, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := runWith(CommandArgs(args), &out, &errw, func(r *runner) { r.normBackend = fakeBackend(perturb) })
	return code, out.String(), errw.String()
}

// TestNormFakeExecutor runs the three drivers end to end on the fake
// executor: a correct result passes under benchdnn's thresholds, in every
// layout, type and flag gdnn runs; a perturbed one FAILS, so the
// comparison can fail.
func TestNormFakeExecutor(t *testing.T) {
	problems := [][]string{
		{"--softmax", "--sdt=f32,bf16,f16", "--ddt=f32,bf16,f16", "--alg=SOFTMAX,LOGSOFTMAX", "--axis=0,1,2",
			"--stag=abx,axb", "--dir=FWD_D,FWD_I", "4x33x5", "2x300x1", "1x1x1"},
		{"--lnorm", "--dt=f32,bf16,f16,f32:bf16,bf16:f32", "--tag=abx,axb:abx,tnc", "--stat_tag=any,abx,undef,ba",
			"--flags=,C,H,CH,M,CM", "--dir=FWD_D,FWD_I", "5x2x77", "3x4x1024"},
		{"--lnorm", "--ss_dt=bf16", "--flags=CH", "--dt=bf16", "7x768"},
		{"--gnorm", "--dt=f32,bf16,f16,bf16:f32", "--tag=abx,axb", "--flags=,C,H,CH", "--dir=FWD_D,FWD_I",
			"g2mb2ic8ih3iw4", "g5mb3ic10id2ih1iw3", "g1ic2iw40", "g32ic64ih2iw2eps0.001"},
		// Empty tensors (an empty row's mean and variance are 0, as in
		// benchdnn) and rows of one element.
		{"--softmax", "--axis=0,1", "0x4", "4x0", "1x1"},
		{"--lnorm", "--flags=,CH", "5x0", "0x5", "7", "3x1"},
		{"--gnorm", "--flags=,CH", "g1mb0ic4iw3", "g4ic4", "g1ic1iw1"},
	}
	for _, p := range problems {
		code, out, errw := runFake(t, nil, append([]string{"--mode=C"}, p...)...)
		s := summary(t, out)
		if code != 0 || s[0] != s[1] || s[0] == "0" {
			t.Errorf("%v: exit %d, summary %v\n%s\n%s", p, code, s, lastLines(out, 12), errw)
		}
	}
	// One element's magnitude a fifth and a tenth larger: FAILED, with
	// the mismatch listed, in every type (bf16's threshold is 3%).
	off := func(pos int64, v float64) float64 {
		if pos == 0 {
			return v*1.2 + math.Copysign(0.1, v)
		}
		return v
	}
	for _, p := range problems[:4] {
		code, out, _ := runFake(t, off, append([]string{"--mode=C"}, p...)...)
		s := summary(t, out)
		if code != 1 || s[5] != s[0] || !strings.Contains(out, "[DST] exp_f64:") {
			t.Errorf("%v perturbed: exit %d, summary %v\n%s", p, code, s, lastLines(out, 12))
		}
	}
	// Softmax's overflow fill: a result that forgot to subtract the max
	// (here: NaN where the input is past exp's range) fails.
	nanBig := func(pos int64, v float64) float64 {
		if pos%7 == 0 {
			return math.NaN()
		}
		return v
	}
	if code, out, _ := runFake(t, nanBig, "--softmax", "8x20"); code != 1 || !strings.Contains(out, "FAILED (negative fill: DST errors:") {
		t.Errorf("NaN softmax: exit %d\n%s", code, lastLines(out, 6))
	}
}

// TestNormFakeModes: P mode times with the bandwidth columns, B mode
// compares two runs bit for bit, R runs, I compiles only.
func TestNormFakeModes(t *testing.T) {
	code, out, errw := runFake(t, nil, "--mode=P", "--fix-times-per-prb=2", "--softmax", "64x64")
	if code != 0 || !strings.Contains(out, "perf,cpu,fake,,--mode=P") {
		t.Errorf("P: exit %d\n%s\n%s", code, out, errw)
	}
	code, out, _ = runFake(t, nil, "--mode=P", "--fix-times-per-prb=2", "--lnorm", "--perf-template=csv", "--flags=CH", "16x64")
	if code != 0 || !strings.Contains(out, "perf,cpu,fake,,FWD_D,f32:f32,abx:any,any,CH,,16x64,") {
		t.Errorf("P csv: exit %d\n%s", code, out)
	}
	for _, m := range []string{"B", "R", "I"} {
		code, out, _ := runFake(t, nil, "--mode="+m, "--gnorm", "g2ic4iw5")
		want := map[string]string{"B": "passed:1", "R": "passed:1", "I": "passed:1"}[m]
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("mode %s: exit %d\n%s", m, code, out)
		}
	}
	// A run whose second execute differs fails bitwise mode.
	n := 0
	flaky := func(pos int64, v float64) float64 {
		if pos == 0 {
			n++
			return v + float64(n)
		}
		return v
	}
	if code, out, _ := runFake(t, flaky, "--mode=B", "--softmax", "4x4"); code != 1 || !strings.Contains(out, "bitwise: 1 outputs") {
		t.Errorf("flaky B: exit %d\n%s", code, out)
	}
}

// TestNormUnimplemented: what gdnn does not run is UNIMPLEMENTED (or, as
// in benchdnn, SKIPPED or INVALID_ARGUMENTS) with the reason, never
// FAILED, never silently skipped.
func TestNormUnimplemented(t *testing.T) {
	for _, c := range []struct {
		args  []string
		state string
		want  string
	}{
		{[]string{"--softmax", "--dir=BWD_D", "4x4"}, "UNIMPLEMENTED", "SoftMaxBackward"},
		{[]string{"--lnorm", "--dir=BWD_DW", "4x4"}, "UNIMPLEMENTED", "LayerNormBackward"},
		{[]string{"--softmax", "--sdt=f64", "4x4"}, "UNIMPLEMENTED", "src data type f64"},
		{[]string{"--softmax", "--ddt=f8_e5m2", "4x4"}, "UNIMPLEMENTED", "dst data type f8_e5m2"},
		{[]string{"--lnorm", "--ss_dt=s8", "--flags=C", "4x4"}, "UNIMPLEMENTED", "scale and shift data type s8"},
		{[]string{"--lnorm", "--flags=GCH", "4x4"}, "UNIMPLEMENTED", "global statistics"},
		{[]string{"--gnorm", "--flags=G", "g2ic4iw5"}, "UNIMPLEMENTED", "GroupNorm computes them"},
		{[]string{"--lnorm", "--flags=CHM", "4x4"}, "UNIMPLEMENTED", "RMSNorm has gamma only"},
		{[]string{"--softmax", "--attr-scales=src:per_oc:2", "4x4"}, "UNIMPLEMENTED", "--attr-scales entry \"src:per_oc:2\""},
		{[]string{"--softmax", "--attr-dropout=0.5:1", "4x4"}, "UNIMPLEMENTED", "--attr-dropout=0.5:1"},
		{[]string{"--softmax", "--attr-zero-points=src:common:1", "4x4"}, "UNIMPLEMENTED", "zero-points"},
		{[]string{"--softmax", "--attr-scratchpad=user", "4x4"}, "UNIMPLEMENTED", "--attr-scratchpad=user"},
		{[]string{"--softmax", "--attr-acc-mode=f16", "4x4"}, "UNIMPLEMENTED", "--attr-acc-mode=f16"},
		{[]string{"--gnorm", "--ctx-exe=2", "g2ic4iw5"}, "UNIMPLEMENTED", "--ctx-exe=2"},
		{[]string{"--lnorm", "--inplace=true", "--dt=f32:bf16", "4x4"}, "SKIPPED", "invalid case: in place"},
		{[]string{"--softmax", "--inplace=true", "--stag=axb", "--dtag=abx", "4x4"}, "SKIPPED", "invalid case: in place"},
		{[]string{"--softmax", "--stag=aBx16b", "4x4"}, "UNIMPLEMENTED", "blocked layouts"},
		{[]string{"--softmax", "--axis=2", "4x4"}, "INVALID_ARGUMENTS", "--axis=2 is out of range"},
		{[]string{"--gnorm", "g3ic4iw5"}, "INVALID_ARGUMENTS", "not a multiple of g 3"},
		{[]string{"--gnorm", "g2ic4iw5eps-1"}, "INVALID_ARGUMENTS", "epsilon -1"},
	} {
		_, out, errw := runFake(t, nil, c.args...)
		line := strings.Split(out, "\n")[0]
		if !strings.HasPrefix(line, "0:"+c.state+" (") || !strings.Contains(line, c.want) {
			t.Errorf("%v: %q, want %s with %q (%s)", c.args, line, c.state, c.want, errw)
		}
	}
	// FWD_B carries benchdnn's forward flag: its normalization drivers
	// run it as FWD_D, the mean and variance checked.
	for _, args := range [][]string{{"--gnorm", "--dir=FWD_B", "g2ic4iw5"}, {"--lnorm", "--dir=FWD_B", "4x4"}, {"--softmax", "--dir=FWD_B", "4x4"}} {
		code, out, _ := runFake(t, nil, args...)
		if code != 0 || !strings.Contains(out, "0:PASSED") || !strings.Contains(out, "--dir=FWD_B") {
			t.Errorf("%v: exit %d\n%s", args, code, out)
		}
	}
	// Accepted attributes that gdnn's f32 computation satisfies run, as
	// do benchdnn's default thread contexts.
	code, out, _ := runFake(t, nil, "--softmax", "--attr-acc-mode=relaxed", "--attr-fpmath=bf16", "--attr-deterministic=true",
		"--attr-rounding-mode=dst:environment", "--ctx-init=auto", "--ctx-exe=auto:auto:auto", "4x4")
	if code != 0 || !strings.Contains(out, "0:PASSED") {
		t.Errorf("met attributes: exit %d\n%s", code, out)
	}
}

// TestNormGraphBackend: on gdnn's own graph, a problem either runs and
// passes or is UNIMPLEMENTED with gdnn's reason: never FAILED or an input
// error, whether or not gdnn has the op yet.
func TestNormGraphBackend(t *testing.T) {
	for _, args := range [][]string{
		{"--softmax", "--alg=SOFTMAX,LOGSOFTMAX,SOFTMAX_INF_AS_ZERO", "--stag=abx,axb", "3x5x4"},
		{"--lnorm", "--flags=,CH,M,C", "--dir=FWD_D,FWD_I", "4x3x8"},
		{"--gnorm", "--flags=,CH", "--tag=abx,axb", "g2ic4ih3iw2"},
	} {
		code, out, errw := runMain(t, args...)
		s := summary(t, out)
		if code != 0 || s[5] != "0" || s[4] != "0" || s[0] == "0" {
			t.Errorf("%v: exit %d summary %v\n%s\n%s", args, code, s, lastLines(out, 8), errw)
		}
	}
}

// TestNormInPlace: with --inplace=true, dst is the src buffer (as
// benchdnn allocates it), and problems of every driver pass on gdnn's
// graph in correctness and bitwise modes (the bitwise runs refill src
// before the second run, which would otherwise normalize the first's
// results).
func TestNormInPlace(t *testing.T) {
	shared := 0
	backend := func(b *normBuilt) (normExec, error) {
		e, err := fakeBackend(nil)(b)
		if !slices.Equal(b.dstLT.Strides, b.srcLT.Strides) {
			t.Errorf("%s: dst strides %v, src's %v", b.c.desc(false), b.dstLT.Strides, b.srcLT.Strides)
		}
		return &aliasCheck{normExec: e, t: t, shared: &shared}, err
	}
	var out, errw bytes.Buffer
	code := runWith(CommandArgs([]string{"--mode=C", "--softmax", "--inplace=true", "--stag=axb", "3x5x4"}), &out, &errw,
		func(r *runner) { r.normBackend = backend })
	if code != 0 || shared == 0 || !strings.Contains(out.String(), "passed:1 ") {
		t.Errorf("fake in place: exit %d, %d runs over src\n%s\n%s", code, shared, out.String(), errw.String())
	}
	for _, args := range [][]string{
		{"--softmax", "--alg=SOFTMAX,LOGSOFTMAX,SOFTMAX_INF_AS_ZERO", "--stag=abx,axb", "--axis=1,2", "3x5x4", "2x300x70"},
		{"--lnorm", "--flags=,CH,M", "--dir=FWD_D,FWD_I", "--dt=f32,bf16", "4x3x8", "64x1000"},
		{"--gnorm", "--flags=,CH", "--tag=abx,axb", "g2ic4ih3iw2", "g4ic16ih20iw20"},
	} {
		for _, mode := range []string{"--mode=C", "--mode=B"} {
			args := append([]string{mode, args[0], "--inplace=true"}, args[1:]...)
			code, out, errw := runMain(t, args...)
			s := summary(t, out)
			if code != 0 || s[0] != s[1] || s[0] == "0" {
				t.Errorf("%s %v: exit %d summary %v\n%s\n%s", mode, args, code, s, lastLines(out, 8), errw)
			}
		}
	}
}

// aliasCheck counts the runs whose dst is the src buffer.
type aliasCheck struct {
	normExec
	t      *testing.T
	shared *int
}

func (a *aliasCheck) Run(b *normBuilt, i int) error {
	if i == 0 {
		if unsafe.SliceData(b.dst[0].bytes()) != unsafe.SliceData(b.src.bytes()) {
			a.t.Errorf("%s: dst is not the src buffer", b.c.desc(false))
		}
		*a.shared++
	}
	return a.normExec.Run(b, i)
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

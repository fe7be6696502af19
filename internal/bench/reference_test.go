package bench

import (
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// naiveMeans computes means of a dense row-major array directly.
func naiveMeans(vals []float64, dims []int64, reduced []bool) []float64 {
	var outDims []int64
	for i, d := range dims {
		if reduced[i] {
			outDims = append(outDims, 1)
		} else {
			outDims = append(outDims, d)
		}
	}
	nOut, _ := numElements(outDims)
	sums := make([]float64, nOut)
	counts := make([]float64, nOut)
	idx := make([]int64, len(dims))
	for p := range vals {
		o := int64(0)
		for i := range dims {
			if !reduced[i] {
				o = o*dims[i] + idx[i]
			}
		}
		sums[o] += vals[p]
		counts[o]++
		for i := len(dims) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
	}
	for i := range sums {
		sums[i] /= counts[i]
	}
	return sums
}

func TestRefSumsStrided(t *testing.T) {
	dims := []int64{3, 4, 5}
	reduced := []bool{false, true, false}
	for _, tag := range []string{"abc", "acb", "cba"} {
		l, _ := ResolveTag(tag, 3)
		strides := l.Strides(dims)
		b, err := newBuffer(dtypes.F32, 60)
		if err != nil {
			t.Fatal(err)
		}
		fillSrc(b, dims, strides, reduced, fillRandom, srcFill{}, 42)
		// The logical values do not depend on the layout.
		logical := make([]float64, 60)
		forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) { logical[pos] = b.get(offs[0]) })
		want := naiveMeans(logical, dims, reduced)
		sum, sumAbs, n := refReduce(b, dims, strides, reduced, kind{})
		if n != 4 || len(sum) != 15 {
			t.Fatalf("%s: n=%d outputs=%d", tag, n, len(sum))
		}
		for i := range sum {
			if math.Abs(sum[i]/float64(n)-want[i]) > 1e-12 || sumAbs[i] < math.Abs(sum[i]) {
				t.Errorf("%s: output %d mean %v want %v (sumAbs %v)", tag, i, sum[i]/float64(n), want[i], sumAbs[i])
			}
		}
	}
}

// TestExactFillIsExact checks the promise of the exact fill: summing the
// values of one output in f32, in order or in reverse, gives the exact
// (float64) sum.
func TestExactFillIsExact(t *testing.T) {
	for _, c := range []struct {
		dt   dtypes.DataType
		dims []int64
	}{
		{dtypes.F32, []int64{3, 5000}}, {dtypes.BF16, []int64{2, 70000}}, {dtypes.F16, []int64{4, 3000}},
		{dtypes.F32, []int64{1, 1 << 21}},
	} {
		n, _ := numElements(c.dims)
		b, _ := newBuffer(c.dt, n)
		reduced := []bool{false, true}
		strides := []int64{c.dims[1], 1}
		fillSrc(b, c.dims, strides, reduced, fillExact, srcFill{}, 9)
		for o := int64(0); o < c.dims[0]; o++ {
			var fwd, bwd float32
			var exact float64
			for r := int64(0); r < c.dims[1]; r++ {
				v := b.get(o*c.dims[1] + r)
				if float64(float32(v)) != v {
					t.Fatalf("%v: value %v not exact in f32", c.dt, v)
				}
				fwd += float32(v)
				exact += v
				bwd += float32(b.get(o*c.dims[1] + c.dims[1] - 1 - r))
			}
			if float64(fwd) != exact || float64(bwd) != exact {
				t.Errorf("%v %v output %d: f32 sums %v/%v, exact %v", c.dt, c.dims, o, fwd, bwd, exact)
			}
		}
	}
}

func TestChainAndThreshold(t *testing.T) {
	vals := []float64{-2, -0.5, 0.25, 3}
	chain := []refPostOp{{g: graphPostOp{elt: "relu"}}, {g: graphPostOp{elt: "clip", alpha: 0, beta: 1}}}
	chainOutput(vals, []int64{4}, chain, true, nil)
	want := []float64{0, 0, 0.25, 1}
	for i := range vals {
		if vals[i] != want[i] {
			t.Errorf("relu+clip: got %v want %v", vals, want)
			break
		}
	}
	// Binary with a broadcast operand and the mean as the right operand.
	op, _ := newBuffer(dtypes.F32, 1)
	op.set(0, 10)
	vals = []float64{1, 2}
	errs := []float64{0.5, 0.5}
	chainOutput(vals, []int64{2}, []refPostOp{{g: graphPostOp{bin: "sub"}, operand: op, view: []int64{0}, swapped: true}}, false, errs)
	if vals[0] != 9 || vals[1] != 8 || errs[0] < 0.5 || errs[0] > 0.51 {
		t.Errorf("10 - x: %v (errs %v)", vals, errs)
	}
	if trh, floor := threshold(dtypes.F32, nil); trh != epsilon(dtypes.F32) || floor > 1e-30 {
		t.Errorf("plain f32 threshold %v floor %v", trh, floor)
	}
	if trh, floor := threshold(dtypes.BF16, []refPostOp{{g: graphPostOp{elt: "tanh"}}}); trh != 1.0/128 || floor != 1 {
		t.Errorf("bf16 tanh threshold %v floor %v", trh, floor)
	}
	for _, name := range []string{"abs", "clip", "elu", "exp", "gelu_erf", "gelu_tanh", "hardsigmoid", "hardswish",
		"log", "logistic", "mish", "relu", "round", "soft_relu", "sqrt", "square", "tanh"} {
		if v := refEltwise(name, 1, 0.5, 0.75); math.IsNaN(v) {
			t.Errorf("refEltwise(%s) is NaN", name)
		}
	}
	if refEltwise("round", 0, 0, 2.5) != 2 || refEltwise("gelu_erf", 0, 0, 0) != 0 || softplus(100, 1) != 100 {
		t.Error("round/gelu/softplus spot values")
	}
	if b := sumBound(1<<20, 1<<20) / (1 << 20); b <= 0 || b > 1e-3 {
		t.Errorf("sumBound(2^20) = %v", b)
	}
}

func TestCompareOutput(t *testing.T) {
	got, _ := newBuffer(dtypes.F32, 4)
	ref := []float64{1, math.NaN(), 3, 1e6}
	allow := []float64{1e-6, 0, 1e-6, 1e-6}
	for i, v := range []float64{1, math.NaN(), 3, 1e6} {
		got.set(int64(i), v)
	}
	if c := compareOutput(got, []int64{4}, []int64{1}, ref, allow, nil); c.errors != 0 || c.total != 4 {
		t.Errorf("identical: %+v", c)
	}
	got.set(2, 3.01)
	got.set(1, 0)
	c := compareOutput(got, []int64{4}, []int64{1}, ref, allow, nil)
	if c.errors != 2 || len(c.lines) != 2 {
		t.Errorf("two mismatches: %+v", c)
	}
	// f16 overflow: an infinite rounded reference must be matched exactly.
	h, _ := newBuffer(dtypes.F16, 1)
	h.set(0, 1e6)
	if c := compareOutput(h, []int64{1}, []int64{1}, []float64{1e6}, []float64{1}, nil); c.errors != 0 {
		t.Errorf("f16 overflow to inf: %+v", c)
	}
}

// An f16 mean in the subnormal range is rounded to an absolute step of
// 2^-24: the threshold must allow half of it, however small the value.
func TestThresholdSubnormalDst(t *testing.T) {
	v := -5.086263e-06 // an f16 subnormal
	rounded := float64(dtypes.F16ToF32(dtypes.F32ToF16(float32(v))))
	trh, floor := threshold(dtypes.F16, nil)
	if allow := trh * max(abs(v), floor); math.Abs(rounded-v) > allow {
		t.Errorf("f16 rounding of %g is off by %g, allowed only %g", v, math.Abs(rounded-v), allow)
	}
	if _, floor := threshold(dtypes.F32, nil); floor != 0x1p-126 {
		t.Errorf("f32 floor %g", floor)
	}
}

// TestChainOverflow checks the random fill's reference through an f32
// overflow between post-ops: a value certainly past the f32 range is ±Inf
// exactly, so a later Minimum is checked exactly again; one that may or
// may not overflow has two outcomes, each checked as strictly as any
// value: the finite one within its bound, and the overflow carried
// through the ops after it (+Inf, then the Minimum's 3, exactly).
func TestChainOverflow(t *testing.T) {
	scalar := func(v float64) buffer {
		b, _ := newBuffer(dtypes.F32, 1)
		b.set(0, v)
		return b
	}
	mul := refPostOp{g: graphPostOp{bin: "mul"}, operand: scalar(1e38), view: []int64{0}}
	min3 := refPostOp{g: graphPostOp{bin: "min"}, operand: scalar(3), view: []int64{0}}
	add := refPostOp{g: graphPostOp{bin: "add"}, operand: scalar(1), view: []int64{0}}
	// 10e38 and -10e38 overflow whatever the error; 3.4028e38 may or may not.
	vals := []float64{10, -10, 3.4028}
	errs := []float64{1e-6, 1e-6, 1e-4}
	alts := chainOutput(vals, []int64{3}, []refPostOp{mul, min3}, false, errs)
	if vals[0] != 3 || errs[0] > 1e-6 || !math.IsInf(vals[1], -1) || errs[1] != 0 || vals[2] != 3 || errs[2] > 1e-6 {
		t.Fatalf("x*1e38 then min 3: values %v, errs %v; want 3 (error ~0), -Inf (0), 3 (error ~0)", vals, errs)
	}
	if len(alts) != 1 || len(alts[2]) != 1 || alts[2][0].v != 3 || alts[2][0].e > 1e-6 {
		t.Fatalf("x*1e38 then min 3: other outcomes %v, want only output 2's overflow, min(+Inf, 3) = 3", alts)
	}
	// Without the Minimum the overflow is the outcome itself.
	vals, errs = []float64{3.4028}, []float64{1e-4}
	alts = chainOutput(vals, []int64{1}, []refPostOp{mul, add}, false, errs)
	if len(alts[0]) != 1 || !math.IsInf(alts[0][0].v, 1) || alts[0][0].e != 0 || math.IsInf(errs[0], 0) {
		t.Fatalf("x*1e38 then +1: value %v error %v, other outcomes %v; want a finite bound and +Inf exactly", vals, errs, alts)
	}
	if alts := chainOutput([]float64{2}, []int64{1}, []refPostOp{mul}, false, nil); alts != nil {
		t.Errorf("without error bounds nothing may or may not overflow: %v", alts)
	}
}

// TestCompareOutputHonest checks compareOutput's rules that no allowance
// relaxes: NaN only for a NaN reference, an infinity only for the same
// infinity of the reference rounded to got's type, a finite value only
// for a finite rounded reference, whatever the allowance; an other
// outcome of an output passes with its own allowance and nothing else.
func TestCompareOutputHonest(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct {
		got, ref, allow float64
		ok              bool
	}{
		{inf, 3.4e38, inf, false},     // a lost bound accepts no infinity
		{-inf, 1e30, inf, false},      //
		{nan, 1e30, inf, false},       // nor a NaN
		{5, 1e30, inf, true},          // but any finite value
		{3e38, 1e39, 1e39, false},     // a reference past the range wants +Inf
		{inf, 1e39, 1e39, true},       //
		{-inf, 1e39, 1e39, false},     //
		{inf, inf, 0, true},           //
		{nan, nan, 0, true},           //
		{1, nan, inf, false},          //
		{3.4e38, 3.4e38, 1e32, true},  //
		{3.3e38, 3.4e38, 1e32, false}, //
		{inf, 3.4028e38, 1e34, false}, // an allowance past the range is no infinity
		{1.0000001, 1, 2e-7, true},    //
		{1.000001, 1, 2e-7, false},    //
	} {
		got, _ := newBuffer(dtypes.F32, 1)
		got.set(0, c.got)
		r := compareOutput(got, []int64{1}, []int64{1}, []float64{c.ref}, []float64{c.allow}, nil)
		if ok := r.errors == 0; ok != c.ok {
			t.Errorf("got %v, reference %v allowed %v: match %v, want %v", c.got, c.ref, c.allow, ok, c.ok)
		}
	}
	got, _ := newBuffer(dtypes.F32, 4)
	for i, v := range []float64{inf, 3, 2, nan} {
		got.set(int64(i), v)
	}
	ref, allow := []float64{3.4e38, 3.4e38, 3.4e38, 1}, []float64{1e32, 1e32, 1e32, 0}
	alts := map[int64][]outcome{0: {{inf, 0}}, 1: {{3, 1e-6}}, 2: {{3, 1e-6}}, 3: {{inf, 0}}}
	r := compareOutput(got, []int64{4}, []int64{1}, ref, allow, alts)
	if r.errors != 2 || !strings.Contains(r.lines[0], "[     2]") || !strings.Contains(r.lines[1], "[     3]") {
		t.Errorf("other outcomes: %d errors %q; want outputs 2 (2 for 3) and 3 (NaN for +Inf) wrong", r.errors, r.lines)
	}
}

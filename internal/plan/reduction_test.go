package plan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/status"
)

func TestAlgReductions(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		alg    Alg
		p, eps float32
		want   string
		id     float64
		xs     []float64 // elements
		result float64   // finalize(combine(transform(xs)))
	}{
		{AlgSum, 0, 0, "sum", 0, []float64{1, -2, 4}, 3},
		{AlgMul, 0, 0, "mul", 1, []float64{1, -2, 4}, -8},
		{AlgMax, 0, 0, "max", -inf, []float64{1, -2, 4}, 4},
		{AlgMin, 0, 0, "min", inf, []float64{1, -2, 4}, -2},
		{AlgMean, 0, 0, "mean", 0, []float64{1, -2, 4}, 1},
		{AlgNormLpMax, 2, 0.5, "square>sum>root_max_eps(p=2,eps=0.5)", 0, []float64{3, -4}, 5},
		{AlgNormLpMax, 2, 30, "square>sum>root_max_eps(p=2,eps=30)", 0, []float64{3, -4}, math.Sqrt(30)},
		{AlgNormLpSum, 1, 0.5, "abs>sum>root_add_eps(p=1,eps=0.5)", 0, []float64{3, -4}, 7.5},
		{AlgNormLpSum, 3, 0, "pow>sum>root_add_eps(p=3,eps=0)", 0, []float64{1, -2}, math.Pow(9, 1.0/3)},
		{AlgNormLpPowerPMax, 1, 10, "abs>sum>max_eps(eps=10)", 0, []float64{3, -4}, 10},
		{AlgNormLpPowerPSum, 2, 0.5, "square>sum>add_eps(eps=0.5)", 0, []float64{3, -4}, 25.5},
	}
	for _, c := range cases {
		r := c.alg.Reduction(c.p, c.eps)
		if err := r.Validate(); err != nil {
			t.Errorf("%v: %v", c.alg, err)
		}
		if got := r.String(); got != c.want {
			t.Errorf("%v: String %q, want %q", c.alg, got, c.want)
		}
		if got := float64(r.Identity()); got != c.id {
			t.Errorf("%v: identity %v, want %v", c.alg, got, c.id)
		}
		acc := float64(r.Identity())
		for _, x := range c.xs {
			acc = r.CombineF64(acc, r.TransformF64(x))
		}
		if got := r.FinalizeF64(acc, int64(len(c.xs))); math.Abs(got-c.result) > 1e-12 {
			t.Errorf("%v: result %v, want %v", c.alg, got, c.result)
		}
		if a, ok := ParseAlg(c.alg.String()); !ok || a != c.alg {
			t.Errorf("ParseAlg(%q) = %v, %v", c.alg.String(), a, ok)
		}
	}
	if _, ok := ParseAlg("avg"); ok {
		t.Error(`ParseAlg("avg") succeeded`)
	}
	if !AlgMean.Reduction(0, 0).IsMean() || (Reduction{}).String() != "mean" {
		t.Error("the mean is not the zero Reduction")
	}
}

// TestEmptyReductions pins what reducing nothing gives: the finalized
// identity.
func TestEmptyReductions(t *testing.T) {
	want := map[Alg]float64{AlgSum: 0, AlgMul: 1, AlgMax: math.Inf(-1), AlgMin: math.Inf(1),
		AlgNormLpSum: 0, AlgNormLpPowerPSum: 0}
	for a, w := range want {
		r := a.Reduction(2, 0)
		if got := r.FinalizeF64(float64(r.Identity()), 0); got != w {
			t.Errorf("empty %v = %v, want %v", a, got, w)
		}
	}
	if got := AlgMean.Reduction(0, 0).FinalizeF64(0, 0); !math.IsNaN(got) {
		t.Errorf("empty mean = %v, want NaN", got)
	}
}

// TestMaxMinOrderFree checks that max and min give the same bits in any
// order: NaN wins, and +0 is above -0.
func TestMaxMinOrderFree(t *testing.T) {
	nan := math.NaN()
	negZero := math.Copysign(0, -1)
	vals := []float64{1, nan, -3, negZero, 0, math.Inf(-1), math.Inf(1)}
	for _, c := range []Combine{CombineMax, CombineMin} {
		r := Reduction{Combine: c, Finalize: FinalizeNone}
		for _, a := range vals {
			for _, b := range vals {
				x, y := r.CombineF64(a, b), r.CombineF64(b, a)
				if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
					t.Errorf("combine %d(%v, %v) = %v but (%v, %v) = %v", c, a, b, x, b, a, y)
				}
				if (math.IsNaN(a) || math.IsNaN(b)) != math.IsNaN(x) {
					t.Errorf("combine %d(%v, %v) = %v: NaN must win", c, a, b, x)
				}
			}
		}
	}
	if z := (Reduction{Combine: CombineMax, Finalize: FinalizeNone}).CombineF64(negZero, 0); math.Signbit(z) {
		t.Error("max(-0, +0) is -0")
	}
	if z := (Reduction{Combine: CombineMin, Finalize: FinalizeNone}).CombineF64(0, negZero); !math.Signbit(z) {
		t.Error("min(+0, -0) is +0")
	}
}

func TestReductionRefusals(t *testing.T) {
	nan := float32(math.NaN())
	cases := []struct {
		r    Reduction
		want string
	}{
		{Reduction{Transform: 9}, "unknown reduction parts"},
		{Reduction{Combine: 9}, "unknown reduction parts"},
		{Reduction{Finalize: 9}, "unknown reduction parts"},
		{Reduction{Combine: CombineMax}, "a mean divides a sum, not a max"},
		{Reduction{Combine: CombineFirst, Transform: TransformAbs, Finalize: FinalizeNone}, "a copy has no transform"},
		{AlgNormLpSum.Reduction(0, 0), "needs a finite p > 0, got 0"},
		{AlgNormLpSum.Reduction(-1, 0), "needs a finite p > 0"},
		{AlgNormLpSum.Reduction(nan, 0), "needs a finite p > 0"},
		{AlgNormLpMax.Reduction(2, nan), "needs a finite eps"},
		{AlgNormLpMax.Reduction(2, float32(math.Inf(1))), "needs a finite eps"},
		{Reduction{Transform: TransformExp}, "exp and log make a log-sum-exp only as a whole"},
		{Reduction{Finalize: FinalizeLog}, "exp and log make a log-sum-exp only as a whole"},
	}
	for _, c := range cases {
		err := c.r.Validate()
		if !errors.Is(err, status.InvalidArguments) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want InvalidArguments %q", c.r, err, c.want)
		}
	}
	// p and eps the reduction does not read are not checked.
	if err := (Reduction{P: nan, Eps: nan}).Validate(); err != nil {
		t.Errorf("mean with unread NaN p: %v", err)
	}
}

func TestPlanReductionChecks(t *testing.T) {
	base := func() *Plan {
		return &Plan{SrcDT: dtypes.F32, DstDT: dtypes.F32, Reduced: []Loop{{Size: 4, SrcStride: 1}}, N: 4, Outputs: 1, Div: 4}
	}
	cp := base()
	cp.Reduction = Copy
	if err := cp.Validate(); err == nil || !strings.Contains(err.Error(), "a copy has 1 reduced loops") {
		t.Errorf("copy with a reduced loop: %v", err)
	}
	part := base()
	part.Stage, part.DstDT = SkipFinalize, dtypes.BF16
	if err := part.Validate(); err == nil || !strings.Contains(err.Error(), "writes partials needs an f32 dst") {
		t.Errorf("bf16 partials: %v", err)
	}
	lse := base()
	lse.Reduction, lse.Stage = LogSumExp, SkipTransform
	if err := lse.Validate(); err == nil || !strings.Contains(err.Error(), "log-sum-exp is not split into stages") {
		t.Errorf("staged log-sum-exp: %v", err)
	}
	if LogSumExp.String() != "exp>sum>log" || !LogSumExp.IsLogSumExp() {
		t.Errorf("LogSumExp is %q", LogSumExp)
	}
	lse.Stage = Unshifted | SkipTransform
	if err := lse.Validate(); err != nil {
		t.Errorf("unshifted log-sum-exp in stages: %v", err)
	}
	lse.DstDT = dtypes.BF16
	if err := lse.Validate(); err == nil || !strings.Contains(err.Error(), "writes f32 results with no post-ops") {
		t.Errorf("unshifted log-sum-exp into bf16: %v", err)
	}
	unshiftedSum := base()
	unshiftedSum.Reduction, unshiftedSum.Stage = AlgSum.Reduction(0, 0), Unshifted
	if err := unshiftedSum.Validate(); err == nil || !strings.Contains(err.Error(), "only a log-sum-exp is unshifted") {
		t.Errorf("unshifted sum: %v", err)
	}
	bad := base()
	bad.Stage = 8
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "unknown stage flags") {
		t.Errorf("stage 8: %v", err)
	}
	p := &Problem{Reduction: Copy, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2}, SrcStrides: []int64{1},
		Reduce: []bool{true}, DstStrides: []int64{1}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "a copy reduces no dim") {
		t.Errorf("copy problem reducing a dim: %v", err)
	}
	// Keys tell algs, parameters and stages apart; the mean's key has no alg.
	keys := map[string]string{}
	for _, r := range []Reduction{{}, AlgSum.Reduction(0, 0), AlgMax.Reduction(0, 0),
		AlgNormLpSum.Reduction(2, 0), AlgNormLpSum.Reduction(2, 1), AlgNormLpSum.Reduction(1, 0),
		{Transform: TransformAbs, Combine: CombineMax, Finalize: FinalizeNone}} {
		for _, st := range []Stage{0, SkipTransform, SkipFinalize} {
			pl := base()
			pl.Reduction, pl.Stage = r, st
			k := pl.Key()
			if prev, dup := keys[k]; dup {
				t.Errorf("%v stage %d and %s share key %q", r, st, prev, k)
			}
			keys[k] = r.String()
		}
	}
	if k := base().Key(); strings.Contains(k, ";a") || strings.Contains(k, ";s") {
		t.Errorf("mean key %q names an alg or stage", k)
	}
}

// TestOfOne checks which reductions of one element are rewritten: the L2
// norm's root of x*x with no eps to add or a floor of at most 0 becomes
// |x|, log-sum-exp a sum; with an eps, without the root, or for other
// kinds, nothing changes.
func TestOfOne(t *testing.T) {
	abs := Reduction{Transform: TransformAbs, Finalize: FinalizeNone}
	cases := []struct {
		in, want Reduction
	}{
		{AlgNormLpSum.Reduction(2, 0), abs},
		{AlgNormLpMax.Reduction(2, 0), abs},
		{AlgNormLpMax.Reduction(2, -1), abs},
		{AlgNormLpSum.Reduction(2, 0.5), AlgNormLpSum.Reduction(2, 0.5)},
		{AlgNormLpMax.Reduction(2, 0.25), AlgNormLpMax.Reduction(2, 0.25)},
		{AlgNormLpPowerPSum.Reduction(2, 0), AlgNormLpPowerPSum.Reduction(2, 0)},
		{AlgNormLpSum.Reduction(1, 0), AlgNormLpSum.Reduction(1, 0)},
		{AlgNormLpSum.Reduction(3, 0), AlgNormLpSum.Reduction(3, 0)},
		{Reduction{Transform: TransformSquare}, Reduction{Transform: TransformSquare}},
		{AlgSum.Reduction(0, 0), AlgSum.Reduction(0, 0)},
		{LogSumExp, AlgSum.Reduction(0, 0)},
	}
	for _, c := range cases {
		if got := c.in.OfOne(); got != c.want {
			t.Errorf("%v.OfOne() = %v, want %v", c.in, got, c.want)
		}
	}
}

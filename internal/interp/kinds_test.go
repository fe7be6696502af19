package interp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// testReductions are the reductions every backend is checked with: each
// oneDNN alg (Lp norms at p 1, 2 and 3) and the fused pre-ops.
func testReductions() []plan.Reduction {
	var out []plan.Reduction
	for _, a := range []plan.Alg{plan.AlgSum, plan.AlgMul, plan.AlgMax, plan.AlgMin, plan.AlgMean} {
		out = append(out, a.Reduction(0, 0))
	}
	for _, a := range []plan.Alg{plan.AlgNormLpMax, plan.AlgNormLpSum, plan.AlgNormLpPowerPMax, plan.AlgNormLpPowerPSum} {
		for _, p := range []float32{1, 2, 3} {
			out = append(out, a.Reduction(p, 0.25))
		}
	}
	return append(out,
		plan.Reduction{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
		plan.Reduction{Transform: plan.TransformSquare}, // mean of squares
		plan.LogSumExp,
	)
}

// TestInterpKinds runs every reduction over random problems (layouts,
// broadcast dims, empty dims, misaligned buffers) and checks each output
// against the oracle. Elements are small dyadic values, so sums, maxima
// and powers are exact in float64 in any order and must match to the
// bit; products of many elements may round, and get one ulp of the dst.
func TestInterpKinds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 21))
	for _, red := range testReductions() {
		for iter := 0; iter < 150; iter++ {
			p := randProblem(r, 600, false)
			p.Reduction = red
			gen := func() float32 { return dyadic(r) }
			if red.Combine == plan.CombineMul {
				// Near 1, so that products neither vanish nor overflow.
				gen = func() float32 { return 1 + float32(r.IntN(33)-16)/64 }
			}
			src, dst, _ := runCase(t, r, p, gen, true)
			for _, o := range oracle.Reduce(p, src) {
				got := oracle.Get(p.DstDT, dst, o.Dst)
				want := make([]byte, 4)
				oracle.Put(p.DstDT, want, 0, o.Value)
				w := oracle.Get(p.DstDT, want, 0)
				if sameValue(got, w) {
					continue
				}
				if (red.Combine == plan.CombineMul || red.IsLogSumExp()) && math.Abs(got-w) <= ulpOf(w, p.DstDT) {
					continue
				}
				t.Fatalf("%v: output at %d = %v, want %v (oracle %v)\n%s", red, o.Dst, got, w, o.Value, describe(p))
			}
		}
	}
}

// TestInterpKindSpecials checks NaN, infinities and signed zeros through
// max and min, and the identities of empty reductions, on a [2, n] src
// reduced over its rows.
func TestInterpKindSpecials(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	cases := []struct {
		red  plan.Reduction
		rows [][]float32
		want []float64
	}{
		{plan.AlgMax.Reduction(0, 0), [][]float32{{1, nan, 3}, {negZero, 0, negZero}}, []float64{math.NaN(), 0}},
		{plan.AlgMax.Reduction(0, 0), [][]float32{{nan, 1, 2}, {negZero, negZero, negZero}}, []float64{math.NaN(), math.Copysign(0, -1)}},
		{plan.AlgMin.Reduction(0, 0), [][]float32{{1, 2, nan}, {0, negZero, 0}}, []float64{math.NaN(), math.Copysign(0, -1)}},
		{plan.AlgMin.Reduction(0, 0), [][]float32{{inf, inf, inf}, {-inf, 1, 2}}, []float64{math.Inf(1), math.Inf(-1)}},
		{plan.AlgMul.Reduction(0, 0), [][]float32{{1e30, 1e30, 1e-30}, {0, inf, 1}}, []float64{1e30, math.NaN()}},
		{plan.AlgSum.Reduction(0, 0), [][]float32{{negZero, negZero, negZero}, {inf, -inf, 1}}, []float64{0, math.NaN()}},
		{plan.LogSumExp, [][]float32{{1000, 1000, 1000}, {-inf, -inf, -inf}}, []float64{float64(float32(1000 + math.Log(3))), math.Inf(-1)}},
		{plan.LogSumExp, [][]float32{{1, inf, 2}, {1, nan, 2}}, []float64{math.Inf(1), math.NaN()}},
	}
	for _, c := range cases {
		n := int64(len(c.rows[0]))
		p := &plan.Problem{Reduction: c.red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, n},
			SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 1}}
		src, dst := make([]byte, 8*n), make([]byte, 8)
		for i, row := range c.rows {
			for j, v := range row {
				dtypes.StoreF32(dtypes.F32, src, int64(i)*n+int64(j), v)
			}
		}
		if err := RunProblem(p, src, dst, nil); err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			got := oracle.Get(dtypes.F32, dst, int64(i))
			// Products are in float64: 1e30*1e30*1e-30 does not overflow
			// on the way, and rounds to f32's nearest 1e30.
			if c.red.Combine == plan.CombineMul && !math.IsNaN(w) {
				w = float64(float32(w))
			}
			if !sameValue(got, w) {
				t.Errorf("%v of %v: %v, want %v", c.red, c.rows[i], got, w)
			}
		}
	}
	// Reducing an empty axis gives the finalized identity.
	for _, c := range []struct {
		red  plan.Reduction
		want float64
	}{{plan.AlgSum.Reduction(0, 0), 0}, {plan.AlgMul.Reduction(0, 0), 1}, {plan.AlgMax.Reduction(0, 0), math.Inf(-1)},
		{plan.AlgMin.Reduction(0, 0), math.Inf(1)}, {plan.AlgNormLpSum.Reduction(2, 0), 0}, {plan.AlgMean.Reduction(0, 0), math.NaN()},
		{plan.LogSumExp, math.Inf(-1)}} {
		p := &plan.Problem{Reduction: c.red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{3, 0},
			SrcStrides: []int64{0, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 1}}
		dst := make([]byte, 12)
		if err := RunProblem(p, nil, dst, nil); err != nil {
			t.Fatal(err)
		}
		for i := range int64(3) {
			if got := oracle.Get(dtypes.F32, dst, i); !sameValue(got, c.want) {
				t.Errorf("empty %v: output %d = %v, want %v", c.red, i, got, c.want)
			}
		}
	}
}

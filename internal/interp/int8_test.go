package interp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

var (
	int8Srcs = []dtypes.DataType{dtypes.S8, dtypes.U8}
	allDsts  = []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32, dtypes.F32, dtypes.BF16, dtypes.F16}
)

// int8Gen returns random values of the 8-bit type dt; mul gets values
// near ±1 so that products neither vanish nor overflow.
func int8Gen(r *rand.Rand, dt dtypes.DataType, red plan.Reduction) func() float32 {
	switch {
	case red.Combine == plan.CombineMul:
		return func() float32 {
			v := float32(1 + r.IntN(64)/63) // mostly 1, now and then 2
			if dt == dtypes.S8 && r.IntN(2) == 0 {
				v = -v
			}
			return v
		}
	case dt == dtypes.S8:
		return func() float32 { return float32(r.IntN(256) - 128) }
	}
	return func() float32 { return float32(r.IntN(256)) }
}

// TestInterpInt8 runs every reduction over random problems with s8 and u8
// src and every dst type, against the oracle. 8-bit sums are exact in
// float64 in any order, so every output but log-sum-exp's and the
// roots' matches to the bit after the dst's rounding and saturation.
func TestInterpInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 24))
	for _, red := range testReductions() {
		for iter := 0; iter < 60; iter++ {
			p := randProblem(r, 400, false)
			p.SrcDT = int8Srcs[r.IntN(2)]
			p.DstDT = allDsts[r.IntN(len(allDsts))]
			p.Reduction = red
			src, dst, _ := runCase(t, r, p, int8Gen(r, p.SrcDT, red), true)
			for _, o := range oracle.Reduce(p, src) {
				got := oracle.Get(p.DstDT, dst, o.Dst)
				want := make([]byte, 4)
				oracle.Put(p.DstDT, want, 0, o.Value)
				w := oracle.Get(p.DstDT, want, 0)
				if sameValue(got, w) {
					continue
				}
				if red.IsLogSumExp() || red.Finalize == plan.FinalizeRootAddEps || red.Finalize == plan.FinalizeRootMaxEps {
					// Transcendentals: one unit of the dst (an integer
					// result may sit on the other side of a .5).
					if math.Abs(got-w) <= max(ulpOf(w, p.DstDT), 1) {
						continue
					}
				}
				t.Fatalf("%v %v->%v: output at %d = %v, want %v (oracle %v)\n%s", red, p.SrcDT, p.DstDT, o.Dst, got, w, o.Value, describe(p))
			}
		}
	}
}

// TestInterpInt8EveryValue reduces one-element rows holding every s8 and
// u8 value into every dst type (a value must come through exactly or
// saturate), and two-element rows whose means land on .5, which must round
// to the even integer.
func TestInterpInt8EveryValue(t *testing.T) {
	for _, sdt := range int8Srcs {
		lo, hi := 0, 255
		if sdt == dtypes.S8 {
			lo, hi = -128, 127
		}
		n := int64(hi - lo + 1)
		src := make([]byte, n)
		for i := range n {
			oracle.Put(sdt, src, i, float64(lo+int(i)))
		}
		for _, ddt := range allDsts {
			for _, red := range []plan.Reduction{plan.AlgSum.Reduction(0, 0), plan.AlgMean.Reduction(0, 0), plan.AlgMax.Reduction(0, 0)} {
				p := &plan.Problem{Dims: []int64{n, 1}, Reduce: []bool{false, true}, SrcStrides: []int64{1, 1},
					DstStrides: []int64{1, 1}, SrcDT: sdt, DstDT: ddt, Reduction: red}
				dst := make([]byte, n*int64(ddt.Size()))
				if err := RunProblem(p, src, dst, nil); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					v := float64(lo + int(i))
					want := intClamp(v, ddt)
					if got := oracle.Get(ddt, dst, i); got != want {
						t.Fatalf("%v %v->%v: %v gave %v, want %v", red, sdt, ddt, v, got, want)
					}
				}
			}
			// Pairs (v, v+1) over every v: the mean is v + 0.5.
			p := &plan.Problem{Dims: []int64{n - 1, 2}, Reduce: []bool{false, true}, SrcStrides: []int64{1, 1},
				DstStrides: []int64{1, 1}, SrcDT: sdt, DstDT: ddt, Reduction: plan.AlgMean.Reduction(0, 0)}
			dst := make([]byte, (n-1)*int64(ddt.Size()))
			if err := RunProblem(p, src, dst, nil); err != nil {
				t.Fatal(err)
			}
			for i := range n - 1 {
				m := float64(lo+int(i)) + 0.5
				want := m
				if ddt.IsInt() {
					want = intClamp(math.RoundToEven(m), ddt)
				} else {
					b := make([]byte, 4)
					oracle.Put(ddt, b, 0, m)
					want = oracle.Get(ddt, b, 0)
				}
				if got := oracle.Get(ddt, dst, i); got != want {
					t.Fatalf("mean %v->%v of %v and %v = %v, want %v", sdt, ddt, m-0.5, m+0.5, got, want)
				}
			}
		}
	}
}

// intClamp is v (an integer or a float) as dst type dt holds it: clamped
// to an integer type's range, rounded to a float type.
func intClamp(v float64, dt dtypes.DataType) float64 {
	switch dt {
	case dtypes.S8:
		return min(max(v, -128), 127)
	case dtypes.U8:
		return min(max(v, 0), 255)
	case dtypes.BF16:
		return float64(dtypes.BF16ToF32(dtypes.F32ToBF16(float32(v))))
	case dtypes.F16:
		return float64(dtypes.F16ToF32(dtypes.F32ToF16(float32(v))))
	}
	return v
}

// TestInterpInt8SumBeyondS32 sums 2^24 copies of 255 and of -128 (beyond
// the s32 range once scaled) into s32: the result saturates, and a sum
// just inside the range is exact.
func TestInterpInt8SumBeyondS32(t *testing.T) {
	const n = 1 << 24
	for _, c := range []struct {
		sdt  dtypes.DataType
		v    byte
		rows int64
		want float64
	}{
		{dtypes.U8, 255, 1, 255 * n},   // past 2^31: saturates
		{dtypes.S8, 0x80, 1, -128 * n}, // -2^31 exactly
		{dtypes.S8, 0x7f, 1, 127 * n},  // inside the range, exact in f32
	} {
		src := make([]byte, n)
		for i := range src {
			src[i] = c.v
		}
		p := &plan.Problem{Dims: []int64{n}, Reduce: []bool{true}, SrcStrides: []int64{1}, DstStrides: []int64{1},
			SrcDT: c.sdt, DstDT: dtypes.S32, Reduction: plan.AlgSum.Reduction(0, 0)}
		dst := make([]byte, 4)
		if err := RunProblem(p, src, dst, nil); err != nil {
			t.Fatal(err)
		}
		want := min(max(c.want, math.MinInt32), math.MaxInt32)
		if got := oracle.Get(dtypes.S32, dst, 0); got != want {
			t.Errorf("sum of %d x %v (%v) into s32 = %v, want %v", n, c.v, c.sdt, got, want)
		}
	}
}

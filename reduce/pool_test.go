package reduce_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// around returns the sizes before, at and after dim axis of dims.
func around(dims []int, axis int) (outer, n, inner int) {
	outer, n, inner = 1, dims[axis], 1
	for i, d := range dims {
		if i < axis {
			outer *= d
		} else if i > axis {
			inner *= d
		}
	}
	return outer, n, inner
}

// lpRef is x / max(||x||_p, eps) over axis of dense dims, in float64.
func lpRef(x []float64, dims []int, axis, p int, eps float64) []float64 {
	outer, n, inner := around(dims, axis)
	out := make([]float64, len(x))
	for o := range outer {
		for in := range inner {
			at := func(k int) int { return (o*n+k)*inner + in }
			s := 0.0
			for k := range n {
				if p == 1 {
					s += math.Abs(x[at(k)])
				} else {
					s += x[at(k)] * x[at(k)]
				}
			}
			if p == 2 {
				s = math.Sqrt(s)
			}
			for k := range n {
				out[at(k)] = x[at(k)] / math.Max(s, eps)
			}
		}
	}
	return out
}

// closeTo reports whether got is v within rel relative error (and a
// tiny absolute floor), NaN meeting NaN.
func closeTo(got, v, rel float64) bool {
	if math.IsNaN(v) || math.IsNaN(got) {
		return math.IsNaN(v) && math.IsNaN(got)
	}
	if math.IsInf(v, 0) {
		return got == v
	}
	return math.Abs(got-v) <= rel*math.Abs(v)+1e-30
}

// TestLpNormalizeAgainstFloat64: p 1 and 2, every axis, eps 0 and > 0,
// f32 and bf16, match the float64 reference; a row of 0s gives NaN with
// eps 0 and 0s with eps > 0.
func TestLpNormalizeAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, dims := range [][]int{{7}, {3, 33}, {4, 5, 6}, {2, 300, 3}, {256, 384}} {
		n := product(int64sOf(dims))
		for axis := range dims {
			for _, p := range []int{1, 2} {
				for _, eps := range []float32{0, 1e-12, 0.5} {
					x := make([]float32, n)
					x64 := make([]float64, n)
					for i := range x {
						x[i] = float32(r.NormFloat64())
						if i%7 == 0 && len(dims) > 1 {
							x[i] = 0
						}
						x64[i] = float64(x[i])
					}
					// The first row along axis all 0.
					stride := 1
					for _, d := range dims[axis+1:] {
						stride *= d
					}
					for k := range dims[axis] {
						x[k*stride], x64[k*stride] = 0, 0
					}
					want := lpRef(x64, dims, axis, p, float64(eps))
					got := make([]float32, n)
					if err := reduce.LpNormalize(got, x, dims, axis-len(dims), p, eps); err != nil {
						t.Fatalf("dims %v axis %d p %d: %v", dims, axis, p, err)
					}
					for i := range got {
						if !closeTo(float64(got[i]), want[i], 1e-5) {
							t.Fatalf("dims %v axis %d p %d eps %v: [%d] = %v, want %v", dims, axis, p, eps, i, got[i], want[i])
						}
					}
					if eps == 0 && !math.IsNaN(float64(got[0])) || eps > 0 && got[0] != 0 {
						t.Fatalf("dims %v axis %d p %d eps %v: a row of 0s gives %v", dims, axis, p, eps, got[0])
					}
					// bf16 src and dst: the result rounded once more.
					xb := make([]uint16, n)
					for i := range x {
						xb[i] = dtypes.F32ToBF16(x[i])
						x64[i] = float64(dtypes.BF16ToF32(xb[i]))
					}
					want = lpRef(x64, dims, axis, p, float64(eps))
					gb := make([]uint16, n)
					if err := reduce.LpNormalize(gb, xb, dims, axis, p, eps, reduce.Type(dtypes.BF16)); err != nil {
						t.Fatal(err)
					}
					for i := range gb {
						if g := float64(dtypes.BF16ToF32(gb[i])); !closeTo(g, want[i], 1.0/128) {
							t.Fatalf("bf16 dims %v axis %d p %d: [%d] = %v, want %v", dims, axis, p, i, g, want[i])
						}
					}
				}
			}
		}
	}
}

func int64sOf(dims []int) []int64 {
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = int64(d)
	}
	return out
}

// TestLpNormalizeSpecials: an infinity gives NaN for itself (Inf/Inf)
// and zeros for the finite elements, a NaN a row of NaN, as x/||x|| does
// in float64.
func TestLpNormalizeSpecials(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	for _, p := range []int{1, 2} {
		for _, c := range []struct {
			x, want []float32
		}{
			{[]float32{1, -inf, 2}, []float32{0, nan, 0}},
			{[]float32{1, nan, 2}, []float32{nan, nan, nan}},
			// A norm past f32's range is +Inf, so x divides to ±0 (as f32
			// numpy and PyTorch give).
			{[]float32{-3e38, 3e38}, []float32{0, 0}},
		} {
			got := make([]float32, len(c.x))
			if err := reduce.LpNormalize(got, c.x, []int{len(c.x)}, 0, p, 1e-12); err != nil {
				t.Fatal(err)
			}
			want := c.want
			for i := range got {
				if !closeTo(float64(got[i]), float64(want[i]), 1e-6) {
					t.Errorf("p %d x %v: got %v, want %v", p, c.x, got, want)
					break
				}
			}
		}
	}
}

// maskedMeanRef is sum(x·mask)/max(sum(mask), tiny) over axis, x dense
// over dims, mask dense over dims[:axis+1].
func maskedMeanRef(x, mask []float64, dims []int, axis int) []float64 {
	outer, n, inner := around(dims, axis)
	out := make([]float64, outer*inner)
	for o := range outer {
		cnt := 0.0
		for k := range n {
			cnt += mask[o*n+k]
		}
		for in := range inner {
			s := 0.0
			for k := range n {
				s += x[(o*n+k)*inner+in] * mask[o*n+k]
			}
			out[o*inner+in] = s / math.Max(cnt, 0x1p-126)
		}
	}
	return out
}

// TestMaskedMeanAgainstFloat64: f32 and u8 masks of 0s and 1s, and
// weights, over every axis, f32 and bf16 data, dense and strided dst;
// a row whose mask is all 0 gives 0s.
func TestMaskedMeanAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, dims := range [][]int{{9}, {3, 5}, {4, 17, 6}, {8, 128, 384}, {2, 3, 4, 5}} {
		n := product(int64sOf(dims))
		for axis := range dims {
			mn := product(int64sOf(dims[:axis+1]))
			for _, weights := range []bool{false, true} {
				x := make([]float32, n)
				x64 := make([]float64, n)
				for i := range x {
					x[i] = float32(r.NormFloat64())
					x64[i] = float64(x[i])
				}
				m := make([]float32, mn)
				m8 := make([]uint8, mn)
				m64 := make([]float64, mn)
				for i := range m {
					if r.IntN(3) > 0 {
						m8[i] = 1
					}
					m[i] = float32(m8[i])
					if weights {
						m[i] = float32(r.Float64())
					}
					m64[i] = float64(m[i])
				}
				// The first row: no token.
				for k := range dims[axis] {
					m[k], m8[k], m64[k] = 0, 0, 0
				}
				want := maskedMeanRef(x64, m64, dims, axis)
				got := make([]float32, len(want))
				if err := reduce.MaskedMean(got, x, m, dims, axis); err != nil {
					t.Fatalf("dims %v axis %d: %v", dims, axis, err)
				}
				for i := range got {
					if !closeTo(float64(got[i]), want[i], 1e-5) && math.Abs(float64(got[i])-want[i]) > 1e-6 {
						t.Fatalf("dims %v axis %d weights %v: [%d] = %v, want %v", dims, axis, weights, i, got[i], want[i])
					}
				}
				inner := len(want) / max(product(int64sOf(dims[:axis])), 1)
				for i := range inner {
					if got[i] != 0 {
						t.Fatalf("dims %v axis %d: a row with an all-0 mask gives %v", dims, axis, got[:inner])
					}
				}
				if weights {
					continue
				}
				// A u8 mask into a bf16 dst with padded strides.
				m64u := make([]float64, mn)
				for i := range m8 {
					m64u[i] = float64(m8[i])
				}
				want = maskedMeanRef(x64, m64u, dims, axis)
				ddims := append(append([]int(nil), dims[:axis]...), dims[axis+1:]...)
				dstr := make([]int, len(ddims))
				acc := 1
				for i := len(ddims) - 1; i >= 0; i-- {
					dstr[i] = acc
					acc *= ddims[i] + 1
				}
				gb := make([]uint16, acc)
				if err := reduce.MaskedMean(gb, x, m8, dims, axis, reduce.DstType(dtypes.BF16), reduce.DstStrides(dstr)); err != nil {
					t.Fatalf("u8 mask dims %v axis %d: %v", dims, axis, err)
				}
				for i := range want {
					off, rem := 0, i
					for d := len(ddims) - 1; d >= 0; d-- {
						off += rem % ddims[d] * dstr[d]
						rem /= ddims[d]
					}
					if g := float64(dtypes.BF16ToF32(gb[off])); !closeTo(g, want[i], 1.0/128) && math.Abs(g-want[i]) > 1e-6 {
						t.Fatalf("u8 mask dims %v axis %d: [%d] = %v, want %v", dims, axis, i, g, want[i])
					}
				}
			}
		}
	}
}

// TestPoolRefusals: every bad argument of LpNormalize and MaskedMean is
// an error with its status, never a panic.
func TestPoolRefusals(t *testing.T) {
	x := make([]float32, 12)
	dst := make([]float32, 12)
	mask := make([]float32, 3)
	for _, c := range []struct {
		name string
		err  error
		is   error
		text string
	}{
		{"p 3", reduce.LpNormalize(dst, x, []int{3, 4}, 1, 3, 0), graph.InvalidArguments, "want 1 or 2"},
		{"eps NaN", reduce.LpNormalize(dst, x, []int{3, 4}, 1, 2, float32(math.NaN())), graph.InvalidArguments, "epsilon is NaN"},
		{"eps negative", reduce.LpNormalize(dst, x, []int{3, 4}, 1, 2, -1), graph.InvalidArguments, "negative"},
		{"axis", reduce.LpNormalize(dst, x, []int{3, 4}, 2, 2, 0), graph.InvalidArguments, "out of range"},
		{"short dst", reduce.LpNormalize(dst[:11], x, []int{3, 4}, 1, 2, 0), graph.InvalidArguments, "dst holds 11 values; its dims [3 4] and strides address 12"},
		{"short src", reduce.LpNormalize(dst, x[:5], []int{3, 4}, 1, 2, 0), graph.InvalidArguments, "src holds 5 values; its dims [3 4] and strides address 12"},
		{"dst over src shifted", reduce.LpNormalize(x[1:], x[:11], []int{11}, 0, 2, 0), graph.InvalidArguments, "overlaps"},
		{"in place with other strides", reduce.LpNormalize(x, x, []int{3, 2}, 1, 2, 0, reduce.DstStrides([]int{4, 1})), graph.InvalidArguments,
			"dst must be src itself"},
		{"16-bit unnamed", reduce.LpNormalize(make([]uint16, 12), x, []int{3, 4}, 1, 2, 0), graph.InvalidDataType, "bf16 or f16"},
		{"ParamType", reduce.LpNormalize(dst, x, []int{3, 4}, 1, 2, 0, reduce.ParamType(dtypes.BF16)), graph.InvalidArguments, "ParamType"},
		{"Stats", reduce.LpNormalize(dst, x, []int{3, 4}, 1, 2, 0, reduce.Stats(nil, nil)), graph.InvalidArguments, "Stats"},
		{"negative dim", reduce.LpNormalize(dst, x, []int{-3, 4}, 1, 2, 0), graph.InvalidShape, "negative"},
		{"mask length", reduce.MaskedMean(dst, x, mask[:2], []int{3, 4}, 0), graph.InvalidShape, "mask holds 2"},
		{"mask axis", reduce.MaskedMean(dst, x, mask, []int{3, 4}, -3), graph.InvalidArguments, "out of range"},
		{"masked short dst", reduce.MaskedMean(dst[:3], x, mask, []int{3, 4}, 0), graph.InvalidArguments, "dst"},
		{"masked short src", reduce.MaskedMean(dst, x[:11], mask, []int{3, 4}, 0), graph.InvalidArguments, "src"},
		{"masked dst over src", reduce.MaskedMean(x[8:], x, mask, []int{3, 4}, 0), graph.InvalidArguments, "overlaps"},
		{"masked InfAsZero", reduce.MaskedMean(dst, x, mask, []int{3, 4}, 0, reduce.InfAsZero(true)), graph.InvalidArguments, "InfAsZero"},
		{"masked dst strides", reduce.MaskedMean(dst, x, mask, []int{3, 4}, 0, reduce.DstStrides([]int{1, 1})), graph.InvalidShape, "strides"},
		{"masked negative weight", reduce.MaskedMean(dst, x, []float32{1, -1, 1}, []int{3, 4}, 0), graph.InvalidArguments, "mask value 1 is -1"},
		{"masked NaN weight", reduce.MaskedMean(dst, x, []float32{1, 1, float32(math.NaN())}, []int{3, 4}, 0), graph.InvalidArguments, "mask value 2 is NaN"},
	} {
		if c.err == nil || !errors.Is(c.err, c.is) || !strings.Contains(c.err.Error(), c.text) {
			t.Errorf("%s: got %v, want %v containing %q", c.name, c.err, c.is, c.text)
		}
	}
}

// TestMaskedMeanEmptyAxis: an axis of length 0 (no token at all) writes
// 0s, as an all-0 mask does; an empty LpNormalize writes nothing.
func TestMaskedMeanEmptyAxis(t *testing.T) {
	dst := []float32{9, 9, 9, 9, 9, 9}
	if err := reduce.MaskedMean(dst, []float32{}, []float32{}, []int{2, 0, 3}, 1); err != nil {
		t.Fatal(err)
	}
	for _, v := range dst {
		if v != 0 {
			t.Fatalf("got %v, want 0s", dst)
		}
	}
	if err := reduce.LpNormalize([]float32{}, []float32{}, []int{2, 0, 3}, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
}

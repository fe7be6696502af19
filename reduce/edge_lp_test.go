package reduce_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestLpNormalizeSpecials: LpNormalize's documented special rows, over
// the last axis and a middle one, p 1 and 2, eps 0 and 1e-12, every ISA:
// a row of 0s gives NaN with eps 0 and 0s with eps > 0; a row holding an
// infinity NaN there and ±0 elsewhere; a NaN a row of NaN; a row of
// tiny values (whose squares underflow) and of huge ones (whose squares
// overflow) as README's precision notes allow: finite and within f32
// error where the norm itself is representable and no square overflows.
func TestLpNormalizeSpecialRows(t *testing.T) {
	rows := []struct {
		name string
		vals []float32
	}{
		{"zeros", []float32{0, 0, 0, 0, 0}},
		{"negzeros", []float32{float32(math.Copysign(0, -1)), 0, float32(math.Copysign(0, -1)), 0, 0}},
		{"inf", []float32{1, float32(math.Inf(1)), -2, 3, 0}},
		{"-inf", []float32{1, 2, -2, 3, float32(math.Inf(-1))}},
		{"nan", []float32{1, 2, float32(math.NaN()), 3, 4}},
		{"plain", []float32{1, -2, 3, -4, 5}},
		{"single nonzero", []float32{0, 0, -7, 0, 0}},
		{"big", []float32{1e18, -2e18, 3e18, 1e18, 5e17}},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, p := range []int{1, 2} {
			for _, eps := range []float32{0, 1e-12} {
				for _, layout := range []string{"rows", "columns"} {
					// 5 elements per row, many rows (one pattern each, cycled).
					const R, N = 37, 5
					dims, axis := []int{R, N}, 1
					if layout == "columns" {
						dims, axis = []int{N, R}, 0
					}
					src := make([]float32, R*N)
					at := func(r, j int) int {
						if layout == "rows" {
							return r*N + j
						}
						return j*R + r
					}
					for r := range R {
						for j := range N {
							src[at(r, j)] = rows[r%len(rows)].vals[j]
						}
					}
					dst := make([]float32, R*N)
					err := reduce.LpNormalize(dst, src, dims, axis, p, eps)
					name := fmt.Sprintf("%v p%d eps %g %s", isa, p, eps, layout)
					if err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					for r := range R {
						row := rows[r%len(rows)]
						norm := 0.0
						for _, v := range row.vals {
							if p == 1 {
								norm += math.Abs(float64(v))
							} else {
								norm += float64(v) * float64(v)
							}
						}
						if p == 2 {
							norm = math.Sqrt(norm)
						}
						norm = math.Max(norm, float64(eps))
						for j, v := range row.vals {
							w := float64(v) / norm
							g := float64(dst[at(r, j)])
							ok := math.IsNaN(w) == math.IsNaN(g) && (math.IsNaN(w) || math.Abs(g-w) <= 1e-6*math.Abs(w)+1e-30 && math.Signbit(g) == math.Signbit(w))
							if !ok {
								t.Errorf("%s: row %q [%d] = %v, want %v", name, row.name, j, g, w)
							}
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestLpNormalizeSubnormalDivisor: where a row's divisor max(‖x‖_p, eps)
// is subnormal, its reciprocal passes f32's range; the results are
// still x / divisor (within f32 error), not ±Inf or NaN: an L1 norm of
// subnormal values with eps 0, and rows of 0s over a subnormal eps, for
// p 1 and 2, over rows and over columns (the column kernel, whose tiles
// hold such rows beside plain ones), every ISA.
func TestLpNormalizeSubnormalDivisor(t *testing.T) {
	cases := []struct {
		name string
		vals []float32
		p    int
		eps  float32
	}{
		{"L1 of subnormals", []float32{3e-41, -9e-41, 0, 1e-41, -2e-45}, 1, 0},
		{"L1 of subnormals under a subnormal eps", []float32{3e-42, -9e-42, 0, 1e-42, 0}, 1, 1e-40},
		{"L1 of zeros, subnormal eps", []float32{0, 0, 0, 0, 0}, 1, 1e-40},
		{"L2 of zeros, subnormal eps", []float32{0, 0, 0, 0, 0}, 2, 1e-40},
		{"L2 of zeros, least eps", []float32{0, 0, 0, 0, 0}, 2, math.SmallestNonzeroFloat32},
		{"L1 at the least normal", []float32{float32(math.SmallestNonzeroFloat32 * (1 << 22)), float32(math.SmallestNonzeroFloat32 * (1 << 22)), 0, 0, 0}, 1, 0},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, c := range cases {
			for _, layout := range []string{"rows", "columns"} {
				const R, N = 37, 5
				dims, axis := []int{R, N}, 1
				at := func(r, j int) int { return r*N + j }
				if layout == "columns" {
					dims, axis = []int{N, R}, 0
					at = func(r, j int) int { return j*R + r }
				}
				// Every third row a plain one.
				plain := []float32{1, -2, 3, -4, 5}
				vals := func(r int) []float32 {
					if r%3 == 2 {
						return plain
					}
					return c.vals
				}
				src := make([]float32, R*N)
				for r := range R {
					for j := range N {
						src[at(r, j)] = vals(r)[j]
					}
				}
				dst := make([]float32, R*N)
				name := fmt.Sprintf("%v %s, %s", isa, c.name, layout)
				if err := reduce.LpNormalize(dst, src, dims, axis, c.p, c.eps); err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				for r := range R {
					norm := 0.0
					for _, v := range vals(r) {
						if c.p == 1 {
							norm += math.Abs(float64(v))
						} else {
							norm += float64(v) * float64(v) // rows of 0s, or plain
						}
					}
					if c.p == 2 {
						norm = math.Sqrt(norm)
					}
					norm = math.Max(norm, float64(c.eps))
					for j, v := range vals(r) {
						w, g := float64(v)/norm, float64(dst[at(r, j)])
						if math.IsNaN(g) || math.Abs(g-w) > 1e-6*math.Abs(w) || math.Signbit(g) != math.Signbit(w) {
							t.Fatalf("%s: row %d [%d] = %v, want %v", name, r, j, g, w)
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestLpNormalizeOneElement: the L2 norm of a row of one element is |x|
// exactly, on every path, as ReduceL2's is, so x / norm is ±1 where
// x² would pass f32's range or underflow (and ±1 too for the L1 norm);
// rows of one element along the innermost dim (the row kernel) and
// along a kept inner dim (the column kernel), with eps 0 and 1e-12,
// every ISA, and ONNX's LpNormalization.
func TestLpNormalizeOneElement(t *testing.T) {
	vals := []float32{1e-30, -1e-20, 3e20, 1e-45, -3e38, 2}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, p := range []int{1, 2} {
			for _, eps := range []float32{0, 1e-12} {
				for _, layout := range [][]int{{len(vals), 1}, {2, 1, len(vals) / 2}} {
					dst := make([]float32, len(vals))
					name := fmt.Sprintf("%v p %d eps %v dims %v", isa, p, eps, layout)
					if err := reduce.LpNormalize(dst, vals, layout, 1, p, eps); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i, v := range vals {
						w := float64(v) / math.Max(math.Abs(float64(v)), float64(eps))
						if g := float64(dst[i]); math.Abs(g-w) > 1e-6*math.Abs(w) || math.Signbit(g) != math.Signbit(w) {
							t.Errorf("%s: [%d] = %v, want %v", name, i, g, w)
						}
					}
				}
			}
		}
		n, err := reduce.NewONNXNorm("LpNormalization", 1)
		if err != nil {
			t.Fatal(err)
		}
		n.P, n.Axis = 2, 1
		dst := make([]float32, len(vals))
		if err := reduce.RunONNXNorm(n, dst, vals, []float32(nil), nil, []int{len(vals), 1}); err != nil {
			t.Fatalf("%v ONNX: %v", isa, err)
		}
		for i, v := range vals {
			if w, g := math.Copysign(1, float64(v)), float64(dst[i]); math.Abs(g-w) > 1e-6 {
				t.Errorf("%v ONNX: [%d] = %v, want %v", isa, i, g, w)
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestLpNormalizeHugeNorm: a row whose norm is above 2^126, whose
// reciprocal is subnormal, is divided by its norm as the interpreter
// does: a single element gives ±1 exactly, and two equal elements of an
// L1 row exactly ±1/2, on every ISA, in rows and in columns (a last dim
// of 16 after the normalized one, which the column kernel takes).
func TestLpNormalizeHugeNorm(t *testing.T) {
	const columns = 16
	// widen repeats each value of v over the dims inner (none, or one).
	widen := func(v []float32, inner []int) []float32 {
		n := 1
		if len(inner) == 1 {
			n = inner[0]
		}
		w := make([]float32, 0, len(v)*n)
		for _, x := range v {
			for range n {
				w = append(w, x)
			}
		}
		return w
	}
	one := []float32{3e38, -1e38, 0x1.8p126, math.MaxFloat32, -math.MaxFloat32}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, p := range []int{1, 2} {
			for _, layout := range [][]int{{len(one), 1}, {len(one), 1, 1}, {len(one), 1, columns}} {
				src := widen(one, layout[2:])
				dst := make([]float32, len(src))
				if err := reduce.LpNormalize(dst, src, layout, 1, p, 0); err != nil {
					t.Fatal(err)
				}
				for i, v := range src {
					if w := float32(math.Copysign(1, float64(v))); dst[i] != w {
						t.Errorf("%v p %d dims %v: [%d] = %v, want %v", isa, p, layout, i, dst[i], w)
					}
				}
			}
		}
		pair := []float32{1e38, 1e38, -1.5e38, -1.5e38}
		for _, layout := range [][]int{{2, 2}, {2, 2, 1}, {2, 2, columns}} {
			src := widen(pair, layout[2:])
			dst := make([]float32, len(src))
			if err := reduce.LpNormalize(dst, src, layout, 1, 1, 0); err != nil {
				t.Fatal(err)
			}
			for i, v := range src {
				if w := float32(math.Copysign(0.5, float64(v))); dst[i] != w {
					t.Errorf("%v L1 dims %v: [%d] = %v, want %v", isa, layout, i, dst[i], w)
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

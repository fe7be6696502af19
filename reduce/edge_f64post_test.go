package reduce_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestF64MaxPostSpecials: f64 Max and Min with a post-op (Abs,
// ReLU: the exact code, not the native kernel) over rows with a late
// NaN, signed zeros and infinities, every ISA: bit for bit the exact
// result through the post-op.
func TestF64MaxPostSpecials(t *testing.T) {
	nz := math.Copysign(0, -1)
	rows := [][]float64{
		{1, 2, 3, 4, 5, 6, 7, 8, 9, math.NaN()},
		{nz, nz, nz, nz, nz, nz, nz, nz, nz, nz},
		{nz, 0, nz, 0, nz, 0, nz, 0, nz, nz},
		{-1, -2, -3, math.Inf(-1), -5, -6, -7, -8, -9, -10},
		{math.Inf(1), 0, 0, 0, 0, 0, 0, 0, 0, math.NaN()},
		{-5, -4, -3, -2, -1, -1, -2, -3, -4, -5},
	}
	const N = 10
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, rep := range []int{1, 7, 300} { // rows repeated, for the row count's tails
			src := make([]float64, 0, len(rows)*rep*N)
			for range rep {
				for _, r := range rows {
					src = append(src, r...)
				}
			}
			nr := len(src) / N
			for _, post := range []reduce.PostKind{reduce.PostAbs, reduce.PostReLU} {
				for _, isMin := range []bool{false, true} {
					got := make([]float64, nr)
					var err error
					if isMin {
						err = reduce.Min(got, src, []int{nr, N}, []int{1}, reduce.Post(post, 0, 0))
					} else {
						err = reduce.Max(got, src, []int{nr, N}, []int{1}, reduce.Post(post, 0, 0))
					}
					name := fmt.Sprintf("%v %v min=%v rep %d", isa, post, isMin, rep)
					if err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					for i := range nr {
						row := src[i*N : i*N+N]
						m := row[0]
						nan := false
						for _, v := range row {
							if math.IsNaN(v) {
								nan = true
							}
							if !isMin && (v > m || v == 0 && m == 0 && !math.Signbit(v)) || isMin && (v < m || v == 0 && m == 0 && math.Signbit(v)) {
								m = v
							}
						}
						if nan {
							m = math.NaN()
						}
						w := m
						if post == reduce.PostAbs {
							w = math.Abs(m)
						} else if !(m > 0) && !math.IsNaN(m) {
							w = 0 // max(x, 0); -0 becomes +0
							if m == 0 {
								w = math.Max(m, 0)
							}
						}
						g := got[i]
						if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) && g != w {
							t.Errorf("%s: row %d %v = %v, want %v", name, i, row, g, w)
							break
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

package reduce_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestLayerNormCallsInPlace: LayerNorm (with Stats), RMSNorm and
// GroupNorm in place over permuted, padded strides, 1, 2 and 3
// threads, every ISA: bit for bit the out-of-place call (dst, mean,
// variance), padding untouched.
func TestLayerNormCallsInPlace(t *testing.T) {
	type cs struct {
		dims  []int
		perm  []int
		pad   int
		begin int
	}
	cases := []cs{
		{[]int{300, 1000}, []int{1, 0}, 0, 1},
		{[]int{7, 33, 65}, []int{2, 0, 1}, 1, 1},
		{[]int{3000, 5}, []int{1, 0}, 2, 1},
		{[]int{5, 301, 9}, []int{0, 2, 1}, 0, 2},
		{[]int{2, 64, 300}, []int{0, 2, 1}, 1, 1}, // for GroupNorm: channels (dim 1) last in memory
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(59, uint64(isa)))
		for _, c := range cases {
			st, n := r1Strides(c.dims, c.perm, c.pad)
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(r.Float64()*6 - 3)
			}
			pn := 1
			for _, d := range c.dims[c.begin:] {
				pn *= d
			}
			rowsN := 1
			for _, d := range c.dims[:c.begin] {
				rowsN *= d
			}
			gamma, beta := make([]float32, pn), make([]float32, pn)
			for i := range gamma {
				gamma[i], beta[i] = float32(r.Float64()+0.5), float32(r.Float64()-0.5)
			}
			ch := c.dims[1]
			gg, gb := make([]float32, ch), make([]float32, ch)
			for i := range gg {
				gg[i], gb[i] = float32(r.Float64()+0.5), float32(r.Float64()-0.5)
			}
			opts := []reduce.Option{reduce.SrcStrides(st), reduce.DstStrides(st)}
			for _, th := range []int{1, 2, 3} {
				pt := jit.SetThreads(th)
				type run struct {
					name string
					f    func(dst, src []float32, mean, vari []float32) error
				}
				runs := []run{
					{"LayerNorm", func(d, s, m, v []float32) error {
						return reduce.LayerNorm(d, s, gamma, beta, c.dims, c.begin, 1e-5, append(slices.Clone(opts), reduce.Stats(m, v))...)
					}},
					{"RMSNorm", func(d, s, _, _ []float32) error { return reduce.RMSNorm(d, s, gamma, c.dims, c.begin, 1e-5, opts...) }},
				}
				if ch%4 == 0 {
					runs = append(runs, run{"GroupNorm", func(d, s, _, _ []float32) error {
						return reduce.GroupNorm(d, s, gg, gb, c.dims, 4, 1, 1e-5, opts...)
					}})
				}
				for _, rn := range runs {
					name := fmt.Sprintf("%v %s %v perm %v pad %d begin %d %d threads", isa, rn.name, c.dims, c.perm, c.pad, c.begin, th)
					out := make([]float32, n)
					m1, v1 := make([]float32, rowsN), make([]float32, rowsN)
					ip := slices.Clone(src)
					m2, v2 := make([]float32, rowsN), make([]float32, rowsN)
					e1 := rn.f(out, src, m1, v1)
					e2 := rn.f(ip, ip, m2, v2)
					if e1 != nil || e2 != nil {
						t.Errorf("%s: %v / %v", name, e1, e2)
						continue
					}
					used := make([]bool, n)
					r1Rows(c.dims, st, 0, func(offs []int) {
						for _, o := range offs {
							used[o] = true
						}
					})
					bad := 0
					for i := range n {
						if !used[i] {
							if ip[i] != src[i] || out[i] != 0 {
								bad++
							}
							continue
						}
						if math.Float32bits(ip[i]) != math.Float32bits(out[i]) {
							if bad < 3 {
								t.Errorf("%s: [%d] in place %v, out of place %v", name, i, ip[i], out[i])
							}
							bad++
						}
					}
					if !slices.Equal(m1, m2) || !slices.Equal(v1, v2) {
						t.Errorf("%s: statistics differ in place", name)
					}
					if bad > 0 {
						t.Errorf("%s: %d bad", name, bad)
					}
				}
				jit.SetThreads(pt)
			}
		}
		jit.SetMaxISA(prev)
	}
}

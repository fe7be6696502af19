package reduce_test

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// r1Groups calls f with, for each output (row-major over the kept
// dims), the dense offsets of the elements reduced into it.
func r1Groups(dims, axes []int, f func(out int, offs []int)) {
	red := make([]bool, len(dims))
	for _, a := range axes {
		red[a] = true
	}
	dense := make([]int, len(dims))
	s := 1
	for i := len(dims) - 1; i >= 0; i-- {
		dense[i] = s
		s *= dims[i]
	}
	var kept, reduced []int
	for i := range dims {
		if red[i] {
			reduced = append(reduced, i)
		} else {
			kept = append(kept, i)
		}
	}
	nOut := 1
	for _, k := range kept {
		nOut *= dims[k]
	}
	nRed := 1
	for _, k := range reduced {
		nRed *= dims[k]
	}
	offs := make([]int, nRed)
	for o := range nOut {
		base, rem := 0, o
		for i := len(kept) - 1; i >= 0; i-- {
			base += rem % dims[kept[i]] * dense[kept[i]]
			rem /= dims[kept[i]]
		}
		for j := range nRed {
			off, rem := base, j
			for i := len(reduced) - 1; i >= 0; i-- {
				off += rem % dims[reduced[i]] * dense[reduced[i]]
				rem /= dims[reduced[i]]
			}
			offs[j] = off
		}
		f(o, offs)
	}
}

// TestF64MaxMinSpecials: f64 ReduceMax and ReduceMin over rows whose
// NaN comes late (last element, last tail lane, after a long run), rows
// of -0 and +0 in either order, ±Inf, over one axis and two, every ISA,
// 1 and 2 threads: bit for bit against the exact result (NaN wins; max
// takes +0 over -0, min -0 over +0).
func TestF64MaxMinSpecials(t *testing.T) {
	type cs struct {
		dims, axes []int
	}
	cases := []cs{
		{[]int{5, 1 << 16}, []int{1}},
		{[]int{1 << 16, 5}, []int{0}},
		{[]int{3, 2049, 7}, []int{1}},
		{[]int{3, 2049, 7}, []int{0, 2}},
		{[]int{2, 31, 33}, []int{1, 2}},
		{[]int{1, 1 << 20}, []int{1}},
		{[]int{9, 3}, []int{1}},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(29, uint64(isa)))
		for _, c := range cases {
			n, nOut := elemsAndOutputs(c.dims, c.axes)
			for variant := range 6 {
				src := make([]float64, n)
				for i := range src {
					src[i] = r.Float64()*2 - 1
				}
				r1Groups(c.dims, c.axes, func(o int, offs []int) {
					L := len(offs)
					switch (o + variant) % 6 {
					case 0: // NaN last
						src[offs[L-1]] = math.NaN()
					case 1: // all zeros of mixed sign
						for _, off := range offs {
							src[off] = math.Copysign(0, float64(r.IntN(2)*2-1))
						}
					case 2: // all -0, then +0 last
						for _, off := range offs {
							src[off] = math.Copysign(0, -1)
						}
						src[offs[L-1]] = 0
					case 3: // +Inf and -Inf, NaN in the middle
						src[offs[0]] = math.Inf(1)
						src[offs[L-1]] = math.Inf(-1)
						src[offs[L/2]] = math.NaN()
					case 4: // all -0
						for _, off := range offs {
							src[off] = math.Copysign(0, -1)
						}
					case 5: // ±Inf only at the far ends
						src[offs[L-1]] = math.Inf(1)
						src[offs[0]] = math.Inf(-1)
					}
				})
				wantMax, wantMin := make([]float64, nOut), make([]float64, nOut)
				r1Groups(c.dims, c.axes, func(o int, offs []int) {
					mx, mn := math.Inf(-1), math.Inf(1)
					nan := false
					for _, off := range offs {
						v := src[off]
						if math.IsNaN(v) {
							nan = true
						}
						if v > mx || v == 0 && mx == 0 && !math.Signbit(v) {
							mx = v
						}
						if v < mn || v == 0 && mn == 0 && math.Signbit(v) {
							mn = v
						}
					}
					if nan {
						mx, mn = math.NaN(), math.NaN()
					}
					wantMax[o], wantMin[o] = mx, mn
				})
				for _, th := range []int{1, 2} {
					pt := jit.SetThreads(th)
					gmax, gmin := make([]float64, nOut), make([]float64, nOut)
					e1 := reduce.Max(gmax, src, c.dims, c.axes)
					e2 := reduce.Min(gmin, src, c.dims, c.axes)
					jit.SetThreads(pt)
					name := fmt.Sprintf("%v %v axes %v variant %d %d threads", isa, c.dims, c.axes, variant, th)
					if e1 != nil || e2 != nil {
						t.Errorf("%s: %v %v", name, e1, e2)
						continue
					}
					same := func(a, b float64) bool {
						return math.IsNaN(a) && math.IsNaN(b) || math.Float64bits(a) == math.Float64bits(b)
					}
					for o := range nOut {
						if !same(gmax[o], wantMax[o]) {
							t.Errorf("%s: max[%d] = %v (%#x), want %v", name, o, gmax[o], math.Float64bits(gmax[o]), wantMax[o])
							break
						}
						if !same(gmin[o], wantMin[o]) {
							t.Errorf("%s: min[%d] = %v (%#x), want %v", name, o, gmin[o], math.Float64bits(gmin[o]), wantMin[o])
							break
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestF64SumBound: f64 sums and means over one and several axes,
// long and short, strided outputs, with cancelling terms of mixed
// magnitudes, every ISA, 1 and 2 threads: within README's bound
// 2^-53 (1032 + N/1024) sum |x| of the exact (big.Float) sum, and bit
// identical for 1 and 2 threads.
func TestF64SumBound(t *testing.T) {
	type cs struct {
		dims, axes []int
	}
	cases := []cs{
		{[]int{3, 1<<20 + 3}, []int{1}},
		{[]int{1<<18 + 1, 3}, []int{0}},
		{[]int{5, 4099, 9}, []int{0, 2}},
		{[]int{4099, 2, 257}, []int{0, 2}},
		{[]int{2, 3, 100003}, []int{0, 1, 2}},
		{[]int{7, 1025}, []int{1}},
		{[]int{1025, 1025}, []int{0}},
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, c := range cases {
		n, nOut := elemsAndOutputs(c.dims, c.axes)
		src := make([]float64, n)
		for i := range src {
			src[i] = (r.Float64()*2 - 1) * math.Ldexp(1, r.IntN(60)-30)
		}
		exact := make([]float64, nOut)
		bound := make([]float64, nOut)
		var N int
		r1Groups(c.dims, c.axes, func(o int, offs []int) {
			N = len(offs)
			s := new(big.Float).SetPrec(2000)
			mag := 0.0
			for _, off := range offs {
				s.Add(s, new(big.Float).SetFloat64(src[off]))
				mag += math.Abs(src[off])
			}
			exact[o], _ = s.Float64()
			bound[o] = math.Ldexp(1032+float64(N)/1024, -53)*mag + math.Abs(exact[o])*0x1p-53
		})
		for _, isa := range advISAs {
			prev := jit.SetMaxISA(isa)
			var prevSum []float64
			for _, th := range []int{1, 2} {
				pt := jit.SetThreads(th)
				sum := make([]float64, nOut)
				e1 := reduce.Sum(sum, src, c.dims, c.axes)
				jit.SetThreads(pt)
				name := fmt.Sprintf("%v %v axes %v %d threads", isa, c.dims, c.axes, th)
				if e1 != nil {
					t.Errorf("%s: %v", name, e1)
					continue
				}
				for o := range nOut {
					if math.Abs(sum[o]-exact[o]) > bound[o] {
						t.Errorf("%s: sum[%d] = %v, exact %v, error %g over the bound %g", name, o, sum[o], exact[o], math.Abs(sum[o]-exact[o]), bound[o])
						break
					}
				}
				if prevSum != nil {
					for o := range nOut {
						if math.Float64bits(sum[o]) != math.Float64bits(prevSum[o]) {
							t.Errorf("%s: sum[%d] = %v on 2 threads, %v on 1", name, o, sum[o], prevSum[o])
							break
						}
					}
				}
				prevSum = sum
			}
			jit.SetMaxISA(prev)
		}
	}
}

// elemsAndOutputs is the count of elements of dims and of outputs of a
// reduction of it over axes.
func elemsAndOutputs(dims, axes []int) (n, nOut int) {
	n = 1
	for _, d := range dims {
		n *= d
	}
	nOut = n
	for _, a := range axes {
		nOut /= dims[a]
	}
	return n, nOut
}

package reduce_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// r1Strides lays dims out in the dim order perm (perm[0] outermost)
// with pad elements after each dim's span; it returns the strides and
// the elements spanned.
func r1Strides(dims []int, perm []int, pad int) ([]int, int) {
	st := make([]int, len(dims))
	s := 1
	for i := len(perm) - 1; i >= 0; i-- {
		st[perm[i]] = s
		s = s*dims[perm[i]] + pad
	}
	last := 0
	for i, n := range dims {
		last += (n - 1) * st[i]
	}
	return st, last + 1
}

// r1Rows calls f with the offsets of each row along axis.
func r1Rows(dims, strides []int, axis int, f func(offs []int)) {
	idx := make([]int, len(dims))
	offs := make([]int, dims[axis])
	for {
		base := 0
		for i := range dims {
			if i != axis {
				base += idx[i] * strides[i]
			}
		}
		for k := range offs {
			offs[k] = base + k*strides[axis]
		}
		f(offs)
		i := len(dims) - 1
		for ; i >= 0; i-- {
			if i == axis {
				continue
			}
			idx[i]++
			if idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

type r1Case struct {
	dims []int
	perm []int
	pad  int
	axis int
}

var r1Cases = []r1Case{
	{[]int{300, 1000}, []int{0, 1}, 0, 0},
	{[]int{300, 1000}, []int{1, 0}, 0, 1},
	{[]int{300, 1000}, []int{1, 0}, 1, 0},
	{[]int{1000, 300}, []int{0, 1}, 2, 1},
	{[]int{7, 301, 33}, []int{2, 0, 1}, 1, 1},
	{[]int{33, 17, 65}, []int{1, 2, 0}, 0, 0},
	{[]int{3000, 2}, []int{1, 0}, 0, 1},
	{[]int{2, 3000, 3}, []int{0, 2, 1}, 0, 1},
	{[]int{1, 4099, 1}, []int{0, 1, 2}, 0, 1},
	{[]int{5, 1, 7}, []int{2, 1, 0}, 3, 1},
}

// TestLpNormalizeInPlace runs LpNormalize (p 1 and 2) in place over
// strided (permuted, padded) src on 1 and 2 threads and every ISA, and
// holds in place to out of place bit for bit, and both to a float64
// oracle. The padding must be left alone.
func TestLpNormalizeInPlace(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(3, uint64(isa)))
		for _, c := range r1Cases {
			st, n := r1Strides(c.dims, c.perm, c.pad)
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(r.Float64()*8 - 4)
			}
			for _, p := range []int{1, 2} {
				want := make([]float64, n)
				r1Rows(c.dims, st, c.axis, func(offs []int) {
					s := 0.0
					for _, o := range offs {
						x := float64(src[o])
						if p == 1 {
							s += math.Abs(x)
						} else {
							s += x * x
						}
					}
					if p == 2 {
						s = math.Sqrt(s)
					}
					s = math.Max(s, 1e-12)
					for _, o := range offs {
						want[o] = float64(src[o]) / s
					}
				})
				for _, th := range []int{1, 2, 3, 7} {
					pt := jit.SetThreads(th)
					name := fmt.Sprintf("%v p%d %v %d threads", isa, p, c, th)
					out := make([]float32, n)
					if err := reduce.LpNormalize(out, src, c.dims, c.axis, p, 1e-12, reduce.SrcStrides(st), reduce.DstStrides(st)); err != nil {
						t.Errorf("%s: out of place: %v", name, err)
					}
					ip := slices.Clone(src)
					if err := reduce.LpNormalize(ip, ip, c.dims, c.axis, p, 1e-12, reduce.SrcStrides(st), reduce.DstStrides(st)); err != nil {
						t.Errorf("%s: in place: %v", name, err)
					}
					jit.SetThreads(pt)
					covered := make([]bool, n)
					r1Rows(c.dims, st, c.axis, func(offs []int) {
						for _, o := range offs {
							covered[o] = true
						}
					})
					bad := 0
					for i := range n {
						if !covered[i] {
							if out[i] != 0 || ip[i] != src[i] {
								if bad < 3 {
									t.Errorf("%s: padding %d written: %v, %v", name, i, out[i], ip[i])
								}
								bad++
							}
							continue
						}
						if math.Abs(float64(out[i])-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
							if bad < 3 {
								t.Errorf("%s: out of place [%d] = %v, want %v", name, i, out[i], want[i])
							}
							bad++
						}
						if math.Float32bits(out[i]) != math.Float32bits(ip[i]) {
							if bad < 3 {
								t.Errorf("%s: in place [%d] = %v, out of place %v", name, i, ip[i], out[i])
							}
							bad++
						}
					}
					if bad > 0 {
						t.Errorf("%s: %d bad", name, bad)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestNormCallsInPlaceStrided runs Softmax, LogSoftmax (bf16 too) in
// place over strided src, 1 and 2 threads, every ISA, bit for bit
// against out of place.
func TestNormCallsInPlaceStrided(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(5, uint64(isa)))
		for _, c := range r1Cases {
			st, n := r1Strides(c.dims, c.perm, c.pad)
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(r.Float64()*8 - 4)
			}
			bsrc := make([]uint16, n)
			for i, v := range src {
				bsrc[i] = uint16(math.Float32bits(v) >> 16)
			}
			for _, fn := range []string{"Softmax", "LogSoftmax"} {
				for _, th := range []int{1, 2, 3, 7} {
					pt := jit.SetThreads(th)
					name := fmt.Sprintf("%v %s %v %d threads", isa, fn, c, th)
					opts := []reduce.Option{reduce.SrcStrides(st), reduce.DstStrides(st)}
					bopts := append(slices.Clone(opts), reduce.Type(dtypes.BF16))
					out, ip := make([]float32, n), slices.Clone(src)
					bout, bip := make([]uint16, n), slices.Clone(bsrc)
					var e1, e2, e3, e4 error
					if fn == "Softmax" {
						e1 = reduce.Softmax(out, src, c.dims, c.axis, opts...)
						e2 = reduce.Softmax(ip, ip, c.dims, c.axis, opts...)
						e3 = reduce.Softmax(bout, bsrc, c.dims, c.axis, bopts...)
						e4 = reduce.Softmax(bip, bip, c.dims, c.axis, bopts...)
					} else {
						e1 = reduce.LogSoftmax(out, src, c.dims, c.axis, opts...)
						e2 = reduce.LogSoftmax(ip, ip, c.dims, c.axis, opts...)
						e3 = reduce.LogSoftmax(bout, bsrc, c.dims, c.axis, bopts...)
						e4 = reduce.LogSoftmax(bip, bip, c.dims, c.axis, bopts...)
					}
					jit.SetThreads(pt)
					if err := errors.Join(e1, e2, e3, e4); err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					nb := 0
					covered := make([]bool, n)
					r1Rows(c.dims, st, c.axis, func(offs []int) {
						for _, o := range offs {
							covered[o] = true
						}
					})
					for i := range n {
						if !covered[i] {
							if ip[i] != src[i] || bip[i] != bsrc[i] || out[i] != 0 || bout[i] != 0 {
								t.Errorf("%s: padding [%d] written", name, i)
							}
							continue
						}
						if math.Float32bits(out[i]) != math.Float32bits(ip[i]) || bout[i] != bip[i] {
							if nb < 3 {
								t.Errorf("%s: [%d] in place %v / %#x, out of place %v / %#x", name, i, ip[i], bip[i], out[i], bout[i])
							}
							nb++
						}
					}
					if nb > 0 {
						t.Errorf("%s: %d differ", name, nb)
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestNormCallsPartialOverlap: dst over src shifted by one element,
// or the same first element with other strides, or a src that overlaps
// itself (stride 0), is InvalidArguments, for every normalization call.
func TestNormCallsPartialOverlap(t *testing.T) {
	dims := []int{4, 8}
	buf := make([]float32, 64)
	for i := range buf {
		buf[i] = float32(i%7) - 3
	}
	type call struct {
		name string
		run  func(dst, src []float32, opts ...reduce.Option) error
	}
	g, b := make([]float32, 8), make([]float32, 8)
	calls := []call{
		{"Softmax", func(d, s []float32, o ...reduce.Option) error { return reduce.Softmax(d, s, dims, 1, o...) }},
		{"LogSoftmax", func(d, s []float32, o ...reduce.Option) error { return reduce.LogSoftmax(d, s, dims, 0, o...) }},
		{"LayerNorm", func(d, s []float32, o ...reduce.Option) error {
			return reduce.LayerNorm(d, s, g, b, dims, 1, 1e-5, o...)
		}},
		{"RMSNorm", func(d, s []float32, o ...reduce.Option) error { return reduce.RMSNorm(d, s, g, dims, 1, 1e-5, o...) }},
		{"LpNormalize", func(d, s []float32, o ...reduce.Option) error {
			return reduce.LpNormalize(d, s, dims, 0, 2, 1e-12, o...)
		}},
	}
	for _, c := range calls {
		for _, tc := range []struct {
			what     string
			dst, src []float32
			opts     []reduce.Option
		}{
			{"shifted", buf[1:33], buf[:32], nil},
			{"shifted back", buf[:32], buf[1:33], nil},
			{"transposed", buf[:32], buf[:32], []reduce.Option{reduce.SrcStrides([]int{8, 1}), reduce.DstStrides([]int{1, 4})}},
			{"broadcast src", buf[:32], buf[:32], []reduce.Option{reduce.SrcStrides([]int{0, 1}), reduce.DstStrides([]int{0, 1})}},
			{"interleaved", buf[:32], buf[1:], []reduce.Option{reduce.SrcStrides([]int{16, 2}), reduce.DstStrides([]int{16, 2})}},
		} {
			before := slices.Clone(buf)
			err := c.run(tc.dst, tc.src, tc.opts...)
			if !errors.Is(err, graph.InvalidArguments) {
				t.Errorf("%s %s: %v, want InvalidArguments", c.name, tc.what, err)
			}
			if !slices.Equal(before, buf) {
				t.Errorf("%s %s: refused call wrote memory", c.name, tc.what)
				copy(buf, before)
			}
		}
	}
}

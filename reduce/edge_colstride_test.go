package reduce_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestSoftmaxColumnsStrided: softmax and log-softmax over the middle
// dim of [O, C, I] with src and dst of different padded strides (the
// channels far apart, the inner dim contiguous), f16 src into an f32 dst
// and f32 into bf16, 1 and 2 threads, every ISA, against float64.
func TestSoftmaxColumnsStrided(t *testing.T) {
	type cs struct {
		dims       []int
		src, dst   []int
		srcN, dstN int
	}
	mk := func(dims []int, padC, padO int) ([]int, int) {
		st := []int{0, dims[2] + padC, 1}
		st[0] = dims[1]*st[1] + padO
		return st, (dims[0]-1)*st[0] + (dims[1]-1)*st[1] + dims[2]
	}
	var cases []cs
	for _, dims := range [][]int{{3, 37, 45}, {2, 300, 17}, {1, 5, 129}, {4, 2, 33}, {2, 1000, 3}} {
		s, sn := mk(dims, 3, 7)
		d, dn := mk(dims, 0, 0)
		cases = append(cases, cs{dims, s, d, sn, dn})
		s2, sn2 := mk(dims, 0, 0)
		d2, dn2 := mk(dims, 16, 5)
		cases = append(cases, cs{dims, s2, d2, sn2, dn2})
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(53, uint64(isa)))
		for _, c := range cases {
			O, C, I := c.dims[0], c.dims[1], c.dims[2]
			srcF := make([]float32, c.srcN)
			srcH := make([]uint16, c.srcN)
			for i := range srcF {
				srcF[i] = float32(r.Float64()*10 - 5)
				dtypes.StoreF32(dtypes.F16, u16Bytes(srcH), int64(i), srcF[i])
			}
			for _, log := range []bool{false, true} {
				for _, th := range []int{1, 2} {
					pt := jit.SetThreads(th)
					d1 := make([]float32, c.dstN)
					d2 := make([]uint16, c.dstN)
					o1 := []reduce.Option{reduce.SrcType(dtypes.F16), reduce.SrcStrides(c.src), reduce.DstStrides(c.dst)}
					o2 := []reduce.Option{reduce.DstType(dtypes.BF16), reduce.SrcStrides(c.src), reduce.DstStrides(c.dst)}
					var e1, e2 error
					if log {
						e1 = reduce.LogSoftmax(d1, srcH, c.dims, 1, o1...)
						e2 = reduce.LogSoftmax(d2, srcF, c.dims, 1, o2...)
					} else {
						e1 = reduce.Softmax(d1, srcH, c.dims, 1, o1...)
						e2 = reduce.Softmax(d2, srcF, c.dims, 1, o2...)
					}
					jit.SetThreads(pt)
					name := fmt.Sprintf("%v %v src %v dst %v log=%v %d threads", isa, c.dims, c.src, c.dst, log, th)
					if e1 != nil || e2 != nil {
						t.Errorf("%s: %v %v", name, e1, e2)
						continue
					}
					bad := 0
					for o := range O {
						for i := range I {
							for pass := range 2 {
								xs := make([]float64, C)
								for ch := range C {
									k := o*c.src[0] + ch*c.src[1] + i
									if pass == 0 {
										xs[ch] = float64(dtypes.LoadF32(dtypes.F16, u16Bytes(srcH), int64(k)))
									} else {
										xs[ch] = float64(srcF[k])
									}
								}
								want := r1SoftmaxOracle(xs, log, false)
								for ch := range C {
									k := o*c.dst[0] + ch*c.dst[1] + i
									var g, tol float64
									if pass == 0 {
										g, tol = float64(d1[k]), 2e-6
									} else {
										g, tol = float64(math.Float32frombits(uint32(d2[k])<<16)), 8e-3
									}
									floor := 1e-2
									if log {
										floor = 1 // log(s) of s near 1 is ill-conditioned
									}
									if math.Abs(g-want[ch]) > tol*math.Max(math.Abs(want[ch]), floor) {
										if bad < 3 {
											t.Errorf("%s pass %d: [%d %d %d] = %v, want %v", name, pass, o, ch, i, g, want[ch])
										}
										bad++
									}
								}
							}
						}
					}
					// Padding of dst untouched.
					used := make([]bool, c.dstN)
					for o := range O {
						for ch := range C {
							for i := range I {
								used[o*c.dst[0]+ch*c.dst[1]+i] = true
							}
						}
					}
					for k, u := range used {
						if !u && (d1[k] != 0 || d2[k] != 0) {
							t.Errorf("%s: dst padding %d written", name, k)
							break
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

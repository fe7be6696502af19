package reduce_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestArgLongNaN: one NaN (or two) placed anywhere in a long axis
// (innermost and not, strided), the max tied at both ends, every ISA, 1
// and 2 threads: the index is the NaN's (first or last), exactly.
func TestArgLongNaN(t *testing.T) {
	type cs struct {
		dims    []int
		axis    int
		strides []int
	}
	cases := []cs{
		{[]int{1 << 20}, 0, nil},
		{[]int{3, 100003}, 1, nil},
		{[]int{100003, 3}, 0, nil},
		{[]int{2, 50001, 5}, 1, nil},
		{[]int{3, 40001}, 1, []int{1, 3}},
		{[]int{40001, 3}, 0, []int{4, 1}},
	}
	for _, c := range cases {
		A := c.dims[c.axis]
		span := 1
		st := c.strides
		if st == nil {
			st = make([]int, len(c.dims))
			s := 1
			for i := len(c.dims) - 1; i >= 0; i-- {
				st[i] = s
				s *= c.dims[i]
			}
		}
		for i, d := range c.dims {
			span += (d - 1) * st[i]
		}
		for _, pos := range [][]int{{0}, {A - 1}, {A / 2}, {A - 17}, {15, A - 1}, {A / 3, A / 3 * 2}, {-1}} {
			src := make([]float32, span)
			// dense-order values for the oracle
			n := 1
			for _, d := range c.dims {
				n *= d
			}
			dense := make([]float64, n)
			idx := make([]int, len(c.dims))
			for k := range n {
				rem := k
				for i := len(c.dims) - 1; i >= 0; i-- {
					idx[i] = rem % c.dims[i]
					rem /= c.dims[i]
				}
				off := 0
				for i := range idx {
					off += idx[i] * st[i]
				}
				a := idx[c.axis]
				v := float32(math.Sin(float64(k))) // in [-1, 1]
				if a == 0 || a == A-1 {
					v = 2 // the max, tied at both ends
				}
				if a == 1 || a == A-2 {
					v = -2 // the min, tied
				}
				for _, p := range pos {
					if p == a {
						v = float32(math.NaN())
					}
				}
				src[off] = v
				dense[k] = float64(v)
			}
			oracleDims := c.dims
			for _, isMin := range []bool{false, true} {
				for _, last := range []bool{false, true} {
					want := r1ArgOracle(dense, oracleDims, c.axis, isMin, last)
					for _, isa := range advISAs {
						prevISA := jit.SetMaxISA(isa)
						argLongNaNRuns(t, isa, c.dims, c.axis, c.strides, src, pos, isMin, last, want)
						jit.SetMaxISA(prevISA)
					}
				}
			}
		}
	}
}

// argLongNaNRuns runs one TestArgLongNaN case on the ISA set, at 1 and 2
// threads, against the oracle's want.
func argLongNaNRuns(t *testing.T, isa jit.ISA, dims []int, axis int, strides []int, src []float32, pos []int, isMin, last bool, want []int64) {
	t.Helper()
	for _, th := range []int{1, 2} {
		pt := jit.SetThreads(th)
		got := make([]int32, len(want))
		opts := []reduce.Option{reduce.SelectLastIndex(last)}
		if strides != nil {
			opts = append(opts, reduce.SrcStrides(strides))
		}
		var err error
		if isMin {
			err = reduce.ArgMin(got, src, dims, axis, opts...)
		} else {
			err = reduce.ArgMax(got, src, dims, axis, opts...)
		}
		jit.SetThreads(pt)
		name := fmt.Sprintf("%v %v axis %d strides %v NaN at %v min=%v last=%v %d threads", isa, dims, axis, strides, pos, isMin, last, th)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for k := range want {
			if int64(got[k]) != want[k] {
				t.Errorf("%s: [%d] = %d, want %d", name, k, got[k], want[k])
				break
			}
		}
	}
}

package reduce_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// r1ArgInt is the exact index along the middle axis of [O, A, I] for
// an ordered key (ties: the first, or the last with last).
func r1ArgInt[T int16 | uint16 | uint32 | int64 | uint64](vals []T, O, A, I int, isMin, last bool) []int64 {
	out := make([]int64, O*I)
	for o := range O {
		for i := range I {
			best := 0
			for a := 1; a < A; a++ {
				v, b := vals[(o*A+a)*I+i], vals[(o*A+best)*I+i]
				if v == b && last || (v > b) != isMin && v != b {
					best = a
				}
			}
			out[o*I+i] = int64(best)
		}
	}
	return out
}

func r1CheckArg[T int16 | uint16 | uint32 | int64 | uint64](t *testing.T, name string, vals []T, O, A, I int, opts ...reduce.Option) {
	for _, isMin := range []bool{false, true} {
		for _, last := range []bool{false, true} {
			want := r1ArgInt(vals, O, A, I, isMin, last)
			got := make([]int64, O*I)
			o := append([]reduce.Option{reduce.SelectLastIndex(last)}, opts...)
			var err error
			if isMin {
				err = reduce.ArgMin(got, vals, []int{O, A, I}, 1, o...)
			} else {
				err = reduce.ArgMax(got, vals, []int{O, A, I}, 1, o...)
			}
			if err != nil {
				t.Errorf("%s min=%v last=%v: %v", name, isMin, last, err)
				continue
			}
			for k := range want {
				if got[k] != want[k] {
					t.Errorf("%s min=%v last=%v: [%d] = %d, want %d", name, isMin, last, k, got[k], want[k])
					break
				}
			}
		}
	}
}

// TestArgWideIntegers: ArgMax and ArgMin of u16 (named by SrcType),
// s16, u32, s64 and u64 src whose values need every bit (u16 and u32
// above the sign bit, s64 and u64 past 2^53 and differing only in the
// low bits), every ISA.
func TestArgWideIntegers(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(47, uint64(isa)))
		for _, sh := range [][3]int{{1, 5, 1}, {3, 33, 1}, {2, 17, 19}, {1, 1000, 3}} {
			O, A, I := sh[0], sh[1], sh[2]
			n := O * A * I
			u16 := make([]uint16, n)
			s16 := make([]int16, n)
			u32 := make([]uint32, n)
			s64 := make([]int64, n)
			u64 := make([]uint64, n)
			for k := range n {
				u16[k] = uint16(0xFFF0 + r.IntN(16))
				if r.IntN(3) == 0 {
					u16[k] = uint16(r.IntN(4))
				}
				s16[k] = int16(-32768 + r.IntN(4))
				if r.IntN(3) == 0 {
					s16[k] = int16(32767 - r.IntN(4))
				}
				u32[k] = 0xFFFFFF00 + uint32(r.IntN(4))
				if r.IntN(3) == 0 {
					u32[k] = uint32(r.IntN(4))
				}
				s64[k] = 1<<62 + int64(r.IntN(4))
				if r.IntN(3) == 0 {
					s64[k] = -1<<62 - int64(r.IntN(4))
				}
				u64[k] = 1<<63 + 1<<62 + uint64(r.IntN(4))
				if r.IntN(3) == 0 {
					u64[k] = uint64(r.IntN(4))
				}
			}
			name := fmt.Sprintf("%v %v", isa, sh)
			r1CheckArg(t, name+" u16", u16, O, A, I, reduce.SrcType(dtypes.U16))
			r1CheckArg(t, name+" s16", s16, O, A, I)
			r1CheckArg(t, name+" u32", u32, O, A, I)
			r1CheckArg(t, name+" s64", s64, O, A, I)
			r1CheckArg(t, name+" u64", u64, O, A, I)
		}
		jit.SetMaxISA(prev)
	}
}

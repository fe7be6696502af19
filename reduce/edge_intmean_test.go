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

// r1IntMean is the mean of xs as gdnn defines it: the exact sum rounded
// once to float64 (nearest even), divided by the count.
func r1IntMean[S int16 | int32 | uint32](xs []S) float64 {
	s := new(big.Int)
	for _, x := range xs {
		s.Add(s, big.NewInt(int64(x)))
	}
	f, _ := new(big.Float).SetInt(s).Float64()
	return f / float64(len(xs))
}

// r1CheckIntMean runs the mean over axis 1 of src laid out [O, A, I] into
// its own type, f32 and f64 on every ISA and 1 to 3 threads, against
// r1IntMean: truncated toward zero into the integer dst, rounded once
// into f32.
func r1CheckIntMean[S int16 | int32 | uint32](t *testing.T, name string, src []S, O, A, I int) {
	t.Helper()
	want := make([]float64, O*I)
	row := make([]S, A)
	for o := range O {
		for i := range I {
			for a := range A {
				row[a] = src[(o*A+a)*I+i]
			}
			want[o*I+i] = r1IntMean(row)
		}
	}
	dims := []int{O, A, I}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for threads := 1; threads <= 3; threads++ {
			pt := jit.SetThreads(threads)
			what := fmt.Sprintf("%s [%d %d %d] on %v, %d threads", name, O, A, I, isa, threads)
			own := make([]S, O*I)
			f32 := make([]float32, O*I)
			f64 := make([]float64, O*I)
			if err := reduce.Mean(own, src, dims, []int{1}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if err := reduce.Mean(f32, src, dims, []int{1}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if err := reduce.Mean(f64, src, dims, []int{1}); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for j, w := range want {
				if own[j] != S(math.Trunc(w)) || f32[j] != float32(w) || f64[j] != w {
					t.Fatalf("%s: output %d = %v, %v, %v; want %v, %v, %v", what, j, own[j], f32[j], f64[j], S(math.Trunc(w)), float32(w), w)
				}
			}
			jit.SetThreads(pt)
		}
		jit.SetMaxISA(prev)
	}
}

// TestIntMeanExtremes: means of s16, s32 and u32 data at their extremes
// (every element the least or the largest value, alternating, sums past
// 2^53 whose rounding to float64 shows), negative means that truncate
// toward zero, rows and columns, axes of every tail length and long
// ones.
func TestIntMeanExtremes(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	shapes := [][3]int{{1, 1, 1}, {3, 7, 1}, {2, 33, 1}, {5, 65, 3}, {1, 200, 17}, {4, 3, 100}, {1, 70001, 1}, {2, 3001, 5}}
	for _, sh := range shapes {
		O, A, I := sh[0], sh[1], sh[2]
		n := O * A * I
		for fill := range 4 {
			s16 := make([]int16, n)
			s32 := make([]int32, n)
			u32 := make([]uint32, n)
			for k := range n {
				switch fill {
				case 0: // all at the least value
					s16[k], s32[k], u32[k] = math.MinInt16, math.MinInt32, 0
				case 1: // all at the largest
					s16[k], s32[k], u32[k] = math.MaxInt16, math.MaxInt32, math.MaxUint32
				case 2: // the extremes and -1 mixed: sums past 2^53, negative means
					s16[k] = []int16{math.MinInt16, math.MaxInt16, -1}[r.IntN(3)]
					s32[k] = []int32{math.MinInt32, math.MaxInt32, -1, math.MinInt32 + 1}[r.IntN(4)]
					u32[k] = []uint32{math.MaxUint32, math.MaxUint32 - 1, 1, 1 << 31}[r.IntN(4)]
				default: // small values: means with fractions to truncate
					s16[k], s32[k], u32[k] = int16(r.IntN(7)-4), int32(r.IntN(7)-4), uint32(r.IntN(7))
				}
			}
			r1CheckIntMean(t, fmt.Sprintf("s16 fill %d", fill), s16, O, A, I)
			r1CheckIntMean(t, fmt.Sprintf("s32 fill %d", fill), s32, O, A, I)
			r1CheckIntMean(t, fmt.Sprintf("u32 fill %d", fill), u32, O, A, I)
		}
	}
	// Rows of 32-bit extremes long enough that their sums pass 2^53.
	const long = 1<<22 + 5
	s32 := make([]int32, 2*long)
	u32 := make([]uint32, 2*long)
	for k := range s32 {
		s32[k] = []int32{math.MinInt32, math.MinInt32 + 1, math.MinInt32 + 3}[r.IntN(3)]
		u32[k] = []uint32{math.MaxUint32, math.MaxUint32 - 1, math.MaxUint32 - 3}[r.IntN(3)]
	}
	r1CheckIntMean(t, "s32 long", s32, 2, long, 1)
	r1CheckIntMean(t, "u32 long", u32, 2, long, 1)
	if f := math.Abs(r1IntMean(s32[:long])) * long; f <= 1<<53 {
		t.Fatalf("the long s32 row sums to %v, not past 2^53", f)
	}
}

// r1CheckProd64 runs the product over axis 1 of src laid out [O, A, I]
// on every ISA and 1 to 3 threads against the wrapping product.
func r1CheckProd64[S int64 | uint64](t *testing.T, name string, src []S, O, A, I int) {
	t.Helper()
	want := make([]S, O*I)
	for o := range O {
		for i := range I {
			p := S(1)
			for a := range A {
				p *= src[(o*A+a)*I+i]
			}
			want[o*I+i] = p
		}
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for threads := 1; threads <= 3; threads++ {
			pt := jit.SetThreads(threads)
			got := make([]S, O*I)
			if err := reduce.Prod(got, src, []int{O, A, I}, []int{1}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("%s [%d %d %d] on %v, %d threads: output %d = %#x, want %#x", name, O, A, I, isa, threads, j, got[j], want[j])
				}
			}
			jit.SetThreads(pt)
		}
		jit.SetMaxISA(prev)
	}
}

// TestProd64FullWidth: s64 and u64 products of odd full-width values (no
// zero ends one, every product of the halves counts) and of odd values at
// the extremes, over rows, columns and long axes that the runtime cuts into
// two stages.
func TestProd64FullWidth(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, sh := range [][3]int{{1, 1, 1}, {3, 5, 1}, {2, 17, 3}, {4, 9, 100}, {1, 100003, 1}, {3, 20001, 7}} {
		O, A, I := sh[0], sh[1], sh[2]
		n := O * A * I
		s64, u64 := make([]int64, n), make([]uint64, n)
		for k := range n {
			u64[k] = r.Uint64() | 1
			if r.IntN(50) == 0 {
				u64[k] = []uint64{math.MaxUint64, 1<<63 + 1, 1<<32 + 1, 1<<32 - 1}[r.IntN(4)]
			}
			s64[k] = int64(u64[k])
		}
		r1CheckProd64(t, "s64", s64, O, A, I)
		r1CheckProd64(t, "u64", u64, O, A, I)
	}
}

package reduce_test

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestArgS32AxisTooLong: an s32 dst for an axis longer than 2^31 is an
// InvalidArguments error naming the index type, as reduce.ArgMax's doc
// says. A one-element src broadcast (stride 0) over 2^31+5 elements asks
// for it without the memory.
func TestArgS32AxisTooLong(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("dims of 2^31+5 need a 64-bit int")
	}
	long := int64(1) << 31
	for i, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		d := make([]int32, 2)
		err := reduce.ArgMax(d[:1], []int8{3}, []int{int(long + 5)}, 0, reduce.SrcStrides([]int{0}))
		if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "s32 index") {
			t.Errorf("%v: ArgMax with an s32 dst over 2^31+5 elements: %v, want InvalidArguments naming the s32 index", isa, err)
		}
		err = reduce.ArgMin(d, []float32{3}, []int{2, int(long + 1)}, 1, reduce.SrcStrides([]int{0, 0}))
		if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "s32 index") {
			t.Errorf("%v: ArgMin with an s32 dst over 2^31+1 elements: %v, want InvalidArguments naming the s32 index", isa, err)
		}
		if i > 0 && testing.Short() {
			// The s64 run reads 2^31+5 elements: in -short runs (under
			// the race detector, and arm64 under qemu, in CI) on the
			// first ISA alone.
			jit.SetMaxISA(prev)
			continue
		}
		d64 := make([]int64, 1)
		if err := reduce.ArgMax(d64, []int8{3}, []int{int(long + 5)}, 0, reduce.SrcStrides([]int{0})); err != nil {
			t.Errorf("%v: ArgMax with an s64 dst over 2^31+5 elements: %v", isa, err)
		} else if d64[0] != 0 {
			t.Errorf("%v: ArgMax of 2^31+5 equal elements: %d, want 0", isa, d64[0])
		}
		jit.SetMaxISA(prev)
	}
}

// TestArgBroadcastAxis: an axis of src stride 0 repeats one element, so
// its index is the first (the last under select_last_index) whatever
// the element, NaN too, and however long the axis: 2^62 elements,
// which no src length bounds, return at once on every ISA rather than
// running one call of machine code for ever (which would also hold up
// Go's stop-the-world). A kept axis of stride 0 repeats its results.
func TestArgBroadcastAxis(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("dims of 2^62 need a 64-bit int")
	}
	nan := float32(math.NaN())
	long := math.MaxInt>>1 + 1 // 2^62; a constant 32-bit ports (skipped above) also build
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, last := range []bool{false, true} {
			for _, v := range []float32{3, nan} {
				d := []int64{-1}
				if err := reduce.ArgMin(d, []float32{v}, []int{long}, -1, reduce.SrcStrides([]int{0}), reduce.SelectLastIndex(last)); err != nil {
					t.Fatalf("%v: ArgMin over 2^62 repeats of %v: %v", isa, v, err)
				}
				want := int64(0)
				if last {
					want = int64(long) - 1
				}
				if d[0] != want {
					t.Errorf("%v: ArgMin over 2^62 repeats of %v, select_last_index %v: %d, want %d", isa, v, last, d[0], want)
				}
				// Rows of 5 repeats, each its own element; the dst padded.
				d32 := []int32{-1, -1, -1, -1, -1}
				if err := reduce.ArgMax(d32, []float32{v, 1, v}, []int{3, 5}, 1, reduce.SrcStrides([]int{1, 0}), reduce.DstStrides([]int{2}), reduce.SelectLastIndex(last)); err != nil {
					t.Fatalf("%v: ArgMax over rows of repeats: %v", isa, err)
				}
				w := int32(want)
				if last {
					w = 4
				}
				if want := []int32{w, -1, w, -1, w}; !slices.Equal(d32, want) {
					t.Errorf("%v: ArgMax over rows of 5 repeats, select_last_index %v: %v, want %v", isa, last, d32, want)
				}
			}
		}
		// A kept axis of stride 0: the same row twice.
		d := []int64{-1, -1}
		if err := reduce.ArgMax(d, []float32{1, 4, 2}, []int{2, 3}, 1, reduce.SrcStrides([]int{0, 1})); err != nil {
			t.Fatalf("%v: ArgMax of one row seen twice: %v", isa, err)
		}
		if d[0] != 1 || d[1] != 1 {
			t.Errorf("%v: ArgMax of one row seen twice: %v, want [1 1]", isa, d)
		}
		jit.SetMaxISA(prev)
	}
}

// TestArgLongRow checks ArgMax and ArgMin over one row of 3M f32 (12 MiB,
// which the kernels cut into pieces along the axis) and over two such
// rows, on every ISA here, at one and two threads, against a Go scan:
// ties of the extreme in every piece, the winner in the last one.
func TestArgLongRow(t *testing.T) {
	const n = 3 << 20
	src := make([]float32, 2*n)
	for i := range src {
		src[i] = float32(i%1000) - 500
	}
	src[n+n/3] = 600              // row 1's max, in its first piece
	src[2*n-5] = -700             // row 1's min, in its last piece
	src[n-7], src[n/2] = 900, 900 // row 0's max, twice
	scan := func(row []float32, min, last bool) int64 {
		best := 0
		for i, v := range row {
			better := v > row[best] || last && v == row[best]
			if min {
				better = v < row[best] || last && v == row[best]
			}
			if better {
				best = i
			}
		}
		return int64(best)
	}
	for _, isa := range advISAs {
		prevISA := jit.SetMaxISA(isa)
		for _, threads := range []int{1, 2} {
			prev := jit.SetThreads(threads)
			for _, min := range []bool{false, true} {
				for _, last := range []bool{false, true} {
					got := []int64{-1, -1}
					call := reduce.ArgMax[int64, float32]
					if min {
						call = reduce.ArgMin[int64, float32]
					}
					if err := call(got, src, []int{2, n}, 1, reduce.SelectLastIndex(last)); err != nil {
						t.Fatal(err)
					}
					want := []int64{scan(src[:n], min, last), scan(src[n:], min, last)}
					if !slices.Equal(got, want) {
						t.Errorf("%v, %d threads, min %v, last %v: %v, want %v", isa, threads, min, last, got, want)
					}
					one := []int64{-1}
					if err := call(one, src[n:], []int{n}, 0, reduce.SelectLastIndex(last)); err != nil {
						t.Fatal(err)
					}
					if one[0] != want[1] {
						t.Errorf("%v, %d threads, min %v, last %v, one row: %d, want %d", isa, threads, min, last, one[0], want[1])
					}
				}
			}
			jit.SetThreads(prev)
		}
		jit.SetMaxISA(prevISA)
	}
}

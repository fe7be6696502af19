package jit

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestArgBroadcastCore: an index reduction whose kept dims include some
// of src stride 0 (a src broadcast over them) runs the kernel of the
// other dims once and copies its indices along the broadcast ones
// (runBroadcast), whose outputs read the same elements, where that pays
// (an axis of 8 or more, or blocks of copies; else the plan's own
// kernel): with dst dense,
// padded, transposed, or with the broadcast dims inside the others; for
// ArgMax and ArgMin, the first index and the last, s32 and s64 indices,
// f32, f64 and s32 data; against the interpreter at one thread and two,
// against guard pages. The broadcast dims were the kernel's lanes, which
// then ran one element at a time (3 to 6 times the interpreter's time).
func TestArgBroadcastCore(t *testing.T) {
	isas := argTestISAs(t)
	r := rand.New(rand.NewPCG(12, 13))
	for _, c := range []struct {
		dims, ss, ds []int64
		axis         int
		scan         bool // the whole plan's kernel: copies would not pay (broadcastPays)
	}{
		{[]int64{700, 333}, []int64{0, 1}, nil, 1, false},                   // one row broadcast over 700 outputs
		{[]int64{333, 700}, []int64{1, 0}, nil, 0, false},                   // one column broadcast over 700 lanes
		{[]int64{4, 50, 64}, []int64{0, 64, 1}, nil, 2, false},              // a batch broadcast over rows
		{[]int64{4, 64, 50}, []int64{0, 50, 1}, nil, 1, false},              // and over columns
		{[]int64{3, 5, 37}, []int64{0, 37, 1}, []int64{14, 2, 0}, 2, false}, // dst padded
		{[]int64{3, 37, 5}, []int64{0, 1, 37}, []int64{1, 0, 3}, 1, false},  // dst transposed
		{[]int64{5, 37, 3}, []int64{37, 1, 0}, []int64{20, 0, 1}, 1, false}, // broadcast innermost, dst padded
		{[]int64{4, 6, 300}, []int64{0, 0, 1}, []int64{48, 8, 0}, 2, false}, // two broadcast dims
		{[]int64{2, 300, 40, 2}, []int64{0, 40, 1, 0}, []int64{160, 0, 2, 1}, 1, false},
		{[]int64{3, 4, 5, 37}, []int64{0, 0, 37, 1}, []int64{40, 5, 1, 0}, 3, false}, // dense core, a padded outer broadcast
		{[]int64{3, 4, 5, 37}, []int64{0, 0, 37, 1}, []int64{20, 5, 1, 0}, 3, false}, // broadcast dims that merge
		{[]int64{64, 64, 1}, []int64{0, 1, 1}, []int64{64, 1, 0}, 2, false},          // an axis of 1, blocks of 64 indices
		{[]int64{64, 64, 1}, []int64{1, 0, 1}, []int64{64, 1, 0}, 2, true},           // an axis of 1, indices copied one by one
		{[]int64{64, 64, 3}, []int64{3, 0, 1}, []int64{64, 1, 0}, 2, true},
		{[]int64{1000, 2}, []int64{0, 1}, []int64{2, 0}, 1, true}, // one output, padded copies
	} {
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.F64, dtypes.S32} {
			for _, idx := range []dtypes.DataType{dtypes.S32, dtypes.S64} {
				for _, way := range []struct{ min, last bool }{{false, false}, {true, true}} {
					ds := c.ds
					if ds == nil {
						ds = denseStrides(c.dims)
						ds[c.axis] = 0
					}
					pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dt, IdxDT: idx, Dims: c.dims, Axis: c.axis,
						SrcStrides: c.ss, DstStrides: ds, Min: way.min, Last: way.last})
					if err != nil {
						t.Fatalf("%v: %v", c.dims, err)
					}
					pl = splitInner(pl)
					k, err := buildArg(pl, isas[0])
					if err != nil {
						t.Fatal(err)
					}
					if s := k.schedule(); strings.Contains(s, "+broadcast:") == c.scan {
						t.Errorf("%v strides %v: schedule %q; broadcast dims copied: %v", c.dims, c.ss, s, !c.scan)
					}
					k.release()
					src := argSrc(r, dt, pl.SrcSpan())
					for _, th := range []int{1, 2} {
						withThreads(t, th)
						checkArgSrc(t, pl, src, isas, th == 2)
					}
				}
			}
		}
	}
}

// BenchmarkArgBroadcast times ArgMax over a src broadcast along a kept
// dim (one row of 512 over 2048 outputs, one column of 512 over 2048
// lanes) beside the same shape dense and the interpreter, at one thread,
// into dense indices.
func BenchmarkArgBroadcast(b *testing.B) {
	for _, c := range []struct {
		name     string
		dims, ss []int64
		axis     int
	}{
		{"rows", []int64{2048, 512}, []int64{0, 1}, 1},
		{"columns", []int64{512, 2048}, []int64{1, 0}, 0},
		{"rows-dense", []int64{2048, 512}, []int64{512, 1}, 1},
	} {
		ds := []int64{1, 0} // dense indices
		if c.axis == 0 {
			ds = []int64{0, 1}
		}
		pl, err := plan.CanonicalizeArg(&plan.ArgProblem{SrcDT: dtypes.F32, IdxDT: dtypes.S32, Dims: c.dims, Axis: c.axis,
			SrcStrides: c.ss, DstStrides: ds})
		if err != nil {
			b.Fatal(err)
		}
		src := argSrc(rand.New(rand.NewPCG(1, 2)), dtypes.F32, pl.SrcSpan())
		dst := make([]byte, 4*pl.DstSpan())
		for _, isa := range []ISA{DetectedISA(), None} {
			b.Run(c.name+"/"+isa.String(), func(b *testing.B) {
				withThreads(b, 1)
				k, err := buildArg(splitInner(pl), isa)
				if err != nil {
					b.Fatal(err)
				}
				defer k.release()
				b.ResetTimer()
				for range b.N {
					if err := k.Run(src, dst); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package interp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestInterpOrderedSpecials checks that the loops that take elements out
// of order (rows by eighths, four elements to a compare, chains of sums)
// give what the plain sequential fold of plan.Reduction gives, to the
// bit: in max and min the first NaN in order with its payload, +0 above
// -0 in max and -0 below +0 in min; +0 for sums of -0. Each problem is an [a, b] src
// reduced over one axis: over axis 0 the rows go into a row of
// accumulators (the eighths), over axis 1 each output reduces a run.
func TestInterpOrderedSpecials(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 52))
	reds := []plan.Reduction{plan.AlgMax.Reduction(0, 0), plan.AlgMin.Reduction(0, 0),
		plan.AlgSum.Reduction(0, 0), plan.AlgMul.Reduction(0, 0)}
	for _, red := range reds {
		for _, n := range []int64{1, 3, 7, 8, 9, 16, 17, 40, 64, 131} {
			for _, cols := range []int64{1, 2, 5, 19} {
				for axis := range 2 {
					for iter := range 4 {
						name := fmt.Sprintf("%v/n=%d/cols=%d/axis=%d/%d", red, n, cols, axis, iter)
						checkOrdered(t, r, name, red, n, cols, axis)
					}
				}
			}
		}
	}
}

// checkOrdered runs one problem: n reduced elements per output, cols
// outputs, reduced over the given axis of the src.
func checkOrdered(t *testing.T, r *rand.Rand, name string, red plan.Reduction, n, cols int64, axis int) {
	t.Helper()
	p := &plan.Problem{Reduction: red, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{n, cols},
		SrcStrides: []int64{cols, 1}, Reduce: []bool{true, false}, DstStrides: []int64{0, 1}}
	if axis == 1 {
		p.Dims, p.SrcStrides = []int64{cols, n}, []int64{n, 1}
		p.Reduce, p.DstStrides = []bool{false, true}, []int64{1, 0}
	}
	at := func(c, i int64) int64 { // element i of output c
		if axis == 0 {
			return i*cols + c
		}
		return c*n + i
	}
	vals := make([]float32, n*cols)
	for c := range cols {
		kind := r.IntN(4) // 0: ordinary, 1: zeros of both signs, 2: NaNs, 3: all -0
		for i := range n {
			v := float32(r.IntN(9)-4) / 4
			switch {
			case kind == 1 && r.IntN(2) == 0:
				v = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
			case kind == 1:
				v = -float32(r.IntN(4)) / 2
			case kind == 2 && r.IntN(5) == 0:
				// Quiet NaNs of either sign, each with its own payload.
				v = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<22)) | uint32(r.IntN(2))<<31)
			case kind == 3:
				v = float32(math.Copysign(0, -1))
			}
			vals[at(c, i)] = v
		}
	}
	src := make([]byte, 4*len(vals))
	for i, v := range vals {
		dtypes.StoreF32(dtypes.F32, src, int64(i), v)
	}
	dst := make([]byte, 4*cols)
	if err := RunProblem(p, src, dst, nil); err != nil {
		t.Fatal(err)
	}
	for c := range cols {
		want := float64(red.Identity())
		for i := range n {
			want = red.CombineF64(want, float64(vals[at(c, i)]))
		}
		g := dtypes.LoadF32(dtypes.F32, dst, c)
		got, w := math.Float32bits(g), math.Float32bits(float32(want))
		switch {
		case got == w:
		case red.Combine == plan.CombineAdd || red.Combine == plan.CombineMul:
			// Sums and products run in several chains: which NaN
			// wins is not kept (any NaN will do), and a product may
			// round differently.
			if g != g && want != want || red.Combine == plan.CombineMul && (got == w+1 || got == w-1) {
				continue
			}
			fallthrough
		default:
			t.Fatalf("%s: output %d = %#08x, want %#08x (the sequential fold)", name, c, got, w)
		}
	}
}

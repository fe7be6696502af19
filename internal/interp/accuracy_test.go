package interp

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestLongReductionAccuracy takes the f32 mean of 1.2e7 values in [1, 2)
// and compares it with a compensated float64 reference.
//
// Bound: relative error 1e-7. The interpreter accumulates in float64:
// each add errs by at most 2^-53 of the running partial sum, so the sum is
// within n*2^-53 ≈ 1.3e-9 relative of exact (all values are positive);
// rounding the mean to f32 adds at most 2^-24 ≈ 6e-8. 1e-7 covers both.
// Naive sequential f32 summation stalls once the sum passes 2^24 (1.7e7):
// its ulp of 2 swallows each addend's fraction, so the test also asserts
// that such a sum misses the same bound, i.e. that the bound has teeth.
func TestLongReductionAccuracy(t *testing.T) {
	const n = 12_000_000
	r := rand.New(rand.NewPCG(7, 8))
	src := make([]byte, 4*n)
	var ref, comp float64 // Neumaier-compensated float64 sum
	var naive float32
	for i := range n {
		v := 1 + r.Float32()
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(v))
		x := float64(v)
		s := ref + x
		if math.Abs(ref) >= math.Abs(x) {
			comp += (ref - s) + x
		} else {
			comp += (x - s) + ref
		}
		ref = s
		naive += v
	}
	want := (ref + comp) / n
	p := &plan.Problem{
		SrcDT: dtypes.F32, DstDT: dtypes.F32,
		Dims: []int64{n}, SrcStrides: []int64{1}, Reduce: []bool{true}, DstStrides: []int64{0},
	}
	dst := make([]byte, 4)
	if err := RunProblem(p, src, dst, nil); err != nil {
		t.Fatal(err)
	}
	const bound = 1e-7
	got := decode(dtypes.F32, dst, 0)
	if rel := math.Abs(got-want) / want; rel > bound {
		t.Errorf("mean of %d values = %v, want %v (relative error %.3g > %g)", n, got, want, rel, bound)
	}
	naiveMean := float64(naive / n)
	if rel := math.Abs(naiveMean-want) / want; rel <= bound {
		t.Errorf("naive f32 summation is within %g (%.3g): the bound does not test precision", bound, rel)
	} else {
		t.Logf("interp %v, naive f32 %v (relative error %.3g), reference %v", got, naiveMean, rel, want)
	}
}

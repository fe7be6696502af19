package amd64

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/jit/plan"
	"github.com/gdnn/gdnn/jit/vexp"
)

// TestExpSweep runs the Exp post-op on a dense sweep of the f32 bit
// patterns (vexp.Sweep) under every ISA this CPU has, AVX2 included on
// an AVX-512 machine, and holds each result to vexp.Check: within
// vexp.MaxULP of float32(math.Exp(x)), +Inf exactly on overflow, +0 far
// below, the same NaN for a NaN (quietened: the load and the copy
// before the post-op quieten a signalling NaN, as the interpreter's
// conversions do). The problem is an identity over the
// inputs, so lanes, tails and the scalar path all meet specials.
func TestExpSweep(t *testing.T) {
	xs := vexp.Sweep(2053)
	if testing.Short() {
		xs = vexp.Sweep(1 << 16)
	}
	n := int64(len(xs))
	p := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{n}, SrcStrides: []int64{1},
		Reduce: []bool{false}, DstStrides: []int64{1}, PostOps: []plan.PostOp{{Kind: plan.Exp}}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 4*n)
	for i, x := range xs {
		binary.LittleEndian.PutUint32(src[4*i:], math.Float32bits(x))
	}
	for _, isa := range isas(t) {
		k := compile(t, pl, isa.o)
		got := make([]byte, 4*n)
		k.RunBlocks(pl, src, got, nil, 0)
		k.Release()
		var worst int64
		bad := 0
		for i, x := range xs {
			y := math.Float32frombits(binary.LittleEndian.Uint32(got[4*i:]))
			u, ok := vexp.Check(vexp.Quiet(x), y)
			if !ok {
				if bad < 5 {
					t.Errorf("%s: exp(%v) (bits %#x) = %v (bits %#x), want %v", isa.name, x, math.Float32bits(x),
						y, math.Float32bits(y), float32(math.Exp(float64(x))))
				}
				bad++
				continue
			}
			worst = max(worst, u)
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d results break the contract", isa.name, bad, n)
		}
		t.Logf("%s: %d inputs, largest error %d ulp", isa.name, n, worst)
	}
}

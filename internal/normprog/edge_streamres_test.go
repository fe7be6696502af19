package normprog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestStreamedDstResidual: LayerNorm and RMSNorm of a residual sum (kept
// or not, x transposed or not, with a bias) whose dst is streamed give
// the regular kernel's dst and sum, bit for bit, with dst on and off the
// vector boundary and on 1 to 4 threads (NEON streams nothing: there
// both are the regular kernel).
func TestStreamedDstResidual(t *testing.T) {
	for _, isa := range isas() {
		if isa == jit.None {
			continue
		}
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(4, uint64(isa)))
		streamed := 0
		for _, k := range []Kind{LayerNorm, RMSNorm} {
			for _, dims := range [][]int64{{7, 1024}, {33, 256}, {5, 4096}, {300, 64}, {3, 1000}} {
				for v := range 8 {
					bias, keep, tr := v&1 != 0, v&2 != 0, v&4 != 0
					dt := []dtypes.DataType{dtypes.F32, dtypes.BF16}[r.IntN(2)]
					d := residualCase(k, dims, 1, dt, dtypes.F32, dtypes.F32, bias, keep, tr)
					name := fmt.Sprintf("%v %v %v bias %v keep %v transposed %v on %v", k, dims, dt, bias, keep, tr, isa)
					reg, st := compileStreamed(t, name, d, &streamed)
					res := d.Residual
					x := fill(r, res.X.DT, spanElems(d.Dims, res.X.Strides), 3)
					skip := fill(r, res.Skip.DT, spanElems(d.Dims, res.Skip.Strides), 3)
					var bs []byte
					if bias {
						bs = fill(r, dtypes.F32, spanElems(d.Dims, res.Bias.Strides), 1)
					}
					gamma := fill(r, dtypes.F32, spanElems(d.Dims, d.Gamma.Strides), 2)
					n := spanElems(d.Dims, d.DstStrides) * 4
					run := func(p *Program, skew, threads int) ([]byte, []byte) {
						dst := make([]byte, n+int64(skew))[skew:]
						var sum []byte
						if keep {
							sum = make([]byte, n)
						}
						pt := jit.SetThreads(threads)
						defer jit.SetThreads(pt)
						if err := p.Run(Buffers{Src: sum, Dst: dst, Gamma: gamma, X: x, Skip: skip, Bias: bs}); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						return dst, sum
					}
					want, wantSum := run(reg, 0, 1)
					for _, skew := range []int{0, 4, 32} {
						threads := 1 + r.IntN(4)
						got, gotSum := run(st, skew, threads)
						if !bytes.Equal(got, want) || !bytes.Equal(gotSum, wantSum) {
							t.Fatalf("%s: streamed (skew %d, %d threads) differs", name, skew, threads)
						}
					}
				}
			}
		}
		t.Logf("%v: %d streamed", isa, streamed)
		if isa != jit.NEON && streamed == 0 {
			t.Errorf("%v: nothing streamed", isa)
		}
		jit.SetMaxISA(prev)
	}
}

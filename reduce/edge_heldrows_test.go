package reduce_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// r1BF16 rounds a float64 to bf16 to nearest even through exact
// arithmetic on its f32... the f64 value is first rounded to f32 (exact
// for the values used: f32's 24 bits hold the bf16 result's rounding
// point far below), then to bf16.
func r1BF16(v float64) float64 {
	var b [2]byte
	dtypes.StoreF32(dtypes.BF16, b[:], 0, float32(v))
	return float64(dtypes.LoadF32(dtypes.BF16, b[:], 0))
}

// TestHeldSoftmaxSubnormalBF16 runs softmax over the last dim of
// [R, N] (rows short enough to be held in registers, R odd and even so
// that the last row of a pair is alone) with a bf16 dst and results in
// bf16's subnormal range in every row (several rows, some with one
// subnormal lane, some with many), f32 and bf16 src, every ISA, 1 and 2
// threads, against float64 softmax rounded to bf16: within one bf16 unit
// (in the last place of the subnormal: 2^-133), never flushed to 0.
func TestHeldSoftmaxSubnormalBF16(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		// The ISA that runs: the cap's, or below it where the CPU lacks it.
		runs := jit.EffectiveISA()
		r := rand.New(rand.NewPCG(17, uint64(isa)))
		for _, R := range []int{1, 2, 3, 5, 8, 9} {
			for _, N := range []int{2, 3, 16, 17, 33, 64, 100, 129} {
				n := R * N
				vals := make([]float32, n)
				for row := range R {
					for j := range N {
						v := float32(r.Float64()*4 - 2)
						switch (row + j) % 5 {
						case 0, 2:
							v = float32(-80 - r.Float64()*20) // exp about 1e-35 to 2e-44
						}
						if row%3 == 1 && j != N/2 {
							v = float32(-98 + r.Float64()*8) // nearly the whole row subnormal
						}
						if j == N/2 {
							v = 0
						}
						vals[row*N+j] = v
					}
				}
				want := make([]float64, n)
				for row := range R {
					m := math.Inf(-1)
					for j := range N {
						m = math.Max(m, float64(vals[row*N+j]))
					}
					s := 0.0
					for j := range N {
						s += math.Exp(float64(vals[row*N+j]) - m)
					}
					for j := range N {
						want[row*N+j] = r1BF16(math.Exp(float64(vals[row*N+j])-m) / s)
					}
				}
				bsrc := make([]uint16, n)
				for i, v := range vals {
					bsrc[i] = uint16(math.Float32bits(v) >> 16) // truncation: the src is what it is
				}
				bwant := make([]float64, n)
				for row := range R {
					m := math.Inf(-1)
					for j := range N {
						m = math.Max(m, float64(math.Float32frombits(uint32(bsrc[row*N+j])<<16)))
					}
					s := 0.0
					for j := range N {
						s += math.Exp(float64(math.Float32frombits(uint32(bsrc[row*N+j])<<16)) - m)
					}
					for j := range N {
						bwant[row*N+j] = r1BF16(math.Exp(float64(math.Float32frombits(uint32(bsrc[row*N+j])<<16))-m) / s)
					}
				}
				for _, th := range []int{1, 2} {
					pt := jit.SetThreads(th)
					d1 := make([]uint16, n)
					e1 := reduce.Softmax(d1, vals, []int{R, N}, 1, reduce.DstType(dtypes.BF16))
					d2 := make([]uint16, n)
					e2 := reduce.Softmax(d2, bsrc, []int{R, N}, -1, reduce.Type(dtypes.BF16))
					jit.SetThreads(pt)
					for k, c := range []struct {
						name string
						err  error
						got  []uint16
						want []float64
					}{{"f32->bf16", e1, d1, want}, {"bf16", e2, d2, bwant}} {
						_ = k
						name := fmt.Sprintf("%v (cap %v) %s [%d %d] %d threads", runs, isa, c.name, R, N, th)
						if c.err != nil {
							t.Errorf("%s: %v", name, c.err)
							continue
						}
						bad := 0
						for i, g16 := range c.got {
							g := float64(math.Float32frombits(uint32(g16) << 16))
							w := c.want[i]
							unit := math.Max(math.Abs(w)/128, math.Ldexp(1, -133))
							// AVX2's and NEON's exp for sums give +0 below e^-87 by design
							// (kernelshape.NormEmitter.ExpShifted); AVX-512's and
							// the interpreter's do not.
							if (runs == jit.AVX2 || runs != jit.None && runtime.GOARCH == "arm64") && g == 0 && w < math.Exp(-87)*1.01 {
								continue
							}
							if math.Abs(g-w) > unit*1.01 || (w != 0 && g == 0) {
								if bad < 4 {
									t.Errorf("%s: [%d %d] = %g (%#04x), want %g", name, i/N, i%N, g, g16, w)
								}
								bad++
							}
						}
						if bad > 0 {
							t.Errorf("%s: %d bad", name, bad)
						}
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

package partition

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestArgAbsSpecials: [Abs ->] ArgMax / ArgMin partitions over f32,
// bf16 and f16 src [3, n, 5] along each axis, with ties of ±0 and ±Inf
// (equal under Abs), NaNs of both signs, long axes, select_last_index,
// on every ISA cap and 1 and 2 threads, against argRowRef.
func TestArgAbsSpecials(t *testing.T) {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), 3, -3, 1, -1, 65504, -65504}
	forEachISA(t, func(t *testing.T, isa jit.ISA) {
		r := rand.New(rand.NewPCG(41, uint64(isa)))
		for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16} {
			for _, n := range []int64{1, 17, 1000, 4099} {
				for _, kind := range []graph.OpKind{graph.ArgMax, graph.ArgMin} {
					for _, abs := range []bool{false, true} {
						for _, axis := range []int64{0, 1, 2} {
							for _, last := range []bool{false, true} {
								dims := []int64{3, n, 5}
								g := graph.New()
								src := graph.NewLogicalTensor(0, dt, dims)
								in := src
								if abs {
									mid := graph.NewLogicalTensorAny(1, dt, nil)
									must(t, g.AddOp(graph.NewOp(0, graph.Abs, "abs").AddInput(src).AddOutput(mid)))
									in = mid
								}
								must(t, g.AddOp(graph.NewOp(1, kind, "arg").AddInput(in).AddOutput(graph.NewLogicalTensorAny(2, dtypes.S64, nil)).
									SetAttr("axis", axis).SetAttr("select_last_index", last)))
								must(t, g.Finalize())
								p := onlySupported(t, g, Fusion)
								c, err := p.Compile(p.Inputs(), p.Outputs())
								if err != nil {
									t.Errorf("compile: %v", err)
									continue
								}
								total := 3 * n * 5
								buf := make([]byte, total*int64(dt.Size()))
								vals := make([]float64, total)
								for i := range total {
									v := float32(r.IntN(5) - 2)
									if r.IntN(6) == 0 {
										v = specials[r.IntN(len(specials))]
									}
									if n > 100 && r.IntN(200) != 0 && math.IsNaN(float64(v)) {
										v = 2 // keep NaNs rare in long axes, so that some rows have none
									}
									if math.IsNaN(float64(v)) && dt == dtypes.F32 {
										binaryPutU32(buf, i, math.Float32bits(v))
									} else {
										dtypes.StoreF32(dt, buf, i, v)
									}
									vals[i] = float64(dtypes.LoadF32(dt, buf, i))
								}
								st, err := NewTensor(c.Inputs()[0], buf)
								must(t, err)
								nOut := total / dims[axis]
								for _, th := range []int{1, 2} {
									prev := jit.SetThreads(th)
									got := make([]int64, nOut)
									dst, err := NewTensor(c.Outputs()[0], got)
									must(t, err)
									err = c.Execute([]Tensor{st}, []Tensor{dst})
									jit.SetThreads(prev)
									name := fmt.Sprintf("%v %v abs=%v n=%d axis=%d last=%v %d threads (%s)", dt, kind, abs, n, axis, last, th, c.Impl())
									if err != nil {
										t.Errorf("%s: %v", name, err)
										continue
									}
									o := 0
									bad := 0
									for i := range dims[0] {
										for j := range dims[1] {
											for k := range dims[2] {
												at := [3]int64{i, j, k}
												if at[axis] != 0 {
													continue
												}
												row := make([]float64, dims[axis])
												for x := range row {
													at[axis] = int64(x)
													row[x] = vals[(at[0]*n+at[1])*5+at[2]]
												}
												if want := argRowRef(row, kind == graph.ArgMin, last, abs); got[o] != want {
													if bad < 2 {
														t.Errorf("%s: output %d is %d, want %d", name, o, got[o], want)
													}
													bad++
												}
												o++
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	})
}

func binaryPutU32(b []byte, i int64, v uint32) {
	b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
}

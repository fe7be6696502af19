package jit

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// kindReductions are the reductions the runtime tests draw: those with
// vector code run as machine code, the others (|x|^3, log-sum-exp's exp)
// in the interpreter.
var kindReductions = oracle.Reductions()

// TestKindsThroughRuntime runs every reduction through Compile and Run
// under small call budgets, so that the runtime blocks, tiles and splits
// them in two stages (partials of the transformed, combined values, then
// combined and finalized), and with a post-op the emitters lack (Sigmoid),
// so that the post-op pass (a Copy) runs too. On every ISA this machine
// has and the interpreter, with 1 and 2 threads: results within the
// reference's tolerance and bit-identical for both thread counts.
func TestKindsThroughRuntime(t *testing.T) {
	kindsThroughRuntime(t, rand.New(rand.NewPCG(3, 4)),
		[][2]dtypes.DataType{{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.F32}, {dtypes.F16, dtypes.F16}})
}

// TestInt8ThroughRuntime is TestKindsThroughRuntime for 8-bit integer src
// and integer or float dst.
func TestInt8ThroughRuntime(t *testing.T) {
	kindsThroughRuntime(t, rand.New(rand.NewPCG(5, 6)),
		[][2]dtypes.DataType{{dtypes.S8, dtypes.S8}, {dtypes.U8, dtypes.S32}, {dtypes.S8, dtypes.F32}, {dtypes.U8, dtypes.U8}, {dtypes.U8, dtypes.BF16}})
}

func kindsThroughRuntime(t *testing.T, r *rand.Rand, pairs [][2]dtypes.DataType) {
	shapes := []spec{
		{dims: []int64{64, 300}, reduce: []bool{false, true}},                                 // rows
		{dims: []int64{300, 40}, reduce: []bool{true, false}},                                 // columns
		{dims: []int64{4, 200, 33}, reduce: []bool{false, true, false}},                       // middle axis
		{dims: []int64{6000}, reduce: []bool{true}},                                           // full, two stages
		{dims: []int64{3, 5, 7, 9}, reduce: []bool{true, false, true, false}, pad: 3},         // padded, alternating
		{dims: []int64{16, 24, 10}, reduce: []bool{false, true, true}, order: []int{2, 0, 1}}, // permuted
	}
	isaList := []ISA{None}
	if d := EffectiveISA(); d != None {
		isaList = append(isaList, d)
		if d == AVX512 {
			isaList = append(isaList, AVX2)
		}
	}
	for _, red := range kindReductions {
		for si, s := range shapes {
			for _, dt := range pairs {
				for _, post := range [][]plan.PostOp{nil, {{Kind: ops.Sigmoid}}} {
					s.sdt, s.ddt, s.post = dt[0], dt[1], post
					s.lo, s.hi = -1.5, 1.5
					if red.Combine == plan.CombineMul {
						s.lo, s.hi = 0.97, 1.03 // products stay near 1
					}
					if dt[0].IsInt8() {
						s.lo, s.hi = -100, 100 // u8 saturates the negatives to 0
						if red.Combine == plan.CombineMul {
							s.lo, s.hi = 0.6, 1.4 // mostly 1 once rounded
						}
					}
					c := s.build(t, r)
					c.p.Reduction = red
					for _, budget := range []int64{1 << 20, 2048} {
						for _, isa := range isaList {
							what := fmt.Sprintf("%v shape %d %v:%v post %v budget %d %s", red, si, dt[0], dt[1], post, budget, isa)
							var first []byte
							for _, threads := range []int{1, 2} {
								withBudget(t, budget)
								withThreads(t, threads)
								prev := SetMaxISA(isa)
								dst := c.run(t)
								SetMaxISA(prev)
								checkRef(t, c, dst, what)
								if first == nil {
									first = dst
								} else if !bytes.Equal(first, dst) {
									t.Fatalf("%s: 1 and 2 threads differ", what)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestLogSumExpStable checks log-sum-exp where computing it directly
// would overflow or lose everything: rows of 1000s (1000 + log(n), not
// Inf), of -1000s, of -Inf (-Inf), with one +Inf (+Inf) or one NaN (NaN),
// and an empty reduction (-Inf); on every ISA and the interpreter, with
// budgets that split the max and the sum.
func TestLogSumExpStable(t *testing.T) {
	inf := math.Inf(1)
	rows := []struct {
		name string
		fill func(i int64) float32
		want func(n int64) float64
	}{
		{"1000s", func(int64) float32 { return 1000 }, func(n int64) float64 { return 1000 + math.Log(float64(n)) }},
		{"-1000s", func(int64) float32 { return -1000 }, func(n int64) float64 { return -1000 + math.Log(float64(n)) }},
		{"ramp", func(i int64) float32 { return float32(i % 7) }, nil},
		{"-Inf", func(int64) float32 { return float32(-inf) }, func(int64) float64 { return -inf }},
		{"one +Inf", func(i int64) float32 { return map[bool]float32{true: float32(inf)}[i == 5] }, func(int64) float64 { return inf }},
		{"one NaN", func(i int64) float32 { return map[bool]float32{true: float32(math.NaN())}[i == 3] }, func(int64) float64 { return math.NaN() }},
	}
	isaList := []ISA{None}
	if d := EffectiveISA(); d != None {
		isaList = append(isaList, d)
	}
	for _, n := range []int64{1, 17, 3000} {
		for _, row := range rows {
			for _, isa := range isaList {
				for _, budget := range []int64{1 << 20, 1024} {
					withBudget(t, budget)
					p := &plan.Problem{Reduction: plan.LogSumExp, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{3, n},
						SrcStrides: []int64{n, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 1}}
					src, dst := make([]byte, 12*n), make([]byte, 12)
					for i := range 3 * n {
						dtypes.StoreF32(dtypes.F32, src, i, row.fill(i%n))
					}
					prev := SetMaxISA(isa)
					pl, err := plan.Canonicalize(p)
					if err != nil {
						t.Fatal(err)
					}
					k, err := Compile(pl)
					SetMaxISA(prev)
					if err != nil {
						t.Fatal(err)
					}
					if err := k.Run(src, dst, nil); err != nil {
						t.Fatal(err)
					}
					want := 0.0
					if row.want != nil {
						want = row.want(n)
					} else {
						m, s := 6.0, 0.0
						if n < 7 {
							m = float64(n - 1)
						}
						for i := range n {
							s += math.Exp(float64(i%7) - m)
						}
						want = m + math.Log(s)
					}
					for o := range int64(3) {
						got := oracle.Get(dtypes.F32, dst, o)
						if !(math.IsNaN(want) && math.IsNaN(got)) && !(got == want) && math.Abs(got-want) > 1e-6*math.Abs(want)+1e-6 {
							t.Errorf("%s, n %d, %s, budget %d: output %d = %v, want %v (%s)", row.name, n, isa, budget, o, got, want, k.schedule())
						}
					}
				}
			}
		}
	}
	// An empty reduction: -Inf.
	p := &plan.Problem{Reduction: plan.LogSumExp, SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{2, 0},
		SrcStrides: []int64{0, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 1}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	k, err := Compile(pl)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 8)
	if err := k.Run(nil, dst, nil); err != nil {
		t.Fatal(err)
	}
	if got := oracle.Get(dtypes.F32, dst, 1); !math.IsInf(got, -1) {
		t.Errorf("empty log-sum-exp = %v, want -Inf", got)
	}
}

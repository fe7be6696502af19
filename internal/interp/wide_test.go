package interp_test

import (
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// TestWideRandom runs random f64 problems (every reduction the oracle
// draws, layouts, post-ops with f64 and other operands, f64 or f32 dst)
// against the exact oracle (kerneltest.CheckWide).
func TestWideRandom(t *testing.T) {
	r := rand.New(rand.NewSource(51))
	n := 600
	if testing.Short() {
		n = 150
	}
	for i := range n {
		p := kerneltest.WideProblem(r, 1<<15)
		specials := i%4 == 0
		src, dst, bins := kerneltest.Buffers(t, p, 0xa5,
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, specials) },
			func(dt dtypes.DataType, b []byte) { kerneltest.FillWide(r, dt, b, false) })
		if err := interp.RunProblem(p, src, dst, bins); err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		kerneltest.CheckWide(t, "interp", p, src, dst, bins, 0xa5)
	}
}

// TestWideSumKeepsF64 sums values f32 cannot hold, long enough for two
// levels: 1 + 2^-30 per element would be 1 per element in f32, and a
// sequential f64 sum of 2^20 of them would err by far more than the
// two-level sum's bound.
func TestWideSumKeepsF64(t *testing.T) {
	const n = 1 << 20
	src := make([]byte, 8*n)
	for i := range int64(n) {
		plan.StoreF64(dtypes.F64, src, i, 1+math.Ldexp(1, -30)+math.Ldexp(float64(i%3), -45))
	}
	p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
		Dims: []int64{n}, SrcStrides: []int64{1}, Reduce: []bool{true}, DstStrides: []int64{0}}
	dst := make([]byte, 8)
	if err := interp.RunProblem(p, src, dst, nil); err != nil {
		t.Fatal(err)
	}
	kerneltest.CheckWide(t, "long sum", p, src, dst, nil, 0)
	if got, f32 := plan.LoadF64(dtypes.F64, dst, 0), float64(n); got == f32 {
		t.Errorf("sum of 1+2^-30 is %v, the f32 sum", got)
	}
}

// TestWideRefusals: f64 pairs plans refuse, each with its reason.
func TestWideRefusals(t *testing.T) {
	base := func() *plan.Problem {
		return &plan.Problem{SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: []int64{4}, SrcStrides: []int64{1},
			Reduce: []bool{true}, DstStrides: []int64{0}}
	}
	for _, c := range []struct {
		name string
		edit func(p *plan.Problem)
		want string
	}{
		{"f64 to bf16", func(p *plan.Problem) { p.DstDT = dtypes.BF16 }, "an f64 src goes to f64 or f32"},
		{"f32 to f64", func(p *plan.Problem) { p.SrcDT = dtypes.F32 }, "an f64 dst comes from an f64 src"},
		{"f64 operand of an f32 src", func(p *plan.Problem) {
			p.SrcDT, p.DstDT = dtypes.F32, dtypes.F32
			p.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F64, BinStrides: []int64{0}}}
		}, "reads a f64 operand, which needs an f64 src"},
	} {
		p := base()
		c.edit(p)
		err := interp.RunProblem(p, make([]byte, 64), make([]byte, 64), [][]byte{make([]byte, 64)})
		if !errors.Is(err, status.InvalidDataType) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want InvalidDataType %q", c.name, err, c.want)
		}
	}
}

// TestWideNoAllocs: a wide Run allocates nothing once warm.
func TestWideNoAllocs(t *testing.T) {
	p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64,
		Dims: []int64{64, 1024}, SrcStrides: []int64{1024, 1}, Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := make([]byte, 8*64*1024), make([]byte, 8*64)
	if n := testing.AllocsPerRun(20, func() { _ = interp.Run(pl, src, dst, nil) }); n != 0 {
		t.Errorf("%v allocations per Run", n)
	}
}

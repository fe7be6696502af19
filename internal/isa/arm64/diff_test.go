package arm64

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
	"github.com/gdnn/gdnn/internal/vfn"
)

// checkProblem emits p, runs it whole and in blocks of the outermost
// loop (each block a call with its own Count), and compares with the
// float64 reference and with the interpreter. Inputs are exact (see
// exactFiller), so every comparison is bit for bit (any NaN matches any
// NaN), except the machine code's results of a problem ending in Exp or
// Log (vexp.Near).
func checkProblem(t *testing.T, r *rand.Rand, p *plan.Problem, srcSpecials, binSpecials bool, blocks []int64) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize(%+v): %v", p, err)
	}
	src, dst0, bins := buffersFor(t, exactFiller{r, 16}.fill, p, srcSpecials, binSpecials)
	want, outs := kerneltest.Reference(p, src, dst0, bins)

	// The interpreter starts its sums at -0, so a mean of -0 values is
	// -0 there and +0 here: its zero signs are not compared.
	kerneltest.CheckInterp(t, p, pl, src, dst0, bins, want, outs, true)
	k := compile(t, pl)
	defer k.Release()
	kerneltest.CheckBlocks(t, "neon", k, p, pl, src, dst0, bins, blocks, want, outs, false, vfn.Tolerance(p.PostOps))
}

// TestRandomPlans runs random problems: ranks 0-5, dims including 0 and
// 1 and vector-width edges, permuted and padded strides, every dtype
// pair, chains of supported post-ops with scalar, full and partial
// broadcast operands (some ending in Exp, Log or a kind of package vfn),
// whole and in random blocks of
// the outermost loop.
func TestRandomPlans(t *testing.T) {
	needARM64(t)
	n := 500
	if testing.Short() {
		n = 100
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < n; i++ {
		p := withTrailingNear(r, randomProblem(r, 3000))
		checkProblem(t, r, p, i%4 == 0, i%3 == 0, []int64{0, 1 + r.Int63n(9)})
	}
}

// shape is a named problem of one kernel shape.
type shape struct {
	name string
	p    *plan.Problem
}

// shapes lists problems of every kernel shape, with the extent of the
// vectorised dim (the tail length) n, data types sdt:ddt and a full
// operand of type bdt (so that operand reads reach its last byte) for an
// Add post-op. Dense layouts; dst strides are in elements.
func shapes(n int64, sdt, ddt, bdt dtypes.DataType) []shape {
	mk := func(dims, ss []int64, red []bool, ds []int64) *plan.Problem {
		p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: red, DstStrides: ds}
		bs := append([]int64(nil), ds...)
		for i := range bs {
			if red[i] {
				bs[i] = 0
			}
		}
		p.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: bdt, BinStrides: bs}}
		return p
	}
	w := 64 + n // past one column block (16 vectors)
	return []shape{
		{"row", mk([]int64{3, n}, []int64{n, 1}, []bool{false, true}, []int64{1, 0})},
		{"row long", mk([]int64{2, 300 + n}, []int64{300 + n, 1}, []bool{false, true}, []int64{1, 0})},
		{"row grouped", mk([]int64{11, n}, []int64{n, 1}, []bool{false, true}, []int64{1, 0})},
		{"row grouped inside outer", mk([]int64{3, 6, n}, []int64{6 * n, n, 1}, []bool{false, false, true}, []int64{6, 1, 0})},
		{"row two reduced", mk([]int64{5, 3, n}, []int64{3 * (n + 1), n + 1, 1}, []bool{false, true, true}, []int64{1, 0, 0})},
		// Far rows: pointer steps and offsets past the immediate fields.
		{"row two reduced far", mk([]int64{5, 3, n}, []int64{3 * 1201, 1201, 1}, []bool{false, true, true}, []int64{1, 0, 0})},
		{"row grouped far", mk([]int64{6, n}, []int64{4099, 1}, []bool{false, true}, []int64{1, 0})},
		{"column", mk([]int64{5, n}, []int64{n, 1}, []bool{true, false}, []int64{0, 1})},
		{"column wide", mk([]int64{3, w}, []int64{w, 1}, []bool{true, false}, []int64{0, 1})},
		{"column inside outer", mk([]int64{4, 3, n}, []int64{3 * n, n, 1}, []bool{false, true, false}, []int64{n, 0, 1})},
		{"column far rows", mk([]int64{3, 5, n}, []int64{5 * 1100, 1100, 1}, []bool{false, true, false}, []int64{n, 0, 1})},
		{"flat column", mk([]int64{n, 2}, []int64{2, 1}, []bool{true, false}, []int64{0, 1})},
		{"identity", mk([]int64{n}, []int64{1}, []bool{false}, []int64{1})},
		{"identity strided", mk([]int64{n}, []int64{2}, []bool{false}, []int64{1})},
		{"element", mk([]int64{2, n}, []int64{3 * n, 3}, []bool{false, true}, []int64{1, 0})},
		{"column strided dst", mk([]int64{4, n}, []int64{n, 1}, []bool{true, false}, []int64{0, 2})},
		{"row strided dst", mk([]int64{6, n}, []int64{n, 1}, []bool{false, true}, []int64{3, 0})},
	}
}

// TestShapes runs every kernel shape with every dtype pair, every
// operand type, tail lengths around the vector width, a post-op chain
// (binary and unary) and Counts of 1, 2, 3, 5 and all.
func TestShapes(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(2))
	for _, n := range []int64{1, 4, 7, 13} {
		for _, pr := range pairs {
			for bi, bdt := range floatTypes {
				for _, s := range shapes(n, pr[0], pr[1], bdt) {
					p := s.p
					// A unary post-op after the binary one, varied.
					p.PostOps = append(p.PostOps, plan.PostOp{Kind: kinds[(int(n)+bi)%7], Alpha: -0.5, Beta: 1.25})
					t.Run(s.name, func(t *testing.T) {
						checkProblem(t, r, p, bi == 1, bi == 2, []int64{0, 1, 2, 3, 5})
					})
				}
			}
		}
	}
}

// TestEveryPostOpEmitted checks that every unary post-op kind has NEON
// code: the transcendental ones from package vfn's programs.
func TestEveryPostOpEmitted(t *testing.T) {
	for k := ops.Abs; k < ops.Add; k++ {
		p := &plan.Problem{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{4, 8}, SrcStrides: []int64{8, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}, PostOps: []plan.PostOp{{Kind: k, Beta: 1}}}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		if _, err = Emit(pl); err != nil {
			t.Errorf("Emit with %v: %v", k, err)
		}
	}
}

// TestInvalidPlans checks that malformed plans are errors, not panics.
func TestInvalidPlans(t *testing.T) {
	if _, err := Emit(nil); !errors.Is(err, status.InvalidArguments) {
		t.Errorf("Emit(nil): got %v, want InvalidArguments", err)
	}
	bad := &plan.Plan{SrcDT: dtypes.S32, DstDT: dtypes.BF16, Div: 1}
	if _, err := Emit(bad); !errors.Is(err, status.InvalidDataType) {
		t.Errorf("Emit(s32 plan to bf16): got %v, want InvalidDataType", err)
	}
	// An exact plan (an s64 mean into f32 of more elements than its
	// sums keep exact) is valid, and has no NEON code.
	if _, err := Emit(&plan.Plan{SrcDT: dtypes.S64, DstDT: dtypes.F32, Div: 1<<31 + 1}); !errors.Is(err, status.Unimplemented) {
		t.Errorf("Emit(s64 mean of 2^31+1): got %v, want Unimplemented", err)
	}
	neg := &plan.Plan{SrcDT: dtypes.F32, DstDT: dtypes.F32, Div: 1, Reduced: []plan.Loop{{Size: -1, SrcStride: 1}}}
	if _, err := Emit(neg); err == nil {
		t.Errorf("Emit(negative size): no error")
	}
}

// deepPlan is kerneltest.DeepPlan: nOuter outer and nRed reduced loops
// of size 2 that no canonicalisation would merge, and plan.MaxBinary Add
// post-ops with full operands.
var deepPlan = kerneltest.DeepPlan

// TestDeepPlanLimits checks that plans past the loop-depth limit are
// reported as Unimplemented, never miscompiled; runs on every GOARCH.
func TestDeepPlanLimits(t *testing.T) {
	for _, c := range [][2]int{{maxDepth + 1, 1}, {1, maxDepth + 1}} {
		if _, err := Emit(deepPlan(c[0], c[1])); !errors.Is(err, status.Unimplemented) {
			t.Errorf("%d outer, %d reduced loops: got %v, want Unimplemented", c[0], c[1], err)
		}
	}
	if _, err := Emit(deepPlan(maxDepth, maxDepth)); err != nil {
		t.Errorf("%d outer and reduced loops with %d operands: %v", maxDepth, plan.MaxBinary, err)
	}
}

// TestDeepPlans runs the deepest plans the emitter accepts against the
// interpreter: every loop counter and pointer register in use at once.
func TestDeepPlans(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(5))
	for _, c := range [][2]int{{3, 3}, {maxDepth, maxDepth}} {
		pl := deepPlan(c[0], c[1])
		sb, _ := pl.SrcBytes()
		db, _ := pl.DstBytes()
		src, want := make([]byte, sb), make([]byte, db)
		f := exactFiller{r, 1}
		f.fill(pl.SrcDT, src, false)
		var bins [][]byte
		for i := 0; i < plan.MaxBinary; i++ {
			bb, _ := pl.BinBytes(i)
			b := make([]byte, bb)
			f.fill(dtypes.F32, b, false)
			bins = append(bins, b)
		}
		if err := interp.Run(pl, src, want, bins); err != nil {
			t.Fatal(err)
		}
		// Every element of dst spans outputs (the dst layout is 3^k
		// with size 2: some bytes are gaps), so compare outputs only.
		outs := kerneltest.DeepOutputs(c[0])
		k := compile(t, pl)
		got := make([]byte, db)
		k.RunBlocks(pl, src, got, bins, 0)
		k.Release()
		if d := kerneltest.CompareExact(pl.DstDT, got, want, outs, true); d != "" {
			t.Errorf("%d outer, %d reduced loops, %d operands: %s", c[0], c[1], plan.MaxBinary, d)
		}
	}
}

// TestConcurrentEmit emits plans from several goroutines at once (the
// kernel cache compiles concurrently) and checks each result is the
// bytes a lone Emit produces: the assembler context is per call, and the
// backend's global tables are filled once.
func TestConcurrentEmit(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	plans := kerneltest.Plans(t, 12, func() *plan.Problem { return randomProblem(r, 3000) })
	kerneltest.CheckConcurrentEmit(t, plans, 4, 3, func(_ int, pl *plan.Plan) (plan.Code, error) { return Emit(pl) })
}

// TestCountZero calls kernels of every shape with Count 0 and -1: the
// outermost loop must not run, so dst stays untouched.
func TestCountZero(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(8))
	for _, s := range shapes(5, dtypes.F32, dtypes.F32, dtypes.F32) {
		pl, err := plan.Canonicalize(s.p)
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Outer) == 0 {
			continue
		}
		src, dst0, bins := buffersFor(t, exactFiller{r, 16}.fill, s.p, false, false)
		k := compile(t, pl)
		for _, c := range []int64{0, -1} {
			dst := append([]byte(nil), dst0...)
			k.Call(src, dst, bins, c, 0, 0, make([]int64, len(bins)))
			if string(dst) != string(dst0) {
				t.Errorf("%s: Count %d wrote dst", s.name, c)
			}
		}
		k.Release()
	}
}

// TestManyConstants runs a post-op chain that needs more vector
// constants than the prologue has slots for (Div, clamp bounds, leaky
// slopes, the bf16 rounding constants), so the rest are built in
// temporaries where they are used.
func TestManyConstants(t *testing.T) {
	needARM64(t)
	r := rand.New(rand.NewSource(9))
	ops := []plan.PostOp{
		{Kind: ops.Clamp, Alpha: -3.5, Beta: 3.25}, {Kind: ops.LeakyReLU, Alpha: 0.375},
		{Kind: ops.Clamp, Alpha: -2.75, Beta: 2.5}, {Kind: ops.LeakyReLU, Alpha: -0.625},
		{Kind: ops.Clamp, Alpha: -1.5, Beta: 1.75},
	}
	for _, n := range []int64{3, 9} {
		for _, s := range shapes(n, dtypes.BF16, dtypes.BF16, dtypes.F16) {
			s.p.PostOps = append(s.p.PostOps, ops...)
			checkProblem(t, r, s.p, false, false, []int64{0, 2})
		}
	}
}

package kernelshape

import (
	"errors"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// nativePlan is the canonical plan of 4 rows of 64 reduced along the
// rows, src sdt into dst ddt by r.
func nativePlan(t *testing.T, sdt, ddt dtypes.DataType, r plan.Reduction) *plan.Plan {
	t.Helper()
	p := &plan.Problem{Reduction: r, SrcDT: sdt, DstDT: ddt, Dims: []int64{4, 64}, SrcStrides: []int64{64, 1},
		Reduce: []bool{false, true}, DstStrides: []int64{1, 0}}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestNativeKindOf checks the kinds the native kernel reads off plans,
// and every refusal: Unimplemented, naming what it does not take.
func TestNativeKindOf(t *testing.T) {
	sum, mean := plan.AlgSum.Reduction(0, 0), plan.AlgMean.Reduction(0, 0)
	for _, c := range []struct {
		sdt, ddt dtypes.DataType
		r        plan.Reduction
		want     NativeKind
	}{
		{dtypes.F64, dtypes.F64, sum, NativeKind{Op: NativeAdd, Bytes: 8, Float: true}},
		{dtypes.F64, dtypes.F32, mean, NativeKind{Op: NativeAdd, Bytes: 8, Float: true, Mean: true, Store: StoreF32}},
		{dtypes.F64, dtypes.F64, plan.AlgMin.Reduction(0, 0), NativeKind{Op: NativeMin, Bytes: 8, Float: true}},
		{dtypes.S16, dtypes.S16, plan.AlgMax.Reduction(0, 0), NativeKind{Op: NativeMax, Bytes: 2, Signed: true}},
		{dtypes.U32, dtypes.U32, plan.AlgMul.Reduction(0, 0), NativeKind{Op: NativeMul, Bytes: 4}},
		{dtypes.S32, dtypes.S32, mean, NativeKind{Op: NativeAdd, Bytes: 4, Signed: true, Mean: true, Store: StoreTrunc}},
		{dtypes.U16, dtypes.F64, mean, NativeKind{Op: NativeAdd, Bytes: 2, Mean: true}},
		{dtypes.S16, dtypes.F32, mean, NativeKind{Op: NativeAdd, Bytes: 2, Signed: true, Mean: true, Store: StoreF32}},
		{dtypes.S64, dtypes.S64, mean, NativeKind{Op: NativeAdd, Bytes: 8, Signed: true, Mean: true, Store: StoreTrunc}},
		{dtypes.U64, dtypes.F32, mean, NativeKind{Op: NativeAdd, Bytes: 8, Mean: true, Store: StoreF32}},
		{dtypes.U8, dtypes.U8, plan.Bitwise(plan.CombineXor), NativeKind{Op: NativeXor, Bytes: 1}},
		{dtypes.Boolean, dtypes.Boolean, plan.AlgMin.Reduction(0, 0), NativeKind{Op: NativeAll, Bytes: 1, Store: StoreTruth}},
		{dtypes.S8, dtypes.U8, plan.LogicalOr, NativeKind{Op: NativeAny, Bytes: 1, Signed: true, Store: StoreTruth}},
		{dtypes.Boolean, dtypes.U8, plan.LogicalXor, NativeKind{Op: NativeOdd, Bytes: 1, Store: StoreTruth}},
		{dtypes.F64, dtypes.F32, plan.AlgNormLpMax.Reduction(2, 0.5), NativeKind{Op: NativeAdd, Bytes: 8, Float: true,
			Store: StoreF32, Transform: NativeSquare, Eps: NativeMaxEps, EpsValue: 0.5, Sqrt: true}},
		{dtypes.F64, dtypes.F64, plan.AlgNormLpPowerPSum.Reduction(1, 0.25), NativeKind{Op: NativeAdd, Bytes: 8, Float: true,
			Transform: NativeAbs, Eps: NativeAddEps, EpsValue: 0.25}},
		{dtypes.F64, dtypes.F64, plan.AlgNormLpSum.Reduction(1, 0), NativeKind{Op: NativeAdd, Bytes: 8, Float: true,
			Transform: NativeAbs, Eps: NativeAddEps}},
		{dtypes.F64, dtypes.F64, plan.AlgNormLpSum.Reduction(3, -1), NativeKind{Op: NativeAdd, Bytes: 8, Float: true,
			Transform: NativePow, P: 3, Eps: NativeAddEps, EpsValue: -1, Root: true, RootInv: 1.0 / 3}},
		{dtypes.F64, dtypes.F32, plan.AlgNormLpMax.Reduction(0.5, 2), NativeKind{Op: NativeAdd, Bytes: 8, Float: true, Store: StoreF32,
			Transform: NativePow, P: 0.5, Eps: NativeMaxEps, EpsValue: 2, Root: true, RootInv: 2}},
		{dtypes.F64, dtypes.F64, plan.AlgNormLpPowerPMax.Reduction(1.5, 0), NativeKind{Op: NativeAdd, Bytes: 8, Float: true,
			Transform: NativePow, P: 1.5, Eps: NativeMaxEps}},
		{dtypes.F64, dtypes.F64, plan.Reduction{Transform: plan.TransformAbs, Finalize: plan.FinalizeRootMaxEps, P: 0.5},
			NativeKind{Op: NativeAdd, Bytes: 8, Float: true, Transform: NativeAbs, Eps: NativeMaxEps, Root: true, RootInv: 2}},
		{dtypes.F64, dtypes.F64, plan.Reduction{Transform: plan.TransformAbs, Combine: plan.CombineMax, Finalize: plan.FinalizeNone},
			NativeKind{Op: NativeMax, Bytes: 8, Float: true, Transform: NativeAbs}},
	} {
		pl := nativePlan(t, c.sdt, c.ddt, c.r)
		got, err := NativeKindOf(pl)
		if err != nil || got != c.want {
			t.Errorf("NativeKindOf(%v) = %+v, %v; want %+v", pl, got, err, c.want)
		}
	}
	// Only the mean of 64-bit integers sums in halves.
	for _, c := range []struct {
		sdt, ddt dtypes.DataType
		r        plan.Reduction
		want     bool
	}{{dtypes.S64, dtypes.F64, mean, true}, {dtypes.U64, dtypes.U64, mean, true}, {dtypes.S32, dtypes.F64, mean, false},
		{dtypes.F64, dtypes.F64, mean, false}, {dtypes.S64, dtypes.S64, sum, false}} {
		k, err := NativeKindOf(nativePlan(t, c.sdt, c.ddt, c.r))
		if err != nil || k.Halves() != c.want {
			t.Errorf("%v %v: Halves() = %v (%v), want %v", c.sdt, c.r, k.Halves(), err, c.want)
		}
	}
	// A partial of a split f64 mean is not divided: SkipFinalize.
	part := nativePlan(t, dtypes.F64, dtypes.F64, mean)
	part.Stage = plan.SkipFinalize
	if k, err := NativeKindOf(part); err != nil || k.Mean {
		t.Errorf("stage-1 f64 mean: %+v, %v; want a sum, not divided", k, err)
	}
	// The stages of a split f64 L2 norm: the squares summed, then the
	// partials summed (not squared again), the eps added and the root.
	l2 := nativePlan(t, dtypes.F64, dtypes.F64, plan.AlgNormLpSum.Reduction(2, 0))
	l2.Stage = plan.SkipFinalize
	if k, err := NativeKindOf(l2); err != nil || k.Transform != NativeSquare || k.FinalizesF64() {
		t.Errorf("stage-1 f64 L2 norm: %+v, %v; want a sum of squares, not finalized", k, err)
	}
	l2.Stage = plan.SkipTransform
	if k, err := NativeKindOf(l2); err != nil || k.Transform != NativeNoTransform || k.Eps != NativeAddEps || !k.Sqrt {
		t.Errorf("stage-2 f64 L2 norm: %+v, %v; want a sum, the eps added and the root", k, err)
	}

	addEps := nativePlan(t, dtypes.F64, dtypes.F64, sum)
	addEps.Reduction = plan.Reduction{Finalize: plan.FinalizeAddEps, Eps: 0.5}
	copyPlan := nativePlan(t, dtypes.S32, dtypes.S32, sum)
	copyPlan.Reduction = plan.Copy
	post := nativePlan(t, dtypes.S32, dtypes.S32, sum)
	post.PostOps = []plan.PostOp{{Kind: ops.ReLU}}
	gelu := nativePlan(t, dtypes.F64, dtypes.F64, sum)
	gelu.PostOps = []plan.PostOp{{Kind: ops.ReLU}, {Kind: ops.GELUErf}}
	if k, err := NativeKindOf(gelu); err != nil || !k.PostOps {
		t.Errorf("f64 sum with GELU (erf): %+v, %v; want its post-ops in the epilogue", k, err)
	}
	s64Operand := nativePlan(t, dtypes.F64, dtypes.F64, sum)
	s64Operand.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.S64}}
	lse := nativePlan(t, dtypes.F64, dtypes.F32, plan.LogSumExp)
	if k, err := NativeKindOf(lse); err != nil || !k.LSE || k.Op != NativeAdd || k.Transform != NativeExpShift || !k.FinalizesF64() || k.Store != StoreF32 {
		t.Errorf("f64 log-sum-exp: %+v, %v; want a sum of exp(x - shift) after a max pass, log + shift, an f32 store", k, err)
	}
	// An f64 log-sum-exp in stages (no plan validation makes one: its
	// passes are one kernel's).
	lseStaged := nativePlan(t, dtypes.F64, dtypes.F64, plan.LogSumExp)
	lseStaged.Stage = plan.Unshifted
	f64Post := nativePlan(t, dtypes.F64, dtypes.F32, sum)
	f64Post.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: dtypes.F32}, {Kind: ops.ReLU}, {Kind: ops.Maximum, BinDT: dtypes.F64}}
	if k, err := NativeKindOf(f64Post); err != nil || !k.PostOps || k.Store != StoreF32 {
		t.Errorf("f64 sum with post-ops: %+v, %v; want its post-ops in the epilogue and an f32 store", k, err)
	}
	// The integer mean's 64-bit sums hold NativeMeanMax elements; its
	// partial sums are not the native kernel's.
	longMean := nativePlan(t, dtypes.S32, dtypes.S32, mean)
	longMean.Div = NativeMeanMax + 1
	longWideMean := nativePlan(t, dtypes.U64, dtypes.F32, mean)
	longWideMean.Div = NativeMeanMax + 1
	meanPart := nativePlan(t, dtypes.U32, dtypes.U32, mean)
	meanPart.Stage = plan.SkipFinalize
	// A mean whose combine is not a plain sum (no plan validation makes
	// one; the guard keeps a malformed plan off the mean's code).
	meanOfMax := nativePlan(t, dtypes.S32, dtypes.S32, mean)
	meanOfMax.Reduction.Combine = plan.CombineMax
	for _, c := range []struct {
		pl   *plan.Plan
		says string
	}{
		{nativePlan(t, dtypes.F32, dtypes.F32, sum), "f32 lanes"},
		{post, "post-ops"},
		{s64Operand, "s64 operand"},
		{lseStaged, "in stages"},
		{nativePlan(t, dtypes.F64, dtypes.F64, plan.AlgNormLpSum.Reduction(0.5, -1)), "root p=0.5 of eps + acc below 0"},
		{nativePlan(t, dtypes.F64, dtypes.F32, plan.AlgNormLpSum.Reduction(0.25, -0.5)), "root p=0.25 of eps + acc below 0"},
		{addEps, "not transformed"},
		{copyPlan, "copy"},
		{longMean, "bound"},
		{longWideMean, "bound"},
		{meanPart, "partial sum"},
		{meanOfMax, "runs in the interpreter"},
		{nativePlan(t, dtypes.U16, dtypes.Boolean, plan.LogicalAnd), "logical"},
	} {
		_, err := NativeKindOf(c.pl)
		if !errors.Is(err, status.Unimplemented) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("NativeKindOf(%v) = %v, want Unimplemented naming %q", c.pl, err, c.says)
		}
	}
}

// TestNativeShapeOf checks which shape plans take with 8 lanes.
func TestNativeShapeOf(t *testing.T) {
	mk := func(dims, ss []int64, red []bool, ds []int64) *plan.Plan {
		p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.S64, DstDT: dtypes.S64,
			Dims: dims, SrcStrides: ss, Reduce: red, DstStrides: ds}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	for _, c := range []struct {
		pl   *plan.Plan
		want NativeShape
	}{
		{mk([]int64{3, 64}, []int64{64, 1}, []bool{false, true}, []int64{1, 0}), NativeRow},
		{mk([]int64{3, 7}, []int64{7, 1}, []bool{false, true}, []int64{1, 0}), NativeElement},
		{mk([]int64{5, 64}, []int64{64, 1}, []bool{true, false}, []int64{0, 1}), NativeColumn},
		{mk([]int64{5, 7}, []int64{7, 1}, []bool{true, false}, []int64{0, 1}), NativeElement},
		{mk([]int64{2, 64}, []int64{192, 3}, []bool{false, true}, []int64{1, 0}), NativeElement},
	} {
		if got := NativeShapeOf(c.pl, 8); got != c.want {
			t.Errorf("NativeShapeOf(%v) = %d, want %d", c.pl, got, c.want)
		}
	}
}

// TestNativeRun checks where f64 sums are cut into runs: only past
// nativeUncut adds a lane, in runs of nativeRunLen (the interpreter's
// 1024) however long the chain; never for other kinds.
func TestNativeRun(t *testing.T) {
	f64 := NativeKind{Op: NativeAdd, Bytes: 8, Float: true}
	for _, c := range []struct {
		k     NativeKind
		chain int64
		want  int64
	}{
		{f64, 16, 0},
		{f64, nativeUncut, 0},
		{f64, nativeUncut + 1, 1024},
		{f64, 1 << 20, 1024},
		{f64, 1<<62 + 1, 1024},
		{NativeKind{Op: NativeMax, Bytes: 8, Float: true}, 1 << 20, 0},
		{NativeKind{Op: NativeAdd, Bytes: 8}, 1 << 20, 0},
	} {
		if got := NativeRun(c.k, c.chain); got != c.want {
			t.Errorf("NativeRun(%+v, %d) = %d, want %d", c.k, c.chain, got, c.want)
		}
	}
}

// TestCheckNativeRuns checks that an f64 sum long enough to be cut into
// runs over more than one reduced loop is taken when its runs keep the
// interpreter's bound (cut across a short innermost loop), and refused
// when they cannot (a long innermost loop, in runs of its own, under a
// long outer one: too many runs); one reduced loop, short sums and
// other kinds are taken.
func TestCheckNativeRuns(t *testing.T) {
	sum, max := plan.AlgSum.Reduction(0, 0), plan.AlgMax.Reduction(0, 0)
	for _, c := range []struct {
		name    string
		dims    []int64
		strides []int64
		reduce  []bool
		r       plan.Reduction
		refused bool
	}{
		{"two reduced loops, long", []int64{20000, 2, 2}, []int64{4, 2, 1}, []bool{true, false, true}, sum, false},
		{"two reduced loops, rows", []int64{20000, 2, 8}, []int64{16, 8, 1}, []bool{true, false, true}, sum, false},
		{"two reduced loops, columns", []int64{20000, 2, 2, 8}, []int64{32, 16, 8, 1}, []bool{true, false, true, false}, sum, false},
		{"two long reduced loops", []int64{2000, 1500, 2}, []int64{3002, 2, 1}, []bool{true, true, false}, sum, true},
		{"two long reduced loops, evenly cut", []int64{200, 1500, 2}, []int64{3002, 2, 1}, []bool{true, true, false}, sum, false},
		{"two reduced loops, short", []int64{200, 2, 2}, []int64{4, 2, 1}, []bool{true, false, true}, sum, false},
		{"one reduced loop, long", []int64{20000, 4}, []int64{4, 1}, []bool{true, false}, sum, false},
		{"two reduced loops, max", []int64{20000, 2, 2}, []int64{4, 2, 1}, []bool{true, false, true}, max, false},
	} {
		p := &plan.Problem{Reduction: c.r, SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: c.dims, SrcStrides: c.strides, Reduce: c.reduce}
		p.DstStrides = make([]int64, len(c.dims))
		st := int64(1)
		for i := len(c.dims) - 1; i >= 0; i-- {
			if !c.reduce[i] {
				p.DstStrides[i] = st
				st *= c.dims[i]
			}
		}
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err = CheckNative(pl, NativeISA{Arch: "test", MaxDepth: 4, VectorBytes: 64,
			Accs: func(bool) int { return 16 }, Takes: func(NativeKind) error { return nil }})
		if c.refused != (err != nil) {
			t.Errorf("%s: CheckNative = %v, want refused %v", c.name, err, c.refused)
		}
		if err != nil && !errors.Is(err, status.Unimplemented) {
			t.Errorf("%s: %v is not Unimplemented", c.name, err)
		}
	}
}

// TestNativeOneRunWhole checks that an f64 sum whose lanes' chains the
// cut would leave in one run (more than nativeUncut adds, up to
// nativeRunLen) is not cut and keeps all its accumulators, and that one
// a run longer is cut with half of them for its totals: columns of 1001
// and 1024 rows against 1025, rows of 8 lanes and 16 accumulators whose
// lanes take 1010 adds against 2020.
func TestNativeOneRunWhole(t *testing.T) {
	f64 := NativeKind{Op: NativeAdd, Bytes: 8, Float: true}
	accs := func(bool) int { return 16 }
	for _, c := range []struct {
		name  string
		dims  []int64
		axis  int
		shape NativeShape
		cut   bool
	}{
		{"column of 1001", []int64{1001, 256}, 0, NativeColumn, false},
		{"column of 1024", []int64{1024, 256}, 0, NativeColumn, false},
		{"column of 1025", []int64{1025, 256}, 0, NativeColumn, true},
		{"row of 1010 blocks", []int64{2, 1010 * 128}, 1, NativeRow, false},
		{"row of 2020 blocks", []int64{2, 2020 * 128}, 1, NativeRow, true},
	} {
		p := &plan.Problem{Reduction: plan.AlgSum.Reduction(0, 0), SrcDT: dtypes.F64, DstDT: dtypes.F64, Dims: c.dims,
			SrcStrides: []int64{c.dims[1], 1}, Reduce: []bool{c.axis == 0, c.axis == 1}}
		p.DstStrides = []int64{1, 1}
		p.DstStrides[c.axis] = 0
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		nl, err := nativeLayoutOf(pl, f64, 8, accs, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		wantU := int64(16)
		if c.cut {
			wantU = 8
		}
		if nl.shape != c.shape || nl.cut.none() == c.cut || nl.u != wantU {
			t.Errorf("%s: shape %v, cut %+v, %d accumulators; want shape %v, cut %v, %d", c.name, nl.shape, nl.cut, nl.u, c.shape, c.cut, wantU)
		}
	}
}

package amd64

import (
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
)

// runGuarded runs p for every ISA with src, dst and operands next to
// guard pages (kerneltest.Fence), at their end and at their start, and
// checks the results against the reference: in one call, or in calls of
// each of blocks iterations of the outermost Outer loop when given.
func runGuarded(t *testing.T, r *rand.Rand, p *plan.Problem, isaList []isaCase, blocks ...int64) {
	t.Helper()
	pl, err := plan.Canonicalize(p)
	if err != nil {
		t.Fatalf("Canonicalize: %v", err)
	}
	src0, dst0, bins0 := buffers(t, r, p, false)
	want, written := kerneltest.Reference(p, src0, dst0, bins0)
	if len(blocks) == 0 {
		blocks = []int64{0}
	}
	kerneltest.CheckFenced(t, "", targetsOf(isaList), p, pl, src0, dst0, bins0, blocks, want, written)
}

// guardShapes lists problems of every kernel shape with the tail length
// (the extent of the vectorised dim) t.
func guardShapes(t int64, sdt, ddt dtypes.DataType) []*plan.Problem {
	mk := func(dims, ss []int64, red []bool, ds []int64) *plan.Problem {
		p := &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: dims, SrcStrides: ss, Reduce: red, DstStrides: ds}
		// A full-layout operand, so that operand reads reach its end.
		bs := append([]int64(nil), ds...)
		for i := range bs {
			if red[i] {
				bs[i] = 0
			}
		}
		bdt := sdt // 8-bit operands read exactly to their last byte too
		if ddt == dtypes.S32 {
			bdt = dtypes.S32
		}
		p.PostOps = []plan.PostOp{{Kind: ops.Add, BinDT: bdt, BinStrides: bs}}
		return p
	}
	return []*plan.Problem{
		// row: 3 outputs of t contiguous elements (single outputs)
		mk([]int64{3, t}, []int64{t, 1}, []bool{false, true}, []int64{1, 0}),
		// row, grouped: 19 outputs of t elements (a group and a remainder)
		mk([]int64{19, t}, []int64{t, 1}, []bool{false, true}, []int64{1, 0}),
		// column: 5 rows of t contiguous outputs
		mk([]int64{5, t}, []int64{t, 1}, []bool{true, false}, []int64{0, 1}),
		// column, wide: 3 rows of 16*V+t outputs (a full block, then a tail block)
		mk([]int64{3, 256 + t}, []int64{256 + t, 1}, []bool{true, false}, []int64{0, 1}),
		// identity: t elements
		mk([]int64{t}, []int64{1}, []bool{false}, []int64{1}),
		// element: t elements at stride 3, 2 outputs
		mk([]int64{2, t}, []int64{3 * t, 3}, []bool{false, true}, []int64{1, 0}),
		// column with strided dst (per-lane epilogue)
		mk([]int64{4, t}, []int64{t, 1}, []bool{true, false}, []int64{0, 2}),
	}
}

// guardTail reports whether a guard-page test runs tail (of 0..2V+1):
// every one, or in -short runs (the AVX-512 stage, which runs under
// Bochs on a CPU without AVX-512) those at and around multiples of 8:
// 0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33. No tail, part of a
// vector, a whole one, one past it and the longest still run, at both
// widths.
func guardTail(tail int64) bool {
	return !testing.Short() || tail%8 <= 1 || tail%8 == 7
}

// TestGuardPages runs every shape with every tail length 0..2V+1
// (guardTail) and every dtype pair next to guard pages.
func TestGuardPages(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(7))
	for tail := int64(0); tail <= 33; tail++ {
		if !guardTail(tail) {
			continue
		}
		for _, pair := range dtPairs {
			for _, p := range guardShapes(tail, pair[0], pair[1]) {
				runGuarded(t, r, p, isaList)
			}
		}
	}
}

// TestHugeStrides runs plans whose strides put elements gigabytes apart,
// past 32-bit displacements, in a sparse mapping (only the pages holding
// elements are ever touched, so little memory is used). Unrolling must
// shrink to keep displacements in range rather than fail or wrap.
func TestHugeStrides(t *testing.T) {
	isaList := isas(t)
	const gib = int64(1) << 30
	cases := []*plan.Problem{
		// column: 3 rows 4 GiB apart, Inner of 5
		{SrcDT: dtypes.F32, DstDT: dtypes.F32, Dims: []int64{3, 5}, SrcStrides: []int64{gib, 1},
			Reduce: []bool{true, false}, DstStrides: []int64{0, 1}},
		// element: 3 elements 2 GiB apart per output, 4 outputs
		{SrcDT: dtypes.BF16, DstDT: dtypes.F32, Dims: []int64{4, 3}, SrcStrides: []int64{1, gib},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}},
		// row: 2 outputs 6 GiB apart, rows of 40
		{SrcDT: dtypes.F16, DstDT: dtypes.F16, Dims: []int64{2, 40}, SrcStrides: []int64{3 * gib, 1},
			Reduce: []bool{false, true}, DstStrides: []int64{1, 0}},
	}
	r := rand.New(rand.NewSource(9))
	for _, p := range cases {
		sb, err := p.SrcBytes()
		if err != nil {
			t.Fatal(err)
		}
		m, free, err := kerneltest.Sparse(sb)
		if err != nil {
			t.Skipf("cannot map %d sparse bytes: %v", sb, err)
		}
		// Fill only the elements the problem reads.
		for i := int64(0); i < p.Dims[0]; i++ {
			for j := int64(0); j < p.Dims[1]; j++ {
				dtypes.StoreF32(p.SrcDT, m, i*p.SrcStrides[0]+j*p.SrcStrides[1], float32(r.Intn(33)-16)/4)
			}
		}
		db, _ := p.DstBytes()
		dst0 := make([]byte, db)
		want, written := kerneltest.Reference(p, m, dst0, nil)
		pl, err := plan.Canonicalize(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, isa := range isaList {
			k := compile(t, pl, isa.o)
			got := append([]byte(nil), dst0...)
			k.RunBlocks(pl, m, got, nil, 0)
			k.Release()
			if d := kerneltest.CompareExact(p.DstDT, got, want, written, false); d != "" {
				t.Errorf("%s %v strides %v: %s", isa.name, p.Dims, p.SrcStrides, d)
			}
		}
		free()
	}
}

// TestWideAVX2Columns runs the column blocks of 12 accumulators that AVX2
// uses for f32 without post-ops (colAcc), with every Inner width around
// one and two blocks and every tail, next to guard pages, in one call and
// in blocks of rows; and checks that the blocks are that wide there and
// not with a post-op or 16-bit data.
func TestWideAVX2Columns(t *testing.T) {
	isaList := isas(t)
	r := rand.New(rand.NewSource(17))
	f32 := dtypes.F32
	col := func(sdt, ddt dtypes.DataType, o, rows, w int64, ops ...plan.PostOp) *plan.Problem {
		return &plan.Problem{SrcDT: sdt, DstDT: ddt, Dims: []int64{o, rows, w}, SrcStrides: []int64{rows * w, w, 1},
			Reduce: []bool{false, true, false}, DstStrides: []int64{w, 0, 1}, PostOps: ops}
	}
	for w := int64(9); w <= int64(2*intelTuning.avx2WideAcc*8+9); w++ {
		runGuarded(t, r, col(f32, f32, 3, 5, w), isaList, 0, 2)
	}
	relu := plan.PostOp{Kind: ops.ReLU}
	for _, c := range []struct {
		p    *plan.Problem
		want int
	}{
		{col(f32, f32, 3, 5, 200), intelTuning.avx2WideAcc},
		{col(f32, f32, 3, 5, 200, relu), 8},
		{col(f32, dtypes.BF16, 3, 5, 200), 8},
		{col(dtypes.F16, f32, 3, 5, 200), 8},
	} {
		pl, err := plan.Canonicalize(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if got := newGen(pl, Options{}).conf.ColAcc; got != c.want {
			t.Errorf("%v: colAcc = %d, want %d", pl, got, c.want)
		}
		if got := newGen(pl, Options{AVX512: true}).conf.ColAcc; got != 16 {
			t.Errorf("%v: AVX-512 colAcc = %d, want 16", pl, got)
		}
	}
}

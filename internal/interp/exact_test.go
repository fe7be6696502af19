package interp_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/kerneltest"
	"github.com/gdnn/gdnn/internal/plan"
)

// TestExactRandom runs random exact problems of every integer and
// boolean type and every reduction they take against the exact oracle:
// wraparound at the extremes, every axis pattern, padded and permuted
// layouts, empty reductions.
func TestExactRandom(t *testing.T) {
	r := rand.New(rand.NewSource(51))
	for _, sdt := range kerneltest.ExactTypes {
		for range 40 {
			for _, c := range kerneltest.ExactPairs(r, sdt) {
				p := kerneltest.RandomExactProblem(r, 3000, sdt, c)
				src, dst, _ := kerneltest.Buffers(t, p, 0xa5, func(dt dtypes.DataType, b []byte) { kerneltest.FillExact(r, dt, b) }, nil)
				what := fmt.Sprintf("%v %v dims %v reduce %v", sdt, c, p.Dims, p.Reduce)
				if err := interp.RunProblem(p, src, dst, nil); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				kerneltest.CheckExact(t, what, p, src, dst, 0xa5)
			}
		}
	}
}

// TestExactExtremes pins results worked out by hand: sums that wrap,
// products that wrap, max and min at the extremes, ONNX Runtime's mean.
func TestExactExtremes(t *testing.T) {
	i64 := func(v ...int64) []byte { return kerneltest.Ints(dtypes.S64, v...) }
	cases := []struct {
		name     string
		r        plan.Reduction
		sdt, ddt dtypes.DataType
		src      []byte
		want     []byte
	}{
		{"s64 sum wraps", plan.AlgSum.Reduction(0, 0), dtypes.S64, dtypes.S64, i64(1<<63-1, 1), i64(-1 << 63)},
		{"s64 max", plan.AlgMax.Reduction(0, 0), dtypes.S64, dtypes.S64, i64(-1<<63, 1<<63-1, 0), i64(1<<63 - 1)},
		{"s64 min", plan.AlgMin.Reduction(0, 0), dtypes.S64, dtypes.S64, i64(-1<<63, 1<<63-1, 0), i64(-1 << 63)},
		{"s64 prod wraps", plan.AlgMul.Reduction(0, 0), dtypes.S64, dtypes.S64, i64(1<<32, 1<<32, 3), i64(0)},
		{"s64 mean truncates", plan.AlgMean.Reduction(0, 0), dtypes.S64, dtypes.S64, i64(-3, -4), i64(-3)},
		{"s64 mean of extremes", plan.AlgMean.Reduction(0, 0), dtypes.S64, dtypes.S64, i64(1<<63-1, 1<<63-1), i64(1<<63 - 1)},
		{"u64 max", plan.AlgMax.Reduction(0, 0), dtypes.U64, dtypes.U64,
			kerneltest.Ints(dtypes.U64, -1, 0, 5), kerneltest.Ints(dtypes.U64, -1)},
		{"u64 sum wraps", plan.AlgSum.Reduction(0, 0), dtypes.U64, dtypes.U64,
			kerneltest.Ints(dtypes.U64, -1, 2), kerneltest.Ints(dtypes.U64, 1)},
		{"s32 sum wraps", plan.AlgSum.Reduction(0, 0), dtypes.S32, dtypes.S32,
			kerneltest.Ints(dtypes.S32, 1<<31-1, 1<<31-1), kerneltest.Ints(dtypes.S32, -2)},
		{"s32 mean to f32", plan.AlgMean.Reduction(0, 0), dtypes.S32, dtypes.F32,
			kerneltest.Ints(dtypes.S32, 1, 2), kerneltest.Store(dtypes.F32, []float32{1.5})},
		{"u16 and", plan.Bitwise(plan.CombineAnd), dtypes.U16, dtypes.U16,
			kerneltest.Ints(dtypes.U16, 0xff0f, 0x0fff), kerneltest.Ints(dtypes.U16, 0x0f0f)},
		{"s8 xor", plan.Bitwise(plan.CombineXor), dtypes.S8, dtypes.S8,
			kerneltest.Ints(dtypes.S8, -1, 1), kerneltest.Ints(dtypes.S8, -2)},
		{"bool all", plan.LogicalAnd, dtypes.Boolean, dtypes.Boolean, []byte{1, 1, 0, 1}, []byte{0}},
		{"u8 any of 2", plan.LogicalOr, dtypes.U8, dtypes.Boolean, []byte{0, 2, 0}, []byte{1}},
		{"bool max", plan.AlgMax.Reduction(0, 0), dtypes.Boolean, dtypes.Boolean, []byte{0, 0}, []byte{0}},
		{"s32 xor of truths", plan.LogicalXor, dtypes.S32, dtypes.U8, kerneltest.Ints(dtypes.S32, 7, -1, 0, 3), []byte{1}},
	}
	for _, c := range cases {
		n := int64(len(c.src) / c.sdt.Size())
		p := &plan.Problem{Reduction: c.r, SrcDT: c.sdt, DstDT: c.ddt, Dims: []int64{n}, SrcStrides: []int64{1},
			Reduce: []bool{true}, DstStrides: []int64{0}}
		dst := make([]byte, c.ddt.Size())
		if err := interp.RunProblem(p, c.src, dst, nil); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(dst) != string(c.want) {
			t.Errorf("%s: got % x, want % x", c.name, dst, c.want)
		}
		kerneltest.CheckExact(t, c.name, p, c.src, dst, 0)
	}
}

package reduce_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// TestExactTypes runs every integer and boolean element type through the
// one-call API against results worked out by hand.
func TestExactTypes(t *testing.T) {
	dims, axes := []int{2, 3}, []int{1}
	check := func(name string, err error, got, want any) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
			t.Errorf("%s: got %s, want %s", name, g, w)
		}
	}
	i64 := []int64{math.MaxInt64, 1, 0, -5, 7, math.MinInt64}
	d64 := make([]int64, 2)
	check("s64 sum wraps", reduce.Sum(d64, i64, dims, axes), d64, []int64{math.MinInt64, math.MinInt64 + 2})
	check("s64 max", reduce.Max(d64, i64, dims, axes), d64, []int64{math.MaxInt64, 7})
	check("s64 min", reduce.Min(d64, i64, dims, axes), d64, []int64{0, math.MinInt64})
	check("s64 mean", reduce.Mean(d64, []int64{-3, -4, 5, 1, 1, 2}, dims, axes), d64, []int64{-0, 1})
	f := make([]float32, 2)
	check("s64 mean to f32", reduce.Mean(f, []int64{1, 2, 4, 1, 1, 2}, dims, axes), f, []float32{7.0 / 3, 4.0 / 3})

	u64 := []uint64{math.MaxUint64, 2, 0, 5, 6, 3}
	du := make([]uint64, 2)
	check("u64 sum wraps", reduce.Sum(du, u64, dims, axes), du, []uint64{1, 14})
	check("u64 max", reduce.Max(du, u64, dims, axes), du, []uint64{math.MaxUint64, 6})
	check("u64 and", reduce.BitwiseAnd(du, u64, dims, axes), du, []uint64{0, 5 & 6 & 3})

	i32 := []int32{math.MaxInt32, 1, 2, -1, -2, -3}
	d32 := make([]int32, 2)
	check("s32 sum wraps", reduce.Sum(d32, i32, dims, axes), d32, []int32{math.MinInt32 + 2, -6})
	check("s32 prod", reduce.Prod(d32, i32, dims, axes), d32, []int32{-2, -6})
	check("s32 or", reduce.BitwiseOr(d32, i32, dims, axes), d32, []int32{math.MaxInt32, -1})
	u32 := []uint32{1, 2, 3, 4, 5, 6}
	du32 := make([]uint32, 2)
	check("u32 xor", reduce.BitwiseXor(du32, u32, dims, axes), du32, []uint32{0, 7})
	i16 := []int16{math.MaxInt16, 1, 0, 1, 2, 3}
	d16 := make([]int16, 2)
	check("s16 sum wraps", reduce.Sum(d16, i16, dims, axes), d16, []int16{math.MinInt16, 6})

	b := []bool{true, true, false, true, true, true}
	db := make([]bool, 2)
	check("all", reduce.LogicalAnd(db, b, dims, axes), db, []bool{false, true})
	check("any", reduce.LogicalOr(db, []bool{false, false, false, false, true, false}, dims, axes), db, []bool{false, true})
	check("xor", reduce.LogicalXor(db, b, dims, axes), db, []bool{false, true})
	check("bool max", reduce.Max(db, b, dims, axes), db, []bool{true, true})
	du8 := make([]uint8, 2)
	check("u8 any", reduce.LogicalOr(du8, []uint8{0, 0, 0, 0, 9, 0}, dims, axes), du8, []uint8{0, 1})
	check("s32 all to bool", reduce.LogicalAnd(db, []int32{1, -1, 3, 0, 1, 1}, dims, axes), db, []bool{true, false})
}

// TestExactRefusals: what a type cannot do is an error naming it.
func TestExactRefusals(t *testing.T) {
	dims, axes := []int{4}, []int{0}
	cases := []struct {
		name string
		err  error
		st   error
		msg  string
	}{
		{"sum of bools", reduce.Sum(make([]bool, 1), make([]bool, 4), dims, axes), graph.InvalidDataType, "sum of boolean data has no meaning"},
		{"L2 of s32", reduce.L2(make([]int32, 1), make([]int32, 4), dims, axes), graph.Unimplemented, "reduce.L2: L2 of s32 data"},
		{"exp of bools", reduce.LogSumExp(make([]bool, 1), make([]bool, 4), dims, axes), graph.Unimplemented, "boolean"},
		{"bitwise of f32", reduce.BitwiseAnd(make([]float32, 1), make([]float32, 4), dims, axes), graph.InvalidDataType, "not f32"},
		{"s32 sum to f32", reduce.Sum(make([]float32, 1), make([]int32, 4), dims, axes), graph.InvalidDataType, "writes s32, not f32"},
		{"s64 sum to s32", reduce.Sum(make([]int32, 1), make([]int64, 4), dims, axes), graph.InvalidDataType, "writes s64, not s32"},
		{"all to s32", reduce.LogicalAnd(make([]int32, 1), make([]int32, 4), dims, axes), graph.InvalidDataType, "writes boolean or u8, not s32"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.st) || c.err == nil || !strings.Contains(c.err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %v saying %q", c.name, c.err, c.st, c.msg)
		}
	}
}

// TestExactONNX runs ONNX's ReduceSum over an int64 attention mask
// through the ONNX entry (no axes: every dim, keepdims 1).
func TestExactONNX(t *testing.T) {
	n, err := reduce.NewONNXNode("ReduceSum", 13)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]int64, 1)
	if err := reduce.RunONNX(n, dst, []int64{1, 1, 0, 1, 1, 1}, []int{2, 3}, nil); err != nil || dst[0] != 5 {
		t.Fatalf("ReduceSum-13 of the mask: %v, %v; want 5", dst, err)
	}
	m, _ := reduce.NewONNXNode("ReduceMax", 18)
	if err := reduce.RunONNX(m, dst, []int64{-5, math.MinInt64, -7}, []int{3}, []int64{0}); err != nil || dst[0] != -5 {
		t.Fatalf("ReduceMax-18: %v, %v; want -5", dst, err)
	}
}

package reduce_test

import (
	"errors"
	"slices"
	"testing"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/reduce"
)

// TestNormInPlaceOtherType: dst given src's memory as another type (a
// bf16 dst over an f32 src's first bytes, an f16 src read as bf16 dst)
// is not src itself, and every normalization call refuses it with x
// unchanged.
func TestNormInPlaceOtherType(t *testing.T) {
	src := make([]float32, 64)
	for i := range src {
		src[i] = float32(i%9) - 4
	}
	before := slices.Clone(src)
	over := unsafe.Slice((*uint16)(unsafe.Pointer(&src[0])), 64)
	dims := []int{4, 16}
	g := make([]float32, 16)
	for name, f := range map[string]func() error{
		"Softmax":     func() error { return reduce.Softmax(over, src, dims, 1, reduce.DstType(dtypes.BF16)) },
		"LogSoftmax":  func() error { return reduce.LogSoftmax(over, src, dims, 0, reduce.DstType(dtypes.BF16)) },
		"LayerNorm":   func() error { return reduce.LayerNorm(over, src, g, g, dims, 1, 1e-5, reduce.DstType(dtypes.BF16)) },
		"RMSNorm":     func() error { return reduce.RMSNorm(over, src, g, dims, 1, 1e-5, reduce.DstType(dtypes.BF16)) },
		"LpNormalize": func() error { return reduce.LpNormalize(over, src, dims, 1, 2, 0, reduce.DstType(dtypes.BF16)) },
		"f16 as bf16": func() error {
			s16 := unsafe.Slice((*uint16)(unsafe.Pointer(&src[0])), 64)
			return reduce.Softmax(s16, s16, dims, 1, reduce.SrcType(dtypes.F16), reduce.DstType(dtypes.BF16))
		},
	} {
		err := advCatch(f)
		if !errors.Is(err, graph.InvalidArguments) {
			t.Errorf("%s: %v, want InvalidArguments", name, err)
		}
		if !slices.Equal(src, before) {
			t.Errorf("%s: refused call wrote src", name)
			copy(src, before)
		}
	}
}

// TestTypeNames16BitOnly: Type names the ~uint16 slices only, and a
// ~float32 (or ~float64, or integer) slice keeps its own type, in the
// reductions as in the normalizations: with no 16-bit slice at all, with
// a 16-bit dst beside a float32 src, with a 16-bit src beside a float32
// dst. SrcType and DstType still must name a float32 slice's own type.
func TestTypeNames16BitOnly(t *testing.T) {
	dims, axes := []int{2}, []int{0}
	bf := reduce.Type(dtypes.BF16)
	f32 := []float32{1, 2}
	check := func(name string, err error, got, want float64) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", name, got, err, want)
		}
	}
	s32 := make([]int32, 1)
	err := reduce.Sum(s32, f32, dims, axes, bf)
	check("f32 src, s32 dst", err, float64(s32[0]), 3)
	d32 := make([]float32, 1)
	err = reduce.Sum(d32, f32, dims, axes, bf)
	check("f32 src, f32 dst", err, float64(d32[0]), 3)
	d64 := make([]float64, 1)
	err = reduce.Sum(d64, []float64{1, 2}, dims, axes, bf)
	check("f64 src, f64 dst", err, d64[0], 3)
	// bf16 1 and 2 are 0x3f80 and 0x4000.
	err = reduce.Sum(d32, []uint16{0x3f80, 0x4000}, dims, axes, bf)
	check("bf16 src, f32 dst", err, float64(d32[0]), 3)
	u8 := make([]uint8, 1)
	err = reduce.Max(u8, []uint16{0x3f80, 0x4000}, dims, axes, bf)
	check("bf16 src, u8 dst", err, float64(u8[0]), 2)
	idx := make([]int32, 1)
	err = reduce.ArgMax(idx, f32, dims, 0, bf)
	check("ArgMax f32 src", err, float64(idx[0]), 1)
	sm := make([]float32, 2)
	err = reduce.Softmax(sm, f32, dims, 0, bf)
	check("Softmax f32", err, float64(sm[0]+sm[1]), 1)
	// A float32 dst named bf16 by DstType, a float32 src by SrcType, is
	// still a mismatch the call refuses.
	if err := reduce.Sum(d32, f32, dims, axes, reduce.DstType(dtypes.BF16)); !errors.Is(err, graph.InvalidDataType) {
		t.Errorf("f32 dst named bf16 by DstType: %v, want InvalidDataType", err)
	}
	if err := reduce.ArgMax(idx, f32, dims, 0, reduce.SrcType(dtypes.BF16)); !errors.Is(err, graph.InvalidDataType) {
		t.Errorf("ArgMax f32 src named bf16 by SrcType: %v, want InvalidDataType", err)
	}
}

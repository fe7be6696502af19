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

package reduce_test

import (
	"errors"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestArgS32AxisTooLongIsInvalidShape: reduce.ArgMax's doc says an
// s32 dst for an axis longer than 2^31 is an InvalidShape error (as an
// axis of size 0 is). A one-element src broadcast (stride 0) over 2^31+5
// elements asks for it without the memory.
func TestArgS32AxisTooLongIsInvalidShape(t *testing.T) {
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		d := make([]int32, 1)
		err := reduce.ArgMax(d, []int8{3}, []int{1<<31 + 5}, 0, reduce.SrcStrides([]int{0}))
		if !errors.Is(err, graph.InvalidShape) {
			t.Errorf("%v: ArgMax with an s32 dst over 2^31+5 elements: %v, want InvalidShape (reduce.ArgMax's doc)", isa, err)
		}
		err = reduce.ArgMin(d, []float32{3}, []int{2, 1<<31 + 1}, 1, reduce.SrcStrides([]int{0, 0}), reduce.DstStrides([]int{0}))
		if err == nil || errors.Is(err, graph.InvalidArguments) && !errors.Is(err, graph.InvalidShape) {
			t.Errorf("%v: ArgMin with an s32 dst over 2^31+1 elements: %v, want InvalidShape", isa, err)
		}
		jit.SetMaxISA(prev)
	}
}

package reduce_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestArgS32AxisTooLong: an s32 dst for an axis longer than 2^31 is an
// InvalidArguments error naming the index type, as reduce.ArgMax's doc
// says. A one-element src broadcast (stride 0) over 2^31+5 elements asks
// for it without the memory.
func TestArgS32AxisTooLong(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("dims of 2^31+5 need a 64-bit int")
	}
	long := int64(1) << 31
	for i, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		d := make([]int32, 2)
		err := reduce.ArgMax(d[:1], []int8{3}, []int{int(long + 5)}, 0, reduce.SrcStrides([]int{0}))
		if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "s32 index") {
			t.Errorf("%v: ArgMax with an s32 dst over 2^31+5 elements: %v, want InvalidArguments naming the s32 index", isa, err)
		}
		err = reduce.ArgMin(d, []float32{3}, []int{2, int(long + 1)}, 1, reduce.SrcStrides([]int{0, 0}))
		if !errors.Is(err, graph.InvalidArguments) || !strings.Contains(err.Error(), "s32 index") {
			t.Errorf("%v: ArgMin with an s32 dst over 2^31+1 elements: %v, want InvalidArguments naming the s32 index", isa, err)
		}
		if i > 0 && testing.Short() {
			// The s64 run reads 2^31+5 elements: in -short runs (under
			// the race detector, and arm64 under qemu, in CI) on the
			// first ISA alone.
			jit.SetMaxISA(prev)
			continue
		}
		d64 := make([]int64, 1)
		if err := reduce.ArgMax(d64, []int8{3}, []int{int(long + 5)}, 0, reduce.SrcStrides([]int{0})); err != nil {
			t.Errorf("%v: ArgMax with an s64 dst over 2^31+5 elements: %v", isa, err)
		} else if d64[0] != 0 {
			t.Errorf("%v: ArgMax of 2^31+5 equal elements: %d, want 0", isa, d64[0])
		}
		jit.SetMaxISA(prev)
	}
}

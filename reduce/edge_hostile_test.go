//go:build !(386 || arm || mips || mipsle)

// Dims past 2^32 elements: 64-bit ints only.

package reduce_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestHostileNormCalls: malformed LpNormalize, Softmax, ArgMax calls
// (overflowing dims, negative and huge strides, short slices, bad p and
// eps) return an error, never panic, on every ISA.
func TestHostileNormCalls(t *testing.T) {
	big := 1 << 40
	calls := []struct {
		name string
		f    func() error
	}{
		{"lp negative stride", func() error {
			return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, 1, 2, 0, reduce.SrcStrides([]int{-4, 1}))
		}},
		{"lp huge stride", func() error {
			return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, 1, 1, 0, reduce.SrcStrides([]int{math.MaxInt64 / 2, 1}))
		}},
		{"lp short dst", func() error {
			return reduce.LpNormalize(make([]float32, 7), make([]float32, 8), []int{2, 4}, 1, 1, 0)
		}},
		{"lp nan eps", func() error {
			return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, 1, 1, float32(math.NaN()))
		}},
		{"lp inf eps", func() error {
			return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, 1, 1, float32(math.Inf(1)))
		}},
		{"lp p 3", func() error { return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, 1, 3, 0) }},
		{"lp axis 2", func() error { return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, 2, 2, 0) }},
		{"lp axis -3", func() error { return reduce.LpNormalize(make([]float32, 8), make([]float32, 8), []int{2, 4}, -3, 2, 0) }},
		{"softmax stride overflow", func() error {
			return reduce.Softmax(make([]float32, 8), make([]float32, 8), []int{3, 4}, 1, reduce.SrcStrides([]int{math.MaxInt64/3 + 1, 1}))
		}},
		{"softmax dst stride overflow", func() error {
			return reduce.Softmax(make([]float32, 8), make([]float32, 8), []int{2, 4}, 0, reduce.DstStrides([]int{4, math.MaxInt64 / 2}))
		}},
		{"softmax negative dim", func() error { return reduce.Softmax(make([]float32, 8), make([]float32, 8), []int{-2, -4}, 0) }},
		{"argmax stride overflow", func() error {
			return reduce.ArgMax(make([]int64, 2), make([]float32, 8), []int{2, 4}, 1, reduce.SrcStrides([]int{1, math.MaxInt64 / 3}))
		}},
		{"argmax dst stride overflow", func() error {
			return reduce.ArgMax(make([]int64, 2), make([]float32, 8), []int{2, 4}, 1, reduce.DstStrides([]int{math.MaxInt64}))
		}},
		{"argmax dims overflow", func() error {
			return reduce.ArgMax(make([]int64, 2), make([]float32, 8), []int{big, big, 4}, 2, reduce.SrcStrides([]int{0, 0, 1}), reduce.DstStrides([]int{0, 0}))
		}},
		{"argmax dims product overflow zero stride", func() error {
			return reduce.ArgMax(make([]int64, 1), make([]float32, 1), []int{big, big}, 1, reduce.SrcStrides([]int{0, 0}), reduce.DstStrides([]int{0}))
		}},
		{"layernorm stats short", func() error {
			return reduce.LayerNorm(make([]float32, 8), make([]float32, 8), []float32(nil), []float32(nil), []int{2, 4}, 1, 1e-5, reduce.Stats(make([]float32, 1), make([]float32, 2)))
		}},
		// A 0 in dims passes the element count whatever the other dims:
		// the rows of the statistics must not wrap past their check
		// into a scratch of a negative length.
		{"layernorm stats rows past int64", func() error {
			return reduce.LayerNorm([]float32{}, []float32{}, []float32(nil), nil, []int{1 << 62, 2, 0}, 2, 1e-5, reduce.Stats(make([]float32, 0), nil))
		}},
		{"groupnorm stats rows past int64", func() error {
			return reduce.GroupNorm(make([]float32, 8), make([]float32, 8), []float32(nil), nil, []int{2, 4, 1}, 1<<62, 1, 1e-5, reduce.Stats(make([]float32, 1), nil))
		}},
		{"onnx layernorm stats rows past int64", func() error {
			n, err := reduce.NewONNXNorm("LayerNormalization", 17)
			if err != nil {
				return err
			}
			n.Axis = 2
			return reduce.RunONNXNorm(n, []float32{}, []float32{}, []float32{}, nil, []int{1 << 62, 2, 0}, reduce.Stats(nil, make([]float32, 0)))
		}},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, c := range calls {
			err := advCatch(c.f)
			if err == nil {
				t.Errorf("%v %s: no error", isa, c.name)
				continue
			}
			// LpNormalize refuses a huge src stride as OutOfMemory (its
			// plan's span check runs before the buffer's): an error all the same.
			if !errors.Is(err, graph.InvalidArguments) && !errors.Is(err, graph.InvalidShape) && !errors.Is(err, graph.Unimplemented) &&
				!errors.Is(err, graph.OutOfMemory) {
				t.Errorf("%v %s: %v", isa, c.name, fmt.Sprint(err))
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestLpNormalizeOverflowingDims: dims whose element count overflows
// int64 ([2^32, 2^32] wraps to 0, as does [2^40, 2^40, 2^40]) with
// 4-element slices are InvalidShape, as Softmax's are, not taken for an
// empty tensor with nothing to write.
func TestLpNormalizeOverflowingDims(t *testing.T) {
	for _, dims := range [][]int{{1 << 32, 1 << 32}, {1 << 40, 1 << 40, 1 << 40}, {1 << 31, 1 << 31, 4}} {
		for _, isa := range advISAs {
			prev := jit.SetMaxISA(isa)
			dst := []float32{7, 7, 7, 7}
			err := advCatch(func() error { return reduce.LpNormalize(dst, make([]float32, 4), dims, 0, 2, 0) })
			if !errors.Is(err, graph.InvalidShape) && !errors.Is(err, graph.InvalidArguments) {
				t.Errorf("%v: LpNormalize over dims %v with 4-element slices: %v, want InvalidShape (as Softmax's)", isa, dims, err)
			}
			jit.SetMaxISA(prev)
		}
	}
}

// TestEmptyNormCalls: a normalization whose normalized dims hold no
// element writes nothing, and returns at once however many rows its
// other dims make (up to 2^60 here), on every ISA.
func TestEmptyNormCalls(t *testing.T) {
	big := 1 << 60
	e := []float32{}
	calls := []struct {
		name string
		f    func() error
	}{
		{"softmax", func() error { return reduce.Softmax(e, e, []int{0, big}, 0) }},
		{"log-softmax", func() error { return reduce.LogSoftmax(e, e, []int{big, 0, 3}, 1) }},
		{"layer norm", func() error { return reduce.LayerNorm(e, e, []float32(nil), nil, []int{big, 0}, 1, 1e-5) }},
		{"rms norm", func() error { return reduce.RMSNorm(e, e, []float32(nil), []int{big, 0}, 1, 1e-5) }},
		{"group norm", func() error { return reduce.GroupNorm(e, e, []float32(nil), nil, []int{big, 1, 0}, 1, 1, 1e-5) }},
		{"lp norm", func() error { return reduce.LpNormalize(e, e, []int{0, big}, 0, 2, 1e-12) }},
		// Its per-group scale is spread over the channels only where
		// there is something to scale: 2^47 channels beside a 0.
		{"onnx group norm 18", func() error {
			n, err := reduce.NewONNXNorm("GroupNormalization", 18)
			if err != nil {
				return err
			}
			n.NumGroups = 1
			return reduce.RunONNXNorm(n, e, e, []float32{1}, []float32{0}, []int{0, 1 << 47, 1})
		}},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		for _, c := range calls {
			if err := c.f(); err != nil {
				t.Errorf("%v %s: %v", isa, c.name, err)
			}
		}
		jit.SetMaxISA(prev)
	}
}

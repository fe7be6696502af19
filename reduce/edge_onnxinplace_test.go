package reduce_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/reduce"
)

// TestONNXNormInPlace: every ONNX normalization node run with y given
// x itself (1 and 2 threads, every ISA) is bit for bit the node run out
// of place, or, where it refuses in place, a clear error and x
// unchanged.
func TestONNXNormInPlace(t *testing.T) {
	dims := []int{3, 8, 301}
	n := 3 * 8 * 301
	nodes := []struct {
		op    string
		opset int
		scale int // scale and bias length (0: none)
	}{
		{"Softmax", 13, 0}, {"Softmax", 11, 0}, {"LogSoftmax", 13, 0}, {"LayerNormalization", 17, 301},
		{"RMSNormalization", 23, 301}, {"GroupNormalization", 21, 8}, {"InstanceNormalization", 6, 8},
		{"LpNormalization", 1, 0}, {"MeanVarianceNormalization", 13, 0}, {"GroupNormalization", 18, 4},
		{"LayerNormalization", 17, 2408}, {"LpNormalization", 22, 0},
	}
	for _, isa := range advISAs {
		prev := jit.SetMaxISA(isa)
		r := rand.New(rand.NewPCG(67, uint64(isa)))
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.Float64()*6 - 3)
		}
		for _, nd := range nodes {
			node, err := reduce.NewONNXNorm(nd.op, nd.opset)
			if err != nil {
				t.Errorf("%s: %v", nd.op, err)
				continue
			}
			var scale, bias []float32
			if nd.scale > 0 {
				scale, bias = make([]float32, nd.scale), make([]float32, nd.scale)
				for i := range scale {
					scale[i], bias[i] = float32(r.Float64()+0.5), float32(r.Float64()-0.5)
				}
			}
			if nd.op == "GroupNormalization" {
				node.NumGroups = 4
			}
			if nd.op == "LayerNormalization" && nd.scale == 2408 {
				node.Axis = 1
			}
			if nd.op == "LpNormalization" && nd.opset == 22 {
				node.P, node.Axis = 1, 1
			}
			if nd.op == "MeanVarianceNormalization" {
				node.Axes = []int64{0, 2} // the default [0 2 3] is for rank 4
			}
			if nd.op == "RMSNormalization" {
				bias = nil
			}
			for _, th := range []int{1, 2} {
				pt := jit.SetThreads(th)
				name := fmt.Sprintf("%v %s-%d %d threads", isa, nd.op, nd.opset, th)
				want := make([]float32, n)
				e1 := reduce.RunONNXNorm(node, want, x, scale, bias, dims)
				ip := slices.Clone(x)
				e2 := reduce.RunONNXNorm(node, ip, ip, scale, bias, dims)
				jit.SetThreads(pt)
				if e1 != nil {
					t.Errorf("%s: %v", name, e1)
					continue
				}
				if e2 != nil {
					if !slices.Equal(ip, x) {
						t.Errorf("%s: refused in place (%v) but wrote x", name, e2)
					}
					t.Logf("%s: in place refused: %v", name, e2)
					continue
				}
				for i := range want {
					if math.Float32bits(want[i]) != math.Float32bits(ip[i]) {
						t.Errorf("%s: [%d] in place %v, out of place %v", name, i, ip[i], want[i])
						break
					}
				}
			}
		}
		jit.SetMaxISA(prev)
	}
}

// TestONNXMVNInPlace: MeanVarianceNormalization with y given x itself,
// any axes, gives the out-of-place result (its statistics pass must not
// write x before the map reads it), and a y that overlaps x otherwise is
// refused.
func TestONNXMVNInPlace(t *testing.T) {
	for _, axes := range [][]int64{{2}, {1, 2}, {0, 2}, {}} {
		for _, isa := range advISAs {
			prev := jit.SetMaxISA(isa)
			node, err := reduce.NewONNXNorm("MeanVarianceNormalization", 13)
			if err != nil {
				t.Fatal(err)
			}
			node.Axes = axes
			x := []float32{1, 2, 3, 4, 5, 6, 7, 9, -1, 0, 2, 8, 3, 3, 1, 0, 2, 5, 7, 7, 1, 4, 6, 2}
			want := make([]float32, len(x))
			if err := reduce.RunONNXNorm(node, want, x, []float32(nil), nil, []int{2, 3, 4}); err != nil {
				t.Fatal(err)
			}
			ip := slices.Clone(x)
			if err := reduce.RunONNXNorm(node, ip, ip, []float32(nil), nil, []int{2, 3, 4}); err != nil {
				t.Errorf("%v axes %v: in place: %v", isa, axes, err)
			} else if !slices.Equal(ip, want) {
				t.Errorf("%v axes %v: in place %v, out of place %v", isa, axes, ip, want)
			}
			shifted := append(slices.Clone(x), 0)
			err = reduce.RunONNXNorm(node, shifted[1:], shifted[:len(x)], []float32(nil), nil, []int{2, 3, 4})
			if !errors.Is(err, graph.InvalidArguments) {
				t.Errorf("%v axes %v: y one element past x: %v, want InvalidArguments", isa, axes, err)
			}
			jit.SetMaxISA(prev)
		}
	}
}

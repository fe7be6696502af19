package kernelshape

import (
	"fmt"
	"testing"
)

// combineRecorder is a NativeEmitter that records NativeCombine calls.
type combineRecorder struct {
	NativeEmitter
	calls [][2]int
}

func (c *combineRecorder) NativeCombine(u, from int) { c.calls = append(c.calls, [2]int{u, from}) }

// TestNativeCombineAll: order-free kinds (max, min, integer ops) combine
// a row's n accumulators into the first as a tree of ceil(log2 n) levels,
// each accumulator's value reaching the first exactly once; float sums
// and products, and an integer mean's halves, one after another in
// order, as their bits require.
func TestNativeCombineAll(t *testing.T) {
	kinds := []struct {
		k    NativeKind
		free bool
	}{
		{NativeKind{Op: NativeMax, Bytes: 8, Float: true}, true},
		{NativeKind{Op: NativeMin, Bytes: 8, Float: true}, true},
		{NativeKind{Op: NativeAdd, Bytes: 4, Signed: true}, true},
		{NativeKind{Op: NativeMul, Bytes: 8}, true},
		{NativeKind{Op: NativeXor, Bytes: 2}, true},
		{NativeKind{Op: NativeAdd, Bytes: 8, Float: true}, false},
		{NativeKind{Op: NativeMul, Bytes: 8, Float: true}, false},
		{NativeKind{Op: NativeAdd, Bytes: 8, Signed: true, Mean: true}, false}, // halves
	}
	for _, c := range kinds {
		if got := c.k.OrderFree(); got != c.free {
			t.Errorf("%+v: OrderFree() = %v, want %v", c.k, got, c.free)
		}
		for _, n := range []int{1, 2, 3, 5, 8, 12, 16} {
			for _, first := range []int{0, 16} {
				r := &combineRecorder{}
				nativeCombineAll(r, c.k, first, n)
				name := fmt.Sprintf("%+v, %d accumulators from %d", c.k, n, first)
				if len(r.calls) != n-1 {
					t.Fatalf("%s: %d combines", name, len(r.calls))
				}
				// holds[a] is the set of accumulators whose values a holds;
				// depth[a] the longest chain of combines into it.
				holds, depth := map[int]map[int]bool{}, map[int]int{}
				for i := range n {
					holds[first+i] = map[int]bool{first + i: true}
				}
				for _, cl := range r.calls {
					u, from := cl[0], cl[1]
					if holds[u] == nil || holds[from] == nil || u == from {
						t.Fatalf("%s: combine %v of an accumulator outside the row or used up", name, cl)
					}
					for a := range holds[from] {
						holds[u][a] = true
					}
					delete(holds, from)
					depth[u] = max(depth[u], depth[from]) + 1
				}
				if len(holds) != 1 || len(holds[first]) != n {
					t.Fatalf("%s: accumulator %d holds %v", name, first, holds[first])
				}
				want := n - 1
				if c.free {
					want = 0
					for w := 1; w < n; w *= 2 {
						want++
					}
				} else {
					for i, cl := range r.calls {
						if cl != [2]int{first, first + i + 1} {
							t.Fatalf("%s: combine %d is %v, want the next accumulator into the first", name, i, cl)
						}
					}
				}
				if depth[first] != want {
					t.Errorf("%s: %d levels of combines, want %d", name, depth[first], want)
				}
			}
		}
	}
}

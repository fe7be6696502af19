package reduce

import (
	"encoding/binary"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gdnn/gdnn/internal/jit"
)

// TestAdv1ISACapRace checks that a cap set while a call compiles does
// not leave its kernel cached under the key of the cap read before: the
// compile reads the cap anew, and every later call under the key's cap
// would run the other ISA's code. Under cap None, after such a race, no
// call may run machine code.
func TestAdv1ISACapRace(t *testing.T) {
	top := jit.DetectedISA()
	if top == jit.None {
		t.Skip("no JIT ISA")
	}
	defer SetCacheCapacity(SetCacheCapacity(1 << 16))
	defer jit.SetMaxISA(jit.SetMaxISA(top))
	defer jit.SetCallCounting(jit.SetCallCounting(true))
	const shapes = 120
	src := make([]float32, 8*shapes)
	for i := range src {
		src[i] = float32(i%13) - 6
	}
	mask := make([]float32, 2*shapes)
	for i := range mask {
		mask[i] = 1
	}
	dst := make([]float32, len(src))
	idx := make([]int64, len(src))
	calls := func(n int) {
		x := src[:8*n]
		for _, err := range []error{
			Sum(dst, x, []int{n, 8}, []int{1}),
			Softmax(dst, x, []int{n, 8}, 0),
			LpNormalize(dst, x, []int{2, n, 4}, 1, 2, 1e-12),
			MaskedMean(dst, x, mask[:2*n], []int{2, n, 4}, 1),
			ArgMax(idx, x, []int{n, 8}, 0),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			jit.SetMaxISA(jit.None)
			jit.SetMaxISA(top)
			flips.Add(1)
		}
	}()
	for flips.Load() < 100 {
		runtime.Gosched()
	}
	for n := 1; n <= shapes; n++ {
		calls(n)
	}
	stop.Store(true)
	wg.Wait()

	jit.SetMaxISA(jit.None)
	before := jit.CallCount(top)
	for n := 1; n <= shapes; n++ {
		calls(n)
	}
	if ran := jit.CallCount(top) - before; ran != 0 {
		t.Errorf("under cap none, %d calls ran %v code, cached while the cap changed", ran, top)
	}
	bad := 0
	cache.mu.RLock()
	for k, c := range cache.m {
		if c.k.ISA() != jit.ISA(k.isa) {
			bad++
		}
	}
	cache.mu.RUnlock()
	if bad > 0 {
		t.Errorf("%d kernels cached under the key of another cap than theirs", bad)
	}
	bad = 0
	cache.mu.RLock()
	for k, v := range cache.arg {
		if k.isa == uint8(jit.None) && v.Impl() != "interp" {
			bad++
		}
	}
	cache.mu.RUnlock()
	for key, p := range lpPrograms.byKey {
		if isa, _ := binary.Varint([]byte(key)); isa == int64(jit.None) && strings.Contains(p.Impl(), "jit:") {
			bad++
		}
	}
	for key, mp := range maskedPrograms.byKey {
		if isa, _ := binary.Varint([]byte(key)); isa == int64(jit.None) && mp.count.ISA() != jit.None {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d index kernels, Lp or masked-mean programs of machine code cached under cap none", bad)
	}
}

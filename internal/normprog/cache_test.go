package normprog

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/norm"
)

func TestCached(t *testing.T) {
	prob := func(n int64) *norm.Problem {
		return &norm.Problem{Kind: norm.RMSNorm, Dims: []int64{2, n}, Axis: 1, Eps: 1e-5,
			Src: norm.Operand{DT: dtypes.F32, Strides: []int64{n, 1}}, Dst: norm.Operand{DT: dtypes.F32, Strides: []int64{n, 1}}}
	}
	a, err := Cached(prob(8))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Cached(prob(8)); b != a {
		t.Error("the same problem compiles again")
	}
	if b, _ := Cached(prob(9)); b == a {
		t.Error("another problem gets the first one's program")
	}
	prev := jit.SetMaxISA(jit.None)
	b, _ := Cached(prob(8))
	jit.SetMaxISA(prev)
	if b == a && jit.EffectiveISA() != jit.None {
		t.Error("a program compiled for one ISA serves another")
	}
	for n := int64(100); n < 100+cacheCap; n++ {
		if _, err := Cached(prob(n)); err != nil {
			t.Fatal(err)
		}
	}
	if cache.order.Len() != cacheCap {
		t.Errorf("the cache holds %d programs, want %d", cache.order.Len(), cacheCap)
	}
	if b, _ := Cached(prob(8)); b == a {
		t.Error("the least recently used program is still cached")
	}
	bad := prob(8)
	bad.Eps = -1
	if _, err := Cached(bad); err == nil {
		t.Error("a refused problem is served")
	}
}

// TestAdv1CachedISACapRace: a cap set while Cached compiles must not
// leave the program cached under the key of the cap read before it (the
// compile reads the cap anew): every later call under the key's cap
// would run the other ISA's code.
func TestAdv1CachedISACapRace(t *testing.T) {
	top := jit.DetectedISA()
	if top == jit.None {
		t.Skip("no JIT ISA")
	}
	defer jit.SetMaxISA(jit.SetMaxISA(top))
	prob := func(n int64) *norm.Problem {
		return &norm.Problem{Kind: norm.LayerNorm, Dims: []int64{n, 8}, Axis: 0, Eps: 1e-5,
			Src: norm.Operand{DT: dtypes.F32, Strides: []int64{8, 1}}, Dst: norm.Operand{DT: dtypes.F32, Strides: []int64{8, 1}}}
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
	const shapes = cacheCap / 2
	for n := int64(1); n <= shapes; n++ {
		if _, err := Cached(prob(n)); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	jit.SetMaxISA(jit.None)
	bad := 0
	for n := int64(1); n <= shapes; n++ {
		e, err := Cached(prob(n))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e.Impl(), "jit:") {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("under cap none, %d of %d cached programs run machine code", bad, shapes)
	}
}

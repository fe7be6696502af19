package partition

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
)

// TestAdv1CompileISACapRace: a cap set while Compile compiles must not
// leave the compiled partition cached under the key of the cap read
// before it (the compile reads the cap anew): a later Compile under the
// key's cap would return the other ISA's code.
func TestAdv1CompileISACapRace(t *testing.T) {
	top := jit.DetectedISA()
	if top == jit.None {
		t.Skip("no JIT ISA")
	}
	defer jit.SetMaxISA(jit.SetMaxISA(top))
	prev, _ := SetCompiledPartitionCacheCapacity(4096)
	defer SetCompiledPartitionCacheCapacity(prev)
	part := func(n int64) *Partition {
		src := graph.NewLogicalTensor(0, dtypes.F32, []int64{n, 8})
		dst := graph.NewLogicalTensorAny(1, dtypes.F32, nil)
		g := graph.New()
		if err := g.AddOp(graph.NewOp(0, graph.ReduceSum, "sum").AddInput(src).AddOutput(dst).
			SetAttr("axes", []int64{0})); err != nil {
			t.Fatal(err)
		}
		if err := g.Finalize(); err != nil {
			t.Fatal(err)
		}
		ps, err := Get(g, Fusion)
		if err != nil {
			t.Fatal(err)
		}
		return ps[0]
	}
	const shapes = 300
	parts := make([]*Partition, shapes+1)
	for n := int64(1); n <= shapes; n++ {
		parts[n] = part(n)
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
		if _, err := parts[n].Compile(parts[n].Inputs(), parts[n].Outputs()); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	jit.SetMaxISA(jit.None)
	bad := 0
	for n := 1; n <= shapes; n++ {
		c, err := parts[n].Compile(parts[n].Inputs(), parts[n].Outputs())
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c.Impl(), "jit:") {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("under cap none, %d of %d compiles return machine code", bad, shapes)
	}
}

package jit

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestThreadsFollowGOMAXPROCS: by default a Run may use GOMAXPROCS
// threads as it is at the Run, not as it was at the first one (go test
// -cpu and a container's CPU limit change it at run time); a count
// SetThreads set holds until SetThreads(0) restores the default.
func TestThreadsFollowGOMAXPROCS(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(0)
	prev := SetThreads(0)
	defer func() {
		runtime.GOMAXPROCS(prevProcs)
		SetThreads(prev)
	}()
	for _, procs := range []int{3, 1, 2} {
		runtime.GOMAXPROCS(procs)
		if got := Threads(); got != procs {
			t.Errorf("GOMAXPROCS %d: Threads() = %d", procs, got)
		}
	}
	if got := SetThreads(5); got != 2 {
		t.Errorf("SetThreads(5) returned %d, want the default's 2", got)
	}
	runtime.GOMAXPROCS(1)
	if got := Threads(); got != 5 {
		t.Errorf("after SetThreads(5) and GOMAXPROCS 1: Threads() = %d", got)
	}
	SetThreads(0)
	if got := Threads(); got != 1 {
		t.Errorf("after SetThreads(0) and GOMAXPROCS 1: Threads() = %d", got)
	}
}

// TestParallelWakesParkedWorkers: a Run after the workers have spun out
// and parked still gets a helper. Each Run's two calls wait for each
// other, so they finish only if two goroutines run them at once.
func TestParallelWakesParkedWorkers(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prevProcs)
	for rep := range 20 {
		time.Sleep(3 * spinFor) // long enough for every worker to park
		var started atomic.Int32
		err := Parallel(2, 2, func(_ int, c int64) error {
			started.Add(1)
			deadline := time.Now().Add(5 * time.Second)
			for started.Load() < 2 {
				if time.Now().After(deadline) {
					return fmt.Errorf("rep %d: call %d ran alone: no worker woke", rep, c)
				}
				runtime.Gosched()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestParallelDoesNotRetainJobs: once a Run returns, nothing in the pool
// keeps its calls' captures reachable, not even a worker that parked
// after helping (they may be a caller's large buffers).
func TestParallelDoesNotRetainJobs(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prevProcs)
	var freed atomic.Bool
	func() {
		buf := new([1 << 16]byte)
		runtime.SetFinalizer(buf, func(*[1 << 16]byte) { freed.Store(true) })
		var helped atomic.Int32
		for deadline := time.Now().Add(5 * time.Second); helped.Load() == 0; {
			if time.Now().After(deadline) {
				t.Fatal("no worker helped a Run of 64 calls in 5 s")
			}
			if err := Parallel(2, 64, func(w int, c int64) error {
				if w > 0 {
					helped.Add(1)
				}
				buf[c]++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}()
	time.Sleep(3 * spinFor) // the workers park
	for deadline := time.Now().Add(5 * time.Second); !freed.Load(); {
		if time.Now().After(deadline) {
			t.Fatal("a Run's captures are still reachable after it returned and the workers parked")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

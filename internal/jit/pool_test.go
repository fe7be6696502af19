package jit

import (
	"runtime"
	"testing"
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

package jit

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdnn/gdnn/internal/status"
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

// meet is a call of a two-call Run that returns only once both calls
// have started, so that the Run finishes only if a worker took the
// second call while the caller ran the first; it reports a call that
// waited a second in vain.
func meet(started *atomic.Int32) error { return meetWithin(started, time.Second) }

// meetWithin is meet, waiting at most d.
func meetWithin(started *atomic.Int32, d time.Duration) error {
	started.Add(1)
	for deadline := time.Now().Add(d); started.Load() < 2; {
		if time.Now().After(deadline) {
			return errors.New("no worker took the other call")
		}
		runtime.Gosched()
	}
	return nil
}

// TestParallelFreesFailedWorkers: a worker whose call fails, by an
// error or a panic, is free for the next Run. More failures than
// there are workers, each followed by a Run that needs a helper.
func TestParallelFreesFailedWorkers(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prevProcs)
	boom := errors.New("boom")
	for _, panics := range []bool{false, true} {
		ensureWorkers(1)
		for rep := range int(started.Load()) + 2 {
			var started atomic.Int32
			err := Parallel(2, 2, func(w int, _ int64) error {
				if err := meet(&started); err != nil {
					return err
				}
				if w == 0 {
					return nil
				}
				if panics {
					panic("a kernel bug")
				}
				return boom
			})
			if want := error(boom); panics && !errors.Is(err, status.RuntimeError) || !panics && !errors.Is(err, want) {
				t.Fatalf("panics %v, rep %d: the helper's failure gave %v", panics, rep, err)
			}
			started.Store(0)
			if err := Parallel(2, 2, func(int, int64) error { return meet(&started) }); err != nil {
				t.Fatalf("panics %v, rep %d: after a failure: %v", panics, rep, err)
			}
		}
	}
}

// TestParallelWaitsForSlowHelpers: a Run returns only after its
// helpers' calls, even one longer than the caller spins for, which it
// then waits for parked.
func TestParallelWaitsForSlowHelpers(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prevProcs)
	for rep := range 5 {
		var started atomic.Int32
		var finished atomic.Bool
		err := Parallel(2, 2, func(w int, _ int64) error {
			if err := meet(&started); err != nil {
				return err
			}
			if w > 0 {
				time.Sleep(3 * spinFor)
				finished.Store(true)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("rep %d: %v", rep, err)
		}
		if !finished.Load() {
			t.Fatalf("rep %d: Parallel returned before its helper's call ended", rep)
		}
	}
}

// TestParallelSurvivesGoexit: a call that ends a worker's goroutine
// (runtime.Goexit, as t.FailNow does) fails its Run with a
// RuntimeError instead of leaving it waiting, and the pool keeps its
// helpers: more such Runs than there are workers, each followed by a
// Run that needs a helper.
func TestParallelSurvivesGoexit(t *testing.T) {
	prevProcs := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prevProcs)
	ensureWorkers(1)
	for rep := range int(started.Load()) + 2 {
		var met atomic.Int32
		done := make(chan error, 1)
		go func() {
			done <- Parallel(2, 2, func(w int, _ int64) error {
				if err := meet(&met); err != nil {
					return err
				}
				if w > 0 {
					runtime.Goexit()
				}
				return nil
			})
		}()
		select {
		case err := <-done:
			if !errors.Is(err, status.RuntimeError) {
				t.Fatalf("rep %d: a helper's Goexit gave %v, want a RuntimeError", rep, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("rep %d: a Run whose helper's call called Goexit did not return", rep)
		}
		met.Store(0)
		if err := Parallel(2, 2, func(int, int64) error { return meet(&met) }); err != nil {
			t.Fatalf("rep %d: after a Goexit: %v", rep, err)
		}
	}
}

// TestParallelCallerGoexit: a call that ends the caller's goroutine
// (runtime.Goexit) leaves the job to the workers in it, or with its lane
// still in a parked worker's mailbox, and neither crashes the process
// nor reaches a later Run: that Run's calls run once each, on their own
// w, and none after it returned; the workers stay in the pool.
func TestParallelCallerGoexit(t *testing.T) {
	for _, parked := range []bool{true, false} {
		// One P: a job put back would be the next Run's.
		prev := runtime.GOMAXPROCS(1)
		ensureWorkers(2)
		if parked {
			time.Sleep(3 * spinFor)
		}
		var workerIn atomic.Bool
		release := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = Parallel(2, 4, func(w int, _ int64) error {
				if w == 0 {
					for deadline := time.Now().Add(100 * time.Millisecond); !parked && !workerIn.Load() && time.Now().Before(deadline); {
						runtime.Gosched()
					}
					runtime.Goexit()
				}
				workerIn.Store(true)
				<-release
				return nil
			})
		}()
		<-done
		var shared, late, ran atomic.Int32
		var busy [2]atomic.Int32
		var returned atomic.Bool
		err := Parallel(2, 8, func(w int, c int64) error {
			if returned.Load() {
				late.Add(1)
			}
			if busy[w].Add(1) != 1 {
				shared.Add(1)
			}
			defer busy[w].Add(-1)
			if c == 0 {
				close(release)
			}
			ran.Add(1)
			time.Sleep(time.Millisecond)
			return nil
		})
		returned.Store(true)
		time.Sleep(20 * time.Millisecond)
		if err != nil || shared.Load() != 0 || late.Load() != 0 || ran.Load() != 8 {
			t.Errorf("parked %v: the next Run: %v, %d calls on a w running a call, %d after it returned, %d of 8 run",
				parked, err, shared.Load(), late.Load(), ran.Load())
		}
		runtime.GOMAXPROCS(2)
		var met atomic.Int32
		if err := Parallel(2, 2, func(int, int64) error { return meet(&met) }); err != nil {
			t.Errorf("parked %v: afterwards: %v", parked, err)
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestParallelSkipsBusyWorkers: while a worker is still in one Run,
// taking a long call from its caller's lane after its own, a second Run
// that needs a helper gets the idle worker, not a lane waiting in the
// busy one's mailbox.
func TestParallelSkipsBusyWorkers(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	ensureWorkers(2)
	met, tried := 0, 0
	for range 10 {
		var stealing atomic.Bool
		first := make(chan error)
		go func() {
			first <- Parallel(2, 4, func(w int, c int64) error {
				switch c {
				case 0: // the caller's first call: the worker finishes its lane and takes call 1
					time.Sleep(5 * time.Millisecond)
				case 1:
					if w != 0 {
						stealing.Store(true)
					}
					time.Sleep(30 * time.Millisecond)
				}
				return nil
			})
		}()
		for deadline := time.Now().Add(time.Second); !stealing.Load() && time.Now().Before(deadline); {
			time.Sleep(100 * time.Microsecond)
		}
		if stealing.Load() {
			tried++
			var started atomic.Int32
			// Well within the busy worker's call.
			if Parallel(2, 2, func(int, int64) error { return meetWithin(&started, 10*time.Millisecond) }) == nil {
				met++
			}
		}
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	}
	if tried == 0 || met < tried/2 {
		t.Errorf("a Run found the idle worker in %d of %d tries while the other worker was busy", met, tried)
	}
}

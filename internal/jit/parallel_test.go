package jit

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gdnn/gdnn/internal/status"
)

// TestParallel: every call runs once, w is below the thread count and
// never runs two calls at once, the first error stops the calls not yet
// started, and a panic in a call is a RuntimeError, not a crash.
func TestParallel(t *testing.T) {
	for _, threads := range []int{0, 1, 2, 3, 8} {
		const calls = 57
		var ran [calls]atomic.Int32
		busy := make([]atomic.Int32, max(threads, 1))
		var bad atomic.Int32
		err := Parallel(threads, calls, func(w int, c int64) error {
			if w < 0 || w >= max(threads, 1) {
				bad.Add(1)
				return nil
			}
			if busy[w].Add(1) != 1 {
				bad.Add(1)
			}
			ran[c].Add(1)
			for range 1000 { // long enough for another goroutine to overlap
				_ = c * c
			}
			busy[w].Add(-1)
			return nil
		})
		if err != nil || bad.Load() != 0 {
			t.Fatalf("%d threads: %v, %d calls on a bad or shared w", threads, err, bad.Load())
		}
		for c := range ran {
			if n := ran[c].Load(); n != 1 {
				t.Errorf("%d threads: call %d ran %d times", threads, c, n)
			}
		}
	}
	boom := errors.New("boom")
	var mu sync.Mutex
	ran := 0
	if err := Parallel(1, 10, func(_ int, c int64) error {
		mu.Lock()
		defer mu.Unlock()
		ran++
		if c == 3 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) || ran != 4 {
		t.Errorf("error at call 3: %v after %d calls; want it after 4", err, ran)
	}
	for _, threads := range []int{1, 2} {
		err := Parallel(threads, 4, func(_ int, c int64) error {
			if c == 2 {
				panic("a kernel bug")
			}
			return nil
		})
		if !errors.Is(err, status.RuntimeError) {
			t.Errorf("%d threads: a panicking call gives %v, want a RuntimeError", threads, err)
		}
	}
}

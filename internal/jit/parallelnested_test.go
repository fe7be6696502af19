package jit

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestParallelNested: calls that themselves run Parallel (a chunk
// whose pass runs a threaded kernel), from several goroutines at once,
// finish, run every inner call once and keep per-w state unshared.
func TestParallelNested(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for rep := range 20 {
			var total atomic.Int64
			errc := make(chan error, 3)
			for g := range 3 {
				go func() {
					errc <- Parallel(4, 16, func(w int, c int64) error {
						busy := make([]atomic.Int32, 4)
						return Parallel(4, 8, func(w2 int, c2 int64) error {
							if busy[w2].Add(1) != 1 {
								t.Errorf("rep %d g %d: inner w %d shared", rep, g, w2)
							}
							total.Add(1)
							busy[w2].Add(-1)
							return nil
						})
					})
				}()
			}
			for range 3 {
				if err := <-errc; err != nil {
					t.Error(err)
				}
			}
			if total.Load() != 3*16*8 {
				t.Errorf("rep %d: %d inner calls, want %d", rep, total.Load(), 3*16*8)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("nested Parallel deadlocked")
	}
}

package jit

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// The worker pool: persistent goroutines that help with the calls of big
// phases. A Run works on its own phase itself and offers it to idle
// workers; a busy pool simply helps less, so concurrent Runs never wait
// for each other and the thread count changes only speed, never results.

var (
	poolMu  sync.Mutex
	started int               // workers running (they never exit)
	jobs    = make(chan *job) // unbuffered: a send succeeds only to an idle worker
	threads atomic.Int64      // configured thread count; 0 until first use
)

// Threads returns the number of threads a Run may use (itself plus
// workers).
func Threads() int {
	if n := threads.Load(); n > 0 {
		return int(n)
	}
	n := runtime.GOMAXPROCS(0)
	threads.CompareAndSwap(0, int64(n))
	return int(threads.Load())
}

// SetThreads sets the number of threads a Run may use, including the
// calling goroutine, and returns the previous number; n <= 0 restores the
// default, GOMAXPROCS. Results do not depend on it.
func SetThreads(n int) int {
	prev := Threads()
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	threads.Store(int64(n))
	return prev
}

// ensureWorkers starts workers until n are running.
func ensureWorkers(n int) {
	poolMu.Lock()
	defer poolMu.Unlock()
	for ; started < n; started++ {
		go worker()
	}
}

func worker() {
	for j := range jobs {
		j.work()
		j.wg.Done()
	}
}

// offer hands j to up to n idle workers and returns how many took it.
func offer(j *job, n int) int {
	if n <= 0 {
		return 0
	}
	ensureWorkers(n)
	took := 0
	for ; took < n; took++ {
		j.wg.Add(1)
		select {
		case jobs <- j:
		default:
			j.wg.Done()
			return took
		}
	}
	return took
}

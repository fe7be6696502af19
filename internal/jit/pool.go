package jit

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The worker pool: persistent goroutines that help with the calls of big
// phases. A Run works on its own phase itself and offers it to idle
// workers; a busy pool simply helps less, so concurrent Runs never wait
// for each other and the thread count changes only speed, never results.

var (
	poolMu  sync.Mutex
	started atomic.Int64        // workers running (they never exit)
	parked  atomic.Int64        // workers waiting on wake, or about to
	pending atomic.Pointer[job] // the latest job offered to helpers, or nil
	offers  atomic.Uint64       // jobs offered so far: each job's seq
	wake    = make(chan struct{}, maxWorkers)
	threads atomic.Int64 // the thread count SetThreads set; 0: GOMAXPROCS
)

// maxWorkers bounds the pool (and the wake channel's buffer).
const maxWorkers = 256

// spinFor is how long a worker that just finished looks for the next job
// before it parks. Waking a parked goroutine takes tens of µs, as long as
// a whole 1 MiB call; back-to-back Runs find a spinning worker at once.
const spinFor = 100 * time.Microsecond

// yieldEvery is how long a spinning goroutine polls before it lets the
// scheduler run another. A yield takes the scheduler's global lock: a
// yield per poll, by the caller and the worker at once, made each
// parallel Run's hand-off cost as much as a small call.
const yieldEvery = 5 * time.Microsecond

// spin polls ready until it reports true, and then reports true, or
// until spinFor has passed, and then reports false.
func spin(ready func() bool) bool {
	now := time.Now()
	deadline, yield := now.Add(spinFor), now.Add(yieldEvery)
	for polls := 1; ; polls++ {
		if ready() {
			return true
		}
		if polls%64 != 0 {
			continue
		}
		now = time.Now()
		if now.After(deadline) {
			return false
		}
		if now.After(yield) {
			runtime.Gosched()
			yield = now.Add(yieldEvery)
		}
	}
}

// Threads returns the number of threads a Run may use (itself plus
// workers): SetThreads's count, or by default GOMAXPROCS as it is now,
// so that the default follows the runtime's changes (go test -cpu, a
// container's CPU limit).
func Threads() int {
	if n := threads.Load(); n > 0 {
		return int(n)
	}
	return runtime.GOMAXPROCS(0)
}

// SetThreads sets the number of threads a Run may use, including the
// calling goroutine, and returns the previous number; n <= 0 restores the
// default, GOMAXPROCS. Results do not depend on it.
func SetThreads(n int) int {
	prev := Threads()
	threads.Store(int64(max(n, 0)))
	return prev
}

// shareThreads is how many of threads a run that reads srcBytes takes:
// one for each whole ShareBytes it reads, at least one. Handing a
// share to a worker costs a few µs (the offer's trip to the worker's
// core, the claim, the join), about what one core takes to read a few
// hundred KiB from its own L2; below that, one thread alone is faster
// (docs/PERFORMANCE-log.md, "Zen 5: small runs on one thread").
func shareThreads(srcBytes int64, threads int) int {
	if threads <= 1 {
		return 1
	}
	return int(min(max(srcBytes/ShareBytes(), 1), int64(threads)))
}

// The bounds of the default ShareBytes, and its value where the L2's size
// is unknown.
const (
	minShare     = 128 << 10
	maxShare     = 384 << 10
	unknownShare = 256 << 10
)

// shareSet is SetShareBytes's value; 0: the default.
var shareSet atomic.Int64

// ShareBytes is the least src a run hands each thread it takes (see
// shareThreads): SetShareBytes's value, or by default 3/8 of one core's
// L2 within [128, 384] KiB. A run as large as one core's L2 reads it from
// there on one thread, but in halves from two cores' L2s at twice that
// speed: the runs that gain from a second thread start sooner on a core
// with a smaller L2.
func ShareBytes() int64 {
	if n := shareSet.Load(); n > 0 {
		return n
	}
	if l2 := cpuFeatures().l2; l2 > 0 {
		return min(max(l2*3/8, minShare), maxShare)
	}
	return unknownShare
}

// SetShareBytes sets ShareBytes and returns the previous value; n <= 0
// restores the default. Tests set it low, so that small runs take the
// pool's path as large ones do.
func SetShareBytes(n int64) int64 {
	prev := ShareBytes()
	shareSet.Store(max(n, 0))
	return prev
}

// ensureWorkers starts workers until n are running.
func ensureWorkers(n int) {
	n = min(n, maxWorkers)
	if started.Load() >= int64(n) {
		return
	}
	poolMu.Lock()
	defer poolMu.Unlock()
	for ; started.Load() < int64(n); started.Add(1) {
		go worker()
	}
}

// worker helps with offered jobs: it takes one when there is a free slot,
// spins for spinFor after each job looking for the next, then parks until
// an offer wakes it.
func worker() {
	// The offer this worker tried last, by number: a pointer would keep
	// the job's buffers reachable while the worker is parked.
	var tried uint64
	fresh := func() bool {
		j := pending.Load()
		return j != nil && j.seq != tried
	}
	for {
		for spin(fresh) {
			j := pending.Load()
			if j == nil || j.seq == tried {
				continue
			}
			// One try per job: slots only ever decrease, so a job
			// with none free now will have none later.
			tried = j.seq
			if lane, ok := j.claim(); ok {
				j.work(lane)
				// finished first: the caller spins on it and returns
				// without touching wg, which only a caller that
				// stopped spinning waits on.
				j.finished.Add(1)
				j.wg.Done()
			}
		}
		// An offer stores its job before it counts the parked workers,
		// and a worker counts itself before it looks for a job once more:
		// either the offer wakes this worker or the worker sees the job.
		parked.Add(1)
		if !fresh() {
			<-wake
		}
		parked.Add(-1)
	}
}

// offer makes up to n slots of j available to workers (they take them
// with claim; slot i works lane i of j's n+1 lanes first) and wakes
// parked workers. The caller works on j itself and then calls retract.
func offer(j *job, n int) {
	if n <= 0 {
		return
	}
	ensureWorkers(n)
	j.slots.Store(int64(n))
	j.offered = n
	j.seq = offers.Add(1)
	j.wg.Add(n)
	pending.Store(j)
	for range min(int64(n), parked.Load()) {
		select {
		case wake <- struct{}{}:
		default: // every parked worker has a wake-up already
		}
	}
}

// retract withdraws the slots of j no worker took, so that wg.Wait waits
// only for the workers that did, and returns how many helped.
func retract(j *job) int {
	pending.CompareAndSwap(j, nil)
	left := max(j.slots.Swap(0), 0) // claims that came too late leave it below 0
	j.wg.Add(-int(left))
	return j.offered - int(left)
}

// wait returns once the n helpers that took slots of j are done. It
// spins first: helpers finish within about one call (at most ~100 µs),
// and parking the caller only to be woken a moment later would add the
// scheduler's wake-up latency to every parallel Run.
func (j *job) wait(n int) {
	if !spin(func() bool { return j.finished.Load() >= int64(n) }) {
		j.wg.Wait()
	}
}

// claim takes a free slot of j, if any, and returns the lane it owns
// (1..offered; the caller owns lane 0). One atomic add, not a load and
// a compare-and-swap: each is a cache line's trip from the caller's
// core, and the claim is on every parallel Run's path.
func (j *job) claim() (int, bool) {
	n := j.slots.Add(-1)
	if n < 0 {
		return 0, false
	}
	return int(n) + 1, true
}

// Serial is Parallel on one thread: every call on the calling goroutine,
// with the same errors. It does not keep do, so that a closure made for
// it can stay on the caller's stack, where Parallel's goes to the heap.
func Serial(calls int64, do func(w int, t int64) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer catchFault(&err)
	for t := range calls {
		if err := do(0, t); err != nil {
			return err
		}
	}
	return nil
}

// Parallel runs do(w, t) for every call t in [0, calls) on up to threads
// goroutines (Threads(), say): the caller and idle pool workers, each
// owning a contiguous lane of calls first (see job). w, below threads,
// names the goroutine that runs the call: no two calls with the same w
// run at once, so do may keep per-w state. It returns the first error (a
// fault in a kernel is a RuntimeError); the calls not started then are
// not run. Which goroutine runs a call must not change its result.
//
// The pool's workers spin a while after each job, so that a run of
// short calls (a chunked normalization of a few hundred µs) is not
// delayed by waking a parked goroutine, as a goroutine started per Run
// would be.
func Parallel(threads int, calls int64, do func(w int, t int64) error) error {
	if threads <= 1 || calls <= 1 {
		return Serial(calls, do)
	}
	j := &job{do: do}
	helpers := int(min(int64(threads-1), calls-1))
	j.splitLanes(helpers+1, calls)
	offer(j, helpers)
	j.work(0)
	j.wait(retract(j))
	if p := j.err.Load(); p != nil {
		return *p
	}
	return nil
}

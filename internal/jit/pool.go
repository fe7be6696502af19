package jit

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// The worker pool: persistent goroutines that help with the calls of big
// phases. A Run works on its own phase itself and hands lanes of it to
// free workers; a busy pool simply helps less, so concurrent Runs never
// wait for each other and the thread count changes only speed, never
// results.

var (
	poolMu  sync.Mutex
	started atomic.Int64  // workers running (they never exit)
	offers  atomic.Uint64 // runs that handed lanes out so far (handOut)
	threads atomic.Int64  // the thread count SetThreads set; 0: GOMAXPROCS
)

// mailboxes are the workers' inboxes, mailboxes[i] worker i's.
var mailboxes [maxWorkers]mailbox

// mailbox is where a caller hands one worker a lane of its job. Each is
// on cache lines of its own, which only its worker polls: handing a lane
// over is one line's trip from the caller's core to the worker's, and
// nothing is claimed on a line that every worker polls.
type mailbox struct {
	lane   atomic.Pointer[lane] // nil: free; a lane handed over and not yet taken; &working: taken
	parked atomic.Bool          // the worker is waiting on wake, or about to
	wake   chan struct{}
	_      [128 - 24]byte
}

// working marks a mailbox whose worker has taken its lane and has not
// left its job.
var working lane

// maxWorkers bounds the pool.
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
	if ready() { // often so at once: no clock read then
		return true
	}
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
// share to a worker costs a µs or two (the lane's trip to the worker's
// core, the job's lines read there, the join), about what one core
// takes to read a few hundred KiB from its own L2; below that, one
// thread alone is faster
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
		mb := &mailboxes[started.Load()]
		mb.wake = make(chan struct{}, 1)
		go mb.serve()
	}
}

// serve is a worker's life: it runs the lanes handed to its mailbox,
// spins for spinFor after each looking for the next, then parks until a
// caller wakes it.
func (mb *mailbox) serve() {
	// serve returns only where a call ended the goroutine
	// (runtime.Goexit, as a test's FailNow does on a worker): another
	// goroutine takes the mailbox over.
	defer func() { go mb.serve() }()
	handed := func() bool {
		l := mb.lane.Load()
		return l != nil && l != &working
	}
	for {
		for spin(handed) {
			l := mb.lane.Load()
			// The caller withdraws a lane it ran itself; whoever swaps
			// it first has it.
			if l == nil || l == &working || !mb.lane.CompareAndSwap(l, &working) {
				continue
			}
			atomic.StoreUint32(&l.taken, 1)
			mb.run(l)
		}
		// A caller stores its lane before it reads parked, and the worker
		// sets parked before it looks at the mailbox once more: either
		// the caller wakes the worker or the worker sees the lane.
		mb.parked.Store(true)
		if mb.lane.Load() == nil {
			<-mb.wake
		}
		mb.parked.Store(false)
	}
}

// run works on the job of lane l, which the worker took, then frees the
// mailbox and leaves the job, in that order: the mailbox is free again
// by the time the caller returns, and no caller hands a lane to a worker
// still busy with another job's calls. Both are deferred, so that a call
// that ends the goroutine leaves neither the caller waiting nor the
// mailbox taken.
func (mb *mailbox) run(l *lane) {
	defer l.leave()
	defer mb.lane.Store(nil)
	l.job.work(l.own)
}

// handOut hands lanes 1..n of j to free workers, one each, and returns
// how many it handed; the caller runs lane 0 and takes the calls of
// lanes no worker took.
func handOut(j *job, n int) int {
	if n <= 0 {
		return 0
	}
	ensureWorkers(n)
	offers.Add(1)
	got := 0
	for i := range int(started.Load()) {
		mb := &mailboxes[i]
		// One compare-and-swap, not a load first: each is a trip of
		// the worker's line, and a free worker is the common case.
		if !mb.lane.CompareAndSwap(nil, &j.lanes[got+1]) {
			continue
		}
		j.given[got] = mb
		if got++; mb.parked.Load() {
			select {
			case mb.wake <- struct{}{}:
			default: // a wake-up is already on its way
			}
		}
		if got == n {
			break
		}
	}
	return got
}

// finish withdraws the lanes of j that no worker took and returns, once
// every worker that took one has left j, how many did. The caller has
// run its own lane and taken every call left in the others: then no call
// of j is running or will run but those of the workers still in it.
func (j *job) finish(handed int) int {
	took := j.took[:0]
	for i, mb := range j.given[:handed] {
		// A lane marked taken is its worker's: the mailbox, whose line
		// the worker writes again as it leaves, is not touched. Else
		// the caller withdraws the lane, unless the worker takes it
		// first.
		if l := &j.lanes[i+1]; atomic.LoadUint32(&l.taken) != 0 || !mb.lane.CompareAndSwap(l, nil) {
			took = append(took, l)
		}
	}
	j.took = took
	if !spin(j.left) {
		// Helpers leave within about a call, but a call can be long
		// (up to ~100 µs): wait parked rather than spin through it.
		j.sleeping.Store(true)
		for !j.left() {
			<-j.woken
		}
		j.sleeping.Store(false)
	}
	return len(took)
}

// left reports whether every worker that took a lane of j has left it.
func (j *job) left() bool {
	for _, l := range j.took {
		if atomic.LoadUint32(&l.left) == 0 {
			return false
		}
	}
	return true
}

// leave marks lane l's worker as gone from j, and wakes its caller if
// it is waiting parked. Nothing of j may be touched after that but its
// sleeping flag and channel, which stay with j when it is used again: a
// wake-up that reaches a later Run of j only makes it look again.
func (l *lane) leave() {
	j := l.job
	atomic.StoreUint32(&l.left, 1)
	// The caller sets sleeping before it looks at left once more:
	// either it sees this worker gone or the worker sees it sleeping.
	if j.sleeping.Load() {
		select {
		case j.woken <- struct{}{}:
		default: // a wake-up is waiting already
		}
	}
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
	j := newJob()
	j.do = do
	helpers := int(min(int64(threads-1), calls-1))
	j.splitLanes(helpers+1, calls)
	handed := handOut(j, helpers)
	j.work(0)
	j.finish(handed)
	err := j.error()
	j.recycle()
	return err
}

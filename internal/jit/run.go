package jit

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/cpu"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// maxUnits is how many sub-plans Run holds in a stack array (blocks: 1;
// tiles: 2; a two-stage split: up to 4 stage-1 variants plus stage 2's
// own split; a post-op pass: one or two more); more, from nested
// two-stage splits, go to the heap.
const maxUnits = 16

// Run executes the kernel: src holds the plan's src elements, dst receives
// its outputs and bins holds one operand buffer per binary post-op, all
// starting at the plan's first element (little-endian f32, or the uint16
// bits of bf16/f16). Buffers too short for the spans the plan addresses,
// or a wrong number of operands, are an InvalidArguments error naming the
// buffer; Run never touches memory outside the buffers. dst must not
// overlap src or the operands, except that an operand may be dst itself
// where InPlace allows it (see inplace.go); other overlaps are an
// InvalidArguments error. Run may be called concurrently.
func (k *Kernel) Run(src, dst []byte, bins [][]byte) error { return k.run(src, dst, bins, false) }

// RunInline is Run on the calling goroutine alone, for callers that
// spread their own work over goroutines (package internal/normprog runs
// a chunk's kernels one after the other on one core): the worker pool is
// neither woken nor left spinning. Results are Run's, bit for bit.
func (k *Kernel) RunInline(src, dst []byte, bins [][]byte) error { return k.run(src, dst, bins, true) }

func (k *Kernel) run(src, dst []byte, bins [][]byte, serial bool) error {
	if k == nil || k.pl == nil {
		return status.Errorf(status.InvalidArguments, "jit: Run of a nil kernel")
	}
	if len(bins) != len(k.binBytes) {
		return status.Errorf(status.InvalidArguments, "jit: %d binary operand buffers given, the plan has %d binary post-ops",
			len(bins), len(k.binBytes))
	}
	if int64(len(src)) < k.srcBytes {
		return status.Errorf(status.InvalidArguments, "jit: src buffer holds %d bytes, the plan reads %d", len(src), k.srcBytes)
	}
	if int64(len(dst)) < k.dstBytes {
		return status.Errorf(status.InvalidArguments, "jit: dst buffer holds %d bytes, the plan writes %d", len(dst), k.dstBytes)
	}
	for i, b := range bins {
		if int64(len(b)) < k.binBytes[i] {
			return status.Errorf(status.InvalidArguments, "jit: binary operand %d holds %d bytes, the plan reads %d",
				i, len(b), k.binBytes[i])
		}
	}
	if err := k.checkAliasing(src, dst, bins); err != nil {
		return err
	}
	if len(k.dec.phases) == 0 {
		return nil
	}
	verbose := verboseLevel() > 0
	var t0 time.Time
	if verbose {
		t0 = time.Now()
	}

	var held [maxUnits]*entry
	ents := held[:0]
	if len(k.units) > maxUnits {
		ents = make([]*entry, 0, len(k.units)) // only nested two-stage schedules get here
	}
	ents = ents[:len(k.units)]
	defer func() {
		for _, e := range ents {
			if e != nil {
				e.release()
			}
		}
	}()
	for i, u := range k.units {
		e, err := u.acquire(k.isa)
		if err != nil {
			return err
		}
		ents[i] = e
	}

	// Fields set one by one: a composite literal would be built in a
	// temporary and copied, twice the stores of a struct this size.
	var x execution
	x.k, x.src, x.dst, x.serial = k, src, dst, serial
	copy(x.bins[:], bins)
	// Most plans have no scratch: they skip the pools and the deferred
	// release, a sizeable part of a tiny Run.
	var scratch scratchHandles
	if len(k.dec.scratch) > 0 {
		x.takeScratch(k.dec.scratch, &scratch)
		defer scratch.release()
	}

	threads := 1
	if err := x.runPhases(k.dec.phases, func(ph *phase) error {
		n, err := x.runPhase(ph, ents)
		threads = max(threads, n)
		return err
	}); err != nil {
		return err
	}
	// The kernels saw the buffers only as addresses: keep them reachable
	// until every call has returned.
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	runtime.KeepAlive(bins)

	if verbose {
		verboseln(execLine(k.Impl(), k.pl.String(), k.schedule(), threads, time.Since(t0)))
	}
	return nil
}

// execution is the buffers of one Run. Workers get a copy through a job;
// it is never written after the phases start, except the scratch
// buffers' contents. The entries the Run holds travel separately, so
// that the inline path keeps them in a stack array (no allocation).
//
// Handing the caller's slices to worker goroutines also makes them escape
// to the heap in every caller, which matters: kernels get raw addresses,
// and the Go heap never moves while a goroutine stack can. The operand
// slices are copied into an array, so that the caller's list of them
// (not their data) may stay on its stack.
type execution struct {
	k       *Kernel
	src     []byte
	dst     []byte
	bins    [plan.MaxBinary][]byte
	scratch [maxScratch][]byte
	more    [][]byte // scratch buffers past maxScratch
	serial  bool     // every phase inline (RunInline)
}

// scratchHandles are the pool handles of an execution's scratch buffers.
// They sit in an array, as the buffers do, so that a Run with a scratch
// schedule (post-op pass, log-sum-exp, two stages) allocates nothing
// either; nested two-stage schedules may need more, which go to the heap.
type scratchHandles struct {
	first [maxScratch]*[]byte
	more  []*[]byte
}

// takeScratch gives x scratch buffers of the given sizes from the pools,
// recording their handles in h.
func (x *execution) takeScratch(sizes []int64, h *scratchHandles) {
	for i, n := range sizes {
		b, p := getScratch(n)
		if i < maxScratch {
			x.scratch[i], h.first[i] = b, p
		} else {
			x.more, h.more = append(x.more, b), append(h.more, p)
		}
	}
}

// release returns the buffers of h to the pools.
func (h *scratchHandles) release() {
	for _, p := range h.first {
		if p != nil { // no call for the slots a Run leaves empty
			putScratch(p)
		}
	}
	for _, p := range h.more {
		putScratch(p)
	}
}

// maxScratch is how many scratch buffers a Run keeps in arrays: a
// post-op pass takes one, log-sum-exp three (a chunk's program as many),
// each two-stage split one.
const maxScratch = 6

// buf returns buffer id b of the execution.
func (x *execution) buf(b int) []byte {
	switch b {
	case bufSrc:
		return x.src
	case bufDst:
		return x.dst
	}
	if b >= bufBins {
		return x.bins[b-bufBins]
	}
	if i := b - bufScratch; i < maxScratch {
		return x.scratch[i]
	}
	return x.more[b-bufScratch-maxScratch]
}

// runPhase runs every call of ph, inline or on the worker pool, and
// returns how many goroutines took part.
func (x *execution) runPhase(ph *phase, ents []*entry) (int, error) {
	if ph.tasks <= 1 || x.serial {
		return 1, x.inline(ph, ents)
	}
	threads := shareThreads(ph.srcBytes, Threads())
	if threads <= 1 {
		return 1, x.inline(ph, ents)
	}
	j := newJob()
	j.x, j.ph = *x, ph
	if len(ents) <= len(j.heldEnts) {
		j.ents = j.heldEnts[:copy(j.heldEnts[:], ents)]
	} else {
		j.ents = append([]*entry(nil), ents...)
	}
	helpers := int(min(int64(threads-1), ph.tasks-1))
	j.splitLanes(helpers+1, ph.tasks)
	handed := handOut(j, helpers)
	j.work(0)
	n := j.finish(handed)
	err := j.error()
	j.recycle()
	return n + 1, err
}

// inline runs every call of ph on the calling goroutine.
func (x *execution) inline(ph *phase, ents []*entry) error {
	return Serial(ph.tasks, func(_ int, t int64) error { return x.task(ph, ents, t) })
}

// catchFault turns a panic during the calls, above all a memory fault in
// kernel code (which SetPanicOnFault makes a panic instead of a fatal
// error), into a RuntimeError: a kernel bug fails one Run, not the
// process. Buffer spans are checked before any call, so a correct kernel
// never faults.
func catchFault(err *error) {
	catchFaultInto(err, recover())
}

// catchFaultInto sets *err for a recovered panic value r (nil: no panic).
func catchFaultInto(err *error, r any) {
	if r != nil {
		*err = status.Errorf(status.RuntimeError, "jit: kernel failed: %v", r)
	}
}

// task runs call t of ph with the kernels ents.
func (x *execution) task(ph *phase, ents []*entry, t int64) error {
	si := 0
	for t >= ph.segs[si].tasks {
		t -= ph.segs[si].tasks
		si++
	}
	s := &ph.segs[si]
	if s.progs != nil {
		return x.program(s.progs[t], ents)
	}
	srcOff, dstOff, binOff, count := s.at(t)
	e := ents[s.unit]
	src, dst := x.buf(s.srcBuf), x.buf(s.dstBuf)
	if e.code != nil {
		a := plan.Args{Src: addr(src, srcOff), Dst: addr(dst, dstOff), Count: count}
		for i := range s.nbins {
			a.Bins[i] = addr(x.buf(s.bins[i]), binOff[i])
		}
		ran := false
		if e.long {
			ran = callLong(e.code, &a)
		} else {
			ran = e.code.Call(unsafe.Pointer(&a))
		}
		if !ran { // a reference-count bug: fail loudly rather than leave dst unwritten
			return status.Errorf(status.RuntimeError, "jit: the code of %v was released while a Run held it", e.pl)
		}
		if countCalls.Load() {
			countCall(e)
		}
		return nil
	}
	pl := e.pl
	if s.blocked && count != s.bsize {
		pl = s.lastPlan
	}
	var bb [plan.MaxBinary][]byte
	for i := range s.nbins {
		bb[i] = tail(x.buf(s.bins[i]), binOff[i])
	}
	return interp.Run(pl, tail(src, srcOff), tail(dst, dstOff), bb[:s.nbins])
}

// program runs p whole on the calling goroutine, its phases one after
// the other, on scratch buffers of its own.
func (x *execution) program(p *program, ents []*entry) error {
	y := *x
	y.more = nil
	var scratch scratchHandles
	y.takeScratch(p.scratch, &scratch)
	defer scratch.release()
	return y.runPhases(p.phases, func(ph *phase) error {
		for t := int64(0); t < ph.tasks; t++ {
			if err := y.task(ph, ents, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// callLong calls code that keeps running totals with a LongArgs block
// holding a, and reports whether it ran. It is a function of its own so
// that only these calls clear the block's 1 KiB of totals.
//
//go:noinline
func callLong(code *execmem.Code, a *plan.Args) bool {
	la := plan.LongArgs{Args: *a}
	return code.Call(unsafe.Pointer(&la))
}

// addr is the address of byte off of b. A call that reads nothing from a
// buffer (an empty reduction) may be given an offset past its end; the
// address is then never dereferenced, so plain arithmetic is fine.
func addr(b []byte, off int64) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(off)
}

// tail returns b from byte off on, empty when off is past the end (see
// addr: nothing is read there).
func tail(b []byte, off int64) []byte {
	if off >= int64(len(b)) {
		return b[len(b):]
	}
	return b[off:]
}

// call runs call t of the job on the goroutine that owns lane w: of
// its phase, or its do.
func (j *job) call(w int, t int64) error {
	if j.do != nil {
		return j.do(w, t)
	}
	return j.x.task(j.ph, j.ents, t)
}

// job is one phase shared with pool workers (or, with do, calls of
// another kind: do runs call t on the goroutine that owns lane w). Its
// calls are cut into one contiguous lane per goroutine it may take (the
// caller's, and one per helper), so that each thread reads neighbouring
// memory call after call instead of every other call, a stream the
// prefetchers serve better (docs/PERFORMANCE-log.md, "Figures behind the
// generators' choices"). A goroutine works its own lane first and then
// takes calls from the other lanes: work never waits for a helper that
// comes late or not at all. Which goroutine runs a call never changes
// its result.
//
// Jobs are used again (newJob, recycle): a new one's lines would be
// fetched from memory on the caller's core and then on the workers'.
// The fields are grouped by who writes them, each group on cache lines
// of its own: a line written on one core and read on another makes a
// trip between them, which costs as much as a small call.
type job struct {
	heldLanes [maxHeldLanes]lane

	// Written by the caller before it hands lanes out; read by all.
	x     execution
	ph    *phase
	ents  []*entry
	do    func(w int, t int64) error
	lanes []lane
	_     cpu.CacheLinePad

	err      atomic.Pointer[error] // written only when a call fails
	sleeping atomic.Bool           // the caller waits on woken (see finish)
	woken    chan struct{}         // made with the job, never replaced
	_        cpu.CacheLinePad

	// The caller's alone.
	given     []*mailbox // the mailboxes lanes 1.. were handed to
	took      []*lane    // the lanes whose workers took them
	heldGiven [maxHeldLanes - 1]*mailbox
	heldTook  [maxHeldLanes - 1]*lane
	heldEnts  [maxUnits]*entry
}

// maxHeldLanes is how many lanes a job holds in its own allocation:
// more threads take lanes of their own.
const maxHeldLanes = 4

var jobs = sync.Pool{New: func() any { return &job{woken: make(chan struct{}, 1)} }}

// newJob returns an empty job. Its caller recycles it after finish, and
// not in a deferred call: a caller whose own call ends its goroutine
// (runtime.Goexit) leaves the job to the collector, since workers may
// still be in it.
func newJob() *job { return jobs.Get().(*job) }

// error is the error of the first call of j that failed, or nil.
func (j *job) error() error {
	if p := j.err.Load(); p != nil {
		return *p
	}
	return nil
}

// recycle empties j, so that it keeps nothing of its Run reachable, and
// returns it for another Run. Every worker that took part has left j.
func (j *job) recycle() {
	if j.ph != nil { // a phase's job, not Parallel's
		j.x, j.heldEnts = execution{}, [maxUnits]*entry{}
	}
	j.ph, j.ents, j.do, j.lanes, j.given, j.took = nil, nil, nil, nil, nil, nil
	// The lanes keep their job, which is j itself. err is stored only
	// where a call failed: a store every Run would send its line to
	// the workers' cores again.
	if j.err.Load() != nil {
		j.err.Store(nil)
	}
	jobs.Put(j)
}

// lane is a contiguous run of a job's calls: next is the first call not
// yet taken, end the call after the last; taken is set when the worker
// it was handed to takes it from its mailbox, left when that worker is
// done with the job. It is written by the goroutine that owns it, and by
// others only where they take its calls, so no two lanes share a cache
// line: their fields fill 40 bytes of 128, whatever the alignment (a
// heap object of a job's size is not aligned to 64 bytes: it starts
// after an 8-byte header).
//
// next, taken and left are read and written atomically, but where
// splitLanes sets them (see there). next comes first, so that it is
// 64-bit aligned on 32-bit platforms too, as 64-bit atomics need there:
// a lane's size is a multiple of 8 bytes, and the lanes are held at the
// start of their job (heldLanes) or of a slice of their own.
type lane struct {
	next  int64
	job   *job
	own   int // the lane's index in job.lanes
	end   int64
	taken uint32
	left  uint32
	_     [88]byte
}

// splitLanes cuts the job's tasks calls into n contiguous lanes of
// (nearly) equal length. It sets the lanes with plain stores: no other
// goroutine is in the job until a lane is handed out, and the compare-
// and-swap that hands it publishes them. Atomic stores there waited for
// each lane's cache line in turn, from the core of the worker that last
// wrote or read it; plain ones fetch them all at once.
func (j *job) splitLanes(n int, tasks int64) {
	if n <= maxHeldLanes {
		j.lanes, j.given, j.took = j.heldLanes[:n], j.heldGiven[:n-1], j.heldTook[:0]
	} else {
		j.lanes, j.given, j.took = make([]lane, n), make([]*mailbox, n-1), make([]*lane, 0, n-1)
	}
	for i := range j.lanes {
		l := &j.lanes[i]
		l.job, l.own, l.end = j, i, tasks*int64(i+1)/int64(n)
		l.next, l.taken, l.left = tasks*int64(i)/int64(n), 0, 0
	}
}

// take returns the next call of lane l, or false when it has none left.
func (j *job) take(l int) (int64, bool) {
	ln := &j.lanes[l]
	if atomic.LoadInt64(&ln.next) >= ln.end {
		return 0, false
	}
	t := atomic.AddInt64(&ln.next, 1) - 1
	return t, t < ln.end
}

// work runs calls, starting with lane own and then helping with the
// others, until none are left (or one failed).
func (j *job) work(own int) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	returned := false
	defer func() {
		var err error
		catchFaultInto(&err, recover())
		if err == nil && !returned {
			err = errGoexit
		}
		if err != nil {
			// A variable of its own, set only on failure: were &err
			// taken, every work would move err to the heap.
			failed := err
			j.err.CompareAndSwap(nil, &failed)
		}
	}()
	for i := range j.lanes {
		l := (own + i) % len(j.lanes)
		for j.err.Load() == nil {
			t, ok := j.take(l)
			if !ok {
				break
			}
			if err := j.call(own, t); err != nil {
				failed := err // as above: not &err, which every call would allocate
				j.err.CompareAndSwap(nil, &failed)
				break
			}
		}
	}
	returned = true
}

// errGoexit is the error of a job one of whose calls ended its goroutine
// without a panic: runtime.Goexit, as a test's FailNow does.
var errGoexit = status.Errorf(status.RuntimeError, "jit: a call ended its goroutine (runtime.Goexit)")

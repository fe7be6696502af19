package jit

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/gdnn/gdnn/internal/execmem"
	"github.com/gdnn/gdnn/internal/interp"
	"github.com/gdnn/gdnn/internal/isa/amd64"
	"github.com/gdnn/gdnn/internal/isa/arm64"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// Index reductions (ArgMax, ArgMin: plan.ArgPlan) have kernels of their
// own: one pass over src keeping each lane's winner and its index
// (kernelshape.Arg). A kernel runs its plan once, except that the
// outermost loop (Outer[0], or Inner when there is no Outer loop) runs
// Args.Count iterations; Run cuts that loop into calls of about
// argCallBytes of src, handed to the worker pool like a reduction's
// phase. Each output is computed whole by one call, so results do not
// depend on the thread count.

// ArgKernel is a compiled index reduction.
type ArgKernel struct {
	pl   *plan.ArgPlan
	code *execmem.Code // nil: the interpreter runs it
	isa  ISA
	why  string // why the interpreter runs it
	// rows: the kernel is called with a plan.IndexArgs block, whose
	// scratch its row-by-row column uses (kernelshape.ArgRowByRow).
	rows bool
}

// indexArgs keeps the argument blocks of row-by-row kernels' calls.
var indexArgs = sync.Pool{New: func() any { return new(plan.IndexArgs) }}

// argCallBytes is about how much src one call reads.
const argCallBytes = 256 << 10

// CompileArg returns a new kernel of pl for the effective ISA: machine
// code where its emitter covers pl, the interpreter otherwise (Impl and
// Why say which and why). The kernel owns its code, which is unmapped
// when the garbage collector frees the kernel; the callers' caches
// (package reduce's, the compiled partitions') decide how long kernels
// live.
func CompileArg(pl *plan.ArgPlan) (*ArgKernel, error) {
	if pl == nil {
		return nil, status.Errorf(status.InvalidArguments, "jit: nil plan")
	}
	var t0 time.Time
	if verboseLevel() > 0 {
		t0 = time.Now()
	}
	k, err := buildArg(splitInner(pl), EffectiveISA())
	if err != nil {
		return nil, err
	}
	if k.code != nil {
		runtime.SetFinalizer(k, func(k *ArgKernel) { _ = k.code.Release() })
	}
	if verboseLevel() > 0 {
		// An index kernel owns its code: it never comes from the cache.
		verboseln(compileLine(k.Impl(), k.pl.String(), argSchedule, false, time.Since(t0), k.why))
	}
	return k, nil
}

// argSchedule is an index kernel's schedule on its verbose lines: one
// pass over src, its outermost loop cut into calls.
const argSchedule = "split:index"

// argInnerBlocks are the widths splitInner may cut a wide contiguous
// Inner into, widest first: a row-by-row column (kernelshape.ArgRowByRow)
// reads each row's run of a block as one stream, so the scratch's width
// in 32-bit lanes (its widest block, whose sweep still fits in L1; the
// kernel cuts it in two scratch blocks of 64-bit lanes) is best, as long
// as there are blocks for two threads.
var argInnerBlocks = []int64{plan.IndexScratchOutputs, 512}

// splitInner returns pl with a wide contiguous Inner and no Outer loop
// cut into an Outer loop of blocks of the widest of argInnerBlocks that
// divides it at least twice, which Run then hands to threads as it does
// any outer loop (a column kernel's blocks are independent). Other
// plans are returned as they are.
func splitInner(pl *plan.ArgPlan) *plan.ArgPlan {
	in := pl.Inner
	if !pl.HasInner || len(pl.Outer) > 0 || in.SrcStride != 1 || in.DstStride != 1 {
		return pl
	}
	for _, b := range argInnerBlocks {
		if in.Size >= 2*b && in.Size%b == 0 {
			out := *pl
			out.Outer = []plan.Loop{{Size: in.Size / b, SrcStride: b, DstStride: b}}
			out.Inner.Size = b
			return &out
		}
	}
	return pl
}

// emitArg is the emitter of isa for index reductions; tests substitute it.
var emitArg = func(pl *plan.ArgPlan, isa ISA) ([]byte, error) {
	switch {
	case (isa == AVX512 || isa == AVX2) && runtime.GOARCH == "amd64":
		return amd64.EmitArg(pl, isa == AVX512)
	case isa == NEON && runtime.GOARCH == "arm64":
		return arm64.EmitArg(pl)
	}
	return nil, status.Errorf(status.Unimplemented, "jit: no %s emitter on GOARCH %s", isa, runtime.GOARCH)
}

// buildArg compiles pl for isa; anything that stops the JIT and is not
// the plan's fault leaves the interpreter, saying why.
func buildArg(pl *plan.ArgPlan, isa ISA) (*ArgKernel, error) {
	k := &ArgKernel{pl: pl, isa: None}
	if isa == None {
		k.why = noJITReason()
		return k, nil
	}
	if pl.RepeatsOne() {
		// Not a pass of machine code over R reads of one element: a
		// call that runs that long holds up Go's stop-the-world, and
		// with it every goroutine.
		k.why = "the axis repeats one element (src stride 0): the interpreter gives its index without a scan"
		return k, nil
	}
	text, err := emitArg(pl, isa)
	if err != nil {
		if errors.Is(err, status.Unimplemented) {
			k.why = fmt.Sprintf("%s emitter: %v", isa, err)
			return k, nil
		}
		return nil, err
	}
	c, err := execmem.New(text)
	if err != nil {
		k.why = fmt.Sprintf("executable memory: %v", err)
		return k, nil
	}
	k.code, k.isa, k.rows = c, isa, kernelshape.ArgRowByRow(pl)
	return k, nil
}

// Impl is "jit:<isa>" for machine code, "interp" for the interpreter.
func (k *ArgKernel) Impl() string {
	if k.code == nil {
		return "interp"
	}
	return "jit:" + k.isa.String()
}

// Why says why the interpreter runs the kernel ("" for machine code).
func (k *ArgKernel) Why() string { return k.why }

// Plan returns the kernel's plan.
func (k *ArgKernel) Plan() *plan.ArgPlan { return k.pl }

// Run runs the kernel on src and dst, both starting at the plan's first
// element, after checking that they hold the spans the plan addresses.
func (k *ArgKernel) Run(src, dst []byte) error {
	pl := k.pl
	if pl.Outputs == 0 {
		return interp.RunArg(pl, src, dst)
	}
	srcNeed, dstNeed := pl.SrcSpan()*int64(pl.SrcDT.Size()), pl.DstSpan()*int64(pl.IdxDT.Size())
	if int64(len(src)) < srcNeed || int64(len(dst)) < dstNeed {
		return status.Errorf(status.InvalidArguments, "jit: src has %d bytes and dst %d; the plan needs %d and %d", len(src), len(dst), srcNeed, dstNeed)
	}
	// The interpreter too: it would read what it has written.
	if Overlap(src[:srcNeed], dst[:dstNeed]) {
		return status.Errorf(status.InvalidArguments, "jit: dst overlaps src")
	}
	var t0 time.Time
	if verboseLevel() > 0 {
		t0 = time.Now()
	}
	threads, err := k.run(src, dst, srcNeed)
	if err == nil && verboseLevel() > 0 {
		verboseln(execLine(k.Impl(), pl.String(), argSchedule, threads, time.Since(t0)))
	}
	return err
}

// run is Run's call of the code (or the interpreter) once the buffers
// are checked; it returns how many threads ran the calls.
func (k *ArgKernel) run(src, dst []byte, srcNeed int64) (int, error) {
	pl := k.pl
	if k.code == nil {
		return 1, interp.RunArg(pl, src, dst)
	}
	// Calls cut the outermost Outer loop; a plan without one is one call.
	top, chunk, calls := plan.Loop{Size: 1}, int64(1), int64(1)
	if len(pl.Outer) > 0 {
		top = pl.Outer[0]
		perIter := max(srcNeed/top.Size, 1)
		chunk = max(1, argCallBytes/perIter)
		if threads := int64(Threads()); chunk*threads > top.Size && srcNeed >= inlineBytes {
			chunk = max(1, (top.Size+threads-1)/threads)
		}
		calls = (top.Size + chunk - 1) / chunk
	}
	c := argCalls{k: k, src: src, dst: dst, top: top, chunk: chunk}
	n := Threads()
	if n <= 1 || calls <= 1 {
		// Not through Parallel, which keeps its calls' closure in a job
		// on the heap: one allocation per call of the kernel.
		return 1, Serial(calls, c.call)
	}
	return int(min(int64(n), calls)), Parallel(n, calls, c.call)
}

// argCalls is one run of an ArgKernel cut into calls: call t runs the
// code over iterations [t·chunk, (t+1)·chunk) of the plan's outermost
// loop top.
type argCalls struct {
	k        *ArgKernel
	src, dst []byte
	top      plan.Loop
	chunk    int64
}

func (c argCalls) call(_ int, t int64) error {
	k, pl := c.k, c.k.pl
	first := t * c.chunk
	a := plan.Args{
		Src:   uintptr(unsafe.Pointer(unsafe.SliceData(c.src))) + uintptr(first*c.top.SrcStride*int64(pl.SrcDT.Size())),
		Dst:   uintptr(unsafe.Pointer(unsafe.SliceData(c.dst))) + uintptr(first*c.top.DstStride*int64(pl.IdxDT.Size())),
		Count: min(c.chunk, c.top.Size-first),
	}
	if k.rows {
		ia := indexArgs.Get().(*plan.IndexArgs)
		ia.Args = a
		k.code.Call(unsafe.Pointer(ia))
		indexArgs.Put(ia)
	} else {
		k.code.Call(unsafe.Pointer(&a))
	}
	runtime.KeepAlive(c.src)
	runtime.KeepAlive(c.dst)
	// k's finalizer unmaps its code: k must outlive every call of it.
	runtime.KeepAlive(k)
	if countCalls.Load() {
		countISACall(k.isa)
	}
	return nil
}

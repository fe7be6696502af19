package jit

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
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
// depend on the thread count. One iteration of that loop may read at
// most argPieceBytes: a longer axis is cut into pieces, each run by a
// kernel of its own, and their winners are folded in axis order
// (interp.CombineArg), whichever thread ran each piece; where the axis is
// short and the lanes beside it are many, the outermost loop is run in
// Go around a kernel of the loops inside it.

// ArgKernel is a compiled index reduction.
type ArgKernel struct {
	pl   *plan.ArgPlan
	code *execmem.Code // nil: the interpreter runs it
	isa  ISA
	why  string // why the interpreter runs it
	// rows: the kernel is called with a plan.IndexArgs block, whose
	// scratch its row-by-row column uses (kernelshape.ArgRowByRow).
	rows bool
	// piece and tail, when the axis is cut into pieces: the kernels of
	// pl with R cut to a piece's length, and to the last piece's where
	// that is shorter (else nil). peel, when the outermost loop runs in
	// Go: the kernel of the loops inside it. Such a kernel has no code of
	// its own.
	piece, tail, peel *ArgKernel
}

// each calls fn with k and every kernel it runs, at any depth.
func (k *ArgKernel) each(fn func(*ArgKernel)) {
	fn(k)
	for _, c := range []*ArgKernel{k.piece, k.tail, k.peel} {
		if c != nil {
			c.each(fn)
		}
	}
}

// indexArgs keeps the argument blocks of row-by-row kernels' calls.
var indexArgs = sync.Pool{New: func() any { return new(plan.IndexArgs) }}

// argCallBytes is about how much src one call reads.
const argCallBytes = 256 << 10

// argPieceBytes bounds the src one call reads along the axis for one
// iteration of the outermost loop, which a call never cuts: a JIT call
// cannot be preempted, and Go's stop-the-world, with every goroutine,
// waits for it. Rows of the index shapes the anchors measure (a column
// block of 1024 lanes of 1024 rows of 8-byte elements, the widest) stay
// whole. Tests lower it.
var argPieceBytes int64 = 8 << 20

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
	k.each(func(c *ArgKernel) {
		if c.code != nil {
			runtime.SetFinalizer(c, func(c *ArgKernel) { _ = c.code.Release() })
		}
	})
	if verboseLevel() > 0 {
		// An index kernel owns its code: it never comes from the cache.
		verboseln(compileLine(k.Impl(), k.pl.String(), k.schedule(), false, time.Since(t0), k.why))
	}
	return k, nil
}

// schedule is k's schedule on its verbose lines: "split:index", one
// pass over src with its outermost loop cut into calls, and how a long
// call was cut: "+pieces:<length>" of the axis, "+outer-in-go" for each
// outermost loop run around a kernel of the loops inside it.
func (k *ArgKernel) schedule() string {
	s := "split:index"
	for ; k.peel != nil; k = k.peel {
		s += "+outer-in-go"
	}
	if k.piece != nil {
		s += fmt.Sprintf("+pieces:%d", k.piece.pl.R)
	}
	return s
}

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
	if r := argPieceR(pl); r < pl.R {
		return buildPieces(pl, r, isa)
	}
	if len(pl.Outer) > 0 && pl.R > 0 && argBytesPerR(pl) > argPieceBytes/pl.R {
		return buildPeeled(pl, isa)
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
	if k.piece != nil {
		return k.piece.Impl()
	}
	if k.peel != nil {
		return k.peel.Impl()
	}
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
	threads, err := k.run(src, dst, srcNeed, Threads())
	if err == nil && verboseLevel() > 0 {
		verboseln(execLine(k.Impl(), pl.String(), k.schedule(), threads, time.Since(t0)))
	}
	return err
}

// run is Run's call of the code (or the interpreter) on up to threads
// goroutines, once the buffers are checked; it returns how many threads
// ran the calls.
func (k *ArgKernel) run(src, dst []byte, srcNeed int64, threads int) (int, error) {
	pl := k.pl
	if k.piece != nil {
		return k.runPieces(src, dst, threads)
	}
	if k.peel != nil {
		return k.runPeeled(src, dst, threads)
	}
	if k.code == nil {
		return 1, interp.RunArg(pl, src, dst)
	}
	// Calls cut the outermost Outer loop; a plan without one is one call.
	top, chunk, calls := plan.Loop{Size: 1}, int64(1), int64(1)
	if len(pl.Outer) > 0 {
		top = pl.Outer[0]
		perIter := max(srcNeed/top.Size, 1)
		chunk = max(1, argCallBytes/perIter)
		if n := int64(threads); chunk*n > top.Size && srcNeed >= inlineBytes {
			chunk = max(1, (top.Size+n-1)/n)
		}
		calls = (top.Size + chunk - 1) / chunk
	}
	c := argCalls{k: k, src: src, dst: dst, top: top, chunk: chunk}
	n := threads
	if n <= 1 || calls <= 1 {
		// Not through Parallel, which keeps its calls' closure in a job
		// on the heap: one allocation per call of the kernel.
		return 1, Serial(calls, c.call)
	}
	return int(min(int64(n), calls)), Parallel(n, calls, c.call)
}

// argPieceR is the longest piece of pl's axis that one iteration of its
// outermost loop may read within argPieceBytes: pl.R when the axis needs
// no cut. An iteration reads R elements for each lane of Inner and each
// iteration of the Outer loops inside the outermost. Pieces shorter than
// minArgPiece are not cut: such an iteration is long for its width, not
// its axis, and each piece's fold costs a scan of two elements per output.
func argPieceR(pl *plan.ArgPlan) int64 {
	if r := argPieceBytes / argBytesPerR(pl); r >= minArgPiece && r < pl.R {
		return r
	}
	return pl.R
}

// argBytesPerR is the src bytes one iteration of pl's outermost loop
// reads for each element of the axis, math.MaxInt64 where that does not
// fit: lanes of a broadcast src (stride 0) may be many more than its
// bytes.
func argBytesPerR(pl *plan.ArgPlan) int64 {
	per := int64(pl.SrcDT.Size())
	times := func(n int64) {
		if n > 0 && per > math.MaxInt64/n {
			per = math.MaxInt64
		} else {
			per *= n
		}
	}
	if pl.HasInner {
		times(pl.Inner.Size)
	}
	if len(pl.Outer) > 0 {
		for _, l := range pl.Outer[1:] {
			times(l.Size)
		}
	}
	return per
}

// minArgPiece is the shortest piece argPieceR cuts an axis into.
const minArgPiece = 64

// buildPieces returns a kernel of pl that cuts its axis into pieces of
// r elements (the last one shorter where r does not divide R), each
// run by machine code of its own; where the emitter has none for a
// piece, the interpreter runs pl whole.
func buildPieces(pl *plan.ArgPlan, r int64, isa ISA) (*ArgKernel, error) {
	k := &ArgKernel{pl: pl, isa: isa}
	// A piece writes its outputs dense, in the plan's loop order, to a
	// part of pl.Outputs indices: dst's span may be much more.
	cut := func(n int64) (*ArgKernel, error) {
		p := *pl
		p.R = n
		p.Outer = slices.Clone(pl.Outer)
		stride := int64(1)
		if p.HasInner {
			p.Inner.DstStride, stride = 1, p.Inner.Size
		}
		for i := len(p.Outer) - 1; i >= 0; i-- {
			p.Outer[i].DstStride = stride
			stride *= p.Outer[i].Size
		}
		return buildArg(&p, isa)
	}
	var err error
	if k.piece, err = cut(r); err != nil {
		return nil, err
	}
	if n := pl.R % r; n > 0 {
		if k.tail, err = cut(n); err != nil {
			k.release()
			return nil, err
		}
	}
	if k.piece.code == nil || k.tail != nil && k.tail.code == nil {
		why := k.piece.why
		if why == "" {
			why = k.tail.why
		}
		k.release()
		return &ArgKernel{pl: pl, isa: None, why: "a piece of the cut axis: " + why}, nil
	}
	return k, nil
}

// buildPeeled returns a kernel of pl that runs its outermost loop in Go
// around a kernel of the loops inside it (whose wide contiguous lanes
// splitInner then cuts into blocks, or which is peeled or cut in turn);
// where that kernel has no machine code, the interpreter runs pl whole.
func buildPeeled(pl *plan.ArgPlan, isa ISA) (*ArgKernel, error) {
	in := *pl
	in.Outer = pl.Outer[1:]
	in.Outputs = pl.Outputs / pl.Outer[0].Size
	peel, err := buildArg(splitInner(&in), isa)
	if err != nil {
		return nil, err
	}
	if peel.Impl() == "interp" {
		peel.release()
		return &ArgKernel{pl: pl, isa: None, why: "the loops inside the outermost: " + peel.why}, nil
	}
	return &ArgKernel{pl: pl, isa: isa, peel: peel}, nil
}

// release unmaps the code of k and of every kernel it runs, for kernels
// that never reach a caller (CompileArg's leave it to the collector).
func (k *ArgKernel) release() {
	k.each(func(c *ArgKernel) { _ = c.code.Release() })
}

// runPeeled runs a kernel whose outermost loop runs in Go (see
// buildPeeled): the inner kernel once for each of its iterations, each
// run cut into calls over threads as any kernel's is.
func (k *ArgKernel) runPeeled(src, dst []byte, threads int) (int, error) {
	top, in := k.pl.Outer[0], k.peel.pl
	size, isize := int64(k.pl.SrcDT.Size()), int64(k.pl.IdxDT.Size())
	need := in.SrcSpan() * size
	ran := 1
	for i := range top.Size {
		used, err := k.peel.run(src[i*top.SrcStride*size:], dst[i*top.DstStride*isize:], need, threads)
		if err != nil {
			return ran, err
		}
		ran = max(ran, used)
	}
	return ran, nil
}

// runPieces runs a kernel whose axis is cut into pieces (see
// buildPieces): each piece writes a part, folded into dst in axis order
// (the first one's indices simply stored there). Pieces of a plan
// without an Outer loop (one row, or one block of columns) run a batch
// at a time on threads goroutines, each into a part of its own; those
// of other plans run one after the other, each cut into calls over its
// Outer loop as any kernel's run is.
func (k *ArgKernel) runPieces(src, dst []byte, threads int) (int, error) {
	pl := k.pl
	r := k.piece.pl.R
	pieces := (pl.R + r - 1) / r
	step := r * pl.RStride * int64(pl.SrcDT.Size())
	partBytes := pl.Outputs * int64(pl.IdxDT.Size())
	// kernel returns piece i's kernel and its src.
	kernel := func(i int64) (*ArgKernel, []byte) {
		if i == pieces-1 && k.tail != nil {
			return k.tail, src[i*step:]
		}
		return k.piece, src[i*step:]
	}
	// A batch's parts stay within one piece's bound.
	batch := int64(1)
	if len(pl.Outer) == 0 {
		batch = max(1, min(int64(threads), argPieceBytes/max(partBytes, 1)))
	}
	parts := make([]byte, batch*partBytes)
	ran := 1
	for first := int64(0); first < pieces; first += batch {
		n := min(batch, pieces-first)
		// run runs piece first+t on up to inner threads.
		run := func(t int64, inner int) (int, error) {
			c, in := kernel(first + t)
			return c.run(in, parts[t*partBytes:(t+1)*partBytes], c.pl.SrcSpan()*int64(pl.SrcDT.Size()), inner)
		}
		var err error
		if n > 1 {
			ran = max(ran, int(n))
			err = Parallel(threads, n, func(_ int, t int64) error {
				_, err := run(t, 1)
				return err
			})
		} else {
			var used int
			used, err = run(0, threads)
			ran = max(ran, used)
		}
		if err != nil {
			return ran, err
		}
		for t := range n {
			if err := interp.CombineArg(pl, src, dst, parts[t*partBytes:(t+1)*partBytes], (first+t)*r); err != nil {
				return ran, err
			}
		}
	}
	return ran, nil
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

package jit

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
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
	// Go: the kernel of the loops inside it. blocks and rest, when the
	// lanes of a plan without an outer loop are cut into blocks: the
	// kernel of the whole blocks, and of the lanes after them (else nil),
	// which start restLane lanes in. Such a kernel has no code of its own.
	piece, tail, peel, blocks, rest *ArgKernel
	restLane                        int64
	// core, when pl has kept loops of src stride 0 (a broadcast src):
	// the kernel of pl without them, whose outputs are the same for every
	// index of those loops; fan holds them, and Run copies the core's
	// outputs along them.
	core *ArgKernel
	fan  []plan.Loop
	// dense, when the axis is cut into pieces: pl with its outputs
	// dense, in loop order, as the pieces write them.
	dense *plan.ArgPlan
}

// each calls fn with k and every kernel it runs, at any depth.
func (k *ArgKernel) each(fn func(*ArgKernel)) {
	fn(k)
	for _, c := range []*ArgKernel{k.core, k.piece, k.tail, k.peel, k.blocks, k.rest} {
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
// outermost loop run around a kernel of the loops inside it,
// "+lane-blocks:<lanes>" for lanes cut into blocks.
func (k *ArgKernel) schedule() string {
	s := "split:index"
	if k.core != nil {
		n := int64(1)
		for _, l := range k.fan {
			n *= l.Size
		}
		s += fmt.Sprintf("+broadcast:%d", n)
		k = k.core
	}
	for ; k.peel != nil; k = k.peel {
		s += "+outer-in-go"
	}
	if k.blocks != nil {
		s += fmt.Sprintf("+lane-blocks:%d", k.blocks.pl.Inner.Size)
		k = k.blocks
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
	if core, fan := dropBroadcast(pl); fan != nil && broadcastPays(pl, core, fan) {
		c, err := buildArg(splitInner(core), isa)
		if err != nil {
			return nil, err
		}
		return orInterp(&ArgKernel{pl: pl, isa: isa, core: c, fan: fan}, "the kernel without the broadcast loops"), nil
	}
	if r := argPieceR(pl); r < pl.R {
		return buildPieces(pl, r, isa)
	}
	if pl.R > 0 && argBytesPerR(pl) > argPieceBytes/pl.R {
		switch {
		case len(pl.Outer) > 0:
			return buildPeeled(pl, isa)
		case pl.HasInner && pl.Inner.Size > minArgLanes:
			return buildLaneBlocks(pl, isa)
		}
	}
	isa = argNarrowISA(pl, isa)
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

// argNarrowISA is isa, but AVX2 in place of AVX-512 where pl's rows
// (or its contiguous lanes) are too short for AVX-512's vectors and not
// for AVX2's, half as wide: the kernel would otherwise take them one
// element at a time (kernelshape.ArgElement), where AVX2 takes vectors.
func argNarrowISA(pl *plan.ArgPlan, isa ISA) ISA {
	if isa != AVX512 {
		return isa
	}
	lane := int(kernelshape.ArgLaneBytes(pl.SrcDT))
	if kernelshape.ArgShapeOf(pl, 64/lane) == kernelshape.ArgElement && kernelshape.ArgShapeOf(pl, 32/lane) != kernelshape.ArgElement {
		return AVX2
	}
	return isa
}

// cut is the first kernel k runs in its stead (its pieces', its outer
// loop's or its blocks'), nil for a kernel that runs its own code or
// the interpreter.
func (k *ArgKernel) cut() *ArgKernel {
	for _, c := range []*ArgKernel{k.core, k.piece, k.peel, k.blocks} {
		if c != nil {
			return c
		}
	}
	return nil
}

// orInterp returns k, or, where one of the kernels k runs has no machine
// code, the interpreter's kernel of k's plan, saying why (what names the
// part of the cut), with k's code released.
func orInterp(k *ArgKernel, what string) *ArgKernel {
	var leaf *ArgKernel
	k.each(func(c *ArgKernel) {
		if leaf == nil && c != k && c.cut() == nil && c.code == nil {
			leaf = c
		}
	})
	if leaf == nil {
		return k
	}
	why := leaf.why
	k.release()
	return &ArgKernel{pl: k.pl, isa: None, why: what + ": " + why}
}

// Impl is "jit:<isa>" for machine code, "interp" for the interpreter. A
// kernel cut into parts names each different one in the order it runs
// them, joined by "+" as a normalization's passes are: AVX-512's pieces
// and a short last piece narrowed to AVX2 give "jit:avx512+jit:avx2".
func (k *ArgKernel) Impl() string {
	var names []string
	k.each(func(c *ArgKernel) {
		if c.cut() != nil {
			return
		}
		n := "interp"
		if c.code != nil {
			n = "jit:" + c.isa.String()
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	})
	return strings.Join(names, "+")
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
	threads, err := k.run(src, dst, Threads())
	if err == nil && verboseLevel() > 0 {
		verboseln(execLine(k.Impl(), pl.String(), k.schedule(), threads, time.Since(t0)))
	}
	return err
}

// run is Run's call of the code (or the interpreter) on up to threads
// goroutines, as many as its work makes worth it (shareThreads of
// argWork), once the buffers are checked; it returns how many threads
// ran the calls.
func (k *ArgKernel) run(src, dst []byte, threads int) (int, error) {
	pl := k.pl
	if k.core != nil {
		return k.runBroadcast(src, dst, threads)
	}
	threads = shareThreads(argWork(pl), threads)
	if k.piece != nil {
		return k.runPieces(src, dst, threads)
	}
	if k.peel != nil {
		return k.runPeeled(src, dst, threads)
	}
	if k.blocks != nil {
		return k.runLaneBlocks(src, dst, threads)
	}
	if k.code == nil {
		return 1, interp.RunArg(pl, src, dst)
	}
	top, chunk, calls := argSplit(pl, threads)
	c := argCalls{k: k, src: src, dst: dst, top: top, chunk: chunk}
	n := threads
	if n <= 1 || calls <= 1 {
		return 1, Serial(calls, c.call)
	}
	// Parallel keeps its do in a job on the heap: c.call would be a
	// closure allocated every Run, a run's calls bound once are not.
	r := argRuns.Get().(*argRun)
	r.calls = c
	err := Parallel(n, calls, r.do)
	r.calls = argCalls{} // nothing of the Run kept reachable
	argRuns.Put(r)
	return int(min(int64(n), calls)), err
}

// argRuns keeps argRun values for ArgKernel.run.
var argRuns = sync.Pool{New: func() any {
	r := new(argRun)
	r.do = r.call
	return r
}}

// argRun is a run's argCalls with its call bound once, as do.
type argRun struct {
	calls argCalls
	do    func(w int, t int64) error
}

func (r *argRun) call(w int, t int64) error { return r.calls.call(w, t) }

// argSplit cuts the outermost Outer loop of pl into calls of chunk
// iterations each, calls in all, each reading about argCallBytes (what
// an iteration reads, not the span it addresses: lanes or loops of
// stride 0 read the same bytes again), and at least one call for each
// of threads where the loop allows; a plan without an Outer loop is one
// call.
func argSplit(pl *plan.ArgPlan, threads int) (top plan.Loop, chunk, calls int64) {
	if len(pl.Outer) == 0 {
		return plan.Loop{Size: 1}, 1, 1
	}
	top = pl.Outer[0]
	perIter := max(plan.MulSat(argBytesPerR(pl), pl.R), 1)
	chunk = max(1, argCallBytes/perIter)
	if n := int64(threads); n > 1 && chunk*n > top.Size {
		chunk = max(1, (top.Size+n-1)/n)
	}
	return top, chunk, (top.Size + chunk - 1) / chunk
}

// argWork is what an index run of pl weighs for shareThreads: the
// bytes it reads (a broadcast src's again for each lane or iteration
// that reads them), and where each output is one row of the axis (no
// lanes), argRowBytes more an output, for the row's end, where its
// vector's winners are reduced to one.
func argWork(pl *plan.ArgPlan) int64 {
	reads := plan.MulSat(argBytesPerR(pl), pl.R)
	if len(pl.Outer) > 0 {
		reads = plan.MulSat(reads, pl.Outer[0].Size)
	}
	if pl.HasInner {
		return reads
	}
	return addSat(reads, plan.MulSat(pl.Outputs, argRowBytes))
}

// argRowBytes is about the src a core reads from its L2 in the time a
// row's end takes (docs/PERFORMANCE-log.md, "Zen 5: small runs on one
// thread").
const argRowBytes = 6 << 10

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
	// A piece writes its outputs dense, in the plan's loop order, to a
	// part of pl.Outputs indices: dst's span may be much more.
	dense := *pl
	dense.Outer = slices.Clone(pl.Outer)
	stride := int64(1)
	if dense.HasInner {
		dense.Inner.DstStride, stride = 1, dense.Inner.Size
	}
	for i := len(dense.Outer) - 1; i >= 0; i-- {
		dense.Outer[i].DstStride = stride
		stride *= dense.Outer[i].Size
	}
	k := &ArgKernel{pl: pl, isa: isa, dense: &dense}
	cut := func(n int64) (*ArgKernel, error) {
		p := dense
		p.R = n
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
	return orInterp(k, "a piece of the cut axis"), nil
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
	return orInterp(&ArgKernel{pl: pl, isa: isa, peel: peel}, "the loops inside the outermost"), nil
}

// minArgLanes is the fewest lanes buildLaneBlocks cuts a block to.
const minArgLanes = 64

// buildLaneBlocks returns a kernel of pl, a plan without an outer loop,
// that cuts its lanes into blocks whose iteration reads about a call's
// worth (argCallBytes, so that the blocks' calls share out over threads;
// at most argPieceBytes) in at least minArgLanes lanes, a multiple of
// them, whose axis is cut into pieces in turn where it is that long.
// The blocks run as an outer loop, then a kernel of the lanes after the
// last whole block; where either has no machine code, the interpreter
// runs pl whole.
func buildLaneBlocks(pl *plan.ArgPlan, isa ISA) (*ArgKernel, error) {
	in := pl.Inner
	b := max(minArgLanes, min(argCallBytes, argPieceBytes)/(pl.R*int64(pl.SrcDT.Size()))/minArgLanes*minArgLanes)
	n, left := in.Size/b, in.Size%b
	blocks := *pl
	blocks.Inner.Size, blocks.Outputs = b, n*b
	if n > 1 {
		blocks.Outer = []plan.Loop{{Size: n, SrcStride: b * in.SrcStride, DstStride: b * in.DstStride}}
	}
	k := &ArgKernel{pl: pl, isa: isa, restLane: n * b}
	var err error
	if k.blocks, err = buildArg(&blocks, isa); err != nil {
		return nil, err
	}
	if left > 0 {
		rest := *pl
		rest.Inner.Size, rest.Outputs = left, left
		if left == 1 {
			rest.HasInner, rest.Inner = false, plan.Loop{}
		}
		if k.rest, err = buildArg(&rest, isa); err != nil {
			k.release()
			return nil, err
		}
	}
	return orInterp(k, "a block of the cut lanes"), nil
}

// runLaneBlocks runs a kernel whose lanes are cut into blocks (see
// buildLaneBlocks): the blocks' kernel, then the rest's, each cut into
// calls over threads as any kernel's run is.
func (k *ArgKernel) runLaneBlocks(src, dst []byte, threads int) (int, error) {
	size, isize := int64(k.pl.SrcDT.Size()), int64(k.pl.IdxDT.Size())
	ran, err := k.blocks.run(src, dst, threads)
	if err != nil || k.rest == nil {
		return ran, err
	}
	in := k.pl.Inner
	used, err := k.rest.run(src[k.restLane*in.SrcStride*size:], dst[k.restLane*in.DstStride*isize:], threads)
	return max(ran, used), err
}

// release unmaps the code of k and of every kernel it runs, for kernels
// that never reach a caller (CompileArg's leave it to the collector).
func (k *ArgKernel) release() {
	k.each(func(c *ArgKernel) { _ = c.code.Release() })
}

// runPeeled runs a kernel whose outermost loop runs in Go (see
// buildPeeled): the inner kernel once for each of its iterations. With
// at least as many iterations as threads, the iterations are shared out,
// each run on one goroutine; with fewer, each runs over all threads.
// Either way a run hands work to the pool a bounded number of times,
// whatever the loop's size.
func (k *ArgKernel) runPeeled(src, dst []byte, threads int) (int, error) {
	if threads > 1 && k.pl.Outer[0].Size >= int64(threads) {
		return threads, Parallel(threads, k.pl.Outer[0].Size, func(_ int, i int64) error {
			_, err := k.runIteration(src, dst, i, 1)
			return err
		})
	}
	ran := 1
	for i := range k.pl.Outer[0].Size {
		used, err := k.runIteration(src, dst, i, threads)
		if err != nil {
			return ran, err
		}
		ran = max(ran, used)
	}
	return ran, nil
}

// runIteration runs iteration i of the outermost loop of a peeled
// kernel on up to threads goroutines.
func (k *ArgKernel) runIteration(src, dst []byte, i int64, threads int) (int, error) {
	top, in := k.pl.Outer[0], k.peel
	size, isize := int64(k.pl.SrcDT.Size()), int64(k.pl.IdxDT.Size())
	return in.run(src[i*top.SrcStride*size:], dst[i*top.DstStride*isize:], threads)
}

// runPieces runs a kernel whose axis is cut into pieces (see
// buildPieces): each piece writes a part, folded into dst in axis order
// (the first one's indices simply stored there). A plan without an Outer
// loop (one row, or one block of columns), or with at least as many
// pieces as threads, shares its pieces out in ranges (runPieceRanges);
// the pieces of other plans run one after the other, each cut into calls
// over its Outer loop. Parts come from the scratch pools, so that a run
// on one thread allocates nothing.
func (k *ArgKernel) runPieces(src, dst []byte, threads int) (int, error) {
	pl := k.pl
	pieces := (pl.R + k.piece.pl.R - 1) / k.piece.pl.R
	if w := min(int64(threads), pieces); w > 1 && (len(pl.Outer) == 0 || pieces >= int64(threads)) {
		return int(w), k.runPieceRanges(src, dst, threads, w)
	}
	part, h := getScratch(pl.Outputs * int64(pl.IdxDT.Size()))
	defer putScratch(h)
	ran := 1
	for i := range pieces {
		used, err := k.runPiece(src, part, i, threads)
		if err != nil {
			return ran, err
		}
		ran = max(ran, used)
		if err := interp.CombineArg(pl, src, dst, part, i*k.piece.pl.R); err != nil {
			return ran, err
		}
	}
	return ran, nil
}

// runPiece runs piece i into part on up to threads goroutines.
func (k *ArgKernel) runPiece(src, part []byte, i int64, threads int) (int, error) {
	pl, r, size := k.pl, k.piece.pl.R, int64(k.pl.SrcDT.Size())
	c := k.piece
	if k.tail != nil && (i+1)*r > pl.R {
		c = k.tail
	}
	return c.run(src[i*r*pl.RStride*size:], part, threads)
}

// runPieceRanges runs the pieces of k on w goroutines, each over a
// contiguous range of them: it folds its pieces in order into a part of
// its own, and the ranges' parts are then folded into dst in order. The
// fold keeps the one winner of the axis (ties by index), so the ranges,
// and with them the thread count, do not change the result.
func (k *ArgKernel) runPieceRanges(src, dst []byte, threads int, w int64) error {
	pl, r := k.pl, k.piece.pl.R
	pieces := (pl.R + r - 1) / r
	partBytes := pl.Outputs * int64(pl.IdxDT.Size())
	buf, h := getScratch(2 * w * partBytes)
	defer putScratch(h)
	size := int64(pl.SrcDT.Size())
	err := Parallel(threads, w, func(_ int, t int64) error {
		first, end := pieces*t/w, pieces*(t+1)/w
		acc, part := buf[2*t*partBytes:(2*t+1)*partBytes], buf[(2*t+1)*partBytes:(2*t+2)*partBytes]
		// The range as a plan of its own, over its part of the axis.
		span := *k.dense
		span.R = min(end*r, pl.R) - first*r
		in := src[first*r*pl.RStride*size:]
		for i := first; i < end; i++ {
			if _, err := k.runPiece(src, part, i, 1); err != nil {
				return err
			}
			if err := interp.CombineArg(&span, in, acc, part, (i-first)*r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for t := range w {
		acc := buf[2*t*partBytes : (2*t+1)*partBytes]
		if err := interp.CombineArg(pl, src, dst, acc, pieces*t/w*r); err != nil {
			return err
		}
	}
	return nil
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

// dropBroadcast returns pl without its kept loops of src stride 0 (the
// outputs along such a loop read the same elements, so they are the
// same), canonicalized anew so that the loops left choose the shape
// (a stride-0 loop, the smallest stride, was taken as the lanes), and
// those loops; nil loops when pl has none.
func dropBroadcast(pl *plan.ArgPlan) (*plan.ArgPlan, []plan.Loop) {
	if pl.Outputs == 0 {
		return pl, nil
	}
	var fan, kept []plan.Loop
	for _, l := range argLoops(pl) {
		if l.SrcStride == 0 {
			fan = append(fan, l)
		} else {
			kept = append(kept, l)
		}
	}
	if len(fan) == 0 {
		return pl, nil
	}
	p := &plan.ArgProblem{Min: pl.Min, Last: pl.Last, Abs: pl.Abs, SrcDT: pl.SrcDT, IdxDT: pl.IdxDT, Axis: len(kept)}
	for _, l := range kept {
		p.Dims = append(p.Dims, l.Size)
		p.SrcStrides = append(p.SrcStrides, l.SrcStride)
		p.DstStrides = append(p.DstStrides, l.DstStride)
	}
	p.Dims = append(p.Dims, pl.R)
	p.SrcStrides = append(p.SrcStrides, pl.RStride)
	p.DstStrides = append(p.DstStrides, 0)
	core, err := plan.CanonicalizeArg(p)
	if err != nil {
		return pl, nil // not expected: a part of a valid problem
	}
	return core, fan
}

// broadcastPays reports whether running core once and copying its
// indices along fan (runBroadcast) beats pl's own kernel: where each
// output scans at least argFanMinR elements, or where the copies are
// whole blocks of the core's outputs, at least argFanMinBlock bytes
// each. A copy an index at a time costs about what a scan of a few
// elements does (docs/PERFORMANCE-log.md, "Zen 5: ArgMax over a
// broadcast src").
func broadcastPays(pl, core *plan.ArgPlan, fan []plan.Loop) bool {
	if pl.R >= argFanMinR {
		return true
	}
	last := fan[len(fan)-1]
	return core.DstSpan() == core.Outputs && last.DstStride == core.Outputs &&
		core.Outputs*int64(pl.IdxDT.Size()) >= argFanMinBlock
}

// The least axis, and the least block of copied indices, for which
// broadcastPays.
const (
	argFanMinR     = 8
	argFanMinBlock = 64
)

// runBroadcast runs the core kernel of a plan with broadcast loops, then
// copies its outputs to every other index of those loops.
func (k *ArgKernel) runBroadcast(src, dst []byte, threads int) (int, error) {
	ran, err := k.core.run(src, dst, threads)
	if err != nil {
		return ran, err
	}
	core := k.core.pl
	isz := int64(k.pl.IdxDT.Size())
	// The core's outputs contiguous (no overlap: a span of Outputs) are
	// one block; the fan's innermost loop runs here, not in eachDst.
	n := core.Outputs * isz
	dense := core.DstSpan() == core.Outputs
	var coreLoops []plan.Loop
	if !dense {
		coreLoops = argLoops(core)
	}
	last := k.fan[len(k.fan)-1]
	run := dense && last.DstStride*isz == n
	eachDst(k.fan[:len(k.fan)-1], func(b int64) {
		if run {
			// The innermost loop's copies are one contiguous run:
			// filled by doubling, in long copies.
			o, end := b*isz, (b+last.Size*last.DstStride)*isz
			if o != 0 {
				copy(dst[o:o+n], dst[:n])
			}
			for done := o + n; done < end; {
				done += int64(copy(dst[done:end], dst[o:done]))
			}
			return
		}
		for j := range last.Size {
			o := (b + j*last.DstStride) * isz
			switch {
			case o == 0:
			case dense:
				copy(dst[o:o+n], dst[:n])
			default:
				eachDst(coreLoops, func(d int64) {
					copy(dst[o+d*isz:o+(d+1)*isz], dst[d*isz:(d+1)*isz])
				})
			}
		}
	})
	return ran, nil
}

// argLoops is pl's kept loops, Inner last.
func argLoops(pl *plan.ArgPlan) []plan.Loop {
	if !pl.HasInner {
		return pl.Outer
	}
	return append(slices.Clone(pl.Outer), pl.Inner)
}

// eachDst calls fn with the dst offset of every index of loops.
func eachDst(loops []plan.Loop, fn func(d int64)) {
	var idx [plan.MaxLoops + 1]int64
	for {
		var d int64
		for i, l := range loops {
			d += idx[i] * l.DstStride
		}
		fn(d)
		i := len(loops) - 1
		for ; i >= 0; i-- {
			if idx[i]++; idx[i] < loops[i].Size {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

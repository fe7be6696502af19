package jit

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The work of one Run is cut into calls by a decomposition that depends
// only on the plan, never on the thread count, so every output is
// computed by the same call with the same inputs however many threads
// share the calls: results are bit-identical for any thread count. Each
// call touches about callBudget bytes, which keeps it near 100 µs: a JIT
// call cannot be preempted, and stop-the-world GC waits for it to end.
//
// Three tools, tried in order:
//  1. blocks of the outermost Outer loop that fits the budget (the outer
//     loops outside it are walked by the runtime, one call per index;
//     a plan of about one budget is cut into a few calls all the same,
//     see splitBudget);
//  2. when one output row of the Inner loop is too long, tiles of Inner
//     (the tile index becomes the sub-plan's Outer loop, the remainder
//     tile is a plan of its own);
//  3. when even one output's reduction is too long, two stages: stage 1
//     writes f32 partial sums of fixed-size chunks (Div 1, no post-ops)
//     into scratch, stage 2 adds each output's partials in a fixed order,
//     finalizes them (a mean divides by the true N) and applies post-ops
//     and the conversion.
//
// Before any of these, a plan whose post-ops alone keep it from the
// emitter of the kernel's ISA is cut into results and a post-op pass (see
// postpass.go); the decomposition then depends on the ISA as well.

// callBudget is the bytes one call may read (or write): about 1 MiB. A
// variable so that tests can exercise every split on small shapes.
var callBudget int64 = 1 << 20

// Tiles narrower than minTile vectors would waste the kernel's vector
// width; below that the reduction is split instead. stageTile is the
// least Inner width of a stage-1 call when the reduction is that long.
//
// maxTileRows bounds the rows (reduction length) of a first-stage Inner
// tile over contiguous rows; a longer reduction is split into two stages
// instead. At the 1 MiB budget it keeps a call's part of each row at
// 1 KiB or more, and a stage-1 call of a long reduction is that wide too
// (see twoStage). A tile a few lines wide running down thousands of rows
// is a pattern the hardware prefetchers and DRAM pages serve poorly, so
// tall reductions are faster as two stages of 1 KiB-wide chunks, on
// AVX-512 and AVX2 alike (docs/PERFORMANCE-log.md, "Figures behind the
// generators' choices").
const (
	minTile     = 16
	stageTile   = 64
	maxTileRows = 1024
)

// splitBudget is the target size of one call of a plan that reads (or
// writes) total bytes: callBudget, except for a plan between half a
// budget and one budget. That would be a single call on a single thread;
// with a quarter budget (or total/parallelCalls, if more) as the target it
// is cut into at most parallelCalls calls that threads can share, by the
// same three tools: Outer blocks where its outputs allow, else Inner tiles
// or two stages (callBudget stays every call's bound). Each output is
// still summed by one call, or in chunks as larger plans are; an emitter
// may sum the rows of a smaller block another way (AVX2 groups short rows
// by the block's size), so the last bits of a sum can differ from the
// single call's, the same for every thread count. The cut pays where a
// second thread shares the calls, whichever tool makes it, and costs a
// little on one thread. Smaller plans stay one call: cut, they gain
// nothing, the pool's hand-off costing about what a second thread saves.
// Figures: docs/PERFORMANCE-log.md, "Figures behind the generators'
// choices".
func splitBudget(total int64) int64 {
	if total < callBudget/2 || total > callBudget {
		return callBudget
	}
	return max(callBudget/4, ceilDiv(total, parallelCalls))
}

// parallelCalls is the most calls a plan of about one budget is cut into
// (see splitBudget): enough for a few threads, few enough that each call
// stays long against its dispatch.
const parallelCalls = 4

// maxScratchBytes bounds one scratch buffer (partial sums, or the results
// of a post-op pass); a schedule that needs more is refused (Compile
// returns OutOfMemory) or not used. Dense
// tensors need far less: partial sums are at most about 1/512 of the src
// (bf16 chunks of 1024 rows, 1 KiB wide; see twoStage), 1/32 when summed
// row by row (bf16 chunks of 64 rows; see rowByRow). Only a described
// but not stored src (stride-0 broadcast dims) or billions of outputs get
// near it, and then a bounded refusal beats asking the Go runtime for
// memory it cannot give back (it would end the process).
const maxScratchBytes = 1 << 30

// maxStages bounds two-stage nesting. At the 1 MiB budget a second
// nesting level needs reductions of more than 2^34 elements per output;
// the bound only stops runaway schedules.
const maxStages = 16

// Buffers a segment reads or writes: the caller's src and dst, scratch
// buffer i (bufScratch + i: f32 partial results, or a log-sum-exp's
// intermediates), or the caller's binary operand j (bufBins + j).
const (
	bufSrc = iota
	bufDst
	bufScratch
	bufBins = 1 << 20
)

// rtLoop is a loop the runtime walks in Go around kernel calls. Strides
// are in bytes.
type rtLoop struct {
	size     int64
	src, dst int64
	bins     [plan.MaxBinary]int64
}

// segment is a set of calls of one sub-plan: one call per index of its
// runtime loops and per block of the sub-plan's Outer[0] (when blocked).
type segment struct {
	unit           int                 // index into Kernel.units
	nbins          int                 // binary operands the sub-plan reads
	bins           [plan.MaxBinary]int // the buffer of each
	srcBuf, dstBuf int
	srcOff, dstOff int64 // bytes from the buffers' starts
	binOff         [plan.MaxBinary]int64
	loops          []rtLoop // outermost first
	blocked        bool     // the sub-plan has Outer loops; calls take blocks of Outer[0]
	blk            rtLoop   // Outer[0] of the sub-plan, byte strides
	bsize, nblk    int64    // iterations per block, number of blocks
	last           int64    // iterations of the last block
	lastPlan       *plan.Plan
	tasks          int64 // calls
	srcBytes       int64 // bytes the calls read in all, for the inline decision
	// progs, when not nil, makes call t run progs[t] whole (a chunk of
	// a log-sum-exp, see lse.go); the fields above but tasks and
	// srcBytes are then unused.
	progs []*program
}

// phase is a set of segments whose calls may run in any order; phases run
// one after the other (stage 2 reads what stage 1 wrote).
type phase struct {
	segs     []segment
	tasks    int64
	srcBytes int64
	guard    *lseGuard // when not nil, the phase may be skipped (lse.go)
}

// calls returns how many kernel calls ph makes, its programs' included.
func (ph *phase) calls() int64 {
	n := int64(0)
	for _, s := range ph.segs {
		if s.progs == nil {
			n += s.tasks
			continue
		}
		for _, p := range s.progs {
			for i := range p.phases {
				n += p.phases[i].calls()
			}
		}
	}
	return n
}

// decomposition is the complete, thread-count independent call schedule
// of a plan.
type decomposition struct {
	phases  []phase
	plans   []*plan.Plan       // the distinct sub-plans, indexed by segment.unit
	hints   []kernelconf.Hints // each sub-plan's hints for its emitter
	keys    []string
	scratch []int64 // bytes of each scratch buffer
	split   string  // what was done, for verbose output: "single", "blocks", "tiles", "2stage", "rowbyrow"

	// postpass says the post-ops run in a pass of their own over results
	// in scratch; post[i] marks the sub-plans of that pass (they may run on
	// the interpreter without the kernel counting as interpreted).
	postpass bool
	post     []bool

	lse bool // the plan runs as a log-sum-exp program (lse.go)
}

// addSat adds non-negative a and b, saturating like plan.MulSat.
func addSat(a, b int64) int64 {
	const maxI = int64(^uint64(0) >> 1)
	if a > maxI-b {
		return maxI
	}
	return a + b
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// esz is the byte size of dt.
func esz(dt dtypes.DataType) int64 { return int64(dt.Size()) }

// counts recomputes N and Outputs of a derived plan from its loops
// (their products are at most its validated parent's, so they fit).
func counts(pl *plan.Plan) {
	_ = pl.SetCounts()
	if len(pl.Outer) == 0 {
		pl.Outer = nil
	}
	if len(pl.Reduced) == 0 {
		pl.Reduced = nil
	}
}

// rt converts a plan loop to a runtime loop with byte strides.
func rt(l *plan.Loop, srcSz, dstSz int64, binSz []int64) rtLoop {
	r := rtLoop{size: l.Size, src: l.SrcStride * srcSz, dst: l.DstStride * dstSz}
	for i := range binSz {
		if i < len(l.BinStrides) {
			r.bins[i] = l.BinStrides[i] * binSz[i]
		}
	}
	return r
}

// decomposer builds a decomposition.
type decomposer struct {
	d     decomposition
	index map[string]int
	isa   ISA                // the ISA the sub-plans are compiled for
	cov   kernelshape.Covers // what its emitter declares
	// binBufs are the buffers of the binary operands of the sub-plans
	// being added (nil: the caller's operands, in order).
	binBufs []int
	// inProgram is set while the phases of a program that one thread
	// runs whole are added (a chunk of a log-sum-exp): their calls are
	// not cut for threads to share (splitBudget).
	inProgram bool
	// unshiftedSrcBytes is set while a log-sum-exp chunk's unshifted pass
	// is added: the src bytes of the whole plan the chunk is part of,
	// whose src it reads from where that src is (rowByRow).
	unshiftedSrcBytes int64
	// mem is the FromMemory hint of the sub-plans being added: a
	// problem's src too large for the caches is read from DRAM by every
	// sub-plan that reads it, not by those that read what an earlier
	// phase wrote (see withMem).
	mem bool
}

// withMem adds sub-plans by f with the FromMemory hint mem, then
// restores the hint of the plans around them.
func (dc *decomposer) withMem(mem bool, f func() error) error {
	old := dc.mem
	dc.mem = mem
	err := f()
	dc.mem = old
	return err
}

// fromMemoryBytes is the smallest src, in bytes, that fromMemory calls
// too large for the caches: the L3 of the fleet's cores holds 32 MiB, and
// at two threads a reduction also keeps its partial results there.
var fromMemoryBytes int64 = 32 << 20

// fromMemory reports whether pl reads its src from DRAM (Hints.FromMemory):
// a src of at least fromMemoryBytes that is read element by element, each
// element once (a broadcast view that reads a small buffer many times
// stays in the caches).
func fromMemory(pl *plan.Plan) bool {
	reads := plan.MulSat(pl.N, plan.MulSat(pl.Outputs, esz(pl.SrcDT)))
	span, err := pl.SrcBytes()
	return err == nil && reads >= fromMemoryBytes && span >= reads
}

// newDecomposer returns an empty decomposer for kernels of isa.
func newDecomposer(isa ISA) *decomposer {
	return &decomposer{index: map[string]int{}, isa: isa, cov: coverage(isa)}
}

// decompose returns the call schedule of pl (a validated plan) for
// kernels of isa.
func decompose(pl *plan.Plan, isa ISA) (*decomposition, error) {
	dc := newDecomposer(isa)
	if pl.Outputs == 0 {
		dc.d.split = "empty"
		return &dc.d, nil
	}
	dc.mem = fromMemory(pl)
	if err := dc.add(pl, bufSrc, bufDst, 0); err != nil {
		return nil, err
	}
	return &dc.d, nil
}

// unit returns the index of sub-plan pl, under the FromMemory hint of
// the plans being added, adding it when new (segments of equal plans
// share one compiled kernel).
func (dc *decomposer) unit(pl *plan.Plan) int {
	return dc.unitHinted(pl, kernelconf.Hints{FromMemory: dc.mem})
}

// unitHinted is unit with hints h: plans and hints alike share a kernel,
// and the key (plan.Plan.Key, Hints.Key) tells the others apart.
func (dc *decomposer) unitHinted(pl *plan.Plan, h kernelconf.Hints) int {
	k := pl.Key() + h.Key()
	if i, ok := dc.index[k]; ok {
		return i
	}
	dc.index[k] = len(dc.d.plans)
	dc.d.plans = append(dc.d.plans, pl)
	dc.d.hints = append(dc.d.hints, h)
	dc.d.keys = append(dc.d.keys, k)
	dc.d.post = append(dc.d.post, false)
	return len(dc.d.plans) - 1
}

// binSizes returns the element size of each binary operand of pl.
func binSizes(pl *plan.Plan) []int64 {
	var s []int64
	for _, op := range pl.PostOps {
		if op.Kind.IsBinary() {
			s = append(s, esz(op.BinDT))
		}
	}
	return s
}

// setSplit records the strongest split used.
func (dc *decomposer) setSplit(s string) {
	order := map[string]int{"": 0, "single": 1, "blocks": 2, "tiles": 3, "2stage": 4, "rowbyrow": 5}
	if order[s] > order[dc.d.split] {
		dc.d.split = s
	}
}

// add appends the phases that compute pl from buffer srcBuf into dstBuf.
// depth counts two-stage nesting (stage 2 of a stage 2 happens only for
// enormous reductions, but it is handled rather than refused).
func (dc *decomposer) add(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	if wholeReductions(pl) {
		// An f64 log-sum-exp is one kernel's two passes over each
		// output's elements, shifted (the native kernel's, or the
		// interpreter's); the phases of lse.go are f32's. Its outputs
		// are split among calls, its reductions never (wholeReductions).
		return dc.addSplit(pl, srcBuf, dstBuf, depth)
	}
	if pl.ShiftedLogSumExp() {
		return dc.logSumExp(pl, srcBuf, dstBuf, depth)
	}
	if wantPostPass(pl, dc.isa) {
		return dc.postPass(pl, srcBuf, dstBuf, depth)
	}
	return dc.addSplit(pl, srcBuf, dstBuf, depth)
}

// wholeReductions reports whether one call must take each of pl's
// reductions whole (an f64 log-sum-exp: see add): its outputs are split
// among calls (blocks, tiles), never its reductions (no two stages).
func wholeReductions(pl *plan.Plan) bool { return pl.ShiftedLogSumExp() && plan.IsWide(pl.SrcDT) }

// addSplit is add without the post-op pass check: blocks, tiles or two
// stages.
func (dc *decomposer) addSplit(pl *plan.Plan, srcBuf, dstBuf, depth int) error {
	if depth > maxStages {
		return status.Errorf(status.Unimplemented, "jit: reduction of %d elements needs more than %d summation stages", pl.N, maxStages)
	}
	srcSz, dstSz, binSz := esz(pl.SrcDT), esz(pl.DstDT), binSizes(pl)
	// Bytes one output costs: its reduction's reads, or its write.
	perOut := max(plan.MulSat(pl.N, srcSz), dstSz)
	innerW := int64(1)
	if pl.HasInner {
		innerW = pl.Inner.Size
	}
	// A plan of about one budget is cut into at most parallelCalls calls
	// of about target bytes (see splitBudget); budget stays the bound.
	budget, target := callBudget, callBudget
	if !dc.inProgram {
		target = splitBudget(plan.MulSat(perOut, pl.Outputs))
	}
	shared := target < budget

	// 1. Blocks of the outermost Outer loop whose iteration fits.
	for p := range pl.Outer {
		it := plan.MulSat(perOut, innerW)
		for _, l := range pl.Outer[p+1:] {
			it = plan.MulSat(it, l.Size)
		}
		if it > budget {
			continue
		}
		size := pl.Outer[p].Size
		// As few blocks as the budget allows, then balanced: no block is
		// larger than the budget, and the last is not a sliver. A shared
		// plan (at most one budget in all) takes up to parallelCalls
		// blocks of about target bytes.
		nblk := ceilDiv(size, max(target/max(it, 1), 1))
		if shared {
			nblk = min(nblk, parallelCalls)
		}
		bsize := ceilDiv(size, max(nblk, 1))
		nblk = ceilDiv(size, bsize)
		sub := pl.Clone()
		sub.Outer = sub.Outer[p:]
		sub.Outer[0].Size = bsize
		counts(sub)
		seg := segment{srcBuf: srcBuf, dstBuf: dstBuf, blocked: true,
			blk: rt(&pl.Outer[p], srcSz, dstSz, binSz), bsize: bsize, nblk: nblk, last: size - (nblk-1)*bsize}
		for i := range pl.Outer[:p] {
			seg.loops = append(seg.loops, rt(&pl.Outer[i], srcSz, dstSz, binSz))
		}
		if seg.last != bsize {
			seg.lastPlan = sub.Clone()
			seg.lastPlan.Outer[0].Size = seg.last
			counts(seg.lastPlan)
		}
		seg.unit = dc.unit(sub)
		seg.srcBytes = plan.MulSat(it, size)
		for _, l := range pl.Outer[:p] {
			seg.srcBytes = plan.MulSat(seg.srcBytes, l.Size)
		}
		if nblk > 1 || p > 0 {
			dc.setSplit("blocks")
		} else {
			dc.setSplit("single")
		}
		dc.phase(seg)
		return nil
	}

	// No Outer iteration fits: the runtime walks every Outer loop.
	var outer []rtLoop
	outerCount := int64(1)
	for i := range pl.Outer {
		outer = append(outer, rt(&pl.Outer[i], srcSz, dstSz, binSz))
		outerCount = plan.MulSat(outerCount, pl.Outer[i].Size)
	}
	body := pl.Clone()
	body.Outer = nil
	counts(body)

	// An exact mean is one call per Outer iteration whatever its cost: its
	// partial sums would need 128 bits (see partials). So is an exact plan
	// with an Inner run that the emitter's native kernel does not take:
	// the interpreter reads whole rows of it per reduced index, which
	// tiles would cut into strided pieces. Interpreted calls are Go code
	// the scheduler can preempt. The native kernel's are split as a float
	// plan's are.
	exactWhole := plan.IsExact(pl.SrcDT, pl.Reduction) && (pl.IsMean() || pl.HasInner && !dc.cov.TakesNative(pl))
	// A plan whose reductions are taken whole, and whose Inner outputs
	// cannot be tiled within the target, is one call too.
	wholeReds := wholeReductions(pl)
	exactWhole = exactWhole || wholeReds && (!pl.HasInner || target/perOut < 1)
	if whole := plan.MulSat(perOut, innerW); whole <= target || whole <= budget && pl.N < 2 || exactWhole {
		// Only a plan without Outer loops gets here (the innermost Outer
		// loop's iteration is exactly this cost): one call does it all.
		// (A plan that sums one element, or none, has no stages to cut it
		// into.)
		dc.setSplit("single")
		dc.phase(segment{unit: dc.unit(body), srcBuf: srcBuf, dstBuf: dstBuf, loops: outer,
			srcBytes: plan.MulSat(plan.MulSat(perOut, innerW), outerCount)})
		return nil
	}
	if dc.rowByRow(pl) && !wholeReds {
		return dc.twoStage(pl, outer, outerCount, srcBuf, dstBuf, depth, target, true)
	}
	// 2. Tiles of Inner, a power of two wide (whole vectors), each about
	// one budget (the target, for a shared plan: at most parallelCalls
	// tiles). Tiles narrower than minTile waste the vector width, and
	// tiles of contiguous rows longer than maxTileRows are read poorly, so
	// the first stage prefers a two-stage split then; later stages sum
	// short runs of partials and take any tile that fits, as do an
	// empty reduction and a copy (they have no stages to cut into). Rows
	// the kernel sums whole anyway are not tiled either (see wholeRows).
	noStages := pl.N == 0 || len(pl.Reduced) == 0
	fit := target / perOut
	if pl.HasInner && (wholeReds && fit >= 1 ||
		!dc.wholeRows(pl) && ((depth > 0 || noStages) && fit >= 1 || fit >= minTile && !dc.longRows(pl))) {
		t := int64(1)
		for t*2 <= fit {
			t *= 2
		}
		for shared && ceilDiv(innerW, t) > parallelCalls && t*2 <= budget/perOut {
			t *= 2
		}
		return dc.tiles(pl, body, outer, outerCount, t, srcBuf, dstBuf)
	}
	// 3. Two stages.
	return dc.twoStage(pl, outer, outerCount, srcBuf, dstBuf, depth, target, false)
}

// wholeRows reports whether pl's Inner rows are contiguous and narrow
// enough for the column kernel of the ISA to hold a whole row in its
// accumulators (the emitter's WholeRowLanes: 256 lanes for AVX-512, 64
// for AVX2 and NEON).
// Such rows are kept whole in every call, and a long reduction is split
// into two stages instead of Inner tiles: tiles would have each call read
// a part of every row, a strided pattern the hardware prefetchers follow
// poorly (docs/PERFORMANCE-log.md, "Figures behind the generators'
// choices", has a global average pool over NHWC both ways).
func (dc *decomposer) wholeRows(pl *plan.Plan) bool {
	// A row must also leave room for 4 rows per call (see twoStage).
	if !pl.HasInner || pl.Inner.SrcStride != 1 || plan.MulSat(4*esz(pl.SrcDT), pl.Inner.Size) > callBudget {
		return false
	}
	return pl.Inner.Size <= dc.cov.WholeRowLanes
}

// Long reductions over wide contiguous rows in a large src are taken in
// two stages of full-width chunks, each chunk a row at a time into its
// row of partial results (f32, or f64 and exact data's own type), which
// stays in L1 (Hints.RowByRow; the amd64
// emitters take it). A chunk of back-to-back rows is then read as one
// stream, which the prefetchers serve well, where Inner tiles visit each
// row for one column block, a few lines, and move on to the next row.
// That pays for 16-bit src on AVX-512 and for every src on AVX2, whose
// column blocks read 512 bytes of each row per visit or less (f64 and
// exact data too, in the native kernel, whose partials are its lanes,
// in whole rows only). Not for f32 on AVX-512 on Intel cores, whose
// column blocks read 1 KiB of each row per visit and gain nothing from
// it. Nor with the src in L3, where tiles
// are faster, hence rowByRowMinBytes (an L3 holds 32 MiB on the fleet's
// cores). Figures: docs/PERFORMANCE-log.md, "Figures
// behind the generators' choices" ("Zen 4: f32 row by row" has the f32
// ones and why Zen cores take f32 row by row). A log-sum-exp's chunks
// (lse.go) are smaller, but read a src that large from memory: its
// unshifted pass is taken row by row where the emitter takes it (Zen
// cores; see amd64's rowByRowKind).
//
// A chunk has at most rowByRowChunk rows: each of its sums is one chain
// of adds (the form does not cut sums into runs, see
// kernelshape/runs.go), and with at least minRowByRowN rows stage 2 adds
// 4 or more chunks, so a mean's error stays well inside the reference's
// bound. A chunk's rows are at most rowByRowLanes wide, so that their
// partials (16 KiB) stay in L1: wider rows are cut into strips
// (rowByRowWidth), each still a long stream of each row, where tiles
// would read a few lines of it per visit. Rows must be wider than those
// the column kernel sums whole (see wholeRows).
var rowByRowMinBytes int64 = 32 << 20

const (
	minRowByRowN     = 256
	rowByRowChunk    = 64
	minRowByRowChunk = 4
	maxRowByRowLanes = 4096 // of f32 partials (rowByRowLanes)
)

// rowByRow reports whether pl is reduced row by row in two stages: where
// the emitter declares that it takes the form (on amd64 every kind with
// vector code but log-sum-exp on AVX2, the native kernel's f64 and exact
// kinds too, and of 16-bit src on AVX-512; on Zen cores f32 on AVX-512
// and log-sum-exp too), over whole rows or, for rows too wide, strips of
// them (rowByRowWidth), which the emitter takes for fewer types.
func (dc *decomposer) rowByRow(pl *plan.Plan) bool {
	srcSz := esz(pl.SrcDT)
	if !pl.HasInner || pl.Inner.SrcStride != 1 || len(pl.Reduced) != 1 || pl.N < minRowByRowN || dc.wholeRows(pl) {
		return false
	}
	partDT, _, _ := partials(pl)
	psz := esz(partDT)
	w := rowByRowWidth(pl.Inner.Size, srcSz, psz)
	if !dc.cov.TakesRowByRow(pl.SrcDT, pl.Reduction, w < pl.Inner.Size) {
		return false
	}
	chunk := min(rowByRowChunk, callBudget/plan.MulSat(srcSz, w))
	// A log-sum-exp chunk's unshifted pass reads a part of a src as large
	// as its whole plan's.
	large := max(plan.MulSat(pl.N, plan.MulSat(pl.Outputs, srcSz)), dc.unshiftedSrcBytes)
	// Rows must not overlap (a src that stores less than it describes is
	// not large), and the partial sums must fit the scratch bound (other
	// schedules need less).
	return chunk >= minRowByRowChunk && pl.Reduced[0].SrcStride >= pl.Inner.Size &&
		large >= rowByRowMinBytes &&
		plan.MulSat(plan.MulSat(pl.Outputs, ceilDiv(pl.N, chunk)), psz) <= maxScratchBytes
}

// rowByRowWidth is the width in lanes of the strips a row-by-row
// schedule cuts rows of w lanes of size-byte elements, summed into
// partials of psz bytes, into: the whole row where it has at most
// rowByRowLanes(psz), else the fewest strips of at most that many, of
// even widths in whole 64-byte lines (the last strip takes what is
// left), so that the threads share like calls.
func rowByRowWidth(w, size, psz int64) int64 {
	m := rowByRowLanes(psz)
	if w <= m {
		return w
	}
	// Rounded up to a line, a strip stays within m lanes: that is a whole
	// number of lines (TestRowByRowWidth).
	line := max(64/size, 1)
	return ceilDiv(ceilDiv(w, ceilDiv(w, m)), line) * line
}

// rowByRowLanes is the most lanes of a row-by-row chunk's row of
// partials of psz bytes each: maxRowByRowLanes of f32 partials, half as
// many of f64 or 64-bit integer ones, so that the row stays within
// 16 KiB (8- and 16-bit integers' partials too, in rows of at most
// maxRowByRowLanes).
func rowByRowLanes(psz int64) int64 {
	return maxRowByRowLanes * 4 / max(psz, 4)
}

// longRows reports whether pl's Inner rows are contiguous and its
// reduction longer than maxTileRows: Inner tiles of one budget would
// then read less than budget/maxTileRows bytes of each row.
func (dc *decomposer) longRows(pl *plan.Plan) bool {
	return pl.HasInner && pl.Inner.SrcStride == 1 && pl.N > maxTileRows
}

// tiles adds the Inner tiling of body (pl without its Outer loops, which
// the runtime walks as outer): a sub-plan whose Outer[0] is the tile index
// and whose Inner is t wide, and the remainder tile as its own plan.
func (dc *decomposer) tiles(pl, body *plan.Plan, outer []rtLoop, outerCount, t int64, srcBuf, dstBuf int) error {
	srcSz, dstSz, binSz := esz(pl.SrcDT), esz(pl.DstDT), binSizes(pl)
	perOut := max(plan.MulSat(pl.N, srcSz), dstSz)
	in := pl.Inner
	full, rem := in.Size/t, in.Size%t
	dc.setSplit("tiles")
	var segs []segment
	if full > 0 {
		sub := body.Clone()
		tile := plan.Loop{Size: 1, SrcStride: t * in.SrcStride, DstStride: t * in.DstStride}
		for _, s := range in.BinStrides {
			tile.BinStrides = append(tile.BinStrides, t*s)
		}
		sub.Outer = []plan.Loop{tile}
		sub.Inner.Size = t
		counts(sub)
		segs = append(segs, segment{unit: dc.unit(sub), srcBuf: srcBuf, dstBuf: dstBuf, loops: outer,
			blocked: true, blk: rt(&tile, srcSz, dstSz, binSz), bsize: 1, nblk: full, last: 1,
			srcBytes: plan.MulSat(plan.MulSat(perOut, t*full), outerCount)})
	}
	if rem > 0 {
		sub := body.Clone()
		sub.Inner.Size = rem
		counts(sub)
		seg := segment{unit: dc.unit(sub), srcBuf: srcBuf, dstBuf: dstBuf, loops: outer,
			srcOff: full * t * in.SrcStride * srcSz, dstOff: full * t * in.DstStride * dstSz,
			srcBytes: plan.MulSat(plan.MulSat(perOut, rem), outerCount)}
		for i := range binSz {
			seg.binOff[i] = full * t * in.BinStrides[i] * binSz[i]
		}
		segs = append(segs, seg)
	}
	dc.phase(segs...)
	return nil
}

// phase appends a phase of the given segments, dropping empty ones.
func (dc *decomposer) phase(segs ...segment) {
	var ph phase
	for _, s := range segs {
		s.tasks = max(s.nblk, 1)
		if !s.blocked {
			s.nblk = 1
		}
		for _, l := range s.loops {
			s.tasks = plan.MulSat(s.tasks, l.size)
		}
		if s.tasks == 0 {
			continue
		}
		ph.segs = append(ph.segs, s)
		ph.tasks += s.tasks
		ph.srcBytes = addSat(ph.srcBytes, s.srcBytes)
	}
	if len(ph.segs) > 0 {
		for i := range ph.segs {
			s := &ph.segs[i]
			s.nbins = dc.d.plans[s.unit].BinaryCount()
			for j := range s.nbins {
				s.bins[j] = bufBins + j
				if dc.binBufs != nil {
					s.bins[j] = dc.binBufs[j]
				}
			}
		}
		dc.d.phases = append(dc.d.phases, ph)
	}
}

// at returns the byte offsets and Count of call t of s.
func (s *segment) at(t int64) (src, dst int64, bins [plan.MaxBinary]int64, count int64) {
	src, dst, bins, count = s.srcOff, s.dstOff, s.binOff, 1
	if s.blocked {
		b := t % s.nblk
		t /= s.nblk
		start := b * s.bsize
		src += start * s.blk.src
		dst += start * s.blk.dst
		for i := range bins {
			bins[i] += start * s.blk.bins[i]
		}
		count = s.bsize
		if b == s.nblk-1 {
			count = s.last
		}
	}
	for i := len(s.loops) - 1; i >= 0; i-- {
		l := &s.loops[i]
		j := t % l.size
		t /= l.size
		src += j * l.src
		dst += j * l.dst
		for b := range bins {
			bins[b] += j * l.bins[b]
		}
	}
	return src, dst, bins, count
}

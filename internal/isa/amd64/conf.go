package amd64

import (
	"fmt"
	"strings"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/kernelconf"
	"github.com/gdnn/gdnn/internal/kernelshape"
	"github.com/gdnn/gdnn/internal/plan"
)

// Decide, then lower: Choose is every choice the generator makes about a
// plan, made before it emits anything, from the plan and the target
// alone; the shapes (row.go, col.go, rowbyrow.go, ...) read the Conf and
// lower it. This file decides and never emits, and the figures it weighs
// are the family tables of tuning.go. What depends on where the emitter
// is in the kernel (a column block's width, the iterations of a sweep)
// is a method of Conf here, a pure function of the Conf and that
// geometry. What stays with the emitter is whether a choice fits the
// registers left at that point (wordPairs, rowWords, holdAbsMask,
// PlaceTotals): register allocation, not a choice of code.

// Target returns the target options o select.
func (o Options) Target() kernelconf.Target {
	t := kernelconf.Target{ISA: kernelconf.AVX2}
	switch {
	case o.AVX512 && o.BF16:
		t.ISA = kernelconf.AVX512BF16
	case o.AVX512:
		t.ISA = kernelconf.AVX512
	}
	if o.Zen {
		t.Family = kernelconf.Zen
	}
	return t
}

// Conf is a kernel's whole configuration: what Choose decided. Fields
// that a shape does not read keep their zero values.
type Conf struct {
	Target kernelconf.Target
	Hints  kernelconf.Hints // the runtime's, which the choices weigh
	Shape  kernelconf.Shape

	// NaNFree: a max or min kernel is emitted twice, NaN-free code first
	// (speculate.go). Watch: that code checks whole f32 src vectors by a
	// watch sum instead of compares in pairs (rangeWatched), as the
	// native kernel's f64 max and min do under the same gate.
	NaNFree, Watch bool
	// Words: 16-bit max and min are taken as words (words.go).
	Words bool
	// BF16Pairs: bf16 src is taken a pair load at a time (rowPairs,
	// combinePair). PairTail: a row's last V+1 to 2V-1 elements are one
	// masked pair load (AVX-512), whose zeros past the row only a sum's
	// identity allows (not exp's: exp(0) is 1).
	BF16Pairs, PairTail bool
	// SADRows: single outputs' 8-bit rows are summed by VPSADBW (sadrow.go).
	SADRows bool
	// AbsMask: an f32 L1 sum takes each whole vector's |x| from memory in
	// one AND with a held sign mask (holdAbsMask), in row sweeps, and in
	// column blocks on AVX-512 (AbsMaskCols).
	AbsMask, AbsMaskCols bool

	// The row shape.
	Group      int  // outputs summed at once: 1 or V
	Gather     bool // rows of 2 to 4 back to back gathered V at a time
	PackSkip   int  // transpose levels a group saves by packing short rows
	PairPacked bool // packed bf16 rows at two elements per lane
	RowAcc     int  // accumulators of one output's row sweep
	RowU       int  // accumulators of one output (min(RowAcc, vectors), or the element unroll)
	Paced      bool // row sweeps paced to memory, in loops of oneDNN's shape (testedLoops)
	// GroupPrefetch: groups of rows shorter than a line prefetch pfAhead.
	GroupPrefetch bool
	// RowPrefetch: single outputs' row loops prefetch rowAhead ahead.
	RowPrefetch bool
	// Streams: a long single f32 row is read as this many streams (1: one).
	Streams int

	// The column shape.
	OuterGroup    int  // kept iterations flatOuter sums at once (< 2: none)
	ColAcc        int  // accumulators a column block may use
	PrefetchKept  bool // kept iterations less than a line apart prefetch pfAhead
	Busy          bool // f32 blocks of costly kinds over far rows prefetch (busyBlock)
	FlatU         int  // the flat column's accumulators (kernelshape.Column)
	FlatPrefetch  bool // the flat column's masked stream prefetches pfAhead
	RowByRowAhead int64

	tune tuning
	f    facts
}

// facts are what the choices read of the plan and the target.
type facts struct {
	pl       *plan.Plan
	lay      kernelshape.Layout
	avx512   bool
	V, nacc  int
	sdt, ddt dtypes.DataType
	ssz      int64
	red      plan.Reduction // no transform when src holds partials, as gen.red
	add      bool
}

func (f *facts) plainSum() bool { return f.add && f.red.Transform == plan.TransformNone }
func (f *facts) plainProduct() bool {
	return f.red.Combine == plan.CombineMul && f.red.Transform == plan.TransformNone
}

// Choose returns the configuration of pl's kernel on target t, under
// the runtime's hints h. It is pure: the same plan, hints and target
// give the same Conf.
func Choose(pl *plan.Plan, h kernelconf.Hints, t kernelconf.Target) Conf {
	c := Conf{Target: t, Hints: h, tune: tuningOf(t.Family)}
	f := &c.f
	f.pl = pl
	f.avx512 = t.ISA == kernelconf.AVX512 || t.ISA == kernelconf.AVX512BF16
	f.V, f.nacc = 8, 8
	if f.avx512 {
		f.V, f.nacc = 16, 16
	}
	f.sdt, f.ddt = pl.SrcDT, pl.DstDT
	f.ssz = int64(pl.SrcDT.Size())
	f.red = pl.Reduction
	if pl.Stage&plan.SkipTransform != 0 {
		f.red.Transform = plan.TransformNone
	}
	f.add = f.red.Combine == plan.CombineAdd
	f.lay = kernelshape.LayoutOf(pl)

	c.NaNFree = speculates(pl, h, f.avx512)
	c.Words = wordsKind(f.sdt, f.red)
	c.BF16Pairs = c.bf16Pairs()
	c.PairTail = c.BF16Pairs && f.avx512 && f.add && f.red.Transform != plan.TransformExp
	c.SADRows = f.plainSum() && f.sdt.IsInt8()
	c.AbsMask = f.sdt == dtypes.F32 && f.add && f.red.Transform == plan.TransformAbs
	c.AbsMaskCols = c.AbsMask && f.avx512
	c.Paced = c.pacedRows()
	c.Watch = f.avx512 && c.Paced && !h.RowByRow
	c.RowAcc = c.tune.rowAccumulators
	if c.Paced {
		c.RowAcc = 64 / (f.V * 4) // one line per add's latency
	}
	c.RowPrefetch = c.rowPrefetch()
	c.Streams = 1
	if f.sdt == dtypes.F32 {
		c.Streams = c.tune.rowStreams
	}
	switch {
	case !f.lay.Work:
		c.Shape = kernelconf.Empty
	case f.lay.Column:
		c.chooseColumn()
	default:
		c.chooseRow()
	}
	return c
}

// speculates reports whether pl is emitted as NaN-free code followed by
// exact code: max kernels, and min kernels on AVX-512, unless an
// operand may be dst itself (the exact run would read what the first
// overwrote).
func speculates(pl *plan.Plan, h kernelconf.Hints, avx512 bool) bool {
	if pl.HasDstOperand() {
		return false
	}
	c := pl.Reduction.Combine
	if !avx512 && wordsKind(pl.SrcDT, pl.Reduction) && !h.RowByRow {
		// Its rows and column blocks are exact as words (words.go), and
		// AVX2's NaN-free code has too few registers to take them so.
		// Row-by-row plans combine into partials in memory, not as words.
		return false
	}
	return c == plan.CombineMax || avx512 && c == plan.CombineMin
}

// wordsKind reports whether red over src of type sdt is taken as words: a
// max or min of bf16 or f16, of the values or of their magnitudes (|x|
// is the word with its sign cleared).
func wordsKind(sdt dtypes.DataType, red plan.Reduction) bool {
	c, t := red.Combine, red.Transform
	return (sdt == dtypes.BF16 || sdt == dtypes.F16) && (t == plan.TransformNone || t == plan.TransformAbs) &&
		(c == plan.CombineMax || c == plan.CombineMin)
}

// bf16Pairs reports whether bf16 src is taken a pair load at a time: any
// kind but log-sum-exp's sums of exp (whose exp wants a vector at a time)
// and a copy.
func (c *Conf) bf16Pairs() bool {
	t := c.f.red.Transform
	return c.f.sdt == dtypes.BF16 && c.f.red.Combine != plan.CombineFirst &&
		(t == plan.TransformNone || t == plan.TransformAbs || t == plan.TransformSquare)
}

// pacedRows reports whether row sweeps read at the pace of their adds
// (tuning.pacedRows): f32 src read from DRAM (Hints.FromMemory), but not
// log-sum-exp's exp, which its arithmetic bounds, not memory.
func (c *Conf) pacedRows() bool {
	f := &c.f
	return c.tune.pacedRows && c.Hints.FromMemory && f.sdt == dtypes.F32 && f.red.Transform != plan.TransformExp
}

// rowPrefetch reports whether single outputs' row loops prefetch
// (tuning.rowPrefetch): 16-bit sums in calls of minPrefetchedCall bytes
// or more, and rows whose elements go through exp whatever their size:
// at some twenty instructions per vector, the reorder window holds too
// few loads to keep memory busy, and a prefetch per line costs little
// beside them.
func (c *Conf) rowPrefetch() bool {
	f := &c.f
	if !c.tune.rowPrefetch {
		return false
	}
	return f.red.Transform == plan.TransformExp || f.ssz == 2 && f.pl.N*f.pl.Outputs*f.ssz >= c.tune.minPrefetchedCall
}

// chooseRow decides the row and element shapes.
func (c *Conf) chooseRow() {
	f := &c.f
	rows := kernelshape.RowsOf(f.lay.Reduced, f.lay.ZeroSum)
	c.Shape = kernelconf.Element
	if rows.Vec {
		c.Shape = kernelconf.Row
	}
	c.Group = 1
	rowStep := int64(0)
	if n := len(f.lay.Kept); n > 0 {
		L := f.lay.Kept[n-1]
		rowStep = L.SrcStride * f.ssz
		// Short rows: V at once, one accumulator chain each, beat
		// per-output horizontal sums; longer rows amortise those and
		// stream better one at a time.
		groupMax := c.tune.groupMax
		if f.sdt == dtypes.F32 {
			groupMax = c.tune.groupMaxF32
		}
		if rows.Vec && rows.Len <= groupMax && L.Size >= int64(f.V/2) &&
			fits32(int64(f.V-1)*rowStep+rows.Len*f.ssz) {
			c.Group = f.V
		}
		c.Gather = c.gatherRows(rows, rowStep, c.Group)
	}
	c.PairPacked = c.pairPacked(rows.Len)
	c.PackSkip = c.packSkip(rows)
	switch {
	case rows.Vec:
		c.RowU = int(min(int64(c.RowAcc), max(1, ceilDiv(rows.Len, int64(f.V)))))
	case rows.Elem != nil:
		c.RowU = int(min(4, max(1, rows.Elem.Size)))
		// Unrolled elements are addressed by displacement.
		for c.RowU > 1 && !fits32(int64(c.RowU-1)*rows.Elem.SrcStride*f.ssz) {
			c.RowU--
		}
	default:
		c.RowU = 1
	}
	its := int64(1)
	for _, l := range rows.Outer {
		its *= l.Size
	}
	// Few outer reduced iterations ([2, N, 2] over [0, 2]): each one's
	// lines, like a group's. With many, the lines pfAhead on would be
	// used only after them all.
	c.GroupPrefetch = !rows.ZeroSum && its <= c.tune.groupPrefetchIters && rowStep > 0 && rowStep < 64
}

// gatherRows reports whether rows go through gather: AVX-512, one
// contiguous reduced run of 2 to 4, rows back to back, grouped (so that
// the last rows of a loop can go in a transposing group). It ran faster
// than the groups and flatSums for f32, bf16 and f16 (Figures: "Rows of
// 2 to 4 through gather"). Rows of 5 to 8 would need more index
// registers than the epilogues can spare.
func (c *Conf) gatherRows(rows kernelshape.Rows, rowStep int64, group int) bool {
	f := &c.f
	return f.avx512 && rows.Vec && len(rows.Outer) == 0 && rows.Len >= 2 && rows.Len <= 4 && rowStep == rows.Len*f.ssz && group == f.V
}

// packSkip returns how many transpose levels a group of short rows saves
// by packing: rows of at most V/2 (V/4) elements go two (four) to a
// register, each into the lanes that the first (two) levels would have
// summed it into (see packedSweep), where a level costs 3 instructions
// per register pair. AVX-512 bf16 rows take twice as many elements
// (pairPacked). Rows of up to 2 elements keep 2 levels: 8 to a register
// would need 8 opmasks. Only plain sums pack: the packed loads leave
// zeros in lanes no row fills, and add untransformed elements. 8-bit rows
// do not pack: the packed loads move 16- and 32-bit elements.
func (c *Conf) packSkip(rows kernelshape.Rows) int {
	f := &c.f
	if !rows.Vec || !f.plainSum() || f.ssz == 1 {
		return 0
	}
	maxSkip := 2
	if !f.avx512 && f.sdt == dtypes.F32 {
		// AVX2 f32 packs at most two rows to a register; four
		// (rows of 2) were not measured.
		maxSkip = 1
	}
	skip := 0
	for skip < maxSkip && rows.Len <= int64(f.V>>(skip+1)) {
		skip++
	}
	if skip == 0 && c.pairPacked(rows.Len) {
		skip = 1
	}
	return skip
}

// pairPacked reports whether packed groups load bf16 rows of rk elements
// at two elements per lane (32 words to a zmm, as in rowPairs): rows of
// 9 to 16 two to a register. Shorter rows keep one element per lane,
// whose 32-byte loads of two to a register beat the 64-byte ones of four
// (Figures: "bf16 rows of 9 to 16 packed two to a register").
func (c *Conf) pairPacked(rk int64) bool {
	f := &c.f
	return f.avx512 && f.sdt == dtypes.BF16 && rk > int64(f.V/2) && rk <= int64(f.V)
}

// streams chooses how the loop over one long f32 row reads it: iters
// iterations of slots loads of unit bytes, the row cut into c.Streams
// equal parts read side by side, each part's loads feeding its own
// accumulators, when it is at least minStreamedRow bytes. Groups of rows
// (n > 1) and 16-bit rows keep one stream: they read ahead with software
// prefetch instead (rowPrefetch), which beat 2 or 4 streams (Figures:
// "Two streams for long f32 rows").
func (c *Conf) streams(n, slots int, iters, unit int64) readStreams {
	one := readStreams{per: slots}
	S := c.Streams
	if S < 2 || n != 1 || slots%S != 0 || iters*int64(slots)*unit < c.tune.minStreamedRow {
		return one
	}
	st := readStreams{per: slots / S, gap: iters * int64(slots/S) * unit}
	if !fits32(int64(S) * st.gap) {
		return one
	}
	return st
}

// chooseColumn decides the column shapes.
func (c *Conf) chooseColumn() {
	f := &c.f
	pl, red, zeroSum := f.pl, f.lay.Reduced, f.lay.ZeroSum
	n := len(red)
	W := pl.Inner.Size
	if c.Hints.RowByRow && !zeroSum && len(f.lay.Kept) == 0 && n == 1 &&
		pl.Stage&plan.SkipFinalize != 0 && rowByRowKind(f.red, c.tune) && pl.Inner.DstStride == 1 {
		// The plan asks to be reduced row by row and has the shape that
		// needs: no kept loops around the outputs, one reduced loop that
		// is not empty, a kind the form takes, whose partials (a stage
		// that skips the finalize, so no post-ops) are written as a
		// contiguous f32 row.
		c.Shape = kernelconf.RowByRow
		c.RowByRowAhead = c.rowByRowPrefetch(W*f.ssz, red[0].SrcStride*f.ssz)
		return
	}
	c.Shape = kernelconf.Column
	c.OuterGroup = c.outerGroup()
	c.ColAcc = c.colAcc()
	if !zeroSum && n > 0 && W <= int64(f.V/2) && red[n-1].SrcStride == W {
		c.Shape = kernelconf.FlatColumn
		M := (int64(f.V) / W) * W
		nfull := red[n-1].Size * W / M
		c.FlatU = int(max(1, min(int64(c.tune.chainTarget), int64(f.nacc), nfull)))
		c.FlatPrefetch = c.flatPrefetch(M)
	}
	// Kept iterations less than a line apart ([4194304, 2, 2] over axis
	// 1: 16 bytes and some 20 instructions each, too many per line for
	// the reorder window to keep memory busy) prefetch pfAhead ahead;
	// iterations sharing a line prefetch it again, which costs little
	// (Figures: "Kept loops whose iterations share a line prefetched").
	if k := len(pl.Outer); !zeroSum && k > 0 {
		step := pl.Outer[k-1].SrcStride * f.ssz
		c.PrefetchKept = step > 0 && step < 64
	}
	if !zeroSum && n > 0 {
		c.Busy = c.busyBlock(red[n-1].SrcStride * f.ssz)
	}
}

// outerGroup returns how many iterations of the innermost kept loop
// flatOuter sums at once, or 0 where it does not apply. It needs AVX-512,
// one reduced loop whose rows are back to back (stride W, the Inner
// width), iterations back to back (stride P = R*W) of at most V/2 lanes,
// and outputs and operands laid out alike along the loop and Inner, so
// that the packed results map to dst with one step.
func (c *Conf) outerGroup() int {
	f := &c.f
	red, kept := f.lay.Reduced, f.lay.Kept
	if !f.avx512 || f.lay.ZeroSum || len(red) != 1 || len(kept) == 0 {
		return 0
	}
	in, L := f.pl.Inner, kept[len(kept)-1]
	W := in.Size
	P := red[0].Size * W
	if red[0].SrcStride != W || L.SrcStride != P || P > int64(f.V/2) || L.DstStride != W*in.DstStride {
		return 0
	}
	nbin := 0
	for _, op := range f.pl.PostOps {
		if op.Kind.IsBinary() {
			if L.BinStrides[nbin] != W*in.BinStrides[nbin] {
				return 0
			}
			nbin++
		}
	}
	return f.V / int(P)
}

// colAcc is how many accumulators a column block may use: nacc, or
// avx2WideAcc on AVX2 when nothing needs more than the two temporaries
// that leaves (f32 in and out, sums with no exp, no post-ops, a finalize
// of one constant at most).
func (c *Conf) colAcc() int {
	f := &c.f
	if !f.avx512 && f.sdt == dtypes.F32 && f.ddt == dtypes.F32 && len(f.pl.PostOps) == 0 && f.add &&
		f.red.Transform != plan.TransformExp && !finalizeNeedsTemps(f.pl) {
		return c.tune.avx2WideAcc
	}
	return f.nacc
}

// busyBlock reports whether an f32 column block over rows rb bytes apart
// is prefetched because its elements cost more than a plain sum's one
// instruction each (abs and add, a square and add, max and min with
// their NaN and signed-zero handling): rows at least a page apart put
// each row's few lines in a new page, which the hardware prefetchers do
// not follow, so the loads in flight are what the reorder window holds,
// fewer the more instructions each takes. Sums, means and products keep
// the hardware's prefetch alone; exp blocks are prefetched on their own
// terms ("Column blocks of max, min and the Lp norms prefetched").
func (c *Conf) busyBlock(rb int64) bool {
	f := &c.f
	return f.sdt == dtypes.F32 && f.red.Transform != plan.TransformExp && !f.plainSum() && !f.plainProduct() && rb >= c.tune.pfMaxStride
}

// flatPrefetch reports whether a dense stream of M-lane loads (the flat column,
// and colBlock's single masked vector) prefetches, a line per 64 bytes,
// pfAhead ahead: when the loads are masked (M < V; AVX2 16-bit loads are
// exact-size moves instead), which the hardware prefetchers do not
// follow (Figures: "Dense streams of masked loads prefetched").
func (c *Conf) flatPrefetch(M int64) bool {
	return M < int64(c.f.V) && (c.f.avx512 || c.f.sdt == dtypes.F32)
}

// colBlockConf is the configuration of one column block.
type colBlockConf struct {
	U          int   // rows unrolled into separate accumulators
	Pairs      int   // bf16 pair loads of full vectors (before words take them)
	PfVecs     int   // full vectors whose lines are prefetched
	PfDist     int64 // their prefetch distance in bytes (0: none)
	StreamSpan int64 // bytes prefetched pfAhead ahead per iteration of a masked stream (0: none)
}

// colBlock configures a block of nv full vectors of Inner and, when
// tail > 0, one vector of tail lanes.
func (c *Conf) colBlock(nv, tail int) colBlockConf {
	f := &c.f
	red, zeroSum := f.lay.Reduced, f.lay.ZeroSum
	n := len(red)
	K := nv
	if tail > 0 {
		K++
	}
	rows, rb := int64(1), int64(0)
	if n > 0 {
		rows, rb = red[n-1].Size, red[n-1].SrcStride*f.ssz
	}
	vb := int64(f.V) * f.ssz
	b := colBlockConf{U: max(1, min(c.ColAcc/K, (c.tune.chainTarget+K-1)/K, int(min(rows, 64))))}
	if zeroSum {
		b.U = 1
	}
	if n > 0 {
		// Unrolled rows are addressed by displacement: keep them in 32 bits.
		for b.U > 1 && !fits32(int64(b.U-1)*rb+int64(K)*vb) {
			b.U--
		}
	}
	// Narrow 16-bit blocks (at most narrowBytes per row, as the
	// runtime's Inner tiles of a wide Inner are) take bf16 full vectors
	// 2p and 2p+1 from one pair load, and prefetch every 64-byte line of
	// the full vectors pfRows rows ahead: the hardware prefetchers follow
	// a few lines per strided row poorly. Wider blocks keep the plain
	// path, but where widening bounds them (tuning.widePairs). AVX2
	// blocks (always narrow) prefetch only over rows at most pfMaxStride
	// apart (Figures: "Narrow 16-bit column blocks: pair loads and
	// prefetch"; "Pair loads in wide bf16 blocks").
	narrow := f.ssz == 2 && !zeroSum && n > 0 && int64(nv)*vb <= c.tune.narrowBytes
	if c.BF16Pairs && !zeroSum && n > 0 && (narrow || c.tune.widePairs) {
		b.Pairs = nv / 2
	}
	prefetch := narrow
	if narrow && !f.avx512 {
		prefetch = rb <= c.tune.pfMaxStride
	}
	// Blocks whose elements go through exp (an unshifted log-sum-exp)
	// prefetch at any width: its twenty-odd instructions per vector
	// leave the reorder window too few loads to keep memory busy. So do
	// busy f32 blocks (busyBlock).
	expBlock := f.red.Transform == plan.TransformExp
	busy := false
	if !zeroSum && n > 0 {
		busy = c.Busy
		prefetch = prefetch || expBlock || busy
	}
	perLine := max(1, int(64/vb))
	if prefetch {
		b.PfVecs = nv / perLine * perLine
	}
	if b.PfVecs > 0 {
		rowsAhead := c.tune.pfRows
		if (f.avx512 && expBlock) || busy {
			rowsAhead = max(c.tune.pfRowsBusy, int64(b.U)) // past the rows an iteration loads
		}
		b.PfDist = rowsAhead * rb
		if !fits32(b.PfDist + int64(b.U)*rb + int64(K)*vb) {
			b.PfDist = 0
		}
	}
	// A block of one masked vector (an Inner narrower than V that
	// the flat column does not take) whose rows are less than a line apart is
	// a dense stream of masked loads: every line of it is prefetched
	// pfAhead ahead, once per loop iteration of U rows (Figures: "A
	// column block of one masked vector prefetched"). Rows a line or
	// more apart are followed by the hardware.
	if n > 0 && !zeroSum && nv == 0 && c.flatPrefetch(int64(tail)) && rb > 0 && rb < 64 {
		b.StreamSpan = int64(b.U) * rb
	}
	return b
}

// rowByRowKind reports whether reduction r is taken row by row: every
// combine, with or without |x| or x*x, and log-sum-exp's unshifted sums
// of exp where the family's table says so (tuning.rowByRowExp).
func rowByRowKind(r plan.Reduction, t tuning) bool {
	if r.IsLogSumExp() {
		return t.rowByRowExp
	}
	switch r.Transform {
	case plan.TransformNone, plan.TransformAbs, plan.TransformSquare:
		return r.Combine != plan.CombineFirst
	}
	return false
}

// takesRowByRow reports whether stage-1 plans of src type sdt and
// reduction r are reduced row by row on target t (Covers): every such
// kind on AVX2, 16-bit src on AVX-512, and f32 src too where the
// family's table says so. Rows in strips (too wide for one partials row)
// only where the column blocks read such rows from memory slowly: 16-bit
// src on AVX2 and bf16 on AVX-512. f16 on AVX-512 and f32 read them about
// as fast in tiles (Figures: "Rows in strips").
func takesRowByRow(t kernelconf.Target, sdt dtypes.DataType, r plan.Reduction, strips bool) bool {
	tune := tuningOf(t.Family)
	avx512 := t.ISA == kernelconf.AVX512 || t.ISA == kernelconf.AVX512BF16
	if strips {
		return rowByRowKind(r, tune) && (sdt == dtypes.BF16 || !avx512 && sdt.Size() == 2)
	}
	return rowByRowKind(r, tune) && (!avx512 || sdt.Size() == 2 || tune.rowByRowF32AVX512)
}

// takesNativeRowByRow reports whether stage-1 plans of the native
// kernel (f64 and exact data of type sdt) with reduction r are reduced
// row by row on target t, whole rows (strips: not): on AVX2, every
// combine of elements as they are, or of |x| or x*x, but log-sum-exp's
// and booleans' (their max and min store truths, not the lanes the form
// keeps as partials: kernelshape's nativeRowByRow). Strips of rows read
// from memory ran slower than the column blocks at one thread, as f32's
// strips on AVX2 did; AVX-512's column blocks read 1 KiB of each row per
// visit and reach f32's share of the roofline (docs/PERFORMANCE-f64.md,
// "Zen 5, capped to AVX2: f64 and integer columns row by row").
func takesNativeRowByRow(t kernelconf.Target, sdt dtypes.DataType, r plan.Reduction, strips bool) bool {
	avx512 := t.ISA == kernelconf.AVX512 || t.ISA == kernelconf.AVX512BF16
	return !avx512 && !strips && sdt != dtypes.Boolean && !r.IsLogSumExp() && rowByRowKind(r, tuningOf(t.Family))
}

// rowByRowPrefetch is the prefetch distance of the row-by-row loop over
// rows of rowBytes bytes, rb apart: for a stream of f32 rows (back to
// back) under a rowByRowL1 cap, rowAhead or less, so that the partials
// row and the lines ahead fit it (16-bit rows ran slower with less than
// rowAhead and keep it); else rowByRowAhead.
func (c *Conf) rowByRowPrefetch(rowBytes, rb int64) int64 {
	t := c.tune
	if t.rowByRowL1 > 0 && c.f.ssz == 4 && rb == rowBytes {
		if ahead := min(t.rowAhead, t.rowByRowL1-rowBytes); ahead >= 64 && fits32(ahead+rowBytes) {
			return ahead
		}
	}
	return t.rowByRowAhead(rowBytes, rb)
}

// rowByRowAhead is the prefetch distance of rows of rowBytes bytes, rb
// apart: rowAhead rounded up to whole rows, so that a prefetch lands in a
// later row at the column being read (exactly rowAhead bytes or more
// when rows are back to back); 0, no prefetch, when that is too far for a
// displacement.
func (t tuning) rowByRowAhead(rowBytes, rb int64) int64 {
	if rowBytes <= 0 || rb <= 0 {
		return 0
	}
	d := ceilDiv(t.rowAhead, rowBytes) * rb
	if !fits32(d + rowBytes) {
		return 0
	}
	return d
}

// String is the Conf in one line, the fields its shape reads, for
// GDNN_VERBOSE=2.
func (c Conf) String() string {
	var b strings.Builder
	b.WriteString(c.Target.String())
	b.WriteString(" " + c.Shape.String())
	add := func(on bool, format string, args ...any) {
		if on {
			b.WriteString(" " + fmt.Sprintf(format, args...))
		}
	}
	switch c.Shape {
	case kernelconf.Row, kernelconf.Element:
		add(c.Group > 1, "group=%d", c.Group)
		add(c.Gather, "gather")
		add(c.Group > 1 && c.PackSkip > 0, "pack=%d", c.PackSkip)
		add(c.Group > 1 && c.PackSkip > 0 && c.PairPacked, "pair-packed")
		add(true, "u=%d", c.RowU)
		add(c.Paced, "paced")
		add(c.Group > 1 && !c.Gather && c.GroupPrefetch, "pf-group=%d", c.tune.pfAhead)
		add(c.Shape == kernelconf.Row && c.Group == 1 && c.RowPrefetch, "pf-row=%d", c.tune.rowAhead)
		add(c.Shape == kernelconf.Row && c.Group == 1 && c.Streams > 1, "streams=%d", c.Streams)
		add(c.SADRows, "sad")
	case kernelconf.Column, kernelconf.FlatColumn:
		add(c.OuterGroup >= 2, "outer=%d", c.OuterGroup)
		add(c.Shape == kernelconf.FlatColumn, "u=%d", c.FlatU)
		add(c.FlatPrefetch, "pf-flat=%d", c.tune.pfAhead)
		add(c.Shape == kernelconf.Column, "acc=%d", c.ColAcc)
		if c.Shape == kernelconf.Column {
			c.blocks(&b)
		}
		add(c.PrefetchKept, "pf-kept=%d", c.tune.pfAhead)
		add(c.Busy, "busy")
	case kernelconf.RowByRow:
		add(true, "pf=%d", c.RowByRowAhead)
	}
	add(c.Words, "words")
	add(c.BF16Pairs, "bf16-pairs")
	add(c.AbsMask, "abs-mask")
	add(c.NaNFree, "nan-free")
	add(c.NaNFree && c.Watch, "watch")
	return b.String()
}

// blocks writes the column blocks the Inner width is cut into (full
// blocks of ColAcc vectors and the last), each with its unroll, pairs
// and prefetch.
func (c Conf) blocks(b *strings.Builder) {
	W := c.f.pl.Inner.Size
	per := int64(c.ColAcc * c.f.V)
	sizes := []int64{min(W, per)}
	if last := W % per; W > per && last != 0 {
		sizes = append(sizes, last)
	}
	for _, m := range sizes {
		nv, tail := int(m)/c.f.V, int(m)%c.f.V
		bc := c.colBlock(nv, tail)
		fmt.Fprintf(b, " block=%dv%d:u%d", nv, tail, bc.U)
		if bc.Pairs > 0 {
			fmt.Fprintf(b, ",pairs%d", bc.Pairs)
		}
		if bc.PfDist > 0 {
			fmt.Fprintf(b, ",pf%d", bc.PfDist)
		}
		if bc.StreamSpan > 0 {
			fmt.Fprintf(b, ",pf-stream%d", bc.StreamSpan)
		}
	}
}

package kernelshape

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// The native reduction kernel: plans whose src is f64 (plan.IsWide) or
// exact data (plan.IsExact: integers, booleans, the bitwise and logical
// reductions), reduced in lanes of the src's own type, written once over
// NativeEmitter. f64 is combined in f64 lanes; integers in lanes of their
// own width, so that a sum and a product wrap in two's complement as the
// interpreter's do, max and min compare signed or unsigned as the type
// is, and the bitwise combines combine bits. The logical reductions
// combine bytes (unsigned min for and, unsigned max for or, the xor of
// each byte's truth for xor) and store the truth of the result, 0 or 1.
//
// Three shapes, as the index reduction's (arg.go), and a column plan
// hinted RowByRow a row at a time (nativerowbyrow.go):
//
//   - Column (Inner contiguous in src and dst, at least V wide): the
//     lanes are V consecutive outputs; each block of U vectors sweeps the
//     reduced loops and stores its V*U results. The outputs left are
//     whole vectors, then one vector stepped back to end at the last
//     output (outputs already written are written again, alike).
//   - Row (the innermost reduced loop contiguous and at least V long):
//     accumulator u takes elements u*V+lane of each block of U*V; the
//     whole vectors left go into accumulators 0, 1, ...; the elements
//     past the last whole vector one at a time into lane 0 of
//     accumulator 0 (no vector is stepped back: a sum would count an
//     element twice). The accumulators are then combined, and their
//     lanes.
//   - Element (otherwise): one element at a time into lane 0 of
//     accumulator 0 (a long f64 sum in runs, its total in accumulator 1).
//
// f64 sums keep the two levels of the interpreter: when a lane's chain
// of adds would be long, the accumulators take runs of at most NativeRun
// adds, cut at whichever reduced loop holds more than that, across the
// loops inside it (as the f32 kernels' RunsOf, runs.go), each run then
// added into running totals (the accumulators U..2U-1) and the
// accumulators started again (nativeCutOf). A sum no such cut keeps
// within the interpreter's bound is refused (CheckNativeRuns).
//
// f64 lanes may take |x| or x*x of each element (nativef64.go), applied
// by the emitter to each loaded vector before the combine. Finalize (an
// f64 mean's division by Div, an Lp norm's eps and root, an f32 dst's
// rounding, a logical reduction's truth) is the emitter's, in its
// stores; f64 results then take the plan's post-ops through Epilogue
// (nativepost.go). Exact data takes no post-ops.
//
// The mean of 16- and 32-bit integers sums in 64-bit lanes (each loaded
// vector widened, sign- or zero-extended: LaneBytes), exact for up to
// NativeMeanMax elements an output, as the interpreter's 128-bit sum
// is; the store converts the sum to f64 (rounded once), divides it by
// Div and stores the quotient as an f64 or f32 dst wants it, or
// truncated toward zero into the src's type (StoreTrunc). The mean of
// 64-bit integers needs the 128-bit sum (Halves): each accumulator is a
// pair of registers whose lanes sum the low and the high 32-bit halves
// of the elements (a signed element biased by 2^63 first, so that both
// halves are unsigned), and the store joins the pair into the exact sum,
// converted to f64 with one rounding.

// IsNative reports whether pl is for the native kernel: f64 or exact
// data.
func IsNative(pl *plan.Plan) bool {
	return plan.IsWide(pl.SrcDT) || plan.IsExact(pl.SrcDT, pl.Reduction)
}

// NativeOp is what a native kernel combines.
type NativeOp uint8

// The ops.
const (
	NativeAdd NativeOp = iota // sum; integers wrap
	NativeMul                 // product; integers wrap
	NativeMax                 // f64: NaN wins, -0 below +0; integers signed or not as Signed says
	NativeMin
	NativeAnd // bitwise
	NativeOr
	NativeXor
	NativeAll // logical and of bytes: the unsigned min, stored as its truth
	NativeAny // logical or of bytes: the unsigned max, stored as its truth
	NativeOdd // logical xor of bytes: the xor of each byte's truth (0 or 1)
)

// NativeStore is how a native kernel's result is stored.
type NativeStore uint8

// The stores.
const (
	StoreLane  NativeStore = iota // as the lane type (f64 partials too)
	StoreF32                      // f64 lanes rounded once to f32 (nearest even)
	StoreTruth                    // a byte, 1 where the lane is nonzero (NativeOdd: its low bit), else 0
	StoreTrunc                    // an integer mean's f64 quotient truncated toward zero, as the src's type
)

// NativeMeanMax is the most elements an output the native integer mean
// sums: 2^31 elements of at most 2^32 in magnitude keep a 64-bit sum
// below 2^63, exact; so do the sums of 2^31 halves of 64-bit elements
// (Halves), and their joined high word stays below 2^63.
const NativeMeanMax int64 = 1 << 31

// NativeKind is what a native kernel computes, read off its plan.
type NativeKind struct {
	Op     NativeOp
	Bytes  int  // the src element width and, but for an integer mean, the lane's: 1, 2, 4 or 8
	Float  bool // f64 lanes (Bytes 8)
	Signed bool // integer lanes compare signed (max, min) and widen signed (a mean)
	Mean   bool // the result is divided by the plan's Div (integers: a sum in 64-bit lanes, LaneBytes)
	Store  NativeStore
	// f64 only (nativef64.go): the transform of each element, and the
	// Lp finalize: the eps step, EpsValue (the plan's eps widened), and
	// the root after it: the square root, or (Root) the p-th root, the
	// power 1/p (RootInv). P is NativePow's power.
	Transform NativeTransform
	P         float64
	Eps       NativeEps
	EpsValue  float64
	Sqrt      bool
	Root      bool
	RootInv   float64
	// LSE: an f64 log-sum-exp (nativelse.go): Op and Transform are its
	// sum pass's, NativeAdd of NativeExpShift, after a max pass
	// (LSEMax).
	LSE bool
	// PostOps: the f64 results take the plan's post-ops (nativepost.go)
	// through Epilogue before they are stored.
	PostOps bool
}

// NativeKindOf returns what pl computes in native lanes, or an
// Unimplemented error naming what the native kernel does not take: a
// plan neither wide nor exact, post-ops of exact data or f64 post-ops
// the f64 epilogue does not take (nativepost.go), an f64 log-sum-exp
// in stages, an Lp finalize it cannot match (nativeF64Parts), a copy, an integer mean of more than
// NativeMeanMax elements (or its partial sums), a logical
// reduction of data wider than a byte. pl must be valid.
func NativeKindOf(pl *plan.Plan) (NativeKind, error) {
	r := pl.Reduction
	src := pl.SrcDT
	wide, exact := plan.IsWide(src), plan.IsExact(src, r)
	if !wide && !exact {
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v data reduces in f32 lanes", src)
	}
	if len(pl.PostOps) > 0 && !wide {
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v data with post-ops runs in the interpreter", src)
	}
	k := NativeKind{Bytes: int(src.Size())}
	if wide {
		if err := nativeF64PostOps(pl.PostOps); err != nil {
			return NativeKind{}, err
		}
		k.Float, k.PostOps = true, len(pl.PostOps) > 0
		if pl.DstDT == dtypes.F32 {
			k.Store = StoreF32
		}
		transform := r.Transform
		if pl.Stage&plan.SkipTransform != 0 {
			transform = plan.TransformNone
		}
		finalize := r.Finalize
		if pl.Stage&plan.SkipFinalize != 0 {
			finalize = plan.FinalizeNone
		}
		op, ok := nativeFloatOps[r.Combine]
		if !ok {
			return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v of f64 data (its combine) runs in the interpreter", r)
		}
		if err := nativeF64Parts(r, pl.Stage, transform, finalize, &k); err != nil {
			return NativeKind{}, err
		}
		k.Op = op
		return k, nil
	}
	k.Signed = src == dtypes.S8 || src == dtypes.S16 || src == dtypes.S32 || src == dtypes.S64
	logical := r.Transform == plan.TransformNonzero
	if src == dtypes.Boolean && (r.Combine == plan.CombineMax || r.Combine == plan.CombineMin) {
		// Max and min of booleans are their logical or and and, so that
		// any nonzero byte is true (as the interpreter has it).
		logical = true
	}
	switch {
	case r.Finalize == plan.FinalizeMean && (k.Bytes == 1 || r.Combine != plan.CombineAdd || r.Transform != plan.TransformNone):
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v of %v data runs in the interpreter", r, src)
	case r.Finalize == plan.FinalizeMean && pl.Stage&plan.SkipFinalize != 0:
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: a partial sum of an integer mean runs in the interpreter")
	case r.Finalize == plan.FinalizeMean && pl.Div > NativeMeanMax:
		return NativeKind{}, status.Errorf(status.Unimplemented,
			"native kernel: the mean of %d elements of %v data (more than %d, the 64-bit sum's bound) runs in the interpreter", pl.Div, src, NativeMeanMax)
	case r.Finalize == plan.FinalizeMean:
		k.Op, k.Mean = NativeAdd, true
		switch pl.DstDT {
		case dtypes.F32:
			k.Store = StoreF32
		case dtypes.F64:
		default:
			k.Store = StoreTrunc
		}
		return k, nil
	case r.Combine == plan.CombineFirst:
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: a copy of %v data runs in the interpreter", src)
	case logical && k.Bytes != 1:
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: a logical reduction of %v data runs in the interpreter (bytes only)", src)
	case logical:
		k.Store = StoreTruth
		k.Op = map[plan.Combine]NativeOp{plan.CombineAnd: NativeAll, plan.CombineMin: NativeAll,
			plan.CombineOr: NativeAny, plan.CombineMax: NativeAny, plan.CombineXor: NativeOdd}[r.Combine]
		return k, nil
	}
	op, ok := nativeIntOps[r.Combine]
	if !ok {
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v of %v data (its combine) runs in the interpreter", r, src)
	}
	k.Op = op
	return k, nil
}

var nativeFloatOps = map[plan.Combine]NativeOp{plan.CombineAdd: NativeAdd, plan.CombineMul: NativeMul,
	plan.CombineMax: NativeMax, plan.CombineMin: NativeMin}

var nativeIntOps = map[plan.Combine]NativeOp{plan.CombineAdd: NativeAdd, plan.CombineMul: NativeMul,
	plan.CombineMax: NativeMax, plan.CombineMin: NativeMin, plan.CombineAnd: NativeAnd, plan.CombineOr: NativeOr,
	plan.CombineXor: NativeXor}

// NativeISA is what CheckNative needs of an instruction set.
type NativeISA struct {
	Arch     string // starts every error message, with a colon
	MaxDepth int    // the Outer and the Reduced loops it takes (each)
	// VectorBytes over a lane's bytes is V (NativeEmitter.NativeLanes).
	VectorBytes int
	// Accs is NativeEmitter.NativeAccs.
	Accs func(column bool) int
	// Takes reports why the instruction set has no instructions for a
	// kind, or nil.
	Takes func(NativeKind) error
}

// CheckNative reports why an emitter of isa cannot take pl in its native
// kernel: pl.Validate's error, NativeKindOf's, isa.Takes', an f64 sum
// whose runs cannot keep the interpreter's bound (CheckNativeRuns), or
// more than isa.MaxDepth Outer or Reduced loops (each). A plan refused
// with an Unimplemented error runs in the interpreter.
func CheckNative(pl *plan.Plan, isa NativeISA) (NativeKind, error) {
	if err := pl.Validate(); err != nil {
		return NativeKind{}, err
	}
	k, err := NativeKindOf(pl)
	if err != nil {
		return NativeKind{}, status.Errorf(status.Unimplemented, "%s: %v", isa.Arch, err)
	}
	if err := isa.Takes(k); err != nil {
		return NativeKind{}, err
	}
	if err := CheckNativeRuns(pl, k, isa.VectorBytes/k.LaneBytes(), k.Accs(isa.Accs)); err != nil {
		return NativeKind{}, status.Errorf(status.Unimplemented, "%s: %v", isa.Arch, err)
	}
	if len(pl.Outer) > isa.MaxDepth || len(pl.Reduced) > isa.MaxDepth {
		return NativeKind{}, status.Errorf(status.Unimplemented, "%s: %d outer and %d reduced loops exceed the supported depth %d",
			isa.Arch, len(pl.Outer), len(pl.Reduced), isa.MaxDepth)
	}
	return k, nil
}

// NativeEmitter is what an instruction set supplies to Native. The
// emitter is made for one plan and its NativeKind, and knows both.
type NativeEmitter interface {
	Looper
	// Fail records a generation error (CheckNative refuses the plans
	// that would give one).
	Fail(err error)
	// NativeLanes is V, the lanes of the kind's type in a vector.
	NativeLanes() int
	// NativeAccs is how many accumulators the row (false) or column
	// (true) shape may use (the cut sums use half of them as totals).
	NativeAccs(column bool) int
	// Prologue loads the argument block: the pointers and, when cnt is
	// not 0, Args.Count into cnt.
	Prologue(cnt int16)
	// Return leaves the kernel.
	Return()
	// NativeInit sets every lane of accumulator u to the combine's
	// identity (0; 1; the least and the greatest value of the lane type,
	// -Inf and +Inf for f64; all ones for and and NativeAll).
	NativeInit(u int)
	// NativeLoad combines n elements off bytes past the src pointer into
	// accumulator u: n == V, a whole vector, element i into lane i;
	// n == 1, one element into lane 0, the other lanes unchanged.
	NativeLoad(u int, off int64, n int)
	// NativeCombine combines accumulator from into accumulator u, lane
	// by lane.
	NativeCombine(u, from int)
	// NativeStoreColumn finalizes accumulator u's V lanes, applies the
	// post-ops (k.PostOps: Epilogue over lm) and stores them as the V
	// consecutive dst elements lm maps.
	NativeStoreColumn(u int, lm LaneMap)
	// NativeStoreFirst combines accumulator 0's lanes, finalizes the
	// result, applies the post-ops (k.PostOps: Epilogue over a Bcast
	// LaneMap) and stores it at the dst pointer.
	NativeStoreFirst()
}

// NativePrefetcher is optional: an instruction set whose column shape
// prefetches the rows ahead, as ArgPrefetcher, but into the L2: rows a
// multiple of a page apart fall in the same L1 sets, so the lines of the
// rows ahead, brought into the L1, would evict each other and the row
// being read before their loads; in the L2 they wait without taking the
// L1.
type NativePrefetcher interface {
	// NativePrefetchSrc prefetches the line off bytes past the src
	// pointer into the L2.
	NativePrefetchSrc(off int64)
}

// NativePacer is optional: an instruction set whose row sweeps from
// DRAM stream fastest with few loads in flight (amd64 on Zen cores: its
// f32 kernels' Conf.Paced) paces the native row's sweep the same way:
// the kernel sweeps its rows into NativePacedRowAccs accumulators, in
// loops of the paced shape. Every kind is paced: the exact kinds give
// the same result in any order, and an f64 sum keeps its two levels
// (its runs into the accumulators, NativeRun adds at most, then into as
// many totals), so its bound; its bits are those of the paced order,
// the same at any thread count (the runtime's hints are the plan's).
type NativePacer interface {
	// NativePacedRowAccs is how many accumulators a paced row sweep adds
	// into (at least 1), or 0 when the kernel's sweeps are not paced
	// (the runtime's hints say the src is not read from DRAM, say).
	NativePacedRowAccs() int
	// PaceLoops gives the loops emitted from now on the paced shape
	// (on), or the usual one.
	PaceLoops(on bool)
}

// NativeStreamer is optional: an instruction set whose long rows read
// fastest as several streams side by side (amd64: its f32 rows,
// Conf.Streams) reads the native row's blocks the same way, each stream
// feeding its own accumulators. The kinds give the same result in any
// order, or (an f64 sum) keep their runs and bound: each accumulator's
// chain is as long as in one stream.
type NativeStreamer interface {
	// NativeRowStreams is how many equal parts, read side by side, a
	// sweep of iters blocks of u vectors of unit bytes each reads its
	// row as: 1 for one stream, else a divisor of u.
	NativeRowStreams(u int, iters, unit int64) int
}

// NativeShape is which of the three shapes a plan takes.
type NativeShape uint8

// The shapes.
const (
	NativeElement NativeShape = iota
	NativeRow
	NativeColumn
)

// NativeShapeOf returns the shape pl takes with V lanes.
func NativeShapeOf(pl *plan.Plan, v int) NativeShape {
	lay := LayoutOf(pl)
	n := len(lay.Reduced)
	switch {
	case pl.HasInner && pl.Inner.SrcStride == 1 && pl.Inner.DstStride == 1 && pl.Inner.Size >= int64(v):
		return NativeColumn
	case n > 0 && lay.Reduced[n-1].SrcStride == 1 && lay.Reduced[n-1].Size >= int64(v):
		return NativeRow
	}
	return NativeElement
}

// NativeRun returns the run length (adds into a lane between folds) of
// an f64 sum whose lanes each take chain adds in all, or 0 when the
// chain is left whole. f64 sums are held to 2^-53 (1032 + N/1024) of the
// sum of magnitudes, the bound of the interpreter's two levels of runs
// of 1024: so a run is at most nativeRunLen adds, and each run is added
// once into its lane's running total, as the interpreter's are. Chains
// of up to nativeUncut adds stay whole (those adds and the combines of
// the lanes after them keep the bound).
func NativeRun(k NativeKind, chain int64) int64 {
	if !k.Float || k.Op != NativeAdd || chain <= nativeUncut {
		return 0
	}
	return nativeRunLen
}

// nativeUncut is the longest chain of f64 adds left whole: 1032 less the
// combines of the accumulators' lanes and the stages after them.
const nativeUncut = 1000

// nativeRunLen is the longest run a longer chain is cut into.
const nativeRunLen = 1024

// The interpreter's bound on an f64 sum of N elements: a rounding of
// 2^-53 of the sum of magnitudes (nativeBoundBase + N/nativeBoundPer)
// times, which every element's path of adds to the result must keep.
const (
	nativeBoundBase = 1032
	nativeBoundPer  = 1024
)

// nativeCut is where an f64 sum is cut into runs: loop level of the
// loops around the shape's body (outermost first) runs in chunks of
// chunk iterations, the accumulators folded into the totals after each
// (the iterations left over a chunk too). level < 0: nothing is cut.
type nativeCut struct {
	level int
	chunk int64
}

// none reports whether nothing is cut.
func (c nativeCut) none() bool { return c.level < 0 }

// nativeCutOf returns the cut of an f64 sum of elems elements per output
// (other kinds: none) whose lanes each take one add an iteration of the
// innermost of the loops sizes (outermost first), extra more after each
// pass of it, and combines more after the last fold; or an error when
// no cut keeps the bound.
//
// The cut goes at the innermost loop whose iterations hold more than
// NativeRun adds a lane in all, cut across the loops inside it (the f32
// kernels' RunsOf), and that loop's iterations are split evenly into as
// few chunks as hold at most NativeRun adds each. An element's path is
// then the rest of its run, one add into the total for each run after
// it, and the combines: at most the longest run, the runs and the
// combines, which must stay within the bound (a short run under a long
// loop of many runs, cut at no loop inside it, cannot). A chain the cut
// would leave in one run is left whole: its path is then the run and
// the combines, without the fold.
func nativeCutOf(k NativeKind, sizes []int64, extra, elems, combines int64) (nativeCut, error) {
	m := len(sizes)
	if m == 0 {
		return nativeCut{level: -1}, nil
	}
	chain := addSat(sizes[m-1], extra)
	for _, s := range sizes[:m-1] {
		chain = plan.MulSat(chain, s)
	}
	r := NativeRun(k, chain)
	if r == 0 {
		return nativeCut{level: -1}, nil
	}
	body := int64(1) // adds a lane takes in an iteration of loop j
	j := m - 1
	for ; j > 0; j-- {
		span := plan.MulSat(sizes[j], body)
		if j == m-1 {
			span = addSat(span, extra)
		}
		if span > r {
			break
		}
		body = span
	}
	per := max(1, r/body) // iterations of loop j a run may take
	chunks := (sizes[j] + per - 1) / per
	chunk := (sizes[j] + chunks - 1) / chunks
	longest := plan.MulSat(chunk, body)
	if j == m-1 {
		longest = addSat(longest, extra) // joins the next run
	}
	runs := chunks
	for _, s := range sizes[:j] {
		runs = plan.MulSat(runs, s)
	}
	path := addSat(addSat(longest, runs), combines)
	if runs == 1 {
		// One run is the whole chain, left whole: no fold into a total
		// (one add fewer on the path), and no accumulators taken for
		// the totals.
		path--
	}
	if float64(path) > nativeBoundBase+float64(elems)/nativeBoundPer {
		return nativeCut{}, status.Errorf(status.Unimplemented,
			"native kernel: an f64 sum of %d elements over loops of %v cannot be cut into runs within the interpreter's bound (%d adds on a path): it runs in the interpreter",
			elems, sizes, path)
	}
	if runs == 1 {
		return nativeCut{level: -1}, nil
	}
	return nativeCut{level: j, chunk: chunk}, nil
}

// nativeLayout is how the kernel of a plan sums: its shape, the
// accumulators (U) its blocks take, the cut of an f64 sum, and whether
// its row sweep is paced (NativePacer).
type nativeLayout struct {
	shape NativeShape
	u     int64
	cut   nativeCut
	paced bool
}

// pace paces nl's row sweep where e is a NativePacer that paces pl's
// kernel: a row shape swept into NativePacedRowAccs accumulators (an f64
// sum cut into runs: as many again as its totals). A paced sum whose
// runs cannot keep the interpreter's bound (its lanes' chains being
// longer) keeps the sweep it has.
func (nl *nativeLayout) pace(pl *plan.Plan, k NativeKind, e NativeEmitter) {
	p, ok := e.(NativePacer)
	if !ok || nl.shape != NativeRow {
		return
	}
	a := p.NativePacedRowAccs()
	if a <= 0 {
		return
	}
	paced, err := nativeLayoutOf(pl, k, e.NativeLanes(), e.NativeAccs, a)
	if err != nil {
		return
	}
	*nl = paced
}

// nativeLayoutOf returns pl's layout with v lanes and the accumulators
// accs (NativeEmitter.NativeAccs), or the error of a sum no cut keeps
// within the bound. paced > 0 paces a row shape's sweep: its blocks take
// paced accumulators, a cut sum's totals the next paced (an error when
// accs has not that many).
func nativeLayoutOf(pl *plan.Plan, k NativeKind, v int, accs func(column bool) int, paced int) (nativeLayout, error) {
	lay := LayoutOf(pl)
	red := lay.Reduced
	elems := int64(1)
	for _, l := range red {
		elems = plan.MulSat(elems, l.Size)
	}
	nl := nativeLayout{shape: NativeShapeOf(pl, v), cut: nativeCut{level: -1}}
	if !lay.Work || lay.ZeroSum || len(red) == 0 {
		nl.u = int64(accs(nl.shape == NativeColumn))
		return nl, nil
	}
	sizes := make([]int64, len(red))
	for i, l := range red {
		sizes[i] = l.Size
	}
	var err error
	switch nl.shape {
	case NativeRow:
		// The innermost reduced loop is the row's sweep: blocks of U
		// vectors, then up to one vector a lane and V-1 elements into
		// lane 0 of accumulator 0; the accumulators and the lanes are
		// combined after the last fold. The totals take half of the
		// accumulators, or the next U of a paced sweep.
		vv := int64(v)
		n := len(sizes)
		rowOf := func(u int64) ([]int64, int64, int64) {
			r := sizes[n-1]
			blocks := r / (u * vv)
			extra := r % vv
			if r-blocks*u*vv >= vv {
				extra++
			}
			combines := min(u, r/vv) + 1
			for w := vv; w > 1; w /= 2 {
				combines++
			}
			return append(append([]int64(nil), sizes[:n-1]...), blocks), extra, combines
		}
		all := int64(accs(false))
		nl.u = all
		if paced > 0 {
			nl.u, nl.paced = int64(paced), true
		}
		if nl.u > all {
			return nativeLayout{}, status.Errorf(status.Unimplemented,
				"native kernel: a paced sweep of %d accumulators, more than the %d there are", nl.u, all)
		}
		sz, extra, combines := rowOf(nl.u)
		nl.cut, err = nativeCutOf(k, sz, extra, elems, combines)
		switch {
		case err != nil || nl.cut.none():
		case nl.paced && 2*nl.u > all:
			return nativeLayout{}, status.Errorf(status.Unimplemented,
				"native kernel: a paced sweep of %d accumulators has no room for its totals", nl.u)
		case !nl.paced:
			nl.u /= 2
			sz, extra, combines = rowOf(nl.u)
			nl.cut, err = nativeCutOf(k, sz, extra, elems, combines)
		}
	default:
		nl.u = int64(accs(nl.shape == NativeColumn))
		if nl.cut, err = nativeCutOf(k, sizes, 0, elems, 1); err == nil && !nl.cut.none() {
			nl.u /= 2
		}
	}
	return nl, err
}

// CheckNativeRuns refuses an f64 sum whose runs cannot keep the
// interpreter's bound with v lanes and the accumulators accs
// (NativeEmitter.NativeAccs): one that runs in the interpreter.
func CheckNativeRuns(pl *plan.Plan, k NativeKind, v int, accs func(column bool) int) error {
	_, err := nativeLayoutOf(pl, k, v, accs, 0)
	return err
}

// NativeSpeculator is optional: an instruction set whose exact f64 max
// or min costs several instructions per vector (amd64: the NaN rule and
// the order of the zeros) and that has a cheaper combine exact whenever
// no NaN takes part emits the kernel twice, as its f32 kernels do
// (amd64's speculate.go):
//
//   - first NaN-free code: from NativeNaNFree on, NativeLoad combines by
//     the cheap instruction and flags the lanes of src where a NaN is
//     (it may check two src vectors with one compare); NativeCombine
//     may take the cheap instruction unchecked (accumulators hold a NaN
//     only after a flagged load); the stores flag what the cheap
//     instruction may have got wrong besides (amd64's AVX2 max: a -0
//     output); and Return tests the flag and jumps to the exact code
//     when it is set;
//   - then, from NativeExact on, the exact code: the whole kernel again
//     from the argument block, overwriting every output the NaN-free
//     code wrote.
//
// Running the call again is safe: a native kernel reads nothing it
// writes (src never overlaps dst). A kernel with post-ops is not
// speculated: a binary operand may be dst itself, which the first run
// would have overwritten, and the epilogue's temporaries would crowd
// the NaN-free code's registers.
type NativeSpeculator interface {
	// NativeNaNFree reports whether the emitter speculates on its kind,
	// and if so starts the NaN-free code.
	NativeNaNFree() bool
	// NativeExact starts the exact code, where the NaN-free code jumps
	// when the flag is set.
	NativeExact()
}

// Speculative reports whether a kernel of kind k may speculate on
// NaN-free data (NativeSpeculator): an f64 max or min without post-ops.
// The NaN-free code combines elements as loaded, so a transformed max or
// min (of |x|, say) takes the exact code alone.
func (k NativeKind) Speculative() bool {
	return k.Float && (k.Op == NativeMax || k.Op == NativeMin) && k.Transform == NativeNoTransform && !k.PostOps
}

// Native emits the whole kernel of pl through e (the ABI of plan.Args:
// Count runs the outermost Outer loop; a plan without one runs once): an
// f64 max or min speculating on NaN-free data first where e is a
// NativeSpeculator that speculates.
func Native(pl *plan.Plan, k NativeKind, e NativeEmitter) {
	lay := LayoutOf(pl)
	if !lay.Work {
		e.Return()
		return
	}
	nl, err := nativeLayoutOf(pl, k, e.NativeLanes(), e.NativeAccs, 0)
	if err != nil {
		e.Fail(err) // CheckNative refuses such a plan
		return
	}
	nl.pace(pl, k, e)
	if k.LSE {
		if _, ok := e.(NativeLSE); !ok {
			e.Fail(status.Errorf(status.Unimplemented, "native kernel: no log-sum-exp passes"))
			return
		}
	}
	if rb, ok := e.(NativeRowByRower); ok && nl.shape == NativeColumn && nl.cut.none() && nativeRowByRow(pl, k, lay, e.NativeLanes()) {
		if ahead, hinted := rb.NativeRowByRow(); hinted {
			// Exact code only: the NaN-free code's stores would check
			// each row's partials, not just the results.
			e.Prologue(0)
			nativeByRows(e, rb, pl, k, lay.Reduced[0], e.NativeAccs(true), ahead)
			e.Return()
			return
		}
	}
	if s, ok := e.(NativeSpeculator); ok && k.Speculative() && s.NativeNaNFree() {
		nativeKernel(pl, k, e, lay, nl)
		s.NativeExact()
	}
	nativeKernel(pl, k, e, lay, nl)
}

// nativeKernel emits the kernel of pl from its prologue to its return.
func nativeKernel(pl *plan.Plan, k NativeKind, e NativeEmitter, lay Layout, nl nativeLayout) {
	var cnt int16
	if len(pl.Outer) > 0 {
		cnt = e.Counter()
	}
	e.Prologue(cnt)
	kept := pl.Outer
	if pl.HasInner && nl.shape != NativeColumn {
		kept = append(append([]plan.Loop(nil), pl.Outer...), pl.Inner)
	}
	nest := Nest{Loops: kept, Counted: len(pl.Outer) > 0, Cnt: cnt}
	switch nl.shape {
	case NativeColumn:
		nest.Emit(e, func() { nativeColumn(e, pl, k, lay.Reduced, lay.ZeroSum, nl) })
	case NativeRow:
		nest.Emit(e, func() {
			if k.LSE {
				nativeLSEMax(e, func(max nativeLayout) { nativeRow(e, k, lay.Reduced, max, nil) }, nl)
			}
			nativeRow(e, k, lay.Reduced, nl, e.NativeStoreFirst)
		})
	default:
		nest.Emit(e, func() {
			if k.LSE {
				nativeLSEMax(e, func(max nativeLayout) { nativeElement(e, k, lay.Reduced, lay.ZeroSum, max.cut, nil) }, nl)
			}
			nativeElement(e, k, lay.Reduced, lay.ZeroSum, nl.cut, e.NativeStoreFirst)
		})
	}
	e.Return()
	if cnt != 0 {
		e.FreeCounter(cnt)
	}
}

// nativeElement emits one output an element at a time into lane 0 of
// accumulator 0 (none when zero: nothing is reduced), a long f64 sum in
// the runs of cut added into accumulator 1, then store (nil: the
// result is left in accumulator 0).
func nativeElement(e NativeEmitter, k NativeKind, red []plan.Loop, zero bool, cut nativeCut, store func()) {
	e.NativeInit(0)
	if !cut.none() {
		e.NativeInit(1)
	}
	if !zero {
		nativeLoops(e, red, int64(k.Bytes), cut, func() { e.NativeLoad(0, 0, 1) }, func() { nativeFold(e, 1, 1) })
	}
	if !cut.none() {
		e.NativeCombine(0, 1)
	}
	if store != nil {
		store()
	}
}

// nativeLoops emits the loops around body (outermost first), loop
// cut.level in chunks of cut.chunk iterations, fold after each chunk and
// after the iterations left over.
func nativeLoops(e NativeEmitter, loops []plan.Loop, sz int64, cut nativeCut, body, fold func()) {
	var emit func(level int)
	emit = func(level int) {
		if level == len(loops) {
			body()
			return
		}
		l := loops[level]
		s := Steps{Src: l.SrcStride * sz}
		inner := func() { emit(level + 1) }
		if level == cut.level {
			nativeChunks(e, l.Size, s, cut.chunk, inner, fold)
			return
		}
		Loop(e, l.Size, s, inner)
	}
	emit(0)
}

// nativeChunks emits a loop of n iterations with steps s in chunks of
// chunk iterations, fold after each chunk and after the iterations left
// over.
func nativeChunks(e NativeEmitter, n int64, s Steps, chunk int64, body, fold func()) {
	Loop(e, n/chunk, s.Scaled(chunk), func() {
		Loop(e, chunk, s, body)
		fold()
	})
	if rest := n % chunk; rest > 0 {
		e.Pointers().Advance(s, n-rest)
		Loop(e, rest, s, body)
		fold()
		e.Pointers().Advance(s, -(n - rest))
	}
}

// nativeFold adds accumulators 0..m-1 into the totals u..u+m-1 and
// starts them again.
func nativeFold(e NativeEmitter, m, u int64) {
	for i := range m {
		e.NativeCombine(int(u+i), int(i))
		e.NativeInit(int(i))
	}
}

// nativeColumn emits the Inner loop in blocks of U vectors, each
// sweeping the reduced loops red (none at all when zero: nothing is
// reduced, every output is the identity), a long f64 sum in the runs of
// nl.cut.
func nativeColumn(e NativeEmitter, pl *plan.Plan, k NativeKind, red []plan.Loop, zero bool, nl nativeLayout) {
	v := int64(e.NativeLanes())
	sz := int64(k.Bytes)
	u, cut := nl.u, nl.cut
	s := e.StepsOf(&pl.Inner)
	pf, prefetch := e.(NativePrefetcher)
	block := func(m int64) {
		body := func() {
			if prefetch && len(red) > 0 && red[len(red)-1].Size > argPrefetchRows {
				ahead := argPrefetchRows * red[len(red)-1].SrcStride * sz
				for b := int64(0); b < m*v*sz; b += 64 {
					pf.NativePrefetchSrc(ahead + b)
				}
			}
			for i := range m {
				nativeUse(e, k, int(i))
				e.NativeLoad(int(i), i*v*sz, int(v))
			}
		}
		if k.LSE {
			// The max pass: each lane's largest, its shift.
			lse := e.(NativeLSE)
			lse.NativeLSEPass(false)
			for i := range m {
				e.NativeInit(int(i))
			}
			if !zero {
				nativeLoops(e, red, sz, nativeCut{level: -1}, body, nil)
			}
			for i := range m {
				lse.NativeLSEShift(int(i), int(i))
			}
			lse.NativeLSEPass(true)
		}
		for i := range m {
			e.NativeInit(int(i))
			if !cut.none() {
				e.NativeInit(int(u + i))
			}
		}
		if !zero {
			nativeLoops(e, red, sz, cut, body, func() { nativeFold(e, m, u) })
		}
		for i := range m {
			at := i
			if !cut.none() {
				at = u + i
			}
			nativeUse(e, k, int(i))
			e.NativeStoreColumn(int(at), Block(int(i), int(v), int(v), s))
		}
	}
	full := pl.Inner.Size / (u * v)
	Loop(e, full, s.Scaled(u*v), func() { block(u) })
	at := func(i int64, m int64) {
		e.Pointers().Advance(s, i)
		block(m)
		e.Pointers().Advance(s, -i)
	}
	done := full * u * v
	if nv := (pl.Inner.Size - done) / v; nv > 0 {
		at(done, nv)
	}
	if pl.Inner.Size%v != 0 {
		at(pl.Inner.Size-v, 1)
	}
}

// nativeRow emits one output whose innermost reduced loop (the last of
// red) is contiguous and at least V long: blocks of U vectors, the whole
// vectors left, the elements left one at a time, under the outer reduced
// loops; then the combine of the accumulators and of their lanes. A
// long f64 sum is cut as nl.cut says, the blocks being the innermost of
// its loops; the vectors and elements left after a fold join the next
// run (the last one has a fold of its own). store stores the result
// (nil: it is left in accumulator 0, the lanes not combined).
func nativeRow(e NativeEmitter, k NativeKind, red []plan.Loop, nl nativeLayout, store func()) {
	v := int64(e.NativeLanes())
	sz := int64(k.Bytes)
	last := red[len(red)-1]
	r := last.Size
	u, cut := nl.u, nl.cut
	nacc := min(u, r/v)
	blocks := r / (u * v)
	if blocks > 0 {
		nacc = u
	}
	for i := range nacc {
		e.NativeInit(int(i))
		if !cut.none() {
			e.NativeInit(int(u + i))
		}
	}
	fold := func() { nativeFold(e, nacc, u) }
	outer := red[:len(red)-1]
	// The blocks' u vectors are streams of per vectors each, gap bytes
	// apart: stream s reads blocks*per vectors from s*gap.
	per, gap := u, int64(0)
	if st, ok := e.(NativeStreamer); ok && blocks > 0 {
		if s := int64(st.NativeRowStreams(int(u), blocks, v*sz)); s > 1 {
			per = u / s
			gap = blocks * per * v * sz
		}
	}
	blockStep := Steps{Src: per * v * sz}
	nativeLoops(e, outer, sz, cut, func() {
		body := func() {
			for i := range u {
				e.NativeLoad(int(i), i/per*gap+i%per*v*sz, int(v))
			}
		}
		if nl.paced {
			e.(NativePacer).PaceLoops(true)
		}
		if cut.level == len(outer) {
			nativeChunks(e, blocks, blockStep, cut.chunk, body, fold)
		} else {
			Loop(e, blocks, blockStep, body)
		}
		if nl.paced {
			e.(NativePacer).PaceLoops(false)
		}
		done := blocks * u * v
		for i := range (r - done) / v {
			e.NativeLoad(int(i), done*sz+i*v*sz, int(v))
		}
		for j := r - r%v; j < r; j++ {
			e.NativeLoad(0, j*sz, 1)
		}
	}, fold)
	first := int64(0)
	if !cut.none() {
		fold()
		first = u
	}
	nativeCombineAll(e, k, int(first), int(nacc))
	if first != 0 {
		e.NativeCombine(0, int(first))
	}
	if store != nil {
		store()
	}
}

// nativeCombineAll combines accumulators first+1 to first+n-1 into
// accumulator first: as a tree of log2(n) levels where k's combine gives
// the same bits in any order (OrderFree), so that a short row's result
// waits for a few combines rather than a chain of n-1; else one after
// another, in the order that sets a float sum's bits.
func nativeCombineAll(e NativeEmitter, k NativeKind, first, n int) {
	if !k.OrderFree() {
		for i := 1; i < n; i++ {
			e.NativeCombine(first, first+i)
		}
		return
	}
	for w := 1; w < n; w *= 2 {
		for i := 0; i+w < n; i += 2 * w {
			e.NativeCombine(first+i, first+i+w)
		}
	}
}

// OrderFree reports whether k's combine gives the same bits in any
// order: max and min (exact; a NaN result is a NaN, its payload not
// kept, and -0 orders below +0 either way), and the integer ops, whose
// sums and products wrap. Not float sums and products, which round, nor
// an integer mean's pairs of registers.
func (k NativeKind) OrderFree() bool {
	return !k.Halves() && (!k.Float || k.Op == NativeMax || k.Op == NativeMin)
}

// addSat returns a+b for a, b >= 0, saturating at MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// LaneBytes is the width of k's lanes: 8 for an integer mean's sums,
// else Bytes.
func (k NativeKind) LaneBytes() int {
	if k.Mean && !k.Float {
		return 8
	}
	return k.Bytes
}

// Halves reports whether k is the mean of 64-bit integers, whose
// accumulators are pairs of registers: the sums of the elements' low
// and high 32-bit halves (NativeMeanMax).
func (k NativeKind) Halves() bool { return k.Mean && !k.Float && k.Bytes == 8 }

// IdentityPattern is the combine's identity (NativeEmitter.NativeInit)
// as a lane value, repeated across 64 bits: what every emitter
// broadcasts into an accumulator.
func (k NativeKind) IdentityPattern() uint64 {
	b := uint(k.LaneBytes() * 8)
	all := uint64(math.MaxUint64) >> (64 - b)
	signBit := uint64(1) << (b - 1)
	var v uint64
	switch k.Op {
	case NativeMul:
		v = 1
		if k.Float {
			v = math.Float64bits(1)
		}
	case NativeAnd, NativeAll:
		v = all
	case NativeMax:
		switch {
		case k.Float:
			v = math.Float64bits(math.Inf(-1))
		case k.Signed:
			v = signBit
		}
	case NativeMin:
		switch {
		case k.Float:
			v = math.Float64bits(math.Inf(1))
		case k.Signed:
			v = all &^ signBit
		default:
			v = all
		}
	}
	if b == 64 {
		return v
	}
	var p uint64
	for s := uint(0); s < 64; s += b {
		p |= v << s
	}
	return p
}

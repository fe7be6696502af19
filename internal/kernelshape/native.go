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
// Three shapes, as the index reduction's (arg.go):
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
// f64 sums keep the two levels of the f32 kernels (runs.go): when a
// lane's chain of adds would be long, the accumulators take runs of
// NativeRun iterations, each run then added into running totals (the
// accumulators U..2U-1) and the accumulators started again.
//
// f64 lanes may take |x| or x*x of each element (nativef64.go), applied
// by the emitter to each loaded vector before the combine. Finalize (an
// f64 mean's division by Div, an Lp norm's eps and root, an f32 dst's
// rounding, a logical reduction's truth) is the emitter's, in its
// stores. The kernel
// takes no post-ops, and an integer mean (a 128-bit exact sum in the
// interpreter) is refused: the interpreter runs them.

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
)

// NativeKind is what a native kernel computes, read off its plan.
type NativeKind struct {
	Op     NativeOp
	Bytes  int  // the lane (and src element) width: 1, 2, 4 or 8
	Float  bool // f64 lanes (Bytes 8)
	Signed bool // integer lanes compare signed (max, min)
	Mean   bool // f64: the result is divided by the plan's Div
	Store  NativeStore
	// f64 only (nativef64.go): the transform of each element, and the
	// Lp finalize: the eps step, EpsValue (the plan's eps widened), and
	// the square root after it.
	Transform NativeTransform
	Eps       NativeEps
	EpsValue  float64
	Sqrt      bool
}

// NativeKindOf returns what pl computes in native lanes, or an
// Unimplemented error naming what the native kernel does not take: a
// plan neither wide nor exact, post-ops, an f64 transform other than
// |x| and x*x, an f64 finalize other than a mean and the Lp norms' of p
// 1 and 2 (nativeF64Parts), a copy, an integer mean, a logical
// reduction of data wider than a byte. pl must be valid.
func NativeKindOf(pl *plan.Plan) (NativeKind, error) {
	r := pl.Reduction
	src := pl.SrcDT
	wide, exact := plan.IsWide(src), plan.IsExact(src, r)
	if !wide && !exact {
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v data reduces in f32 lanes", src)
	}
	if len(pl.PostOps) > 0 {
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: %v data with post-ops runs in the interpreter", src)
	}
	k := NativeKind{Bytes: int(src.Size())}
	if wide {
		k.Float = true
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
		if err := nativeF64Parts(r, transform, finalize, &k); err != nil {
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
	case r.Finalize == plan.FinalizeMean:
		return NativeKind{}, status.Errorf(status.Unimplemented, "native kernel: the mean of %v data (an exact 128-bit sum) runs in the interpreter", src)
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

// CheckNative reports why an emitter cannot take pl in its native
// kernel: pl.Validate's error, NativeKindOf's, takes' (the kinds the
// instruction set has instructions for), or more than maxDepth Outer or
// Reduced loops (each). Error messages start with arch and a colon. A
// plan refused with an Unimplemented error runs in the interpreter.
func CheckNative(pl *plan.Plan, arch string, maxDepth int, takes func(NativeKind) error) (NativeKind, error) {
	if err := pl.Validate(); err != nil {
		return NativeKind{}, err
	}
	k, err := NativeKindOf(pl)
	if err != nil {
		return NativeKind{}, status.Errorf(status.Unimplemented, "%s: %v", arch, err)
	}
	if err := takes(k); err != nil {
		return NativeKind{}, err
	}
	if err := CheckNativeRuns(pl, k); err != nil {
		return NativeKind{}, status.Errorf(status.Unimplemented, "%s: %v", arch, err)
	}
	if len(pl.Outer) > maxDepth || len(pl.Reduced) > maxDepth {
		return NativeKind{}, status.Errorf(status.Unimplemented, "%s: %d outer and %d reduced loops exceed the supported depth %d",
			arch, len(pl.Outer), len(pl.Reduced), maxDepth)
	}
	return k, nil
}

// NativeEmitter is what an instruction set supplies to Native. The
// emitter is made for one plan and its NativeKind, and knows both.
type NativeEmitter interface {
	Looper
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
	// NativeStoreColumn finalizes accumulator u's V lanes and stores them
	// as V consecutive dst elements off bytes past the dst pointer.
	NativeStoreColumn(u int, off int64)
	// NativeStoreFirst combines accumulator 0's lanes, finalizes the
	// result and stores it at the dst pointer.
	NativeStoreFirst()
}

// NativePrefetcher is optional: an instruction set whose column shape
// prefetches the rows ahead, as ArgPrefetcher.
type NativePrefetcher interface {
	// PrefetchSrc prefetches the line off bytes past the src pointer.
	PrefetchSrc(off int64)
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

// NativeRun returns the run length (iterations of the loop whose
// iterations each add once into every lane) of an f64 sum whose lanes
// each take chain adds in all, or 0 when the chain is left whole. f64
// sums are held to 2^-53 (1032 + N/1024) of the sum of magnitudes, the
// bound of the interpreter's two levels of runs of 1024: so a run is
// nativeRunLen adds, and each run is added once into its lane's running
// total, as the interpreter's are. Chains of up to nativeUncut adds stay
// whole (those adds and the combines of the lanes after them keep the
// bound).
func NativeRun(k NativeKind, chain int64) int64 {
	if !k.Float || k.Op != NativeAdd || chain <= nativeUncut {
		return 0
	}
	return nativeRunLen
}

// nativeUncut is the longest chain of f64 adds left whole: 1032 less the
// combines of the accumulators' lanes and the stages after them.
const nativeUncut = 1000

// nativeRunLen is the length of the runs a longer chain is cut into.
const nativeRunLen = 1024

// CheckNativeRuns refuses an f64 sum the native kernel would cut into
// runs (NativeRun) over more than one reduced loop: its shapes cut only
// the innermost reduced loop, folding after each pass of it, so a short
// innermost loop under a long one would fold once per pass, a chain of
// totals past the bound. Such a sum runs in the interpreter.
func CheckNativeRuns(pl *plan.Plan, k NativeKind) error {
	red := LayoutOf(pl).Reduced
	if len(red) < 2 {
		return nil
	}
	n := int64(1)
	for _, l := range red {
		n = plan.MulSat(n, l.Size)
	}
	if NativeRun(k, n) == 0 {
		return nil
	}
	return status.Errorf(status.Unimplemented,
		"native kernel: an f64 sum of %d elements over %d reduced loops (cut into runs of the innermost one only) runs in the interpreter", n, len(red))
}

// Native emits the whole kernel of pl through e (the ABI of plan.Args:
// Count runs the outermost Outer loop; a plan without one runs once).
func Native(pl *plan.Plan, k NativeKind, e NativeEmitter) {
	lay := LayoutOf(pl)
	if !lay.Work {
		e.Return()
		return
	}
	var cnt int16
	if len(pl.Outer) > 0 {
		cnt = e.Counter()
	}
	e.Prologue(cnt)
	shape := NativeShapeOf(pl, e.NativeLanes())
	kept := pl.Outer
	if pl.HasInner && shape != NativeColumn {
		kept = append(append([]plan.Loop(nil), pl.Outer...), pl.Inner)
	}
	nest := Nest{Loops: kept, Counted: len(pl.Outer) > 0, Cnt: cnt}
	switch shape {
	case NativeColumn:
		nest.Emit(e, func() { nativeColumn(e, pl, k, lay.Reduced, lay.ZeroSum) })
	case NativeRow:
		nest.Emit(e, func() { nativeRow(e, k, lay.Reduced) })
	default:
		nest.Emit(e, func() { nativeElement(e, k, lay.Reduced, lay.ZeroSum) })
	}
	e.Return()
}

// nativeElement emits one output an element at a time into lane 0 of
// accumulator 0 (none when zero: nothing is reduced), a long f64 sum in
// runs added into accumulator 1.
func nativeElement(e NativeEmitter, k NativeKind, red []plan.Loop, zero bool) {
	n := int64(1)
	for _, l := range red {
		n = plan.MulSat(n, l.Size)
	}
	run := int64(0)
	if !zero && len(red) > 0 {
		run = NativeRun(k, n)
	}
	e.NativeInit(0)
	if run > 0 {
		e.NativeInit(1)
	}
	if !zero {
		nativeSweep(e, red, int64(k.Bytes), run, func() { e.NativeLoad(0, 0, 1) }, func() { nativeFold(e, 1, 1) })
	}
	if run > 0 {
		e.NativeCombine(0, 1)
	}
	e.NativeStoreFirst()
}

// nativeSweep emits the reduced loops red around body, the innermost
// one cut into runs of run iterations with fold after each (and after
// each pass of the innermost loop); run 0 cuts nothing.
func nativeSweep(e NativeEmitter, red []plan.Loop, sz, run int64, body, fold func()) {
	if run == 0 || len(red) == 0 {
		EmitReduced(e, red, sz, body)
		return
	}
	n := len(red)
	last := red[n-1]
	step := Steps{Src: last.SrcStride * sz}
	EmitReduced(e, red[:n-1], sz, func() {
		Loop(e, last.Size/run, step.Scaled(run), func() {
			Loop(e, run, step, body)
			fold()
		})
		if rest := last.Size % run; rest > 0 {
			e.Pointers().Advance(step, last.Size-rest)
			Loop(e, rest, step, body)
			fold()
			e.Pointers().Advance(step, -(last.Size - rest))
		}
	})
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
// reduced, every output is the identity).
func nativeColumn(e NativeEmitter, pl *plan.Plan, k NativeKind, red []plan.Loop, zero bool) {
	v := int64(e.NativeLanes())
	sz := int64(k.Bytes)
	n := int64(1)
	for _, l := range red {
		n = plan.MulSat(n, l.Size)
	}
	u := int64(e.NativeAccs(true))
	run := int64(0)
	if len(red) > 0 {
		run = NativeRun(k, n)
	}
	if run > 0 {
		u /= 2
	}
	s := e.StepsOf(&pl.Inner)
	pf, prefetch := e.(NativePrefetcher)
	block := func(m int64) {
		for i := range m {
			e.NativeInit(int(i))
			if run > 0 {
				e.NativeInit(int(u + i))
			}
		}
		body := func() {
			if prefetch && len(red) > 0 && red[len(red)-1].Size > argPrefetchRows {
				ahead := argPrefetchRows * red[len(red)-1].SrcStride * sz
				for b := int64(0); b < m*v*sz; b += 64 {
					pf.PrefetchSrc(ahead + b)
				}
			}
			for i := range m {
				e.NativeLoad(int(i), i*v*sz, int(v))
			}
		}
		if !zero {
			nativeSweep(e, red, sz, run, body, func() { nativeFold(e, m, u) })
		}
		for i := range m {
			at := i
			if run > 0 {
				at = u + i
			}
			e.NativeStoreColumn(int(at), i*v*s.Dst)
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
// loops; then the combine of the accumulators and of their lanes.
func nativeRow(e NativeEmitter, k NativeKind, red []plan.Loop) {
	v := int64(e.NativeLanes())
	sz := int64(k.Bytes)
	last := red[len(red)-1]
	r := last.Size
	u := int64(e.NativeAccs(false))
	outer := int64(1)
	for _, l := range red[:len(red)-1] {
		outer = plan.MulSat(outer, l.Size)
	}
	// Each lane of the U accumulators takes about r/(U*V) adds per pass,
	// and up to U+V more from the vectors and elements left.
	run := NativeRun(k, plan.MulSat(outer, r/(u*v)+u+v))
	if run > 0 {
		u /= 2
	}
	nacc := min(u, r/v)
	blocks := r / (u * v)
	if blocks > 0 {
		nacc = u
	}
	for i := range nacc {
		e.NativeInit(int(i))
		if run > 0 {
			e.NativeInit(int(u + i))
		}
	}
	ptrs := e.Pointers()
	blockStep := Steps{Src: u * v * sz}
	EmitReduced(e, red[:len(red)-1], sz, func() {
		body := func() {
			for i := range u {
				e.NativeLoad(int(i), i*v*sz, int(v))
			}
		}
		if run > 0 {
			Loop(e, blocks/run, blockStep.Scaled(run), func() {
				Loop(e, run, blockStep, body)
				nativeFold(e, nacc, u)
			})
			if rest := blocks % run; rest > 0 {
				ptrs.Advance(blockStep, blocks-rest)
				Loop(e, rest, blockStep, body)
				ptrs.Advance(blockStep, -(blocks - rest))
			}
		} else {
			Loop(e, blocks, blockStep, body)
		}
		done := blocks * u * v
		for i := range (r - done) / v {
			e.NativeLoad(int(i), done*sz+i*v*sz, int(v))
		}
		for j := r - r%v; j < r; j++ {
			e.NativeLoad(0, j*sz, 1)
		}
		if run > 0 {
			nativeFold(e, nacc, u)
		}
	})
	first := int64(0)
	if run > 0 {
		first = u
	}
	for i := int64(1); i < nacc; i++ {
		e.NativeCombine(int(first), int(first+i))
	}
	if first != 0 {
		e.NativeCombine(0, int(first))
	}
	e.NativeStoreFirst()
}

// IdentityPattern is the combine's identity (NativeEmitter.NativeInit)
// as a lane value, repeated across 64 bits: what every emitter
// broadcasts into an accumulator.
func (k NativeKind) IdentityPattern() uint64 {
	b := uint(k.Bytes * 8)
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

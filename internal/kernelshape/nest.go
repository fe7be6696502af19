package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Looper is what the loop nests here need of an instruction set: the
// loops' primitives (Loop and CountLoop emit the loops themselves) and
// the byte steps of a plan loop.
type Looper interface {
	Counters
	// StepsOf converts a plan loop's element strides to byte steps.
	StepsOf(l *plan.Loop) Steps
}

// Emitter is what an instruction set supplies to Generate.
type Emitter interface {
	Looper
	// Counter takes a general register for a loop counter.
	Counter() int16
	// Prologue loads the argument block: the pointers and, when cnt is
	// not 0, Args.Count into cnt.
	Prologue(cnt int16)
	// Return leaves the kernel.
	Return()
	// Column emits the column shape (Inner contiguous in src): the kept
	// loops k (which Column may split, see Nest.SplitInnermost) around
	// sums over the reduced loops red.
	Column(k Nest, red []plan.Loop, zeroSum bool)
	// Row emits the row and element shapes: the kept loops k (which
	// Row may split, see Nest.SplitInnermost) around sums over the
	// reduced loops red.
	Row(k Nest, red []plan.Loop, zeroSum bool)
}

// Nest is the kept loops wrapped around a kernel body, outermost first.
// When Counted is set the first one runs Args.Count times (counter
// register Cnt) instead of its size: the runtime splits a problem into
// calls along it.
type Nest struct {
	Loops   []plan.Loop
	Counted bool
	Cnt     int16
}

// Generate emits the whole kernel for pl through e: prologue, the kept
// loops, the shape the plan calls for, return.
//
// A kept loop of size 0 means no output, and the kernel only returns. A
// reduced loop of size 0 means nothing is reduced (every output is the
// combine's identity, finalized: a mean is 0/Div, a max -Inf):
// the shapes get no reduced loops and zeroSum. A contiguous Inner is
// the column shape; a strided one is just one more kept loop for the
// row and element shapes, innermost so that its outputs group.
func Generate(pl *plan.Plan, e Emitter) {
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
	k := Nest{Loops: lay.Kept, Counted: len(pl.Outer) > 0, Cnt: cnt}
	if lay.Column {
		e.Column(k, lay.Reduced, lay.ZeroSum)
	} else {
		e.Row(k, lay.Reduced, lay.ZeroSum)
	}
	e.Return()
}

// Layout is what Generate hands the shapes, known before any code is
// emitted, so that an emitter's chooser sees the loops its shapes will.
type Layout struct {
	Work    bool        // some output is written (no kept loop of size 0)
	Column  bool        // a contiguous Inner: the column shape, else the row shape
	Kept    []plan.Loop // the kept loops around the shape (the row shape's end with a strided Inner)
	Reduced []plan.Loop // the reduced loops; nil when ZeroSum
	ZeroSum bool        // a reduced loop of size 0: nothing is summed
}

// LayoutOf returns the layout Generate gives pl's shape.
func LayoutOf(pl *plan.Plan) Layout {
	lay := Layout{Work: hasWork(pl), Reduced: pl.Reduced, Kept: pl.Outer}
	for _, l := range pl.Reduced {
		if l.Size == 0 {
			lay.ZeroSum, lay.Reduced = true, nil
			break
		}
	}
	if pl.HasInner && pl.Inner.SrcStride == 1 {
		lay.Column = true
	} else if pl.HasInner {
		lay.Kept = append(append([]plan.Loop(nil), pl.Outer...), pl.Inner)
	}
	return lay
}

// hasWork reports whether any output is written: no kept loop of size 0.
func hasWork(pl *plan.Plan) bool {
	for _, l := range pl.Outer {
		if l.Size == 0 {
			return false
		}
	}
	return !pl.HasInner || pl.Inner.Size > 0
}

// Emit emits k's loops around body.
func (k Nest) Emit(lp Looper, body func()) { k.emit(lp, 0, body) }

func (k Nest) emit(lp Looper, level int, body func()) {
	if level == len(k.Loops) {
		body()
		return
	}
	s := lp.StepsOf(&k.Loops[level])
	inner := func() { k.emit(lp, level+1, body) }
	if level == 0 && k.Counted {
		CountLoop(lp, k.Cnt, s, inner)
		return
	}
	Loop(lp, k.Loops[level].Size, s, inner)
}

// SplitInnermost returns the loops around k's innermost loop, the
// innermost loop itself, and whether the innermost is the counted one
// (k has one loop and it is counted). k must have a loop.
func (k Nest) SplitInnermost() (outer Nest, innermost plan.Loop, counted bool) {
	n := len(k.Loops)
	outer = Nest{Loops: k.Loops[:n-1], Counted: k.Counted, Cnt: k.Cnt}
	if n == 1 {
		outer.Counted, counted = false, k.Counted
	}
	return outer, k.Loops[n-1], counted
}

// EmitReduced emits the reduced loops red around body; only src moves,
// by srcSize-byte elements.
func EmitReduced(lp Looper, red []plan.Loop, srcSize int64, body func()) {
	if len(red) == 0 {
		body()
		return
	}
	Loop(lp, red[0].Size, Steps{Src: red[0].SrcStride * srcSize}, func() { EmitReduced(lp, red[1:], srcSize, body) })
}

// Chunks emits n iterations of a loop with steps s in chunks of c
// iterations: a loop over the n/c full chunks, then the n mod c left
// over as one partial chunk. chunk(m) emits m iterations starting at the
// pointers; the pointers end where they started.
func Chunks(lp Looper, ptrs *Pointers, n int64, c int, s Steps, chunk func(m int)) {
	full, rest := n/int64(c), int(n%int64(c))
	Loop(lp, full, s.Scaled(int64(c)), func() { chunk(c) })
	if rest > 0 {
		ptrs.Advance(s, full*int64(c))
		chunk(rest)
		ptrs.Advance(s, -full*int64(c))
	}
}

package interp

import (
	"sync"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// rowCap bounds the row of outputs computed together: longer rows are
// done rowCap outputs at a time, so scratch memory does not grow with
// the input.
const rowCap = 1024

// shortRuns is the longest reduction whose outputs are computed as rows
// of accumulators even without an Inner loop: the row's elements are
// then gathered across its outputs, which costs less than the setup of
// a run per output when the runs are this short
// (docs/PERFORMANCE-log.md).
const shortRuns = 8

// loop is a plan.Loop with int sizes and strides. Run has checked that the
// plan's spans fit the buffers, so every offset a loop of size > 1 can
// produce fits in an int.
type loop struct {
	size, src, dst int
	bin            [plan.MaxBinary]int
}

// exec is the per-call state: the views, the plan's loops with size-1
// loops dropped, and the scratch rows. It comes from a pool, so a call
// allocates nothing in the steady state.
//
// The outputs are computed a row at a time: the row is the plan's Inner
// loop, or where it has none its innermost Outer loop. With an Inner
// loop (or little to reduce: shortRuns) each reduced index brings a
// whole row of src elements, which the row's accumulators take in
// together (accumulate); otherwise each output of the row reduces its
// own runs of src (reduceOne). Either way the finalize, post-ops and
// stores then run over the whole row (emit).
type exec struct {
	src      view
	bins     [plan.MaxBinary]view
	dst      []byte
	dstDT    dtypes.DataType
	ops      []plan.PostOp
	red      plan.Reduction // the plan's reduction (no transform when src holds partials)
	k        kernel         // the loops that combine src elements
	lse      bool           // a log-sum-exp (lseRow computes it whole)
	finalize bool           // the plan applies the alg's finalize
	div      int64          // the mean's divisor
	outer    []loop
	reds     []loop
	row      loop // the row of outputs
	rowAcc   bool // the row takes in whole rows of src (accumulate), else reduceOne per output
	emptyRed bool // a reduced loop has size 0: every sum is over nothing
	loopBuf  [plan.MaxLoops]loop

	acc   [rowCap]float64    // the row's accumulators, then its combined values
	acc32 [rowCap]float32    // kMax and kMin accumulators
	out   [rowCap]float32    // the row's results, through the post-ops
	shift [rowCap]float64    // log-sum-exp shifts of a row
	bufs  [8][rowCap]float32 // widened src rows
	wide  [rowCap]float64    // transformed elements (kWide)
	seen  [rowCap]bool       // outputs whose first NaN firstNaNs has found
}

var execPool = sync.Pool{New: func() any { return new(exec) }}

func getExec() *exec { return execPool.Get().(*exec) }

// putExec drops the references to the caller's buffers before pooling.
func putExec(e *exec) {
	e.src, e.bins, e.dst, e.ops = view{}, [plan.MaxBinary]view{}, nil, nil
	execPool.Put(e)
}

// init prepares e to run pl; it returns false when there is nothing to do
// (some kept loop has size 0).
func (e *exec) init(pl *plan.Plan, src, dst []byte, bins [][]byte) bool {
	e.ops, e.dst, e.dstDT = pl.PostOps, dst, pl.DstDT
	e.red, e.div = pl.Reduction, pl.Div
	if pl.Stage&plan.SkipTransform != 0 {
		e.red.Transform = plan.TransformNone // partials are combined as they are
	}
	e.lse = pl.ShiftedLogSumExp()
	e.finalize = pl.Stage&plan.SkipFinalize == 0 && e.red.Finalize != plan.FinalizeNone && !e.lse
	e.k = kernelOf(e.red)
	e.emptyRed = false
	for _, l := range pl.Reduced {
		e.emptyRed = e.emptyRed || l.Size == 0
	}
	buf := e.loopBuf[:0]
	for _, l := range pl.Outer {
		if l.Size == 0 {
			return false
		}
		if l.Size > 1 {
			buf = append(buf, e.conv(&l))
		}
	}
	e.outer = buf
	e.reds = buf[len(buf):]
	if !e.emptyRed {
		for _, l := range pl.Reduced {
			if l.Size > 1 {
				e.reds = append(e.reds, e.conv(&l))
			}
		}
	}
	switch {
	case pl.HasInner:
		if pl.Inner.Size == 0 {
			return false
		}
		e.row = e.conv(&pl.Inner)
	case len(e.outer) > 0:
		e.row = e.outer[len(e.outer)-1]
		e.outer = e.outer[:len(e.outer)-1]
	default:
		e.row = loop{size: 1}
	}
	e.rowAcc = pl.HasInner || len(e.reds) == 0 || pl.N <= shortRuns
	e.src.set(pl.SrcDT, src)
	k := 0
	for _, op := range pl.PostOps {
		if op.Kind.IsBinary() {
			e.bins[k].set(op.BinDT, bins[k])
			k++
		}
	}
	return true
}

// conv converts a loop. When no sum reads src (emptyRed), src strides are
// unchecked by Run and are zeroed so that no offset can overflow.
func (e *exec) conv(l *plan.Loop) loop {
	c := loop{size: int(l.Size), dst: int(l.DstStride)}
	if !e.emptyRed {
		c.src = int(l.SrcStride)
	}
	for j, s := range l.BinStrides {
		c.bin[j] = int(s)
	}
	return c
}

// run walks the Outer loops (an odometer, innermost fastest) and computes
// the row of outputs under each Outer index.
func (e *exec) run() {
	var idx [plan.MaxLoops]int
	var bo [plan.MaxBinary]int
	so, do := 0, 0
	nb := e.nbins()
	for {
		e.block(so, do, &bo)
		k := len(e.outer) - 1
		for ; k >= 0; k-- {
			l := &e.outer[k]
			if idx[k]++; idx[k] < l.size {
				so += l.src
				do += l.dst
				for j := range nb {
					bo[j] += l.bin[j]
				}
				break
			}
			idx[k] = 0
			so -= (l.size - 1) * l.src
			do -= (l.size - 1) * l.dst
			for j := range nb {
				bo[j] -= (l.size - 1) * l.bin[j]
			}
		}
		if k < 0 {
			return
		}
	}
}

// nbins is the number of binary post-ops.
func (e *exec) nbins() int {
	n := 0
	for _, op := range e.ops {
		if op.Kind.IsBinary() {
			n++
		}
	}
	return n
}

// block computes the row of outputs at one Outer index, rowCap outputs
// at a time.
func (e *exec) block(so, do int, bo *[plan.MaxBinary]int) {
	rl := &e.row
	for i0 := 0; i0 < rl.size; i0 += rowCap {
		acc := e.acc[:min(rowCap, rl.size-i0)]
		base := so + i0*rl.src
		if e.lse {
			e.lseRow(acc, base)
		} else {
			e.reduceRow(e.k, acc, base)
		}
		var b [plan.MaxBinary]int
		for j := range b {
			b[j] = bo[j] + i0*rl.bin[j]
		}
		e.emit(acc, do+i0*rl.dst, &b)
	}
}

// odometer walks the src offsets of a loop nest, innermost index fastest.
type odometer struct {
	loops []loop
	idx   [plan.MaxLoops]int
	off   int
}

// next advances to the next index and reports false after the last.
func (o *odometer) next() bool {
	for k := len(o.loops) - 1; k >= 0; k-- {
		l := &o.loops[k]
		if o.idx[k]++; o.idx[k] < l.size {
			o.off += l.src
			return true
		}
		o.idx[k] = 0
		o.off -= (l.size - 1) * l.src
	}
	return false
}

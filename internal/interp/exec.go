package interp

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// rowCap bounds the row of accumulators an [O,R,I] walk keeps: Inner runs
// longer than this are done rowCap outputs at a time, so scratch memory
// does not grow with the input.
const rowCap = 512

// loop is a plan.Loop with int sizes and strides. Run has checked that the
// plan's spans fit the buffers, so every offset a loop of size > 1 can
// produce fits in an int.
type loop struct {
	size, src, dst int
	bin            [plan.MaxBinary]int
}

// exec is the per-call state: the views, the plan's loops with size-1
// loops dropped, and the accumulator row. It comes from a pool, so a call
// allocates nothing in the steady state.
type exec struct {
	src      view
	bins     [plan.MaxBinary]view
	dst      []byte
	dstDT    dtypes.DataType
	ops      []plan.PostOp
	red      plan.Reduction // the plan's reduction (no transform when src holds partials)
	plain    bool           // a sum of untransformed elements: the typed fast loops apply
	lse      bool           // a log-sum-exp (lseRow computes it whole)
	id       float64        // the accumulators' start (the alg's identity)
	finalize bool           // the plan applies the alg's finalize
	div      int64          // the mean's divisor
	outer    []loop
	reds     []loop
	inner    loop
	hasInner bool
	emptyRed bool // a reduced loop has size 0: every sum is over nothing
	loopBuf  [plan.MaxLoops]loop
	row      [rowCap]float64
	shift    [rowCap]float64 // log-sum-exp shifts of a row
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
	e.plain = e.red.Combine == plan.CombineAdd && e.red.Transform == plan.TransformNone
	e.id = float64(e.red.Identity())
	e.emptyRed, e.hasInner = false, false
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
	if pl.HasInner {
		if pl.Inner.Size == 0 {
			return false
		}
		e.inner, e.hasInner = e.conv(&pl.Inner), true
	}
	e.reds = buf[len(buf):]
	if !e.emptyRed {
		for _, l := range pl.Reduced {
			if l.Size > 1 {
				e.reds = append(e.reds, e.conv(&l))
			}
		}
	}
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
// the block of outputs under each Outer index.
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

// block computes the outputs at one Outer index: one result, or with an
// Inner loop a row of results accumulated rowCap at a time.
func (e *exec) block(so, do int, bo *[plan.MaxBinary]int) {
	if !e.hasInner {
		e.row[0] = e.sum(so)
		e.emit(e.row[:1], do, bo, &loop{})
		return
	}
	in := &e.inner
	for i0 := 0; i0 < in.size; i0 += rowCap {
		row := e.row[:min(rowCap, in.size-i0)]
		if e.lse {
			e.lseRow(row, so+i0*in.src, in.src)
		} else {
			for j := range row {
				row[j] = e.id
			}
			e.rows(row, so+i0*in.src)
		}
		var b [plan.MaxBinary]int
		for j := range b {
			b[j] = bo[j] + i0*in.bin[j]
		}
		e.emit(row, do+i0*in.dst, &b, in)
	}
}

// sum returns the combination over the Reduced loops of src starting at
// base, from the identity.
func (e *exec) sum(base int) float64 {
	if e.lse {
		row := [1]float64{}
		e.lseRow(row[:], base, 0)
		return row[0]
	}
	if e.emptyRed {
		return e.id
	}
	if len(e.reds) == 0 {
		// One element, combined with the identity: a one-element sum
		// turns -0 into +0, as in the JIT.
		return e.red.CombineF64(e.id, e.red.TransformF64(float64(e.src.at(base))))
	}
	last := &e.reds[len(e.reds)-1]
	o := odometer{loops: e.reds[:len(e.reds)-1], off: base}
	s := e.id
	for {
		if e.plain {
			s += e.src.sum(o.off, last.size, last.src)
		} else {
			s = e.src.fold(&e.red, s, o.off, last.size, last.src)
		}
		if !o.next() {
			return s
		}
	}
}

// rows combines, for every index of the Reduced loops, the row of Inner
// elements at that index into acc.
func (e *exec) rows(acc []float64, base int) {
	stride := e.inner.src
	if e.plain {
		e.forRows(base, func(off int) { e.src.addRow(acc, off, stride) })
		return
	}
	e.forRows(base, func(off int) { e.src.foldRow(&e.red, acc, off, stride) })
}

// forRows calls f with the src offset of every index of the Reduced
// loops from base, in order (none when a reduced loop is empty).
func (e *exec) forRows(base int, f func(off int)) {
	if e.emptyRed {
		return
	}
	if len(e.reds) == 0 {
		f(base)
		return
	}
	last := &e.reds[len(e.reds)-1]
	o := odometer{loops: e.reds[:len(e.reds)-1], off: base}
	for {
		off := o.off
		for range last.size {
			f(off)
			off += last.src
		}
		if !o.next() {
			return
		}
	}
}

// emit turns combined values into outputs: finalize, post-ops,
// conversion, store. Output
// j is written at dst element do + j*in.dst and reads binary operand k at
// bo[k] + j*in.bin[k].
func (e *exec) emit(sums []float64, do int, bo *[plan.MaxBinary]int, in *loop) {
	if len(e.ops) == 0 {
		e.storeRow(sums, do, in.dst)
		return
	}
	for j, s := range sums {
		m := float32(e.fin(s))
		k := 0
		for i := range e.ops {
			op := &e.ops[i]
			if op.Kind.IsBinary() {
				m = plan.Binary(op.Kind, m, e.bins[k].at(bo[k]+j*in.bin[k]))
				k++
			} else {
				m = plan.Eltwise(op.Kind, op.Alpha, op.Beta, m)
			}
		}
		dtypes.StoreF32(e.dstDT, e.dst, int64(do+j*in.dst), m)
	}
}

// fin applies the reduction's finalize where the plan does (for a mean
// the true division, in float64, rounded once to f32 by the caller).
func (e *exec) fin(s float64) float64 {
	if !e.finalize {
		return s
	}
	return e.red.FinalizeF64(s, e.div)
}

// storeRow is emit without post-ops, with the data type switch hoisted
// out of the loop (an identity copy is all emit).
func (e *exec) storeRow(sums []float64, do, stride int) {
	switch e.dstDT {
	case dtypes.F32:
		for j, s := range sums {
			binary.LittleEndian.PutUint32(e.dst[4*(do+j*stride):], math.Float32bits(float32(e.fin(s))))
		}
	case dtypes.BF16:
		for j, s := range sums {
			binary.LittleEndian.PutUint16(e.dst[2*(do+j*stride):], dtypes.F32ToBF16(float32(e.fin(s))))
		}
	case dtypes.F16:
		for j, s := range sums {
			binary.LittleEndian.PutUint16(e.dst[2*(do+j*stride):], dtypes.F32ToF16(float32(e.fin(s))))
		}
	default:
		for j, s := range sums {
			dtypes.StoreF32(e.dstDT, e.dst, int64(do+j*stride), float32(e.fin(s)))
		}
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

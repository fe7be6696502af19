package interp

import (
	"math"
	"sync"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// Plans over f64 src (plan.IsWide) run here, in float64 from end to end:
// each element is transformed and combined in float64 with the plan's
// plan.Reduction, sums in two levels (runs of wideChunk elements, summed
// in eight chains along a row or one chain per output across a row of
// outputs, each run's sum added to a running total), products
// sequentially, maxima and minima with Go's max and min (a NaN wins, its
// payload not kept; +0 is above -0); the finalize and the post-ops are
// plan.FinalizeF64, plan.EltwiseF64 and plan.BinaryF64, operands widened
// exactly; the result is stored with plan.StoreF64 (f64 as it is, f32
// rounded once to nearest even). A log-sum-exp is shifted by each
// output's largest element, as plan.LogSumExp says, clamped to the
// finite f64 range. f64 data never passes through f32.

// wideChunk is the length of the runs a two-level sum adds up before it
// adds their sum to the running total: error grows with the square root
// of the length, as in the f32 sums, not with the length.
const wideChunk = 1024

// wideExec is one Run of a wide plan.
type wideExec struct {
	red      plan.Reduction
	lse      bool // a shifted log-sum-exp
	finalize bool
	div      int64
	ops      []plan.PostOp
	srcRaw   []byte
	src      []float64 // srcRaw as float64, when aligned on a little-endian machine
	dst      []byte
	dstDT    dtypes.DataType
	bins     [plan.MaxBinary][]byte
	binDT    [plan.MaxBinary]dtypes.DataType
	nbin     int
	kept     []loop // Outer, then Inner
	reds     []loop // reduced loops of size > 1
	empty    bool   // a reduced loop has size 0
	rows     bool   // the last kept loop is the plan's Inner: outputs are computed a row at a time
	buf      [wideChunk]float64
	// A row of outputs: its accumulators (a sum's current runs), a
	// sum's totals, and a log-sum-exp's shifts.
	acc, tot, shift [wideChunk]float64
	acc2            [wideChunk]float64 // transformed elements of a row
}

// widePool keeps wideExecs (their rows are 40 KiB) between calls, so a
// call allocates nothing in the steady state.
var widePool = sync.Pool{New: func() any { return new(wideExec) }}

// runWide runs pl (a validated wide plan whose buffers Run has checked).
func runWide(pl *plan.Plan, src, dst []byte, bins [][]byte) {
	w := widePool.Get().(*wideExec)
	defer func() {
		w.ops, w.srcRaw, w.src, w.dst, w.bins = nil, nil, nil, nil, [plan.MaxBinary][]byte{}
		widePool.Put(w)
	}()
	w.red, w.lse, w.div, w.ops = pl.Reduction, pl.ShiftedLogSumExp(), pl.Div, pl.PostOps
	w.srcRaw, w.src, w.dst, w.dstDT = src, nil, dst, pl.DstDT
	w.nbin, w.kept, w.reds, w.empty, w.rows = 0, w.kept[:0], w.reds[:0], false, false
	if pl.Stage&plan.SkipTransform != 0 {
		w.red.Transform = plan.TransformNone
	}
	w.finalize = pl.Stage&plan.SkipFinalize == 0 && w.red.Finalize != plan.FinalizeNone && !w.lse
	if littleEndian && len(src) >= 8 && uintptr(unsafe.Pointer(unsafe.SliceData(src)))%8 == 0 {
		w.src = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/8)
	}
	for _, op := range pl.PostOps {
		if op.Kind.IsBinary() {
			w.bins[w.nbin], w.binDT[w.nbin] = bins[w.nbin], op.BinDT
			w.nbin++
		}
	}
	conv := func(l *plan.Loop) loop {
		c := loop{size: int(l.Size), src: int(l.SrcStride), dst: int(l.DstStride)}
		for j, s := range l.BinStrides {
			c.bin[j] = int(s)
		}
		return c
	}
	for _, l := range pl.Outer {
		if l.Size == 0 {
			return
		}
		w.kept = append(w.kept, conv(&l))
	}
	if pl.HasInner {
		if pl.Inner.Size == 0 {
			return
		}
		w.kept = append(w.kept, conv(&pl.Inner))
		w.rows = true
	}
	for _, l := range pl.Reduced {
		w.empty = w.empty || l.Size == 0
		if l.Size > 1 {
			w.reds = append(w.reds, conv(&l))
		}
	}
	if w.empty {
		w.reds = w.reds[:0]
	}
	w.walk()
}

// walk computes every output, the kept loops as an odometer.
func (w *wideExec) walk() {
	var idx [plan.MaxLoops]int
	var bo [plan.MaxBinary]int
	so, do := 0, 0
	kept := w.kept
	if w.rows {
		kept = kept[:len(kept)-1] // the row loop is walked by row
	}
	for {
		if w.rows {
			w.row(so, do, &bo)
		} else {
			w.output(so, do, &bo)
		}
		k := len(kept) - 1
		for ; k >= 0; k-- {
			l := &kept[k]
			if idx[k]++; idx[k] < l.size {
				so += l.src
				do += l.dst
				for j := range w.nbin {
					bo[j] += l.bin[j]
				}
				break
			}
			idx[k] = 0
			so -= (l.size - 1) * l.src
			do -= (l.size - 1) * l.dst
			for j := range w.nbin {
				bo[j] -= (l.size - 1) * l.bin[j]
			}
		}
		if k < 0 {
			return
		}
	}
}

// output computes and stores the output whose reduction starts at src
// element so.
func (w *wideExec) output(so, do int, bo *[plan.MaxBinary]int) {
	var v float64
	switch {
	case w.lse:
		m := w.reduce(plan.Reduction{Combine: plan.CombineMax}, so, 0)
		shift := lseShift(m)
		v = shift + plan.LogF64(w.reduce(w.red, so, shift))
	default:
		v = w.reduce(w.red, so, 0)
	}
	w.emit(v, do, bo)
}

// lseShift is plan.LSEShift over the finite f64 range.
func lseShift(m float64) float64 { return math.Max(-math.MaxFloat64, math.Min(math.MaxFloat64, m)) }

// row computes and stores the row of outputs (the Inner loop) whose
// first output's reduction starts at src element so, wideChunk outputs
// at a time: each reduced index brings a row of src elements, which the
// row's accumulators take in together (a sum's in runs of wideChunk
// indices, each run's sums then added to the totals).
func (w *wideExec) row(so, do int, bo *[plan.MaxBinary]int) {
	in := &w.kept[len(w.kept)-1]
	for j0 := 0; j0 < in.size; j0 += wideChunk {
		n := min(wideChunk, in.size-j0)
		base := so + j0*in.src
		acc := w.acc[:n]
		if w.lse {
			w.rowReduce(plan.Reduction{Combine: plan.CombineMax}, base, in.src, w.shift[:n], nil)
			for j, m := range w.shift[:n] {
				w.shift[j] = lseShift(m)
			}
			w.rowReduce(w.red, base, in.src, acc, w.shift[:n])
			for j, s := range acc {
				acc[j] = w.shift[j] + plan.LogF64(s)
			}
		} else {
			w.rowReduce(w.red, base, in.src, acc, nil)
		}
		var b [plan.MaxBinary]int
		for j, v := range acc {
			for k := range w.nbin {
				b[k] = bo[k] + (j0+j)*in.bin[k]
			}
			w.emit(v, do+(j0+j)*in.dst, &b)
		}
	}
}

// rowReduce sets acc[j] to the combine of output j's elements by r (an
// exp transform subtracting shift[j]), the outputs stride elements apart
// from src element base.
func (w *wideExec) rowReduce(r plan.Reduction, base, stride int, acc, shift []float64) {
	id := float64(r.Identity())
	for j := range acc {
		acc[j] = id
	}
	if w.empty {
		return
	}
	add := r.Combine == plan.CombineAdd
	tot := w.tot[:len(acc)]
	if add {
		clear(tot)
	}
	o := odometer{loops: w.reds, off: base}
	runs := 0
	for {
		x := w.elems(o.off, len(acc), stride)
		switch {
		case shift != nil:
			t := w.acc2[:len(x)]
			for j, v := range x {
				t[j] = math.Exp(v - shift[j])
			}
			x = t
		case r.Transform != plan.TransformNone:
			x = transformWide(&r, x, w.acc2[:len(x)], 0)
		}
		switch r.Combine {
		case plan.CombineAdd:
			for j, v := range x {
				acc[j] += v
			}
		case plan.CombineMul:
			for j, v := range x {
				acc[j] *= v
			}
		case plan.CombineMax:
			for j, v := range x {
				acc[j] = max(acc[j], v)
			}
		case plan.CombineMin:
			for j, v := range x {
				acc[j] = min(acc[j], v)
			}
		default:
			copy(acc, x)
		}
		if runs++; add && runs == wideChunk {
			for j, v := range acc {
				tot[j] += v
				acc[j] = 0
			}
			runs = 0
		}
		if !o.next() {
			break
		}
	}
	if add {
		for j, v := range acc {
			acc[j] = tot[j] + v
		}
	}
}

// emit finalizes v, applies the post-ops and stores the result at dst
// element do, reading binary operand k at element bo[k].
func (w *wideExec) emit(v float64, do int, bo *[plan.MaxBinary]int) {
	if w.finalize {
		v = w.red.FinalizeF64(v, w.div)
	}
	k := 0
	for i := range w.ops {
		op := &w.ops[i]
		if op.Kind.IsBinary() {
			v = plan.BinaryF64(op.Kind, v, plan.LoadF64(w.binDT[k], w.bins[k], int64(bo[k])))
			k++
			continue
		}
		v = plan.EltwiseF64(op.Kind, op.Alpha, op.Beta, v)
	}
	plan.StoreF64(w.dstDT, w.dst, int64(do), v)
}

// reduce combines the elements of one output, from src element base,
// with r (its transform, then its combine; an exp transform subtracts
// shift first), from r's identity.
func (w *wideExec) reduce(r plan.Reduction, base int, shift float64) float64 {
	var s sum2
	a := float64(r.Identity())
	if w.empty {
		return a
	}
	var last loop
	outer := w.reds
	if len(outer) > 0 {
		last = outer[len(outer)-1]
		outer = outer[:len(outer)-1]
	} else {
		last = loop{size: 1, src: 1}
	}
	o := odometer{loops: outer, off: base}
	for {
		off := o.off
		for n := last.size; n > 0; {
			c := min(n, wideChunk)
			x := w.elems(off, c, last.src)
			if r.Transform != plan.TransformNone {
				x = transformWide(&r, x, w.buf[:c], shift)
			}
			switch r.Combine {
			case plan.CombineAdd:
				s.add(x)
			case plan.CombineMul:
				for _, v := range x {
					a *= v
				}
			case plan.CombineMax:
				a = maxWide(a, x)
			case plan.CombineMin:
				a = minWide(a, x)
			default: // CombineFirst: a copy's one element
				a = x[0]
			}
			off += c * last.src
			n -= c
		}
		if !o.next() {
			break
		}
	}
	if r.Combine == plan.CombineAdd {
		return s.value()
	}
	return a
}

// elems returns n src elements from element off, stride apart: the src
// itself where contiguous and aligned, else a copy in w.buf.
func (w *wideExec) elems(off, n, stride int) []float64 {
	buf := w.buf[:n]
	if w.src != nil {
		if stride == 1 {
			return w.src[off : off+n]
		}
		for i := range buf {
			buf[i] = w.src[off+i*stride]
		}
		return buf
	}
	for i := range buf {
		buf[i] = plan.LoadF64(dtypes.F64, w.srcRaw, int64(off+i*stride))
	}
	return buf
}

// transformWide writes r's transform of each element of x (x - shift
// for an exp) into out, which may be x itself, and returns it.
func transformWide(r *plan.Reduction, x, out []float64, shift float64) []float64 {
	out = out[:len(x)]
	switch r.Transform {
	case plan.TransformAbs:
		for i, v := range x {
			out[i] = math.Abs(v)
		}
	case plan.TransformSquare:
		for i, v := range x {
			out[i] = v * v
		}
	case plan.TransformExp:
		for i, v := range x {
			out[i] = math.Exp(v - shift)
		}
	default:
		for i, v := range x {
			out[i] = r.TransformF64(v)
		}
	}
	return out
}

// sum2 is a two-level sum: runs of up to wideChunk elements are summed
// in eight chains into part, and part joins the total every wideChunk
// elements.
type sum2 struct {
	tot, part float64
	n         int
}

func (s *sum2) add(x []float64) {
	for len(x) > 0 {
		c := min(len(x), wideChunk-s.n)
		s.part += sum8(x[:c])
		s.n += c
		x = x[c:]
		if s.n == wideChunk {
			s.tot += s.part
			s.part, s.n = 0, 0
		}
	}
}

func (s *sum2) value() float64 { return s.tot + s.part }

// sum8 sums x in eight independent chains, each from +0: enough to
// keep two adders busy through their latency.
func sum8(x []float64) float64 {
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	i := 0
	for ; i+8 <= len(x); i += 8 {
		a0 += x[i]
		a1 += x[i+1]
		a2 += x[i+2]
		a3 += x[i+3]
		a4 += x[i+4]
		a5 += x[i+5]
		a6 += x[i+6]
		a7 += x[i+7]
	}
	for ; i < len(x); i++ {
		a0 += x[i]
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

// maxWide is plan.CombineF64's max folded over x from a, with Go's max,
// which has its semantics (a NaN wins, +0 is above -0; which NaN's
// payload is kept is not defined), in four chains.
func maxWide(a float64, x []float64) float64 {
	a0, a1, a2, a3 := a, a, a, a
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a0, a1, a2, a3 = max(a0, x[i]), max(a1, x[i+1]), max(a2, x[i+2]), max(a3, x[i+3])
	}
	for ; i < len(x); i++ {
		a0 = max(a0, x[i])
	}
	return max(max(a0, a1), max(a2, a3))
}

// minWide is maxWide for the min.
func minWide(a float64, x []float64) float64 {
	a0, a1, a2, a3 := a, a, a, a
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a0, a1, a2, a3 = min(a0, x[i]), min(a1, x[i+1]), min(a2, x[i+2]), min(a3, x[i+3])
	}
	for ; i < len(x); i++ {
		a0 = min(a0, x[i])
	}
	return min(min(a0, a1), min(a2, a3))
}

package interp

import "github.com/gdnn/gdnn/internal/plan"

// reduceRow sets acc[j] to the combination, with kernel k, of the
// reduced elements of output j of the row at src offset base, from k's
// identity.
func (e *exec) reduceRow(k kernel, acc []float64, base int) {
	if e.rowAcc {
		e.accumulate(k, acc, base)
		return
	}
	id := k.identity(&e.red)
	for j := range acc {
		acc[j] = e.reduceOne(k, id, base+j*e.row.src, j)
	}
}

// reduceOne returns the combination, with kernel k from id, of the
// elements of output j, whose reduced loops start at src offset base:
// run by run of the innermost reduced loop.
func (e *exec) reduceOne(k kernel, id float64, base, j int) float64 {
	if e.emptyRed {
		return id
	}
	last := &e.reds[len(e.reds)-1]
	o := odometer{loops: e.reds[:len(e.reds)-1], off: base}
	a := id
	for {
		off, n := o.off, last.size
		for n > 0 {
			c := n
			if !e.src.contiguousF32(last.src) {
				c = min(n, rowCap)
			}
			a = e.combine(k, a, e.src.elems(off, c, last.src, e.bufs[0][:]), j)
			off += c * last.src
			n -= c
		}
		if !o.next() {
			return a
		}
	}
}

// combine takes the elements x of output j into a with kernel k.
func (e *exec) combine(k kernel, a float64, x []float32, j int) float64 {
	switch k {
	case kSum:
		return a + sumOf(x)
	case kSumAbs:
		return a + sumAbs(x)
	case kSumSquare:
		return a + sumSquares(x)
	case kProd:
		return a * prodOf(x)
	case kMax:
		return float64(maxOf(float32(a), x))
	case kMin:
		return float64(minOf(float32(a), x))
	case kCopy:
		return float64(x[len(x)-1])
	case kExpShift:
		return a + sumExpShifted(x, e.shift[j])
	}
	for len(x) > 0 { // kWide, rowCap elements at a time
		c := min(len(x), rowCap)
		w := transform(&e.red, x[:c], e.wide[:])
		switch e.red.Combine {
		case plan.CombineAdd:
			a += sumOf(w)
		case plan.CombineMul:
			a *= prodOf(w)
		case plan.CombineMax:
			a = maxOf(a, w)
		default:
			a = minOf(a, w)
		}
		x = x[c:]
	}
	return a
}

// accumulate sets acc to the combination, with kernel k, of the rows of
// src elements under every reduced index, the row's first element at
// src offset base.
func (e *exec) accumulate(k kernel, acc []float64, base int) {
	id := k.identity(&e.red)
	if k == kMax || k == kMin {
		a := e.acc32[:len(acc)]
		for j := range a {
			a[j] = float32(id)
		}
		e.rows(k, acc, a, base)
		if hasNaN(a) {
			seen := e.seen[:len(a)]
			clear(seen)
			e.forRows(base, func(off int) { firstNaNs(a, e.rowAt(off, len(a), 0), seen) })
		}
		if isMax := k == kMax; hasZeros(a, isMax) {
			e.forRows(base, func(off int) { fixZeros(a, e.rowAt(off, len(a), 0), isMax) })
		}
		for j, v := range a {
			acc[j] = float64(v)
		}
		return
	}
	for j := range acc {
		acc[j] = id
	}
	e.rows(k, acc, nil, base)
}

// rows takes every row of src elements under the reduced loops (from
// base; one row when nothing is reduced, none when a reduced loop is
// empty) into acc, or acc32 for kMax and kMin: the innermost reduced
// loop's rows eight at a time where k has loops for that.
func (e *exec) rows(k kernel, acc []float64, acc32 []float32, base int) {
	if e.emptyRed {
		return
	}
	n := len(acc)
	if len(e.reds) == 0 {
		e.take(k, acc, acc32, e.rowAt(base, n, 0))
		return
	}
	last := &e.reds[len(e.reds)-1]
	o := odometer{loops: e.reds[:len(e.reds)-1], off: base}
	for {
		off, r := o.off, last.size
		if k.eights() {
			// One row from each eighth of the loop per pass: eight
			// sequential streams through memory. Neighbouring rows
			// at a time would walk one stretch of memory in several
			// interleaved places, which the hardware prefetchers of
			// some cores (Zen 4) follow much worse
			// (docs/PERFORMANCE-log.md).
			q := r / 8
			step := q * last.src
			var x rows8
			for range q {
				for i := range x {
					x[i] = e.rowAt(off+i*step, n, i)
				}
				e.take8(k, acc, acc32, &x)
				off += last.src
			}
			off += 7 * step
			r -= 8 * q
		}
		for ; r > 0; r-- {
			e.take(k, acc, acc32, e.rowAt(off, n, 0))
			off += last.src
		}
		if !o.next() {
			return
		}
	}
}

// rowAt returns the n src elements of a row from offset off, widened
// into scratch row b where they need a copy.
func (e *exec) rowAt(off, n, b int) []float32 {
	return e.src.elems(off, n, e.row.src, e.bufs[b][:])
}

// take takes one row x into acc (acc32) with kernel k.
func (e *exec) take(k kernel, acc []float64, acc32 []float32, x []float32) {
	switch k {
	case kSum:
		addRow(acc, x)
	case kSumAbs:
		addAbsRow(acc, x)
	case kSumSquare:
		addSquareRow(acc, x)
	case kProd:
		mulRow(acc, x)
	case kMax:
		maxRow(acc32, x)
	case kMin:
		minRow(acc32, x)
	case kCopy:
		copyRow(acc, x)
	case kExpShift:
		addExpShiftedRow(acc, x, e.shift[:])
	default: // kWide
		w := transform(&e.red, x, e.wide[:])
		switch e.red.Combine {
		case plan.CombineAdd:
			addRow(acc, w)
		case plan.CombineMul:
			mulRow(acc, w)
		case plan.CombineMax:
			maxRow(acc, w)
		default:
			minRow(acc, w)
		}
	}
}

// take8 takes eight rows into acc (acc32) with kernel k (k.eights()).
func (e *exec) take8(k kernel, acc []float64, acc32 []float32, x *rows8) {
	switch k {
	case kSum:
		addRows(acc, x)
	case kSumAbs:
		addAbsRows(acc, x)
	case kSumSquare:
		addSquareRows(acc, x)
	case kProd:
		mulRows(acc, x)
	case kMax:
		maxRows(acc32, x)
	default: // kMin
		minRows(acc32, x)
	}
}

// forRows calls f with the src offset of every row under the reduced
// loops from base, in order (none when a reduced loop is empty): the
// rare passes (fixZeros) that need no speed.
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

package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Rows is how the row shape reads the reduced loops of one output: with
// a contiguous innermost reduced loop (vector mode) a row of Len
// elements is summed a vector at a time; otherwise (element mode) the
// innermost reduced loop Elem is summed an element at a time; with no
// reduced loop at all the "sum" is the element itself.
type Rows struct {
	Vec     bool        // innermost reduced loop contiguous: vector mode
	Len     int64       // vector mode: elements in the innermost reduced loop
	Outer   []plan.Loop // reduced loops around the innermost one
	Elem    *plan.Loop  // element mode: the innermost reduced loop (nil: none)
	ZeroSum bool        // a reduced loop is empty: nothing is read
}

// RowsOf reads the reduced loops red (nil when zeroSum) for the row
// shape.
func RowsOf(red []plan.Loop, zeroSum bool) Rows {
	r := Rows{ZeroSum: zeroSum}
	if n := len(red); n > 0 {
		last := red[n-1]
		if last.SrcStride == 1 {
			r.Vec, r.Len, r.Outer = true, last.Size, red[:n-1]
		} else {
			r.Elem, r.Outer = &red[n-1], red[:n-1]
		}
	}
	return r
}

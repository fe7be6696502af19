package kernelshape

import "github.com/gdnn/gdnn/internal/plan"

// Row by row: a column plan the chooser gives the RowByRow shape (a
// stage-1 chunk of long, wide rows marked so by the runtime; see
// internal/jit/decompose.go) is reduced a row at a time into dst, an f32
// row of the Inner width that stays in L1 and serves as the
// accumulator: row 0 is combined with the identity and stored, each
// later row with what dst holds, so every output still takes its rows in
// order, as a column block's register would. dst holds partial sums,
// products, maxima or minima of the transformed elements. Where the rows
// are back to back the chunk is read as one stream, which the column
// blocks (a few lines of every row, then the next rows) cannot do.

// RowByRowEmitter is what an instruction set supplies to RowByRow.
type RowByRowEmitter interface {
	ColumnEmitter
	// InitAcc sets accumulator r to the combine's identity.
	InitAcc(r int)
	// LoadPartials loads n f32 partials (n <= V), off bytes past the
	// dst pointer, into r; StorePartials stores them from r.
	LoadPartials(r int, off int64, n int)
	StorePartials(r int, off int64, n int)
}

// SrcPrefetcher is optional: an instruction set that prefetches src.
type SrcPrefetcher interface {
	// PrefetchSrc prefetches the line off bytes past the src pointer.
	PrefetchSrc(off int64)
}

// RowByRow emits the reduction of the rows of red, each of the Inner
// loop in, a row at a time through dst, vecs vectors a step; where the
// instruction set prefetches, each 64-byte line of src ahead bytes
// ahead (0: none).
func RowByRow(e RowByRowEmitter, in, red plan.Loop, vecs int, ahead int64) {
	V := e.Lanes()
	size := e.ElemTypes().SrcSize
	si := e.StepsOf(&in)
	pf, _ := e.(SrcPrefetcher)
	if ahead == 0 {
		pf = nil
	}
	sweep := func(first bool) {
		Chunks(e, e.Pointers(), in.Size, vecs*V, si, func(m int) {
			for v := 0; v*V < m; v++ {
				n := min(V, m-v*V)
				src, dst := int64(v*V)*size, int64(v*V)*4
				if pf != nil && src%64 == 0 {
					pf.PrefetchSrc(src + ahead)
				}
				if first {
					e.InitAcc(v)
				} else {
					e.LoadPartials(v, dst, n)
				}
				if n == V {
					e.AddVectors([]int{v}, src, n, false)
				} else {
					e.AddPartial(v, src, n)
				}
				e.StorePartials(v, dst, n)
			}
		})
	}
	sweep(true)
	if red.Size > 1 {
		step := Steps{Src: red.SrcStride * size}
		e.Pointers().Advance(step, 1)
		Loop(e, red.Size-1, step, func() { sweep(false) })
	}
}

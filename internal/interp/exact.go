package interp

import (
	"math"
	"math/big"
	"math/bits"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// Exact plans (plan.IsExact: integer and boolean data) run here, in
// integer arithmetic of the src's own width: a sum or a product wraps
// around in two's complement as the dst type does, max and min are
// exact, the bitwise combines combine bits, and the logical ones the
// truth of each element (nonzero). The mean adds the elements exactly
// (128 bits), divides the float64 of that sum by the count and truncates
// toward zero, saturating, into an integer dst (ONNX Runtime's rule), or
// rounds the quotient once into an f32 dst. The loops are chosen once per
// call, by type and kind; the logical and and or stop at the first
// element that decides them.

// exactRowCap bounds the row of Inner outputs reduced together: rows of
// src that long are read whole per reduced index (a few pages, which the
// prefetchers follow), and the accumulators (32 KiB of 64-bit ones) stay
// in L1 or L2.
const exactRowCap = 4096

// integer is the element types of exact data (Boolean is read as uint8).
type integer interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// exactOp is what an exact plan combines.
type exactOp uint8

const (
	exAdd exactOp = iota
	exMul
	exMax
	exMin
	exAnd
	exOr
	exXor
	exAll // logical and: 1 while every element is nonzero
	exAny // logical or: 1 once some element is nonzero
	exOdd // logical xor: the parity of the nonzero elements
	exCopy
	exMean
)

// exactOpOf maps a validated exact plan to its op. Max and min of
// booleans are their logical or and and, so that any nonzero byte counts
// as true and the result is 0 or 1.
func exactOpOf(pl *plan.Plan) exactOp {
	r := pl.Reduction
	if r.Transform == plan.TransformNonzero {
		return [...]exactOp{plan.CombineAnd: exAll, plan.CombineOr: exAny, plan.CombineXor: exOdd}[r.Combine]
	}
	switch {
	case r.Finalize == plan.FinalizeMean:
		return exMean
	case pl.SrcDT == dtypes.Boolean && r.Combine == plan.CombineMax:
		return exAny
	case pl.SrcDT == dtypes.Boolean && r.Combine == plan.CombineMin:
		return exAll
	}
	return [...]exactOp{plan.CombineAdd: exAdd, plan.CombineMul: exMul, plan.CombineMax: exMax, plan.CombineMin: exMin,
		plan.CombineFirst: exCopy, plan.CombineAnd: exAnd, plan.CombineOr: exOr, plan.CombineXor: exXor}[r.Combine]
}

// runExact runs the exact plan pl (validated, buffers checked).
func runExact(pl *plan.Plan, src, dst []byte) {
	switch pl.SrcDT {
	case dtypes.S8:
		exactTyped[int8](pl, src, dst)
	case dtypes.U8, dtypes.Boolean:
		exactTyped[uint8](pl, src, dst)
	case dtypes.S16:
		exactTyped[int16](pl, src, dst)
	case dtypes.U16:
		exactTyped[uint16](pl, src, dst)
	case dtypes.S32:
		exactTyped[int32](pl, src, dst)
	case dtypes.U32:
		exactTyped[uint32](pl, src, dst)
	case dtypes.S64:
		exactTyped[int64](pl, src, dst)
	case dtypes.U64:
		exactTyped[uint64](pl, src, dst)
	}
}

// intView returns b as a slice of T (little-endian, as gdnn's buffers are
// and its platforms run).
func intView[T integer](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// exactRun is one call's state.
type exactRun[T integer] struct {
	op    exactOp
	x     []T
	dst   []byte
	dstDT dtypes.DataType
	outer []plan.Loop
	reds  []plan.Loop // all but the last reduced loop
	last  plan.Loop   // the innermost reduced loop (size 1 when none)
	inner plan.Loop   // the kept inner run (size 1 when none)
	n     int64       // elements per output
	row   []T         // the accumulators of a row of Inner outputs
	wide  []wide128   // the mean's
}

// exactTyped runs pl over src elements of type T.
func exactTyped[T integer](pl *plan.Plan, src, dst []byte) {
	r := exactRun[T]{op: exactOpOf(pl), x: intView[T](src), dst: dst, dstDT: pl.DstDT, outer: pl.Outer, n: 1,
		last: plan.Loop{Size: 1}, inner: plan.Loop{Size: 1}}
	for _, l := range pl.Reduced {
		r.n = plan.MulSat(r.n, l.Size)
	}
	if k := len(pl.Reduced); k > 0 {
		r.reds, r.last = pl.Reduced[:k-1], pl.Reduced[k-1]
	}
	if pl.HasInner {
		r.inner = pl.Inner
	}
	w := int(min(r.inner.Size, exactRowCap))
	r.row = make([]T, w)
	if r.op == exMean {
		r.wide = make([]wide128, w)
	}
	r.walk(0, 0, 0)
}

// walk runs the Outer loops from level l, at src offset s and dst
// offset d (elements).
func (r *exactRun[T]) walk(l int, s, d int64) {
	if l == len(r.outer) {
		for j := int64(0); j < r.inner.Size; j += exactRowCap {
			w := min(r.inner.Size-j, exactRowCap)
			r.rowOf(s+j*r.inner.SrcStride, d+j*r.inner.DstStride, int(w))
		}
		return
	}
	lp := &r.outer[l]
	for i := int64(0); i < lp.Size; i++ {
		r.walk(l+1, s+i*lp.SrcStride, d+i*lp.DstStride)
	}
}

// rowOf computes the w outputs of the Inner run at src offset s, dst
// offset d.
func (r *exactRun[T]) rowOf(s, d int64, w int) {
	acc := r.row[:w]
	id := identity[T](r.op)
	for j := range acc {
		acc[j] = id
	}
	if r.op == exMean {
		clear(r.wide[:w])
	}
	if r.n > 0 {
		r.reduce(0, s, acc)
	}
	for j := range acc {
		r.store(d+int64(j)*r.inner.DstStride, acc[j], j)
	}
}

// reduce combines into acc the elements of the reduced loops from level
// l at src offset s: the innermost loop a run at a time per output when
// the row is one output, else a row of the outputs per reduced index.
func (r *exactRun[T]) reduce(l int, s int64, acc []T) {
	if l < len(r.reds) {
		lp := &r.reds[l]
		for i := int64(0); i < lp.Size; i++ {
			if r.settled(acc) {
				return
			}
			r.reduce(l+1, s+i*lp.SrcStride, acc)
		}
		return
	}
	n, st := int(r.last.Size), int(r.last.SrcStride)
	if len(acc) == 1 {
		if r.op == exMean {
			r.wide[0] = sumWide(r.wide[0], r.x, int(s), n, st)
			return
		}
		acc[0] = combineRun(r.op, acc[0], r.x, int(s), n, st)
		return
	}
	is := int(r.inner.SrcStride)
	for i := range n {
		base := int(s) + i*st
		if r.op == exMean {
			for j := range acc {
				r.wide[j] = addInt(r.wide[j], r.x[base+j*is])
			}
			continue
		}
		combineRow(r.op, acc, r.x, base, is)
	}
}

// settled reports whether every output of the row is decided: a logical
// and that met a zero, a logical or that met a nonzero.
func (r *exactRun[T]) settled(acc []T) bool {
	if r.op != exAll && r.op != exAny {
		return false
	}
	want := T(0)
	if r.op == exAny {
		want = 1
	}
	for _, a := range acc {
		if a != want {
			return false
		}
	}
	return true
}

// identity is op's accumulator over no elements.
func identity[T integer](op exactOp) T {
	switch op {
	case exMul, exAll:
		return 1
	case exAnd:
		return ^T(0)
	case exMax:
		return leastOf[T]()
	case exMin:
		return ^leastOf[T]()
	}
	return 0
}

// leastOf is T's least value: 0, or for a signed T the one with only the
// sign bit set.
func leastOf[T integer]() T {
	var z T
	if ^z < 0 {
		return T(1) << (8*unsafe.Sizeof(z) - 1)
	}
	return 0
}

// combineRun combines n elements of x from offset s, stride st, into a.
func combineRun[T integer](op exactOp, a T, x []T, s, n, st int) T {
	if st == 1 {
		return combineDense(op, a, x[s:s+n])
	}
	return combineStrided(op, a, x, s, n, st)
}

// combineStrided is combineRun in one plain loop.
func combineStrided[T integer](op exactOp, a T, x []T, s, n, st int) T {
	switch op {
	case exAdd:
		for i := range n {
			a += x[s+i*st]
		}
	case exMul:
		for i := range n {
			a *= x[s+i*st]
		}
	case exMax:
		for i := range n {
			a = max(a, x[s+i*st])
		}
	case exMin:
		for i := range n {
			a = min(a, x[s+i*st])
		}
	case exAnd:
		for i := range n {
			a &= x[s+i*st]
		}
	case exOr:
		for i := range n {
			a |= x[s+i*st]
		}
	case exXor:
		for i := range n {
			a ^= x[s+i*st]
		}
	case exAll:
		for i := 0; i < n && a != 0; i++ {
			if x[s+i*st] == 0 {
				a = 0
			}
		}
	case exAny:
		for i := 0; i < n && a == 0; i++ {
			if x[s+i*st] != 0 {
				a = 1
			}
		}
	case exOdd:
		for i := range n {
			if x[s+i*st] != 0 {
				a ^= 1
			}
		}
	case exCopy:
		a = x[s+(n-1)*st]
	}
	return a
}

// combineDense is combineRun over contiguous elements: eight independent
// chains where the combine has a latency to hide, so that the loop runs
// near one element per cycle.
func combineDense[T integer](op exactOp, a T, x []T) T {
	switch op {
	case exAdd:
		var b, c, d, e, f, g, h T
		for len(x) >= 8 {
			y := x[:8:8]
			a, b, c, d = a+y[0], b+y[1], c+y[2], d+y[3]
			e, f, g, h = e+y[4], f+y[5], g+y[6], h+y[7]
			x = x[8:]
		}
		for _, v := range x {
			a += v
		}
		return a + b + c + d + e + f + g + h
	case exMax:
		b, c, d, e, f, g, h := a, a, a, a, a, a, a
		for len(x) >= 8 {
			y := x[:8:8]
			a, b, c, d = max(a, y[0]), max(b, y[1]), max(c, y[2]), max(d, y[3])
			e, f, g, h = max(e, y[4]), max(f, y[5]), max(g, y[6]), max(h, y[7])
			x = x[8:]
		}
		for _, v := range x {
			a = max(a, v)
		}
		return max(a, b, c, d, e, f, g, h)
	case exMin:
		b, c, d, e, f, g, h := a, a, a, a, a, a, a
		for len(x) >= 8 {
			y := x[:8:8]
			a, b, c, d = min(a, y[0]), min(b, y[1]), min(c, y[2]), min(d, y[3])
			e, f, g, h = min(e, y[4]), min(f, y[5]), min(g, y[6]), min(h, y[7])
			x = x[8:]
		}
		for _, v := range x {
			a = min(a, v)
		}
		return min(a, b, c, d, e, f, g, h)
	case exAll, exAny:
		// Blocks of 256 elements: the or of a block says whether it holds
		// a nonzero (any), its truths' and whether it holds a zero (all);
		// a decided row stops at the block that decided it.
		for len(x) > 0 {
			blk := x[:min(len(x), 256)]
			var or T
			zero := false
			for _, v := range blk {
				or |= v
				zero = zero || v == 0
			}
			if op == exAny && or != 0 {
				return 1
			}
			if op == exAll && zero {
				return 0
			}
			x = x[len(blk):]
		}
		return a
	}
	return combineStrided(op, a, x, 0, len(x), 1)
}

// combineRow combines x[s+j*is] into acc[j] for every j.
func combineRow[T integer](op exactOp, acc []T, x []T, s, is int) {
	if is == 1 && (op == exAdd || op == exMax || op == exMin) {
		combineRowDense(op, acc, x[s:s+len(acc)])
		return
	}
	switch op {
	case exAdd:
		for j := range acc {
			acc[j] += x[s+j*is]
		}
	case exMul:
		for j := range acc {
			acc[j] *= x[s+j*is]
		}
	case exMax:
		for j := range acc {
			acc[j] = max(acc[j], x[s+j*is])
		}
	case exMin:
		for j := range acc {
			acc[j] = min(acc[j], x[s+j*is])
		}
	case exAnd:
		for j := range acc {
			acc[j] &= x[s+j*is]
		}
	case exOr:
		for j := range acc {
			acc[j] |= x[s+j*is]
		}
	case exXor:
		for j := range acc {
			acc[j] ^= x[s+j*is]
		}
	case exAll:
		for j := range acc {
			if x[s+j*is] == 0 {
				acc[j] = 0
			}
		}
	case exAny:
		for j := range acc {
			if x[s+j*is] != 0 {
				acc[j] = 1
			}
		}
	case exOdd:
		for j := range acc {
			if x[s+j*is] != 0 {
				acc[j] ^= 1
			}
		}
	case exCopy:
		for j := range acc {
			acc[j] = x[s+j*is]
		}
	}
}

// combineRowDense combines x[j] into acc[j] for every j: add, max, min.
func combineRowDense[T integer](op exactOp, acc []T, x []T) {
	x = x[:len(acc)]
	switch op {
	case exAdd:
		for j, v := range x {
			acc[j] += v
		}
	case exMax:
		for j, v := range x {
			acc[j] = max(acc[j], v)
		}
	case exMin:
		for j, v := range x {
			acc[j] = min(acc[j], v)
		}
	}
}

// wide128 is an exact sum of up to 2^64 elements of 64 bits: a 128-bit
// two's complement integer.
type wide128 struct {
	hi int64
	lo uint64
}

// addInt returns w plus the element v, sign-extended for a signed T.
func addInt[T integer](w wide128, v T) wide128 {
	lo, carry := bits.Add64(w.lo, uint64(v), 0)
	hi := w.hi + int64(carry)
	if v < 0 {
		hi-- // the sign extension's all-ones high word
	}
	return wide128{hi: hi, lo: lo}
}

// sumWide adds n elements of x from offset s, stride st, to w.
func sumWide[T integer](w wide128, x []T, s, n, st int) wide128 {
	for i := range n {
		w = addInt(w, x[s+i*st])
	}
	return w
}

// float returns w's value rounded to nearest float64, ties to even.
func (w wide128) float() float64 {
	switch {
	case w.hi == 0:
		return float64(w.lo)
	case w.hi == -1 && w.lo >= 1<<63:
		return float64(int64(w.lo))
	}
	// Past 64 bits (sums of many huge elements), rare: big arithmetic
	// rounds once.
	b := new(big.Int).Lsh(big.NewInt(w.hi), 64)
	b.Add(b, new(big.Int).SetUint64(w.lo))
	f, _ := new(big.Float).SetInt(b).Float64()
	return f
}

// store writes output j's accumulator a (or its mean) at dst offset d.
func (r *exactRun[T]) store(d int64, a T, j int) {
	if r.op == exMean {
		m := math.NaN() // 0/0, with one NaN's bits on every platform
		if r.n > 0 {
			m = r.wide[j].float() / float64(r.n)
		}
		r.storeMean(d, m)
		return
	}
	switch r.dstDT {
	case dtypes.Boolean, dtypes.U8:
		if r.op == exAll || r.op == exAny || r.op == exOdd {
			r.dst[d] = byte(a)
			return
		}
	}
	intView[T](r.dst)[d] = a
}

// storeMean writes the mean m: rounded once into an f32 or f64 dst;
// into the src's integer type truncated toward zero and saturated, NaN
// (an empty reduction) as 0.
func (r *exactRun[T]) storeMean(d int64, m float64) {
	switch r.dstDT {
	case dtypes.F32:
		intView[uint32](r.dst)[d] = math.Float32bits(float32(m))
		return
	case dtypes.F64:
		intView[uint64](r.dst)[d] = math.Float64bits(m)
		return
	}
	lo, hi := leastOf[T](), ^leastOf[T]()
	var v T
	switch {
	case m != m:
	case m <= float64(lo):
		v = lo
	case m >= float64(hi):
		v = hi
	default:
		v = T(m) // Go's conversion truncates toward zero
	}
	intView[T](r.dst)[d] = v
}

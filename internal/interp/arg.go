package interp

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// An index reduction (plan.ArgPlan) runs one typed scan per output:
// the scanner of the src type, chosen once per call from argScans, walks
// the R elements of the axis in order and keeps the winner and its
// index. Comparisons are in the src type itself (bf16 and f16 widened to
// f32, exactly), so integer types of any width compare exactly.

// argScan returns the index of the winner among the n elements of src
// stride elements apart from element off: the largest (min: smallest),
// NaN above (below) all, the first of equals (last: the last).
type argScan func(src []byte, off, n, stride int64, f argFlags) int64

// argFlags are a plan's rules: Min, Last, and Abs (compare |x|).
type argFlags struct{ min, last, abs bool }

// argScans is the scanner of each src type: a new type is one entry.
var argScans = map[dtypes.DataType]argScan{
	dtypes.F32:  scanAs[float32],
	dtypes.S8:   scanAs[int8],
	dtypes.U8:   scanAs[uint8],
	dtypes.BF16: scanWidened(dtypes.BF16ToF32),
	dtypes.F16:  scanWidened(dtypes.F16ToF32),
	dtypes.S16:  scanAs[int16],
	dtypes.U16:  scanAs[uint16],
	dtypes.S32:  scanAs[int32],
	dtypes.U32:  scanAs[uint32],
	dtypes.S64:  scanAs[int64],
	dtypes.U64:  scanAs[uint64],
	dtypes.F64:  scanAs[float64],
}

// ordered is the element types a scan compares directly.
type ordered interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// wins reports whether x replaces best. x != x is NaN (never true for
// integers): a NaN beats a number; among NaNs, and among equal numbers,
// the later one wins only under last.
func wins[T ordered](x, best T, min, last bool) bool {
	if x != x {
		return last || best == best
	}
	if best != best {
		return false
	}
	if last {
		if min {
			return x <= best
		}
		return x >= best
	}
	if min {
		return x < best
	}
	return x > best
}

// scanAs scans src viewed as elements of T.
func scanAs[T ordered](src []byte, off, n, stride int64, f argFlags) int64 {
	var z T
	elems := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/int(unsafe.Sizeof(z)))
	if f.abs {
		if one := T(1); one/2 == 0 {
			// Integers: magnitudes as uint64, which holds every one.
			return scan(func(i int64) uint64 { return magnitude(elems[i]) }, off, n, stride, f)
		}
		return scan(func(i int64) float64 { return math.Abs(float64(elems[i])) }, off, n, stride, f)
	}
	return scanDirect(elems, off, n, stride, f)
}

// scanDirect is scan over elements compared as they are, the common
// case, written out per rule so that the loop holds one comparison and,
// where it fails, the NaN test (never true for integers).
func scanDirect[T ordered](e []T, off, n, stride int64, f argFlags) int64 {
	best, bi := e[off], int64(0)
	switch {
	case stride == 1 && !f.min && !f.last:
		// A contiguous row, ArgMax's usual case: ranged, no bounds checks.
		for i, x := range e[off+1 : off+n] {
			if x > best || x != x && best == best {
				best, bi = x, int64(i)+1
			}
		}
	case !f.min && !f.last:
		for i := int64(1); i < n; i++ {
			off += stride
			if x := e[off]; x > best || x != x && best == best {
				best, bi = x, i
			}
		}
	case f.min && !f.last:
		for i := int64(1); i < n; i++ {
			off += stride
			if x := e[off]; x < best || x != x && best == best {
				best, bi = x, i
			}
		}
	default:
		for i := int64(1); i < n; i++ {
			off += stride
			if x := e[off]; wins(x, best, f.min, true) {
				best, bi = x, i
			}
		}
	}
	return bi
}

// magnitude is |x| of an integer, exactly.
func magnitude[T ordered](x T) uint64 {
	if x < 0 {
		return -uint64(int64(x))
	}
	return uint64(x)
}

// scanWidened scans 16-bit float bits widened to f32 by widen.
func scanWidened(widen func(uint16) float32) argScan {
	return func(src []byte, off, n, stride int64, f argFlags) int64 {
		elems := unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(src))), len(src)/2)
		if f.abs {
			return scan(func(i int64) float32 { return float32(math.Abs(float64(widen(elems[i])))) }, off, n, stride, f)
		}
		return scan(func(i int64) float32 { return widen(elems[i]) }, off, n, stride, f)
	}
}

// scan is the loop every scanner runs; at is inlined into it.
func scan[T ordered](at func(int64) T, off, n, stride int64, f argFlags) int64 {
	best, bi := at(off), int64(0)
	for i := int64(1); i < n; i++ {
		off += stride
		if x := at(off); wins(x, best, f.min, f.last) {
			best, bi = x, i
		}
	}
	return bi
}

// RunArg executes the index reduction pl, reading src and writing the
// indices to dst (little-endian s32 or s64), both starting at the plan's
// first element. It checks that the buffers hold the spans the plan
// addresses, and returns an InvalidArguments error otherwise.
func RunArg(pl *plan.ArgPlan, src, dst []byte) error {
	sc, err := argScanner(pl)
	if sc == nil {
		return err
	}
	if err := checkBuf("src", src, pl.SrcSpan()*int64(pl.SrcDT.Size())); err != nil {
		return err
	}
	if err := checkBuf("dst", dst, pl.DstSpan()*int64(pl.IdxDT.Size())); err != nil {
		return err
	}
	wide := pl.IdxDT == dtypes.S64
	if pl.RepeatsOne() {
		v := int64(0)
		if pl.Last {
			v = pl.R - 1
		}
		eachArgOutput(pl, func(_, d int64) { storeIndex(wide, dst, d, v) })
		return nil
	}
	f := argFlags{min: pl.Min, last: pl.Last, abs: pl.Abs}
	eachArgOutput(pl, func(s, d int64) { storeIndex(wide, dst, d, sc(src, s, pl.R, pl.RStride, f)) })
	return nil
}

// CombineArg folds a piece of pl's axis into dst, for kernels that cut
// a long axis into pieces. part holds each output's winner among the
// piece's elements, counted from the piece's first, from; its outputs are
// dense, in pl's loop order (Inner's lanes innermost), whatever dst's
// strides. The first piece (from 0) gives dst its indices. For a later
// one, dst holds each output's winner among the axis's first from
// elements: it keeps it or takes the piece's, by pl's rules; the piece
// comes later along the axis, so it wins a tie (NaN against NaN too)
// only under Last. An index outside its range is a RuntimeError.
func CombineArg(pl *plan.ArgPlan, src, dst, part []byte, from int64) error {
	sc, err := argScanner(pl)
	if sc == nil {
		return err
	}
	if from < 0 || from >= pl.R || pl.RStride <= 0 {
		return status.Errorf(status.InvalidArguments, "interp: a piece from %d of an axis of %d, stride %d", from, pl.R, pl.RStride)
	}
	if err := checkBuf("src", src, pl.SrcSpan()*int64(pl.SrcDT.Size())); err != nil {
		return err
	}
	if err := checkBuf("dst", dst, pl.DstSpan()*int64(pl.IdxDT.Size())); err != nil {
		return err
	}
	if err := checkBuf("part", part, pl.Outputs*int64(pl.IdxDT.Size())); err != nil {
		return err
	}
	wide := pl.IdxDT == dtypes.S64
	f := argFlags{min: pl.Min, last: pl.Last, abs: pl.Abs}
	var bad error
	o := int64(0) // the output's place in part
	eachArgOutput(pl, func(s, d int64) {
		c := from + loadIndex(wide, part, o)
		o++
		b := int64(0)
		if from > 0 {
			b = loadIndex(wide, dst, d)
		}
		if b < 0 || b >= max(from, 1) || c < from || c >= pl.R {
			if bad == nil {
				bad = status.Errorf(status.RuntimeError, "interp: winners %d and %d of pieces split at %d of %d", b, c, from, pl.R)
			}
			return
		}
		// The two winners, as a scan of two elements: pl's rules, its
		// type's comparison, NaN and Abs included.
		if from == 0 || sc(src, s+b*pl.RStride, 2, (c-b)*pl.RStride, f) == 1 {
			storeIndex(wide, dst, d, c)
		}
	})
	return bad
}

// loadIndex reads the index at element at of b: s64 if wide, else s32.
// A function, not a closure made per call, so that RunArg and
// CombineArg allocate nothing.
func loadIndex(wide bool, b []byte, at int64) int64 {
	if wide {
		return int64(binary.LittleEndian.Uint64(b[8*at:]))
	}
	return int64(int32(binary.LittleEndian.Uint32(b[4*at:])))
}

// storeIndex writes index v to element at of b: s64 if wide, else s32.
func storeIndex(wide bool, b []byte, at, v int64) {
	if wide {
		binary.LittleEndian.PutUint64(b[8*at:], uint64(v))
	} else {
		binary.LittleEndian.PutUint32(b[4*at:], uint32(v))
	}
}

// argScanner returns the scanner of pl's src type, or nil and an error
// for a plan it cannot run, or nil and no error for a plan with nothing
// to do.
func argScanner(pl *plan.ArgPlan) (argScan, error) {
	if pl == nil {
		return nil, status.Errorf(status.InvalidArguments, "interp: nil plan")
	}
	sc := argScans[pl.SrcDT]
	if sc == nil || !plan.IsArgIndexType(pl.IdxDT) {
		return nil, status.Errorf(status.InvalidDataType, "interp: index reduction of %v to %v", pl.SrcDT, pl.IdxDT)
	}
	if pl.Outputs == 0 {
		return nil, nil
	}
	return sc, nil
}

// eachArgOutput calls fn with the src element where each output's axis
// starts and the output's dst element, in pl's loop order.
func eachArgOutput(pl *plan.ArgPlan, fn func(s, d int64)) {
	inner := plan.Loop{Size: 1}
	if pl.HasInner {
		inner = pl.Inner
	}
	var idx [plan.MaxLoops]int64
	for {
		var s, d int64
		for k, l := range pl.Outer {
			s += idx[k] * l.SrcStride
			d += idx[k] * l.DstStride
		}
		for j := int64(0); j < inner.Size; j++ {
			fn(s+j*inner.SrcStride, d+j*inner.DstStride)
		}
		k := len(pl.Outer) - 1
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < pl.Outer[k].Size {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

package jit

import (
	"slices"
	"unsafe"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// In-place binary operands: oneDNN's sum post-op.
//
// dst = result + dst_before, oneDNN's sum post-op (a residual add into an
// existing tensor), is a binary Add whose operand is the dst buffer
// itself. Run accepts that aliasing when the operand is the dst element
// for element: the same first byte, the same element size and the same
// stride as dst in every kept loop (plan.Plan.DstOperand; InPlace says
// whether the plan allows it). Then every output reads exactly one
// operand element, its own, and in every schedule that element is read
// before it is written:
//
//   - only the last phase of a schedule writes dst; earlier ones (the
//     results of a post-op pass, stage-1 partial sums, a log-sum-exp's max
//     and exponentials) write scratch, so nothing overwrites dst before
//     the phase that reads the operand;
//   - in that phase each output is written by exactly one call, which
//     reads its operand element while computing it and stores it after
//     (the interpreter per element; the emitters per vector of outputs,
//     loading the operand vector before storing the same lanes), and
//     calls write disjoint outputs, so no call reads an element another
//     has written. The emitters' one habit against this, finishing a
//     loop with a group moved back over outputs already stored (which
//     recomputes them from the operand those stores overwrote), is off
//     in plans with such an operand (plan.Plan.HasDstOperand).
//
// So the sum post-op costs no extra pass and no scratch: the operand is
// read in the same pass, just before the store. Any other overlap of an
// operand or of src with dst (a shifted view, other strides, a broadcast
// operand) would read values already overwritten, and Run refuses it.
// A scaled sum, scale*(dst_before - zero_point) + result, is not this
// form: its operand must be computed before the pass (gdnnbench does it
// with a partition of its own, see sumPrep in internal/bench/reduction.go).

// InPlace reports whether binary operand i may be given the dst buffer
// itself (dst = result OP dst_before, read in the same pass): its data
// type has the dst's size and it addresses dst's elements one for one.
func (k *Kernel) InPlace(i int) bool {
	return k != nil && i >= 0 && i < len(k.inPlace) && k.inPlace[i]
}

// checkAliasing refuses buffers that share memory with dst, except a
// binary operand that is dst itself where InPlace allows it. Only the
// bytes the plan addresses count.
func (k *Kernel) checkAliasing(src, dst []byte, bins [][]byte) error {
	d := dst[:k.dstBytes]
	if Overlap(src[:k.srcBytes], d) {
		return status.Errorf(status.InvalidArguments, "jit: src and dst share memory")
	}
	for i, b := range bins {
		b = b[:k.binBytes[i]]
		if !Overlap(b, d) {
			continue
		}
		if !k.inPlace[i] {
			return status.Errorf(status.InvalidArguments,
				"jit: binary operand %d shares memory with dst, and its data type or strides do not address dst's elements one for one", i)
		}
		if unsafe.SliceData(b) != unsafe.SliceData(d) {
			return status.Errorf(status.InvalidArguments,
				"jit: binary operand %d shares memory with dst but does not start at dst's first element (in place, the operand must be dst itself)", i)
		}
	}
	return nil
}

// SameTensor reports whether a and b hold one tensor of dims: the same
// first byte, data type and strides, in a layout where no two elements
// share memory, so that each element of one is its element of the other
// (an output given its input's buffer, in place).
func SameTensor(a, b []byte, adt, bdt dtypes.DataType, dims, as, bs []int64) bool {
	return len(a) > 0 && len(b) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b) && adt == bdt &&
		slices.Equal(as, bs) && !plan.SelfOverlaps(dims, as)
}

// Overlap reports whether two byte slices share memory (empty ones never
// do).
func Overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}

package arm64

import (
	"fmt"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/vexp"
)

// The oracle of the tests: a float64 reference that walks the Problem
// itself with an odometer over its dims (not the canonical plan), so
// that canonicalisation bugs show up too. Nothing here is specific to
// AArch64.

// pairs are the src:dst data type pairs ReduceMean supports.
var pairs = [][2]dtypes.DataType{
	{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.BF16, dtypes.F32},
	{dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
}

// intPairs are the src:dst pairs of 8-bit integer data: s8 or u8 src,
// every dst type.
var intPairs = func() [][2]dtypes.DataType {
	var out [][2]dtypes.DataType
	for _, s := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		for _, d := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32, dtypes.F32, dtypes.BF16, dtypes.F16} {
			out = append(out, [2]dtypes.DataType{s, d})
		}
	}
	return out
}()

// floatTypes are the float data types.
var floatTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16}

// operandTypes are the data types a binary operand may have
// (plan.IsOperandType).
var operandTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}

// odometer counts through every index tuple of dims (row-major, last
// fastest); a dim of size 0 means there is no tuple at all.
type odometer struct {
	dims []int64
	idx  []int64
	done bool
}

func newOdometer(dims []int64) *odometer {
	o := &odometer{dims: dims, idx: make([]int64, len(dims))}
	for _, d := range dims {
		if d == 0 {
			o.done = true
		}
	}
	return o
}

// next advances to the following tuple and reports whether there is one.
func (o *odometer) next() bool {
	for i := len(o.idx) - 1; i >= 0; i-- {
		o.idx[i]++
		if o.idx[i] < o.dims[i] {
			return true
		}
		o.idx[i] = 0
	}
	o.done = true
	return false
}

// dot is sum(idx[j] * strides[dims[j]]).
func dot(idx []int64, which []int, strides []int64) int64 {
	var s int64
	for j, d := range which {
		s += idx[j] * strides[d]
	}
	return s
}

// refResult computes p into a copy of dst: each sum exactly in float64
// (from +0), rounded to f32 and divided by f32(N) in f32, then
// plan.Eltwise / plan.Binary and the dtypes rounding to dst. outs marks
// the dst elements that hold outputs.
func refResult(p *plan.Problem, src, dst []byte, bins [][]byte) (want []byte, outs map[int64]bool) {
	want = append([]byte(nil), dst...)
	outs = map[int64]bool{}
	var kept, red []int
	var keptDims, redDims []int64
	for d, n := range p.Dims {
		if p.Reduce[d] {
			red, redDims = append(red, d), append(redDims, n)
		} else {
			kept, keptDims = append(kept, d), append(keptDims, n)
		}
	}
	n := int64(1)
	for _, d := range redDims {
		n *= d
	}
	var binOps []plan.PostOp
	for _, op := range p.PostOps {
		if op.Kind.IsBinary() {
			binOps = append(binOps, op)
		}
	}
	for ko := newOdometer(keptDims); !ko.done; ko.next() {
		base := dot(ko.idx, kept, p.SrcStrides)
		sum := 0.0
		for ro := newOdometer(redDims); !ro.done; ro.next() {
			sum += float64(dtypes.LoadF32(p.SrcDT, src, base+dot(ro.idx, red, p.SrcStrides)))
		}
		v := float32(sum) / float32(n)
		bi := 0
		for _, op := range p.PostOps {
			if !op.Kind.IsBinary() {
				v = plan.Eltwise(op.Kind, op.Alpha, op.Beta, v)
				continue
			}
			b := binOps[bi]
			v = plan.Binary(op.Kind, v, dtypes.LoadF32(b.BinDT, bins[bi], dot(ko.idx, kept, b.BinStrides)))
			bi++
		}
		o := dot(ko.idx, kept, p.DstStrides)
		dtypes.StoreF32(p.DstDT, want, o, v)
		outs[o] = true
	}
	return want, outs
}

// sameElem compares element i of a and b: equal bits, or both NaN, or
// (with zeroSign false) both zero.
func sameElem(dt dtypes.DataType, a, b []byte, i int64, zeroSign bool) bool {
	x, y := dtypes.LoadF32(dt, a, i), dtypes.LoadF32(dt, b, i)
	if x != x && y != y {
		return true
	}
	if !zeroSign && x == 0 && y == 0 {
		return true
	}
	sz := int64(dt.Size())
	return string(a[i*sz:(i+1)*sz]) == string(b[i*sz:(i+1)*sz])
}

// diffResult checks got against want: outputs bit-equal (any NaN matches
// any NaN; zeroSign false lets +0 match -0), every other byte untouched.
// It returns a description of the first difference, or "".
func diffResult(dt dtypes.DataType, got, want []byte, outs map[int64]bool, zeroSign bool) string {
	return diffNear(dt, got, want, outs, zeroSign, 0)
}

// diffNear is diffResult, except that outputs may be ulps f32 ulps apart
// (vexp.NearULPs): machine code against a reference, for a problem whose
// post-ops end in Exp, Log or a kind of package vfn (vfn.Tolerance).
func diffNear(dt dtypes.DataType, got, want []byte, outs map[int64]bool, zeroSign bool, ulps int64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("dst has %d bytes, want %d", len(got), len(want))
	}
	sz := int64(dt.Size())
	for i := int64(0); i < int64(len(got))/sz; i++ {
		if outs[i] {
			if !sameElem(dt, got, want, i, zeroSign) && !(ulps > 0 && vexp.NearULPs(dt, got[i*sz:(i+1)*sz], want[i*sz:(i+1)*sz], ulps)) {
				return fmt.Sprintf("dst[%d] = %v, want %v", i, dtypes.LoadF32(dt, got, i), dtypes.LoadF32(dt, want, i))
			}
		} else if string(got[i*sz:(i+1)*sz]) != string(want[i*sz:(i+1)*sz]) {
			return fmt.Sprintf("dst[%d] (not an output) was overwritten", i)
		}
	}
	return ""
}

// buffersFor allocates and fills src, dst and the operand buffers of p:
// src and operands with fill (specials says whether NaN and ±Inf may
// appear in each), dst with a sentinel byte that no output has.
func buffersFor(t testing.TB, fill func(dtypes.DataType, []byte, bool), p *plan.Problem, srcSpecials, binSpecials bool) (src, dst []byte, bins [][]byte) {
	t.Helper()
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	db, err := p.DstBytes()
	if err != nil {
		t.Fatal(err)
	}
	src = make([]byte, sb)
	fill(p.SrcDT, src, srcSpecials)
	dst = make([]byte, db)
	for i := range dst {
		dst[i] = 0x5A
	}
	for i := range p.BinaryCount() {
		nb, err := p.BinBytes(i)
		if err != nil {
			t.Fatal(err)
		}
		var dt dtypes.DataType
		j := 0
		for _, op := range p.PostOps {
			if op.Kind.IsBinary() {
				if j == i {
					dt = op.BinDT
				}
				j++
			}
		}
		b := make([]byte, nb)
		fill(dt, b, binSpecials)
		bins = append(bins, b)
	}
	return src, dst, bins
}

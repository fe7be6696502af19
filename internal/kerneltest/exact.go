package kerneltest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"slices"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/oracle"
	"github.com/gdnn/gdnn/internal/plan"
)

// ExactTypes are the data types of exact data (plan.IsExact), and
// ExactKinds the reductions they take with the dst types of each; the
// differential tests of exact reductions draw from them.
var ExactTypes = []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S16, dtypes.U16, dtypes.S32, dtypes.U32,
	dtypes.S64, dtypes.U64, dtypes.Boolean}

// ExactPairs returns the reductions of exact src data sdt, each with a
// dst type it writes (drawn by r where there are several).
func ExactPairs(r *rand.Rand, sdt dtypes.DataType) []ExactCase {
	var cs []ExactCase
	add := func(red plan.Reduction, dsts ...dtypes.DataType) {
		cs = append(cs, ExactCase{red, dsts[r.Intn(len(dsts))]})
	}
	truth := []dtypes.DataType{dtypes.Boolean, dtypes.U8}
	add(plan.LogicalAnd, truth...)
	add(plan.LogicalOr, truth...)
	add(plan.LogicalXor, truth...)
	if sdt == dtypes.Boolean {
		add(plan.AlgMax.Reduction(0, 0), sdt)
		add(plan.AlgMin.Reduction(0, 0), sdt)
		return cs
	}
	for _, c := range []plan.Combine{plan.CombineAnd, plan.CombineOr, plan.CombineXor} {
		add(plan.Bitwise(c), sdt)
	}
	if sdt.IsInt8() {
		return cs
	}
	for _, a := range []plan.Alg{plan.AlgSum, plan.AlgMul, plan.AlgMax, plan.AlgMin} {
		add(a.Reduction(0, 0), sdt)
	}
	add(plan.AlgMean.Reduction(0, 0), sdt, dtypes.F32, dtypes.F64)
	return cs
}

// ExactCase is one exact reduction and its dst type.
type ExactCase struct {
	Reduction plan.Reduction
	DstDT     dtypes.DataType
}

// FillExact fills b with elements of dt: mostly small values (sums stay
// readable), a fifth of them the type's extremes and their neighbours
// (wraparound), and for booleans 0 and 1 only, or with bias, mostly one
// of them (so that all and any meet both answers).
func FillExact(r *rand.Rand, dt dtypes.DataType, b []byte) {
	sz := dt.Size()
	n := len(b) / sz
	if dt == dtypes.Boolean {
		bias := r.Intn(3)
		for i := range n {
			v := r.Intn(2)
			if bias > 0 && r.Intn(64) > 0 {
				v = bias - 1
			}
			b[i] = byte(v)
		}
		return
	}
	top := uint64(1)<<(8*sz-1) - 1 // the largest signed value
	if !dt.IsSigned() {
		top = top<<1 | 1
	}
	least := uint64(0)
	if dt.IsSigned() {
		least = top + 1 // the bits of the least signed value
	}
	for i := range n {
		var u uint64
		switch r.Intn(10) {
		case 0:
			u = top - uint64(r.Intn(2))
		case 1:
			u = least + uint64(r.Intn(2))
		case 2:
			u = 0
		default:
			u = uint64(int64(r.Intn(21) - 10))
			if !dt.IsSigned() {
				u = uint64(r.Intn(11))
			}
		}
		for k := range sz {
			b[i*sz+k] = byte(u >> (8 * k))
		}
	}
}

// CheckExact compares dst, written by a run of the exact problem p over
// src, with the exact oracle: every output's bytes, and nothing else of
// dst changed from the sentinel byte.
func CheckExact(t testing.TB, what string, p *plan.Problem, src, dst []byte, sentinel byte) {
	t.Helper()
	CheckExactOutputs(t, what, p, oracle.ReduceExact(p, src), dst, sentinel)
}

// CheckExactOutputs is CheckExact against outs, oracle.ReduceExact's
// outputs of p: a test that runs one problem many times (each ISA, each
// placement) computes them once.
func CheckExactOutputs(t testing.TB, what string, p *plan.Problem, outs []oracle.ExactOutput, dst []byte, sentinel byte) {
	t.Helper()
	sz := int64(p.DstDT.Size())
	written := map[int64]bool{}
	bad := 0
	for _, o := range outs {
		written[o.Dst] = true
		if got := dst[o.Dst*sz : (o.Dst+1)*sz]; !bytes.Equal(got, o.Want) {
			if bad++; bad <= 3 {
				t.Errorf("%s: output at %d is % x, want % x", what, o.Dst, got, o.Want)
			}
		}
	}
	for i := int64(0); i < int64(len(dst))/sz; i++ {
		if !written[i] && !bytes.Equal(dst[i*sz:(i+1)*sz], bytes.Repeat([]byte{sentinel}, int(sz))) {
			t.Errorf("%s: dst element %d is not an output and was written", what, i)
			return
		}
	}
}

// RandomExactProblem draws an exact problem of case c over src data
// sdt, of at most maxElems elements: rank 0 to 4, each dim reduced half
// of the time (every dim kept is a copy), src dims permuted or padded,
// dst dense or padded.
func RandomExactProblem(r *rand.Rand, maxElems int64, sdt dtypes.DataType, c ExactCase) *plan.Problem {
	rank := r.Intn(5)
	dims := make([]int64, rank)
	for {
		total := int64(1)
		for i := range dims {
			dims[i] = int64(1 + r.Intn(70))
			if r.Intn(16) == 0 {
				dims[i] = int64(r.Intn(2)) // empty and size-1 dims
			}
			total *= max(dims[i], 1)
		}
		if total <= maxElems {
			break
		}
	}
	p := &plan.Problem{Reduction: c.Reduction, SrcDT: sdt, DstDT: c.DstDT, Dims: dims, Reduce: make([]bool, rank)}
	for i := range p.Reduce {
		p.Reduce[i] = r.Intn(2) == 0
	}
	if !slices.Contains(p.Reduce, true) {
		p.Reduction = plan.Copy
		if c.DstDT != sdt {
			p.DstDT = sdt
		}
	}
	p.SrcStrides = laidOut(r, dims)
	p.DstStrides = laidOut(r, KeptDims(p))
	for i := range p.DstStrides {
		if p.Reduce[i] {
			p.DstStrides[i] = 0
		}
	}
	return p
}

// laidOut returns strides for dims: dense, permuted, or padded.
func laidOut(r *rand.Rand, dims []int64) []int64 {
	n := len(dims)
	order := r.Perm(n)
	if r.Intn(2) == 0 {
		for i := range order {
			order[i] = i
		}
	}
	st := make([]int64, n)
	s := int64(1)
	for k := n - 1; k >= 0; k-- {
		d := order[k]
		st[d] = s
		s *= max(dims[d], 1) + int64(r.Intn(2)*r.Intn(3))
	}
	return st
}

// String names an exact case.
func (c ExactCase) String() string { return fmt.Sprintf("%v>%v", c.Reduction, c.DstDT) }

// Ints stores the values v as elements of the integer type dt,
// little-endian, wrapped to its width.
func Ints(dt dtypes.DataType, v ...int64) []byte {
	sz := dt.Size()
	b := make([]byte, sz*len(v))
	for i, x := range v {
		for k := range sz {
			b[i*sz+k] = byte(uint64(x) >> (8 * k))
		}
	}
	return b
}

// WideMeanRows returns rows of n random elements of sdt (S64 or U64) and
// each row's mean as the interpreter must give it: the exact sum (a big
// integer) rounded once to f64, divided by n. fill 0 draws the type's
// whole range; 1 elements near -2^62 (s64) or past 2^63 (u64); 2 the
// type's largest and the two below it. Rows of a few thousand such
// elements sum past 2^64 and round.
func WideMeanRows(r *rand.Rand, sdt dtypes.DataType, rows, n int64, fill int) (src []byte, means []float64) {
	src = make([]byte, 8*rows*n)
	means = make([]float64, rows)
	for row := range rows {
		sum := new(big.Int)
		for i := range n {
			v := r.Uint64()
			switch fill {
			case 1:
				v |= 1<<63 | 1<<62
			case 2:
				v = math.MaxUint64 - v%3
				if sdt == dtypes.S64 {
					v = math.MaxInt64 - v%3
				}
			}
			binary.LittleEndian.PutUint64(src[8*(row*n+i):], v)
			if sdt == dtypes.S64 {
				sum.Add(sum, big.NewInt(int64(v)))
			} else {
				sum.Add(sum, new(big.Int).SetUint64(v))
			}
		}
		f, _ := new(big.Float).SetInt(sum).Float64()
		means[row] = f / float64(n)
	}
	return src, means
}

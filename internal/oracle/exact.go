package oracle

import (
	"encoding/binary"
	"math"
	"math/big"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// Exact data (plan.IsExact) has its own reference: every element as a
// mathematical integer (math/big), the combines on those integers, and
// only then the dst's wraparound (the result modulo 2^bits, read back as
// the dst type). It shares no arithmetic with the interpreter's typed
// loops, whose wraparound happens element by element.

// ExactGet reads element i of the integer or boolean data type dt from b,
// sign- or zero-extended.
func ExactGet(dt dtypes.DataType, b []byte, i int64) *big.Int {
	sz := int64(dt.Size())
	var u uint64
	for k := sz - 1; k >= 0; k-- {
		u = u<<8 | uint64(b[i*sz+k])
	}
	if dt.IsSigned() && u>>(8*sz-1)&1 == 1 {
		return new(big.Int).Sub(new(big.Int).SetUint64(u), new(big.Int).Lsh(big.NewInt(1), uint(8*sz)))
	}
	return new(big.Int).SetUint64(u)
}

// ExactOutput is one output of an exact problem: its dst offset and the
// bytes the dst element must hold.
type ExactOutput struct {
	Dst  int64
	Want []byte
}

// ReduceExact computes every output of the exact problem p from src, in
// dst index order, as the bytes of its dst element.
func ReduceExact(p *plan.Problem, src []byte) []ExactOutput {
	rank := len(p.Dims)
	kept, red, n, empty := dimsOf(p)
	if empty {
		return nil
	}
	r, sdt := p.Reduction, p.SrcDT
	var outs []ExactOutput
	idx := make([]int64, rank)
	for {
		var xs []*big.Int
		ridx := append([]int64(nil), idx...)
		for n > 0 {
			off := int64(0)
			for d := range rank {
				off += ridx[d] * p.SrcStrides[d]
			}
			xs = append(xs, ExactGet(sdt, src, off))
			if !step(ridx, p.Dims, red) {
				break
			}
		}
		dst := int64(0)
		for _, d := range kept {
			dst += idx[d] * p.DstStrides[d]
		}
		outs = append(outs, ExactOutput{Dst: dst, Want: exactValue(r, sdt, p.DstDT, xs)})
		if !step(idx, p.Dims, kept) {
			return outs
		}
	}
}

// exactValue is the dst bytes of reduction r of the elements xs.
func exactValue(r plan.Reduction, sdt, ddt dtypes.DataType, xs []*big.Int) []byte {
	truth := func(x *big.Int) bool { return x.Sign() != 0 }
	logical := r.Transform == plan.TransformNonzero || sdt == dtypes.Boolean
	var v *big.Int
	switch {
	case r.Finalize == plan.FinalizeMean:
		s := new(big.Int)
		for _, x := range xs {
			s.Add(s, x)
		}
		q := math.NaN()
		if len(xs) > 0 {
			f, _ := new(big.Float).SetInt(s).Float64()
			q = f / float64(len(xs))
		}
		return meanBytes(q, ddt)
	case r.Combine == plan.CombineFirst:
		v = xs[len(xs)-1]
	case logical && r.Combine != plan.CombineXor:
		// All (and, min of booleans) or any (or, max of booleans).
		all := r.Combine == plan.CombineAnd || r.Combine == plan.CombineMin
		res := all
		for _, x := range xs {
			if truth(x) != all {
				res = !all
			}
		}
		v = big.NewInt(0)
		if res {
			v.SetInt64(1)
		}
	case logical:
		v = big.NewInt(0)
		for _, x := range xs {
			if truth(x) {
				v.Xor(v, big.NewInt(1))
			}
		}
	case r.Combine == plan.CombineAdd:
		v = new(big.Int)
		for _, x := range xs {
			v.Add(v, x)
		}
	case r.Combine == plan.CombineMul:
		v = big.NewInt(1)
		for _, x := range xs {
			v.Mul(v, x)
		}
	case r.Combine == plan.CombineMax, r.Combine == plan.CombineMin:
		v = extreme(sdt, r.Combine == plan.CombineMax)
		for _, x := range xs {
			if c := x.Cmp(v); c > 0 && r.Combine == plan.CombineMax || c < 0 && r.Combine == plan.CombineMin {
				v = x
			}
		}
	default: // bitwise: big.Int's are two's complement with infinite sign bits
		v = big.NewInt(0)
		if r.Combine == plan.CombineAnd {
			v.SetInt64(-1)
		}
		for _, x := range xs {
			switch r.Combine {
			case plan.CombineAnd:
				v = new(big.Int).And(v, x)
			case plan.CombineOr:
				v = new(big.Int).Or(v, x)
			default:
				v = new(big.Int).Xor(v, x)
			}
		}
	}
	return wrapBytes(v, ddt.Size())
}

// extreme is the identity of max (the least value of dt) or min (the
// largest).
func extreme(dt dtypes.DataType, forMax bool) *big.Int {
	bits := uint(8 * dt.Size())
	one := big.NewInt(1)
	switch {
	case forMax && dt.IsSigned():
		return new(big.Int).Neg(new(big.Int).Lsh(one, bits-1))
	case forMax:
		return new(big.Int)
	case dt.IsSigned():
		return new(big.Int).Sub(new(big.Int).Lsh(one, bits-1), one)
	}
	return new(big.Int).Sub(new(big.Int).Lsh(one, bits), one)
}

// wrapBytes is v modulo 2^(8*size), little-endian.
func wrapBytes(v *big.Int, size int) []byte {
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*size))
	u := new(big.Int).Mod(v, m) // non-negative
	out := make([]byte, size)
	be := u.FillBytes(make([]byte, size))
	for i := range out {
		out[i] = be[size-1-i]
	}
	return out
}

// meanBytes is the mean q in dst type dt: f32 or f64 rounded, an integer
// truncated toward zero and saturated (NaN: 0).
func meanBytes(q float64, dt dtypes.DataType) []byte {
	switch dt {
	case dtypes.F32:
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(q)))
	case dtypes.F64:
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(q))
	}
	if q != q {
		return make([]byte, dt.Size())
	}
	lo, hi := extreme(dt, true), extreme(dt, false)
	t, _ := big.NewFloat(math.Trunc(q)).Int(nil)
	if t.Cmp(lo) < 0 {
		t = lo
	}
	if t.Cmp(hi) > 0 {
		t = hi
	}
	return wrapBytes(t, dt.Size())
}

package reduce

import (
	"math"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/internal/ops"
	"github.com/gdnn/gdnn/internal/plan"
	"github.com/gdnn/gdnn/internal/status"
)

// key identifies a compiled kernel: everything a call's problem is made
// of, in fixed-size arrays, so that building it and looking it up in a
// map allocates nothing. Every field is an integer (float parameters are
// kept as bits), so the map hashes and compares it as plain memory.
type key struct {
	dims       [graph.MaxRank]int64
	srcStrides [graph.MaxRank]int64
	dstStrides [graph.MaxRank]int64 // per src dim; 0 where reduced
	post       [MaxPostOps + 1]postKey
	reduce     uint32 // bit i: dim i is reduced
	rank       uint8
	op         Op
	srcDT      uint16
	dstDT      uint16
	npost      uint8
	isa        uint8 // the jit.ISA in force: kernels are compiled for it
	// The sizes above add up to a multiple of 8: no padding, so the key
	// is hashed as one block of memory.
}

// The uint32 masks of dims (key.reduce, dstDims' and span's arguments)
// hold a bit for every dim only while graph.MaxRank is at most 32: this
// fails to compile past that. A mask is built only after setShape has
// refused a rank past graph.MaxRank (1<<i of a uint32 is 0 for i >= 32,
// which would silently keep the dim).
var _ [32 - graph.MaxRank]struct{}

// setShape checks dims, axes (one of axes and axes64 is used) and the
// strides in s, and fills the key's shape fields. fn names the function
// in errors.
func (k *key) setShape(fn string, dims, axes []int, axes64 []int64, s *settings) error {
	r := len(dims)
	if r > graph.MaxRank {
		return status.Errorf(status.InvalidShape, "reduce.%s: rank %d exceeds the maximum %d", fn, r, graph.MaxRank)
	}
	k.rank = uint8(r)
	for i, d := range dims {
		if d < 0 {
			return status.Errorf(status.InvalidShape, "reduce.%s: dim %d is %d in dims %s", fn, i, d, ints(dims))
		}
		k.dims[i] = int64(d)
	}
	n := len(axes)
	if axes64 != nil {
		n = len(axes64)
	}
	for i := range n {
		var a int64
		if axes64 != nil {
			a = axes64[i]
		} else {
			a = int64(axes[i])
		}
		if a < -int64(r) || a >= int64(r) {
			return status.Errorf(status.InvalidArguments, "reduce.%s: axes[%d] = %d is out of range [%d, %d] for dims %s",
				fn, i, a, -r, r-1, ints(dims))
		}
		if a < 0 {
			a += int64(r)
		}
		if k.reduce&(1<<a) != 0 {
			return status.Errorf(status.InvalidArguments, "reduce.%s: axes[%d] names dim %d twice", fn, i, a)
		}
		k.reduce |= 1 << a
	}
	if n == 0 && s.allIfEmpty {
		k.reduce = uint32(1)<<r - 1
	}

	if s.hasSrcStr {
		if len(s.srcStrides) != r {
			return status.Errorf(status.InvalidShape, "reduce.%s: %d src strides for %d dims %s", fn, len(s.srcStrides), r, ints(dims))
		}
		for i, st := range s.srcStrides {
			if st < 0 {
				return status.Errorf(status.InvalidArguments, "reduce.%s: src stride %d is negative (%d)", fn, i, st)
			}
			k.srcStrides[i] = int64(st)
		}
	} else {
		denseStrides(k.srcStrides[:r], k.dims[:r], 0)
	}

	// dst strides are given per dst dim: map them to src dims.
	dr := r
	if !s.keep {
		dr = 0
		for i := range r {
			if k.reduce&(1<<i) == 0 {
				dr++
			}
		}
	}
	if s.hasDstStr {
		if len(s.dstStrides) != dr {
			return status.Errorf(status.InvalidShape, "reduce.%s: %d dst strides for %d dst dims %s", fn, len(s.dstStrides), dr,
				ints(dstDims(dims, k.reduce, s.keep)))
		}
		j := 0
		for i := range r {
			if k.reduce&(1<<i) != 0 && !s.keep {
				continue
			}
			st := s.dstStrides[j]
			if st < 0 {
				return status.Errorf(status.InvalidArguments, "reduce.%s: dst stride %d is negative (%d)", fn, j, st)
			}
			if k.reduce&(1<<i) == 0 {
				k.dstStrides[i] = int64(st)
			}
			j++
		}
	} else {
		denseStrides(k.dstStrides[:r], k.dims[:r], k.reduce)
	}
	return nil
}

// denseStrides sets row-major strides for dims, skipping (and leaving 0)
// the dims whose bit is set in skip.
func denseStrides(strides, dims []int64, skip uint32) {
	st := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		if skip&(1<<i) != 0 {
			strides[i] = 0
			continue
		}
		strides[i] = st
		st = plan.MulSat(st, dims[i])
	}
}

// compile builds the kernel k describes, and the spans (in elements) of
// src and dst that it addresses.
func (k *key) compile() (*compiled, error) {
	r := int(k.rank)
	red, _ := k.op.reduction() // LogSum's Log is in k.post already
	p := &plan.Problem{
		Reduction:  red,
		SrcDT:      dtypes.DataType(k.srcDT),
		DstDT:      dtypes.DataType(k.dstDT),
		Dims:       append([]int64(nil), k.dims[:r]...),
		SrcStrides: append([]int64(nil), k.srcStrides[:r]...),
		DstStrides: append([]int64(nil), k.dstStrides[:r]...),
		Reduce:     make([]bool, r),
	}
	for i := range r {
		p.Reduce[i] = k.reduce&(1<<i) != 0
	}
	for _, pk := range k.post[:k.npost] {
		p.PostOps = append(p.PostOps, plan.PostOp{Kind: ops.Kind(pk.kind),
			Alpha: math.Float32frombits(pk.alpha), Beta: math.Float32frombits(pk.beta)})
	}
	pl, err := plan.Canonicalize(p)
	if err != nil {
		return nil, err
	}
	kern, err := jit.Compile(pl)
	if err != nil {
		return nil, err
	}
	return &compiled{k: kern}, nil
}

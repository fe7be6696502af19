package partition_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/jit"
	"github.com/gdnn/gdnn/partition"
	"github.com/x448/float16"
)

// advBytes stores v (dense) as dt's little-endian elements.
func advBytes(dt dtypes.DataType, v []float64) []byte {
	sz := dt.Size()
	b := make([]byte, len(v)*sz)
	for i, x := range v {
		p := b[i*sz:]
		switch dt {
		case dtypes.F32:
			binary.LittleEndian.PutUint32(p, math.Float32bits(float32(x)))
		case dtypes.BF16:
			f := float32(advRound(dtypes.BF16, x))
			binary.LittleEndian.PutUint16(p, uint16(math.Float32bits(f)>>16))
		case dtypes.F16:
			binary.LittleEndian.PutUint16(p, float16.Fromfloat32(float32(x)).Bits())
		case dtypes.S8, dtypes.U8:
			p[0] = byte(int64(x))
		case dtypes.S32:
			binary.LittleEndian.PutUint32(p, uint32(int32(x)))
		case dtypes.S64:
			binary.LittleEndian.PutUint64(p, uint64(int64(x)))
		default:
			panic(dt.String())
		}
	}
	return b
}

// advLoad reads element e of a buffer of type dt.
func advLoad(dt dtypes.DataType, b []byte, e int64) float64 {
	sz := int64(dt.Size())
	p := b[e*sz:]
	switch dt {
	case dtypes.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
	case dtypes.BF16:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(p)) << 16))
	case dtypes.F16:
		return float64(float16.Frombits(binary.LittleEndian.Uint16(p)).Float32())
	case dtypes.S8:
		return float64(int8(p[0]))
	case dtypes.U8:
		return float64(p[0])
	case dtypes.S32:
		return float64(int32(binary.LittleEndian.Uint32(p)))
	case dtypes.S64:
		return float64(int64(binary.LittleEndian.Uint64(p)))
	}
	panic(dt.String())
}

// advOffset is the element offset, by strides, of the e-th element of
// dims in row-major order.
func advOffset(e int64, dims, strides []int64) int64 {
	off := int64(0)
	for i := len(dims) - 1; i >= 0; i-- {
		off += e % dims[i] * strides[i]
		e /= dims[i]
	}
	return off
}

// advReadStrided reads a strided tensor into a dense value.
func advReadStrided(lt graph.LogicalTensor, b []byte) advVal {
	n := advNum(lt.Dims)
	out := advVal{dims: append([]int64{}, lt.Dims...), v: make([]float64, n)}
	for e := int64(0); e < n; e++ {
		out.v[e] = advLoad(lt.DataType, b, advOffset(e, lt.Dims, lt.Strides))
	}
	return out
}

// advRunGDNN runs a finalized graph through gdnn's partitions, the way a
// framework would: supported partitions are compiled and executed,
// unsupported ones evaluated by advEvalInto. It returns every tensor's
// value, the partitions, and an error from gdnn (wrapped with where).
func advRunGDNN(g *graph.Graph, policy partition.Policy, inputs map[uint64]advVal, axes map[uint64][]int64) (map[uint64]advVal, []*partition.Partition, error) {
	parts, err := partition.Get(g, policy)
	if err != nil {
		return nil, nil, fmt.Errorf("Get: %w", err)
	}
	vals := map[uint64]advVal{}
	for k, v := range inputs {
		vals[k] = v
	}
	for _, p := range parts {
		if !p.IsSupported() {
			for _, op := range p.Ops() {
				if err := advEvalInto(op, vals, axes); err != nil {
					return nil, parts, fmt.Errorf("framework eval of %v: %v", p, err)
				}
			}
			continue
		}
		var ins []graph.LogicalTensor
		var tens []partition.Tensor
		for _, port := range p.Inputs() {
			var lt graph.LogicalTensor
			var buf []byte
			if a, ok := axes[port.ID]; ok {
				fa := make([]float64, len(a))
				for i, x := range a {
					fa[i] = float64(x)
				}
				dims := port.Dims
				if !port.KnownDims() && len(dims) == 1 {
					dims = []int64{int64(len(a))}
				}
				if dims == nil {
					dims = []int64{int64(len(a))}
				}
				lt = graph.NewLogicalTensor(port.ID, port.DataType, dims)
				buf = advBytes(port.DataType, fa)
			} else {
				v, ok := vals[port.ID]
				if !ok {
					return nil, parts, fmt.Errorf("%v: input %d has no value", p, port.ID)
				}
				lt = graph.NewLogicalTensor(port.ID, port.DataType, v.dims)
				buf = advBytes(port.DataType, v.v)
				if advLayoutRand != nil && advLayoutRand.IntN(2) == 0 {
					lt, buf = advStridedCopy(port.ID, port.DataType, v)
				}
			}
			ins = append(ins, lt)
			t, err := partition.NewTensor(lt, buf)
			if err != nil {
				return nil, parts, fmt.Errorf("%v: NewTensor in %d: %w", p, port.ID, err)
			}
			tens = append(tens, t)
		}
		outs := p.Outputs()
		if advLayoutRand != nil && advLayoutRand.IntN(2) == 0 && outs[0].KnownDims() {
			st := advRandStrides(outs[0].Dims)
			outs[0] = graph.NewLogicalTensorStrided(outs[0].ID, outs[0].DataType, outs[0].Dims, st)
		}
		cp, err := p.Compile(ins, outs)
		if err != nil {
			return nil, parts, fmt.Errorf("%v: Compile: %w", p, err)
		}
		olt, err := cp.QueryLogicalTensor(outs[0].ID)
		if err != nil {
			return nil, parts, fmt.Errorf("%v: Query: %w", p, err)
		}
		if !olt.KnownDims() {
			// run-time axes: ask for the axes we pass
			var red *graph.Op
			for _, op := range p.Ops() {
				if op.Kind.IsReduction() {
					red = op
				}
			}
			olt, err = cp.QueryLogicalTensorWithAxes(outs[0].ID, axes[red.Inputs[1].ID])
			if err != nil {
				return nil, parts, fmt.Errorf("%v: QueryWithAxes: %w", p, err)
			}
		}
		size, err := partition.MemSize(olt)
		if err != nil {
			return nil, parts, fmt.Errorf("%v: MemSize: %w", p, err)
		}
		obuf := make([]byte, size)
		for i := range obuf {
			obuf[i] = 0xa5
		}
		ot, err := partition.NewTensor(olt, obuf)
		if err != nil {
			return nil, parts, fmt.Errorf("%v: NewTensor out: %w", p, err)
		}
		if err := cp.Execute(tens, []partition.Tensor{ot}); err != nil {
			return nil, parts, fmt.Errorf("%v: Execute: %w", p, err)
		}
		vals[olt.ID] = advReadStrided(olt, obuf)
	}
	return vals, parts, nil
}

// advClose compares got with the float64 reference want for a tensor of
// type dt, with tolerance scaled by tol (relative) and the magnitude
// scale of the computation. NaNs must agree; infinities must be equal.
func advClose(dt dtypes.DataType, got, want, rtol, atol float64) bool {
	if want != want || got != got {
		return want != want && got != got
	}
	if math.IsInf(want, 0) || math.IsInf(got, 0) {
		return got == want
	}
	if dt.IsInt() {
		if got == want {
			return true
		}
		// one off only next to a rounding tie of the unrounded value
		return math.Abs(got-want) <= advIntSlack
	}
	return math.Abs(got-want) <= atol+rtol*math.Abs(want)
}

// advIntSlack is how far an integer result may be from the reference
// (rounded ties of values computed in different precisions).
var advIntSlack = 1.0

// advLayoutRand, when set, makes advRunGDNN give inputs and outputs random
// permuted and padded strided layouts.
var advLayoutRand *rand.Rand

// advRandStrides returns strides for dims: a random dim order with random
// padding between dims (non-overlapping).
func advRandStrides(dims []int64) []int64 {
	r := advLayoutRand
	order := r.Perm(len(dims))
	st := make([]int64, len(dims))
	acc := int64(1 + r.IntN(2))
	for _, d := range order {
		st[d] = acc
		acc *= max(dims[d], 1)
		acc += int64(r.IntN(3))
	}
	return st
}

// advStridedCopy lays v out with random strides and garbage in the gaps.
func advStridedCopy(id uint64, dt dtypes.DataType, v advVal) (graph.LogicalTensor, []byte) {
	st := advRandStrides(v.dims)
	lt := graph.NewLogicalTensorStrided(id, dt, v.dims, st)
	span := int64(1)
	for i, d := range v.dims {
		if d == 0 {
			span = 0
			break
		}
		span += (d - 1) * st[i]
	}
	sz := int64(dt.Size())
	buf := make([]byte, span*sz)
	for i := range buf {
		buf[i] = 0x7f // NaN-ish garbage for floats
	}
	n := advNum(v.dims)
	for e := int64(0); e < n; e++ {
		off := advOffset(e, v.dims, st)
		copy(buf[off*sz:], advBytes(dt, v.v[e:e+1]))
	}
	return lt, buf
}

// advCacheCapacity sets the compiled partition cache's capacity for the
// test and restores it afterwards (other tests of the package rely on
// the default).
func advCacheCapacity(t *testing.T, n int) {
	prev, err := partition.SetCompiledPartitionCacheCapacity(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { partition.SetCompiledPartitionCacheCapacity(prev) })
}

// advRestoreISA puts back the ISA cap in force when the test started.
func advRestoreISA(t *testing.T) {
	prev := jit.SetMaxISA(jit.None)
	jit.SetMaxISA(prev)
	t.Cleanup(func() { jit.SetMaxISA(prev) })
}

// advEnlargeRefusal reports whether err is gdnn refusing, at Compile or
// Execute, a fused chain whose binary post-op turned out to broadcast the
// reduction's result to a larger shape once the dims were known (the
// partitioner fuses such ops when the dims are unknown; Compile says
// unimplemented, TestAdvOperandEnlargingAtCompile).
func advEnlargeRefusal(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Execute: invalid_shape") ||
		strings.Contains(s, "Compile: unimplemented") && strings.Contains(s, "broadcasts the reduction's output")
}

// advKey prints a value exactly, for comparing dims and bits.
func advKey(v advVal) string { return fmt.Sprint(v.dims, v.v) }

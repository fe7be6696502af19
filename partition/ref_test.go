package partition

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/shape"
)

// buffer is test data: float64 values as stored (rounded to the dtype),
// and their bytes laid out with the tensor's strides.
type buffer struct {
	lt    graph.LogicalTensor
	bytes []byte
}

func spanElems(dims, strides []int64) int64 {
	n := int64(1)
	for i, d := range dims {
		if d == 0 {
			return 0
		}
		n += (d - 1) * strides[i]
	}
	return n
}

func store(dt dtypes.DataType, b []byte, i int64, v float64) {
	switch dt {
	case dtypes.F32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	case dtypes.BF16:
		binary.LittleEndian.PutUint16(b[2*i:], dtypes.F32ToBF16(float32(v)))
	case dtypes.F16:
		binary.LittleEndian.PutUint16(b[2*i:], dtypes.F32ToF16(float32(v)))
	case dtypes.S32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
	case dtypes.S8:
		b[i] = byte(dtypes.F32ToS8(float32(v)))
	case dtypes.U8:
		b[i] = dtypes.F32ToU8(float32(v))
	case dtypes.F64:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
}

func load(dt dtypes.DataType, b []byte, i int64) float64 {
	switch dt {
	case dtypes.F32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	case dtypes.BF16:
		return float64(dtypes.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	case dtypes.F16:
		return float64(dtypes.F16ToF32(binary.LittleEndian.Uint16(b[2*i:])))
	case dtypes.S8:
		return float64(int8(b[i]))
	case dtypes.U8:
		return float64(b[i])
	case dtypes.S32:
		return float64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	case dtypes.F64:
		return math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	panic("load: dtype")
}

// newBuffer fills a tensor with values from gen at every addressed element
// (gaps of padded strides get a poison value the kernel must not read into
// a result).
func newBuffer(lt graph.LogicalTensor, gen func() float64) buffer {
	n := spanElems(lt.Dims, lt.Strides)
	b := make([]byte, n*int64(lt.DataType.Size()))
	for i := int64(0); i < n; i++ {
		store(lt.DataType, b, i, 1e30)
	}
	forEachIndex(lt.Dims, func(idx []int64) {
		store(lt.DataType, b, offset(idx, lt.Strides), gen())
	})
	return buffer{lt, b}
}

func offset(idx, strides []int64) int64 {
	o := int64(0)
	for i, x := range idx {
		o += x * strides[i]
	}
	return o
}

// forEachIndex calls f for every multi-index of dims in row-major order.
func forEachIndex(dims []int64, f func(idx []int64)) {
	for _, d := range dims {
		if d == 0 {
			return
		}
	}
	idx := make([]int64, len(dims))
	for {
		f(idx)
		k := len(dims) - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < dims[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// refPostOp is one post-op of the float64 reference: f(mean, operand).
type refPostOp struct {
	f       func(x, b float64) float64
	operand *buffer // binary ops only; broadcast numpy style onto the output
}

// reference computes the fused result in float64 over the original dims
// and strides: mean over the reduced dims, then the post-ops. It returns
// the values in row-major order of the output dims (keepDims shape rules).
func reference(src buffer, reduce []bool, keepDims bool, post []refPostOp) ([]float64, []int64) {
	dims := src.lt.Dims
	kept := make([]int64, len(dims)) // keep_dims shape
	for i, d := range dims {
		kept[i] = d
		if reduce[i] {
			kept[i] = 1
		}
	}
	nOut := int64(1)
	for _, d := range kept {
		nOut *= d
	}
	sum := make([]float64, nOut)
	cnt := make([]float64, nOut)
	keptStrides := graph.DenseStrides(kept)
	forEachIndex(dims, func(idx []int64) {
		o := int64(0)
		for i, x := range idx {
			if !reduce[i] {
				o += x * keptStrides[i]
			}
		}
		sum[o] += load(src.lt.DataType, src.bytes, offset(idx, src.lt.Strides))
		cnt[o]++
	})
	outDims := shape.ReduceDims(dims, reduce, keepDims)
	res := make([]float64, nOut)
	i := 0
	forEachIndex(outDims, func(oidx []int64) {
		v := sum[i] / cnt[i]
		for _, p := range post {
			b := 0.0
			if p.operand != nil {
				ob := p.operand.lt
				off := len(outDims) - len(ob.Dims)
				bi := make([]int64, len(ob.Dims))
				for k := range bi {
					if ob.Dims[k] != 1 {
						bi[k] = oidx[off+k]
					}
				}
				b = load(ob.DataType, p.operand.bytes, offset(bi, ob.Strides))
			}
			v = p.f(v, b)
		}
		res[i] = v
		i++
	})
	if len(outDims) == 0 && nOut == 1 && len(res) == 1 {
		return res, outDims
	}
	return res, outDims
}

// checkOutput compares the dst buffer with the reference: within tol
// relative (plus a small absolute floor) for f32, and within one ulp of
// the target type after rounding for bf16/f16.
func checkOutput(t *testing.T, dst buffer, want []float64, tol float64) {
	t.Helper()
	i := 0
	bad := 0
	ulp := map[dtypes.DataType]float64{dtypes.F32: 0, dtypes.BF16: 1.0 / 128, dtypes.F16: 1.0 / 1024}[dst.lt.DataType]
	forEachIndex(dst.lt.Dims, func(idx []int64) {
		got := load(dst.lt.DataType, dst.bytes, offset(idx, dst.lt.Strides))
		w := want[i]
		i++
		if math.IsNaN(w) && math.IsNaN(got) {
			return
		}
		lim := tol*math.Abs(w) + 1e-6 + ulp*math.Abs(w)
		if math.IsInf(w, 0) && got == w {
			return
		}
		if !(math.Abs(got-w) <= lim) {
			if bad < 5 {
				t.Errorf("dst%v = %v, want %v (|diff| %g > %g)", idx, got, w, math.Abs(got-w), lim)
			}
			bad++
		}
	})
	if i != len(want) {
		t.Fatalf("compared %d values, reference has %d", i, len(want))
	}
}

func uniform(r *rand.Rand, lo, hi float64) func() float64 {
	return func() float64 { return lo + (hi-lo)*r.Float64() }
}

package interp

import (
	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// The innermost loops. sum reduces one run of src to a float64; addRow
// adds a run of src element-wise into a row of float64 accumulators. Both
// have typed fast paths per data type (contiguous and strided) and a byte
// path for views without a typed slice. Callers pass runs that lie inside
// the buffer (Run checked the plan's span); slicing the run first also
// lets the compiler drop most bounds checks.

// accZero starts every accumulator. It is +0, as in oneDNN and in the
// JIT kernels (which zero their registers), so every backend agrees to the
// bit: a sum of only -0 values is +0, and so is their mean.
const accZero = 0.0

// sum returns the sum of n elements starting at element off, stride apart.
// Strided loops count iterations rather than compare offsets: a reduced
// loop may have stride 0 (a broadcast src dim).
func (v *view) sum(off, n, stride int) float64 {
	if n <= 0 {
		return accZero
	}
	last := off + (n-1)*stride
	if !v.typed {
		s := accZero
		for i := range n {
			s += float64(v.at(off + i*stride))
		}
		return s
	}
	switch v.dt {
	case dtypes.F32:
		x := v.f32[off : last+1]
		if stride == 1 {
			return sumF32(x)
		}
		a0, a1 := accZero, accZero
		i := 0
		for range n / 2 {
			a0 += float64(x[i])
			a1 += float64(x[i+stride])
			i += 2 * stride
		}
		if n%2 != 0 {
			a0 += float64(x[i])
		}
		return a0 + a1
	case dtypes.BF16:
		x := v.u16[off : last+1]
		if stride == 1 {
			return sumBF16(x)
		}
		s := accZero
		for i := range n {
			s += float64(bf16(x[i*stride]))
		}
		return s
	case dtypes.S8:
		return sumInts(v.s8[off:last+1], n, stride)
	case dtypes.U8:
		return sumInts(v.u8[off:last+1], n, stride)
	default:
		x := v.u16[off : last+1]
		if stride == 1 {
			return sumF16(x, v.f16)
		}
		s, t := accZero, v.f16
		for i := range n {
			s += float64(t[x[i*stride]])
		}
		return s
	}
}

// sumF32 sums x with eight independent accumulators, so that the adds of
// consecutive elements do not wait on each other's latency.
func sumF32(x []float32) float64 {
	a0, a1, a2, a3, a4, a5, a6, a7 := accZero, accZero, accZero, accZero, accZero, accZero, accZero, accZero
	for len(x) >= 8 {
		a0 += float64(x[0])
		a1 += float64(x[1])
		a2 += float64(x[2])
		a3 += float64(x[3])
		a4 += float64(x[4])
		a5 += float64(x[5])
		a6 += float64(x[6])
		a7 += float64(x[7])
		x = x[8:]
	}
	for _, f := range x {
		a0 += float64(f)
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

// sumInts sums n 8-bit integers of x, stride apart, exactly: in int64,
// which no run of 8-bit values can overflow.
func sumInts[T int8 | uint8](x []T, n, stride int) float64 {
	var s int64
	if stride == 1 {
		for _, b := range x {
			s += int64(b)
		}
		return float64(s)
	}
	for i := range n {
		s += int64(x[i*stride])
	}
	return float64(s)
}

// addInts adds len(acc) 8-bit integers of x, stride apart, into acc.
func addInts[T int8 | uint8](acc []float64, x []T, stride int) {
	if stride == 1 {
		acc = acc[:len(x)]
		for j, b := range x {
			acc[j] += float64(b)
		}
		return
	}
	for j := range acc {
		acc[j] += float64(x[j*stride])
	}
}

// sumBF16 is sumF32 for bf16 bits.
func sumBF16(x []uint16) float64 {
	a0, a1, a2, a3, a4, a5, a6, a7 := accZero, accZero, accZero, accZero, accZero, accZero, accZero, accZero
	for len(x) >= 8 {
		a0 += float64(bf16(x[0]))
		a1 += float64(bf16(x[1]))
		a2 += float64(bf16(x[2]))
		a3 += float64(bf16(x[3]))
		a4 += float64(bf16(x[4]))
		a5 += float64(bf16(x[5]))
		a6 += float64(bf16(x[6]))
		a7 += float64(bf16(x[7]))
		x = x[8:]
	}
	for _, b := range x {
		a0 += float64(bf16(b))
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

// sumF16 is sumF32 for f16 bits, widened through the table t.
func sumF16(x []uint16, t *[1 << 16]float32) float64 {
	a0, a1, a2, a3, a4, a5, a6, a7 := accZero, accZero, accZero, accZero, accZero, accZero, accZero, accZero
	for len(x) >= 8 {
		a0 += float64(t[x[0]])
		a1 += float64(t[x[1]])
		a2 += float64(t[x[2]])
		a3 += float64(t[x[3]])
		a4 += float64(t[x[4]])
		a5 += float64(t[x[5]])
		a6 += float64(t[x[6]])
		a7 += float64(t[x[7]])
		x = x[8:]
	}
	for _, h := range x {
		a0 += float64(t[h])
	}
	return ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
}

// addRow adds len(acc) elements starting at element off, stride apart,
// into acc. Each accumulator has its own dependency chain already, so one
// pass is enough to keep the adds independent.
func (v *view) addRow(acc []float64, off, stride int) {
	n := len(acc)
	if n == 0 {
		return
	}
	last := off + (n-1)*stride
	if !v.typed {
		for j := range acc {
			acc[j] += float64(v.at(off + j*stride))
		}
		return
	}
	switch v.dt {
	case dtypes.F32:
		x := v.f32[off : last+1]
		if stride == 1 {
			acc = acc[:len(x)]
			for j, f := range x {
				acc[j] += float64(f)
			}
			return
		}
		for j := range acc {
			acc[j] += float64(x[j*stride])
		}
	case dtypes.BF16:
		x := v.u16[off : last+1]
		if stride == 1 {
			acc = acc[:len(x)]
			for j, b := range x {
				acc[j] += float64(bf16(b))
			}
			return
		}
		for j := range acc {
			acc[j] += float64(bf16(x[j*stride]))
		}
	case dtypes.S8:
		addInts(acc, v.s8[off:last+1], stride)
	case dtypes.U8:
		addInts(acc, v.u8[off:last+1], stride)
	default:
		x, t := v.u16[off:last+1], v.f16
		if stride == 1 {
			acc = acc[:len(x)]
			for j, h := range x {
				acc[j] += float64(t[h])
			}
			return
		}
		for j := range acc {
			acc[j] += float64(t[x[j*stride]])
		}
	}
}

// fold combines n transformed elements starting at element off, stride
// apart, into acc with r's combine: the loop for every alg but the plain
// sum, which has the typed loops above.
func (v *view) fold(r *plan.Reduction, acc float64, off, n, stride int) float64 {
	for i := range n {
		acc = r.CombineF64(acc, r.TransformF64(float64(v.at(off+i*stride))))
	}
	return acc
}

// foldRow is addRow for every alg: it combines len(acc) transformed
// elements starting at element off, stride apart, into acc.
func (v *view) foldRow(r *plan.Reduction, acc []float64, off, stride int) {
	for j := range acc {
		acc[j] = r.CombineF64(acc[j], r.TransformF64(float64(v.at(off+j*stride))))
	}
}

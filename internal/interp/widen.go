package interp

import "github.com/gdnn/gdnn/dtypes"

// elems returns n elements of v from element off, stride apart, as f32
// values: v's own memory where they are contiguous f32, otherwise a copy
// widened into buf, which holds at least n. Every src type widens to f32
// exactly (bf16, f16, s8, u8), so the loops that combine elements are
// written once, over []float32. Contiguous bf16 and f16 widen with the
// dtypes bulk conversions (vector code where the CPU has it, the same
// bits as the scalar conversions). Callers pass runs that lie inside the
// buffer (Run checked the plan's span); a stride may be 0 (a broadcast
// dim).
func (v *view) elems(off, n, stride int, buf []float32) []float32 {
	if n <= 0 {
		return nil
	}
	if v.contiguousF32(stride) {
		return v.f32[off : off+n]
	}
	buf = buf[:n]
	if !v.typed {
		for i := range buf {
			buf[i] = v.at(off + i*stride)
		}
		return buf
	}
	last := off + (n-1)*stride
	switch v.dt {
	case dtypes.F32:
		x := v.f32[off : last+1]
		for i := range buf {
			buf[i] = x[i*stride]
		}
	case dtypes.BF16:
		x := v.u16[off : last+1]
		if stride == 1 {
			dtypes.BF16ToF32Slice(buf, x)
			return buf
		}
		for i := range buf {
			buf[i] = bf16(x[i*stride])
		}
	case dtypes.F16:
		x, t := v.u16[off:last+1], v.f16
		if stride == 1 {
			dtypes.F16ToF32Slice(buf, x)
			return buf
		}
		for i := range buf {
			buf[i] = t[x[i*stride]]
		}
	case dtypes.S8:
		x := v.s8[off : last+1]
		for i := range buf {
			buf[i] = float32(x[i*stride])
		}
	case dtypes.U8:
		x := v.u8[off : last+1]
		for i := range buf {
			buf[i] = float32(x[i*stride])
		}
	default:
		for i := range buf {
			buf[i] = v.at(off + i*stride)
		}
	}
	return buf
}

// contiguousF32 reports whether a run of v with this stride is v's own
// f32 memory, which elems returns whole, with no copy and no size limit.
func (v *view) contiguousF32(stride int) bool {
	return v.typed && v.dt == dtypes.F32 && stride == 1
}

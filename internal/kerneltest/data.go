package kerneltest

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/internal/plan"
)

// FloatPairs are the src:dst pairs of float data of the same type or
// widened to f32, which every emitter handles.
var FloatPairs = [][2]dtypes.DataType{
	{dtypes.F32, dtypes.F32}, {dtypes.BF16, dtypes.BF16}, {dtypes.BF16, dtypes.F32},
	{dtypes.F16, dtypes.F16}, {dtypes.F16, dtypes.F32},
}

// Int8SrcPairs are the src:dst pairs of 8-bit integer src: s8 or u8
// with every dst type.
var Int8SrcPairs = func() [][2]dtypes.DataType {
	var out [][2]dtypes.DataType
	for _, s := range []dtypes.DataType{dtypes.S8, dtypes.U8} {
		for _, d := range []dtypes.DataType{dtypes.S8, dtypes.U8, dtypes.S32, dtypes.F32, dtypes.BF16, dtypes.F16} {
			out = append(out, [2]dtypes.DataType{s, d})
		}
	}
	return out
}()

// OperandTypes are the data types a binary operand may have
// (plan.IsOperandType).
var OperandTypes = []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32}

// FillGrid fills b, float elements of type dt, with multiples of 1/den
// in [-lim, lim], drawn uniformly: with den and lim powers of two no
// larger than 8, every f16 and bf16 holds them, and sums of many of them
// are exact in f32 in any order, so results compare bit for bit. Half
// of the zeros are -0. With specials one element in rate is NaN, +Inf
// or -Inf.
func FillGrid(r *rand.Rand, dt dtypes.DataType, b []byte, den, lim int, specials bool, rate int) {
	n := den * lim
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		v := float32(r.Intn(2*n+1)-n) / float32(den)
		if v == 0 && r.Intn(2) == 0 {
			v = float32(math.Copysign(0, -1))
		}
		if specials && r.Intn(rate) == 0 {
			v = [...]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}[r.Intn(3)]
		}
		dtypes.StoreF32(dt, b, i, v)
	}
}

// FillS32 fills b, s32 elements (only operands are s32), with any value
// (beyond 2^24 the load rounds to f32, as dtypes.LoadF32 does), small
// ones most of the time.
func FillS32(r *rand.Rand, b []byte) {
	for i := int64(0); i < int64(len(b)/4); i++ {
		v := int32(r.Intn(65) - 32)
		if r.Intn(4) == 0 {
			v = int32(r.Uint32())
		}
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
}

// IntRange is the range of the 8-bit integer type dt.
func IntRange(dt dtypes.DataType) (lo, hi int) {
	if dt == dtypes.S8 {
		return math.MinInt8, math.MaxInt8
	}
	return 0, math.MaxUint8
}

// FillInts fills the 8-bit integer buffer b with values drawn uniformly
// from [lo, hi] intersected with dt's range (a range outside it gives
// dt's values nearest to it).
func FillInts(r *rand.Rand, dt dtypes.DataType, b []byte, lo, hi int) {
	tlo, thi := IntRange(dt)
	lo, hi = min(max(lo, tlo), thi), min(max(hi, tlo), thi)
	for i := range b {
		b[i] = byte(lo + r.Intn(hi-lo+1))
	}
}

// Buffers allocates src, dst and the operand buffers of p: src filled by
// fillSrc, then each operand in post-op order by fillBin, and dst with
// the byte sentinel, which no output has.
func Buffers(t testing.TB, p *plan.Problem, sentinel byte, fillSrc, fillBin func(dtypes.DataType, []byte)) (src, dst []byte, bins [][]byte) {
	t.Helper()
	sb, err := p.SrcBytes()
	if err != nil {
		t.Fatal(err)
	}
	src = make([]byte, sb)
	fillSrc(p.SrcDT, src)
	dst = Dst(t, p, sentinel)
	bi := 0
	for _, op := range p.PostOps {
		if !op.Kind.IsBinary() {
			continue
		}
		nb, err := p.BinBytes(bi)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, nb)
		fillBin(op.BinDT, b)
		bins = append(bins, b)
		bi++
	}
	return src, dst, bins
}

// Dst allocates p's dst filled with the byte sentinel.
func Dst(t testing.TB, p *plan.Problem, sentinel byte) []byte {
	t.Helper()
	db, err := p.DstBytes()
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, db)
	for i := range dst {
		dst[i] = sentinel
	}
	return dst
}

// KeptDims is p's dims with the reduced ones set to 1 (the dst shape).
func KeptDims(p *plan.Problem) []int64 {
	d := append([]int64(nil), p.Dims...)
	for i := range d {
		if p.Reduce[i] {
			d[i] = 1
		}
	}
	return d
}

// OperandStrides draws a binary operand's layout over the dst dims kd:
// a scalar, a full tensor, or broadcast over a random subset of the
// dims; layout lays dims out (the emitter's tests' own random layout).
func OperandStrides(r *rand.Rand, kd []int64, layout func([]int64) []int64) []int64 {
	switch r.Intn(3) {
	case 0:
		return make([]int64, len(kd))
	case 1:
		return layout(kd)
	}
	d := append([]int64(nil), kd...)
	for i := range d {
		if r.Intn(2) == 0 {
			d[i] = 1
		}
	}
	st := layout(d)
	for i := range st {
		if d[i] == 1 {
			st[i] = 0
		}
	}
	return st
}

// fillNearOne fills b, float elements of type dt, with values uniform
// in [0.5, 1.5) (r.Float32), the anchors' input distribution.
func fillNearOne(r *rand.Rand, dt dtypes.DataType, b []byte) {
	for i := int64(0); i < int64(len(b)/dt.Size()); i++ {
		dtypes.StoreF32(dt, b, i, 0.5+r.Float32())
	}
}

// Store returns vals stored as elements of type dt.
func Store(dt dtypes.DataType, vals []float32) []byte {
	b := make([]byte, len(vals)*dt.Size())
	for i, v := range vals {
		dtypes.StoreF32(dt, b, int64(i), v)
	}
	return b
}

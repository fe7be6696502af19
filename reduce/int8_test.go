package reduce

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
	"github.com/gdnn/gdnn/graph"
	"github.com/gdnn/gdnn/internal/oracle"
)

// quint8 is a framework's own u8 type: its Go type says u8.
type quint8 uint8

var int8Pairs = [][2]dtypes.DataType{
	{dtypes.S8, dtypes.S8}, {dtypes.S8, dtypes.S32}, {dtypes.S8, dtypes.F32}, {dtypes.S8, dtypes.U8},
	{dtypes.U8, dtypes.U8}, {dtypes.U8, dtypes.S32}, {dtypes.U8, dtypes.F32}, {dtypes.U8, dtypes.BF16},
}

// TestInt8AgainstOracle runs every kind over 8-bit src into every dst
// type, on the interpreter and every ISA, against internal/oracle: integer
// results are the oracle's value rounded to nearest even and saturated
// (within one where the value sits within rounding error of a tie),
// float results within the dst type's tolerance.
func TestInt8AgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, isa := range isas() {
		withISA(t, isa)
		for op := range opCount {
			for ci, c := range shapeCases {
				for _, tp := range int8Pairs {
					what := fmt.Sprintf("%v %v case %d %v:%v", isa, op, ci, tp[0], tp[1])
					checkInt8Case(t, r, op, c, tp, what)
				}
			}
		}
	}
}

func checkInt8Case(t *testing.T, r *rand.Rand, op Op, c shapeCase, tp [2]dtypes.DataType, what string) {
	t.Helper()
	p := problemOf(op, c, tp)
	srcSpan, err := plan64Span(p.Dims, p.SrcStrides)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := -128, 128
	if tp[0] == dtypes.U8 {
		lo, hi = 0, 256
	}
	if op == OpProd {
		lo, hi = max(lo, -2), 3
	}
	raw := make([]int, srcSpan)
	for i := range raw {
		raw[i] = lo + r.IntN(hi-lo)
	}
	var kept, keptStrides []int64
	for i, d := range p.Dims {
		if !p.Reduce[i] {
			kept, keptStrides = append(kept, d), append(keptStrides, p.DstStrides[i])
		}
	}
	dstSpan, err := plan64Span(kept, keptStrides)
	if err != nil {
		t.Fatal(err)
	}
	opts := []Option{KeepDims(c.keep)}
	if tp[1] == dtypes.BF16 {
		opts = append(opts, DstType(dtypes.BF16))
	}
	if c.srcStrides != nil {
		opts = append(opts, SrcStrides(c.srcStrides))
	}
	if c.dstStrides != nil {
		opts = append(opts, DstStrides(c.dstStrides))
	}
	var srcBytes, dstBytes []byte
	if tp[0] == dtypes.S8 {
		s := make([]int8, len(raw))
		for i, v := range raw {
			s[i] = int8(v)
		}
		srcBytes, dstBytes, err = runInt8(op, s, tp[1], dstSpan, c, opts)
	} else {
		s := make([]quint8, len(raw))
		for i, v := range raw {
			s[i] = quint8(v)
		}
		srcBytes, dstBytes, err = runInt8(op, s, tp[1], dstSpan, c, opts)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, o := range oracle.Reduce(p, srcBytes) {
		want := o.Value
		if op == OpLogSum {
			want = math.Log(want)
		}
		got := oracle.Get(tp[1], dstBytes, o.Dst)
		if !tp[1].IsInt() {
			tol := rtol(tp[1])*math.Abs(want) + 1e-6 + 1e-6*o.Mag
			if !(math.Abs(got-want) <= tol || math.IsNaN(want) && math.IsNaN(got) || got == want) {
				t.Fatalf("%s: dst[%d] = %g, oracle %g", what, o.Dst, got, want)
			}
			continue
		}
		exact := make([]byte, 4)
		oracle.Put(tp[1], exact, 0, want)
		w := oracle.Get(tp[1], exact, 0)
		if got == w {
			continue
		}
		// Within rounding error of a tie, or of the f32 result, one off.
		frac := math.Abs(want - math.Floor(want) - 0.5)
		if !(frac <= 1e-6*math.Max(1, o.Mag) && math.Abs(got-w) <= 1) {
			t.Fatalf("%s: dst[%d] = %g, want %g (oracle %g)", what, o.Dst, got, w, want)
		}
	}
}

// plan64Span is the elements dims with strides address.
func plan64Span(dims, strides []int64) (int64, error) {
	n := int64(1)
	for i, d := range dims {
		if d == 0 {
			return 0, nil
		}
		n += (d - 1) * strides[i]
	}
	return n, nil
}

// runInt8 runs op on src into a fresh dst of dstLen elements of type ddt,
// and returns both as bytes.
func runInt8[S Src](op Op, src []S, ddt dtypes.DataType, dstLen int64, c shapeCase, opts []Option) ([]byte, []byte, error) {
	switch ddt {
	case dtypes.S8:
		dst := make([]int8, dstLen)
		err := Reduce(op, dst, src, c.dims, c.axes, opts...)
		return bytesOf(src), bytesOf(dst), err
	case dtypes.U8:
		dst := make([]uint8, dstLen)
		err := Reduce(op, dst, src, c.dims, c.axes, opts...)
		return bytesOf(src), bytesOf(dst), err
	case dtypes.S32:
		dst := make([]int32, dstLen)
		err := Reduce(op, dst, src, c.dims, c.axes, opts...)
		return bytesOf(src), bytesOf(dst), err
	case dtypes.BF16:
		dst := make([]bf16, dstLen)
		err := Reduce(op, dst, src, c.dims, c.axes, opts...)
		return bytesOf(src), bytesOf(dst), err
	}
	dst := make([]float32, dstLen)
	err := Reduce(op, dst, src, c.dims, c.axes, opts...)
	return bytesOf(src), bytesOf(dst), err
}

// TestInt8Semantics pins the integer results: ties round to even, sums
// saturate, and a framework's own 8-bit type works unnamed.
func TestInt8Semantics(t *testing.T) {
	for _, isa := range isas() {
		withISA(t, isa)
		// Means of 2,3 (2.5 -> 2) and 3,4 (3.5 -> 4).
		y := make([]quint8, 2)
		if err := Mean(y, []quint8{2, 3, 3, 4}, []int{2, 2}, []int{1}); err != nil || !slices.Equal(y, []quint8{2, 4}) {
			t.Errorf("%v: u8 means %v, %v; want [2 4]", isa, y, err)
		}
		// s8 sums saturate to s8; into s32 they are exact.
		s8 := make([]int8, 2)
		src := []int8{100, 100, -100, -100}
		if err := Sum(s8, src, []int{2, 2}, []int{1}); err != nil || !slices.Equal(s8, []int8{127, -128}) {
			t.Errorf("%v: s8 sums %v, %v; want [127 -128]", isa, s8, err)
		}
		s32 := make([]int32, 2)
		if err := Sum(s32, src, []int{2, 2}, []int{1}); err != nil || !slices.Equal(s32, []int32{200, -200}) {
			t.Errorf("%v: s32 sums %v, %v; want [200 -200]", isa, s32, err)
		}
		// A mean into f32, Type(BF16) naming only the 16-bit dst.
		f := make([]bf16, 1)
		if err := Mean(f, []int8{-3, 4}, []int{2}, []int{0}, Type(dtypes.BF16)); err != nil || dtypes.BF16ToF32(uint16(f[0])) != 0.5 {
			t.Errorf("%v: bf16 mean %v, %v; want 0.5", isa, f, err)
		}
	}
}

// TestInt8Refusals: what the engine does not take is a clear error at
// run time. An s32 src never gets that far: Src has no ~int32, so
// Sum(dst, []int32{...}, ...) does not compile; what remains is naming s32
// (or another wrong type) for a src of another type.
func TestInt8Refusals(t *testing.T) {
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"s32 named src", func() error {
			return Sum(make([]int32, 1), []int8{1, 2}, []int{2}, []int{0}, SrcType(dtypes.S32))
		}, "src is a s8 slice but its type is named s32"},
		{"s32 named float src", func() error {
			return Sum(make([]int32, 1), []float32{1, 2}, []int{2}, []int{0}, SrcType(dtypes.S32))
		}, "src is a 32-bit float slice but its type is named s32"},
		{"named mismatch", func() error {
			return Sum(make([]int32, 1), []int8{1, 2}, []int{2}, []int{0}, SrcType(dtypes.U8))
		}, "src is a s8 slice but its type is named u8"},
		{"f32 src f16 dst", func() error {
			return Sum(make([]uint16, 1), []float32{1, 2}, []int{2}, []int{0}, DstType(dtypes.F16))
		}, "dst must be the src type, f32, s8, u8 or s32"},
		{"16-bit dst unnamed", func() error { return Sum(make([]uint16, 1), []int8{1, 2}, []int{2}, []int{0}) }, "name its type bf16, f16 or u16"},
	}
	for _, c := range cases {
		err := c.run()
		if !errors.Is(err, graph.InvalidDataType) || !containsStr(err, c.want) {
			t.Errorf("%s: %v, want InvalidDataType containing %q", c.name, err, c.want)
		}
	}
}

func containsStr(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}

// TestFloatSrcIntegerDst: f32 and bf16 src go into s8, u8 and s32 dst as
// through the graph API, the result rounded to nearest even and
// saturated, NaN to 0, on the interpreter and every ISA.
func TestFloatSrcIntegerDst(t *testing.T) {
	nan := float32(math.NaN())
	for _, isa := range isas() {
		withISA(t, isa)
		s32 := make([]int32, 3)
		if err := Sum(s32, []float32{1.5, 2, 300, -400, 2.5, 0}, []int{3, 2}, []int{1}); err != nil ||
			!slices.Equal(s32, []int32{4, -100, 2}) {
			t.Errorf("%v: f32 sums into s32 %v, %v; want [4 -100 2]", isa, s32, err)
		}
		s8 := make([]int8, 3)
		if err := Sum(s8, []float32{100, 100, -100, -100, nan, 1}, []int{3, 2}, []int{1}); err != nil ||
			!slices.Equal(s8, []int8{127, -128, 0}) {
			t.Errorf("%v: f32 sums into s8 %v, %v; want [127 -128 0]", isa, s8, err)
		}
		u8 := make([]uint8, 2)
		if err := Mean(u8, []float32{-3, 1, 2, 3}, []int{2, 2}, []int{1}); err != nil || !slices.Equal(u8, []uint8{0, 2}) {
			t.Errorf("%v: f32 means into u8 %v, %v; want [0 2]", isa, u8, err)
		}
		b := make([]bf16, 4)
		for i, v := range []float32{-7, 3, 0.5, 0.25} {
			b[i] = bf16(dtypes.F32ToBF16(v))
		}
		m := make([]int32, 2)
		if err := Max(m, b, []int{2, 2}, []int{1}, SrcType(dtypes.BF16)); err != nil || !slices.Equal(m, []int32{3, 0}) {
			t.Errorf("%v: bf16 maxes into s32 %v, %v; want [3 0]", isa, m, err)
		}
	}
}

package dtypes_test

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// intRef is the conversion spelled out: the nearest integers below and
// above, the even one on a tie, then the clamp.
func intRef(f float32, lo, hi int64) int64 {
	if math.IsNaN(float64(f)) {
		return 0
	}
	x := float64(f)
	if x <= float64(lo) {
		return lo
	}
	if x >= float64(hi) {
		return hi
	}
	down := math.Floor(x)
	frac := x - down
	n := int64(down)
	switch {
	case frac > 0.5, frac == 0.5 && n%2 != 0:
		n++
	}
	return n
}

func TestIntConversionsAllNear(t *testing.T) {
	// Every multiple of 1/8 around and past both types' ranges: exact
	// integers, ties (x.5) and values between them.
	for i := -4096; i <= 4096; i++ {
		f := float32(i) / 8
		if got, want := int64(dtypes.F32ToS8(f)), intRef(f, math.MinInt8, math.MaxInt8); got != want {
			t.Fatalf("F32ToS8(%v) = %d, want %d", f, got, want)
		}
		if got, want := int64(dtypes.F32ToU8(f)), intRef(f, 0, math.MaxUint8); got != want {
			t.Fatalf("F32ToU8(%v) = %d, want %d", f, got, want)
		}
		if got, want := int64(dtypes.F32ToS32(f)), intRef(f, math.MinInt32, math.MaxInt32); got != want {
			t.Fatalf("F32ToS32(%v) = %d, want %d", f, got, want)
		}
	}
}

func TestIntConversionsSpecials(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	cases := []struct {
		f      float32
		s8, u8 int64
		s32    int64
	}{
		{0.5, 0, 0, 0},
		{1.5, 2, 2, 2},
		{2.5, 2, 2, 2},
		{-0.5, 0, 0, 0},
		{-1.5, -2, 0, -2},
		{-2.5, -2, 0, -2},
		{127.5, 127, 128, 128},
		{-128.5, -128, 0, -128},
		{255.5, 127, 255, 256},
		{inf, 127, 255, math.MaxInt32},
		{-inf, -128, 0, math.MinInt32},
		{nan, 0, 0, 0},
		{float32(math.Copysign(0, -1)), 0, 0, 0},
		{2147483520, 127, 255, 2147483520}, // the largest f32 below 2^31
		{2147483648, 127, 255, math.MaxInt32},
		{-2147483648, -128, 0, math.MinInt32},
		{-2147483904, -128, 0, math.MinInt32},
		{math.MaxFloat32, 127, 255, math.MaxInt32},
	}
	for _, c := range cases {
		if got := int64(dtypes.F32ToS8(c.f)); got != c.s8 {
			t.Errorf("F32ToS8(%v) = %d, want %d", c.f, got, c.s8)
		}
		if got := int64(dtypes.F32ToU8(c.f)); got != c.u8 {
			t.Errorf("F32ToU8(%v) = %d, want %d", c.f, got, c.u8)
		}
		if got := int64(dtypes.F32ToS32(c.f)); got != c.s32 {
			t.Errorf("F32ToS32(%v) = %d, want %d", c.f, got, c.s32)
		}
	}
}

func TestIntRoundTrip(t *testing.T) {
	// Every s8 and u8 value survives f32 and back.
	for i := math.MinInt8; i <= math.MaxUint8; i++ {
		if i <= math.MaxInt8 {
			if got := dtypes.F32ToS8(float32(i)); int(got) != i {
				t.Fatalf("F32ToS8(%d) = %d", i, got)
			}
		}
		if i >= 0 {
			if got := dtypes.F32ToU8(float32(i)); int(got) != i {
				t.Fatalf("F32ToU8(%d) = %d", i, got)
			}
		}
	}
}

// TestIntegerKinds pins which types are integers, signed and exact.
func TestIntegerKinds(t *testing.T) {
	cases := []struct {
		t                      dtypes.DataType
		integer, signed, exact bool
	}{
		{dtypes.F32, false, false, false}, {dtypes.BF16, false, false, false}, {dtypes.F16, false, false, false},
		{dtypes.F64, false, false, false}, {dtypes.Undef, false, false, false},
		{dtypes.S8, true, true, false}, {dtypes.U8, true, false, false},
		{dtypes.S16, true, true, true}, {dtypes.U16, true, false, true},
		{dtypes.S32, true, true, true}, {dtypes.U32, true, false, true},
		{dtypes.S64, true, true, true}, {dtypes.U64, true, false, true},
		{dtypes.Boolean, false, false, true},
	}
	for _, c := range cases {
		if c.t.IsInteger() != c.integer || c.t.IsSigned() != c.signed || c.t.IsExact() != c.exact {
			t.Errorf("%v: IsInteger %v IsSigned %v IsExact %v, want %v %v %v", c.t,
				c.t.IsInteger(), c.t.IsSigned(), c.t.IsExact(), c.integer, c.signed, c.exact)
		}
	}
}

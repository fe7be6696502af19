package dtypes_test

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

var bf16Conv = conversion{f: bf16Format, widen: dtypes.BF16ToF32, narrow: dtypes.F32ToBF16}

func TestBF16ToF32AllPatterns(t *testing.T) { checkWiden(t, bf16Conv) }

func TestBF16RoundTripAllPatterns(t *testing.T) { checkRoundTrip(t, bf16Conv) }

func TestF32ToBF16Midpoints(t *testing.T) { checkMidpoints(t, bf16Conv) }

// The largest finite bf16 is (2 - 2^-7) * 2^127; halfway to 2^128 is
// (2 - 2^-8) * 2^127.
func TestF32ToBF16Overflow(t *testing.T) {
	checkOverflow(t, bf16Conv, math.Ldexp(2-math.Ldexp(1, -8), 127))
}

func TestF32ToBF16NaN(t *testing.T) { checkNaNInputs(t, bf16Conv) }

func TestF32ToBF16Random(t *testing.T) { checkRandom(t, bf16Conv, 1_000_000, 1) }

// TestF32ToBF16Examples pins a few values worked out by hand, so that a
// mistake shared by the reference and the code cannot pass unnoticed.
func TestF32ToBF16Examples(t *testing.T) {
	cases := []struct {
		in   uint32
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // 1 + 2^-8: tie, 0x3f80 is even
		{0x3f818000, 0x3f82}, // 1 + 3*2^-8: tie, 0x3f82 is even
		{0x3f808001, 0x3f81}, // just above the tie
		{0x3f807fff, 0x3f80}, // just below the tie
		{0xbf808000, 0xbf80}, // -(1 + 2^-8)
		{0x00008000, 0x0000}, // 2^-134: tie between 0 and the smallest subnormal
		{0x00018000, 0x0002}, // 3*2^-134: tie, 0x0002 is even
		{0x80000000, 0x8000}, // -0
		{0x7f7fffff, 0x7f80}, // max f32 overflows
		{0x7f7f7fff, 0x7f7f}, // just below the overflow boundary
		{0xff800000, 0xff80}, // -Inf
	}
	for _, c := range cases {
		if got := dtypes.F32ToBF16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

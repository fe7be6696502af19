package dtypes_test

import (
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

var f16Conv = conversion{f: f16Format, widen: dtypes.F16ToF32, narrow: dtypes.F32ToF16}

func TestF16ToF32AllPatterns(t *testing.T) { checkWiden(t, f16Conv) }

func TestF16RoundTripAllPatterns(t *testing.T) { checkRoundTrip(t, f16Conv) }

func TestF32ToF16Midpoints(t *testing.T) { checkMidpoints(t, f16Conv) }

// The largest finite f16 is 65504; halfway to 2^16 is 65520.
func TestF32ToF16Overflow(t *testing.T) { checkOverflow(t, f16Conv, 65520) }

func TestF32ToF16NaN(t *testing.T) { checkNaNInputs(t, f16Conv) }

func TestF32ToF16Random(t *testing.T) { checkRandom(t, f16Conv, 1_000_000, 2) }

// TestF32ToF16Examples pins a few values worked out by hand, so that a
// mistake shared by the reference and the code cannot pass unnoticed.
func TestF32ToF16Examples(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00},
		{1 + 1.0/2048, 0x3c00},      // tie, 0x3c00 is even
		{1 + 3.0/2048, 0x3c02},      // tie, 0x3c02 is even
		{-(1 + 3.0/2048), 0xbc02},   // negative tie
		{65504, 0x7bff},             // largest finite
		{65519, 0x7bff},             // below the overflow boundary
		{65520, 0x7c00},             // the boundary itself rounds to Inf
		{0x1p-24, 0x0001},           // smallest subnormal
		{0x1p-25, 0x0000},           // tie between 0 and the smallest subnormal
		{0x1.8p-24, 0x0002},         // 1.5 * 2^-24: tie, 0x0002 is even
		{0x1p-14 - 0x1p-25, 0x0400}, // tie between the largest subnormal and 2^-14
		{float32(math.Copysign(0, -1)), 0x8000},
	}
	for _, c := range cases {
		if got := dtypes.F32ToF16(c.in); got != c.want {
			t.Errorf("F32ToF16(%v) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

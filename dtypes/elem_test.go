package dtypes_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// fb is the bit pattern of the f32 f.
func fb(f float32) uint32 { return math.Float32bits(f) }

// storeCases are StoreF32's results worked out by hand: the f32 bits in
// and the element's bits out (the low Size bytes, little-endian).
var storeCases = []struct {
	dt       dtypes.DataType
	in, want uint32
}{
	// f32 keeps every pattern, signalling NaN and subnormals included.
	{dtypes.F32, fb(1.5), fb(1.5)},
	{dtypes.F32, 0x80000000, 0x80000000}, // -0
	{dtypes.F32, 0x7f800000, 0x7f800000}, // +Inf
	{dtypes.F32, 0xff800000, 0xff800000}, // -Inf
	{dtypes.F32, 0x7fc00001, 0x7fc00001}, // quiet NaN with a payload
	{dtypes.F32, 0xff800001, 0xff800001}, // signalling NaN
	{dtypes.F32, 0x00000001, 0x00000001}, // the smallest subnormal
	{dtypes.F32, 0x807fffff, 0x807fffff}, // the largest negative subnormal

	// bf16: the upper half, rounded to nearest even.
	{dtypes.BF16, fb(1), 0x3f80},
	{dtypes.BF16, 0x3f808000, 0x3f80}, // tie, even below: down
	{dtypes.BF16, 0x3f818000, 0x3f82}, // tie, odd below: up
	{dtypes.BF16, 0x3f808001, 0x3f81}, // just past the tie
	{dtypes.BF16, 0x3f807fff, 0x3f80}, // just short of the tie
	{dtypes.BF16, 0xbf818000, 0xbf82}, // negative tie: away from zero to even
	{dtypes.BF16, 0x00000000, 0x0000},
	{dtypes.BF16, 0x80000000, 0x8000},
	{dtypes.BF16, 0x7f800000, 0x7f80},
	{dtypes.BF16, 0xff800000, 0xff80},
	{dtypes.BF16, 0x7f7f7fff, 0x7f7f}, // below the tie with 2^128: the largest finite
	{dtypes.BF16, 0x7f7f8000, 0x7f80}, // that tie: odd below, so Inf
	{dtypes.BF16, 0xff7fffff, 0xff80}, // -MaxFloat32: -Inf
	{dtypes.BF16, 0x7f800001, 0x7fc0}, // NaN with its payload in the low half only: still NaN, quiet
	{dtypes.BF16, 0x7fa00000, 0x7fe0}, // signalling NaN: upper payload kept, quiet
	{dtypes.BF16, 0xffc00000, 0xffc0},
	{dtypes.BF16, 0x00010000, 0x0001}, // subnormal, exact
	{dtypes.BF16, 0x00008000, 0x0000}, // subnormal tie: to even zero
	{dtypes.BF16, 0x00018000, 0x0002}, // subnormal tie: up to even
	{dtypes.BF16, 0x80008001, 0x8001},
	{dtypes.BF16, 0x007fffff, 0x0080}, // the largest f32 subnormal: up to the smallest normal

	// f16: rounded to nearest even, past 65504 Inf.
	{dtypes.F16, fb(1), 0x3c00},
	{dtypes.F16, 0x3f801000, 0x3c00}, // 1 + 2^-11, tie: even down
	{dtypes.F16, 0x3f803000, 0x3c02}, // 1 + 3*2^-11, tie: even up
	{dtypes.F16, 0x3f801001, 0x3c01},
	{dtypes.F16, 0xbf803000, 0xbc02},
	{dtypes.F16, fb(65504), 0x7bff},
	{dtypes.F16, fb(65519), 0x7bff}, // below the tie with 2^16
	{dtypes.F16, fb(65520), 0x7c00}, // that tie: odd below, so Inf
	{dtypes.F16, fb(-65520), 0xfc00},
	{dtypes.F16, fb(math.MaxFloat32), 0x7c00},
	{dtypes.F16, 0x00000000, 0x0000},
	{dtypes.F16, 0x80000000, 0x8000},
	{dtypes.F16, 0x7f800000, 0x7c00},
	{dtypes.F16, 0xff800000, 0xfc00},
	{dtypes.F16, 0x7f800001, 0x7e00}, // NaN with its payload below f16's: still NaN, quiet
	{dtypes.F16, 0x7fa02000, 0x7f01}, // signalling NaN: upper payload kept, quiet
	{dtypes.F16, 0xffc00000, 0xfe00},
	{dtypes.F16, 0x38800000, 0x0400}, // 2^-14, the smallest normal
	{dtypes.F16, 0x387fc000, 0x03ff}, // the largest subnormal
	{dtypes.F16, 0x387fe000, 0x0400}, // tie between them: to even, the normal
	{dtypes.F16, 0x33800000, 0x0001}, // 2^-24, the smallest subnormal
	{dtypes.F16, 0xb3800000, 0x8001},
	{dtypes.F16, 0x33000000, 0x0000}, // 2^-25, tie: to even zero
	{dtypes.F16, 0x33000001, 0x0001}, // just past it
	{dtypes.F16, 0x33c00000, 0x0002}, // 3*2^-25, tie: to even 2^-23
	{dtypes.F16, 0x00000001, 0x0000}, // f32 subnormals are zero in f16
	{dtypes.F16, 0x80000001, 0x8000},

	// s8: nearest even, saturating, NaN 0.
	{dtypes.S8, fb(0.5), 0},
	{dtypes.S8, fb(1.5), 2},
	{dtypes.S8, fb(2.5), 2},
	{dtypes.S8, fb(-0.5), 0},
	{dtypes.S8, fb(-1.5), 0xfe},
	{dtypes.S8, fb(-2.5), 0xfe},
	{dtypes.S8, fb(126.5), 126},
	{dtypes.S8, fb(127.5), 127}, // 128 saturates
	{dtypes.S8, fb(1000), 127},
	{dtypes.S8, fb(-128.5), 0x80},
	{dtypes.S8, fb(-129), 0x80},
	{dtypes.S8, 0x7f800000, 127},
	{dtypes.S8, 0xff800000, 0x80},
	{dtypes.S8, 0x7fc00000, 0},
	{dtypes.S8, 0xff800001, 0},
	{dtypes.S8, 0x80000000, 0},
	{dtypes.S8, 0x80000001, 0},

	// u8: nearest even, saturating, NaN 0.
	{dtypes.U8, fb(0.5), 0},
	{dtypes.U8, fb(1.5), 2},
	{dtypes.U8, fb(128), 0x80},
	{dtypes.U8, fb(254.5), 254},
	{dtypes.U8, fb(255.5), 255}, // 256 saturates
	{dtypes.U8, fb(300), 255},
	{dtypes.U8, fb(-0.5), 0},
	{dtypes.U8, fb(-1), 0},
	{dtypes.U8, 0x7f800000, 255},
	{dtypes.U8, 0xff800000, 0},
	{dtypes.U8, 0x7fc00000, 0},
	{dtypes.U8, 0x80000000, 0},
	{dtypes.U8, 0x00000001, 0},

	// s32: nearest even, saturating, NaN 0.
	{dtypes.S32, fb(2.5), 2},
	{dtypes.S32, fb(-3.5), 0xfffffffc},
	{dtypes.S32, fb(2147483520), 0x7fffff80}, // the largest f32 below 2^31
	{dtypes.S32, fb(2147483648), 0x7fffffff},
	{dtypes.S32, fb(-2147483648), 0x80000000},
	{dtypes.S32, fb(-2147483904), 0x80000000},
	{dtypes.S32, fb(math.MaxFloat32), 0x7fffffff},
	{dtypes.S32, 0x7f800000, 0x7fffffff},
	{dtypes.S32, 0xff800000, 0x80000000},
	{dtypes.S32, 0x7fc00000, 0},
	{dtypes.S32, 0x80000000, 0},
	{dtypes.S32, 0x80000001, 0},
}

// loadCases are LoadF32's results worked out by hand: the element's bits
// in and the f32 bits out.
var loadCases = []struct {
	dt       dtypes.DataType
	in, want uint32
}{
	{dtypes.F32, fb(1.5), fb(1.5)},
	{dtypes.F32, 0x80000000, 0x80000000},
	{dtypes.F32, 0x7f800000, 0x7f800000},
	{dtypes.F32, 0xff800001, 0xff800001}, // signalling NaN, unchanged
	{dtypes.F32, 0x00000001, 0x00000001},

	{dtypes.BF16, 0x3f80, fb(1)},
	{dtypes.BF16, 0x8000, 0x80000000},
	{dtypes.BF16, 0x0001, 0x00010000}, // subnormal
	{dtypes.BF16, 0x7f7f, 0x7f7f0000}, // the largest finite
	{dtypes.BF16, 0x7f80, 0x7f800000},
	{dtypes.BF16, 0xff80, 0xff800000},
	{dtypes.BF16, 0x7f81, 0x7f810000}, // signalling NaN, unchanged
	{dtypes.BF16, 0xffc1, 0xffc10000},

	{dtypes.F16, 0x3c00, fb(1)},
	{dtypes.F16, 0x8000, 0x80000000},
	{dtypes.F16, 0x7bff, fb(65504)},
	{dtypes.F16, 0x0400, 0x38800000}, // 2^-14
	{dtypes.F16, 0x03ff, 0x387fc000}, // the largest subnormal
	{dtypes.F16, 0x0001, 0x33800000}, // 2^-24
	{dtypes.F16, 0x8001, 0xb3800000},
	{dtypes.F16, 0x7c00, 0x7f800000},
	{dtypes.F16, 0xfc00, 0xff800000},
	{dtypes.F16, 0x7e00, 0x7fc00000},
	{dtypes.F16, 0x7d01, 0x7fe02000}, // signalling NaN: payload kept, quiet
	{dtypes.F16, 0xfd01, 0xffe02000},

	{dtypes.S8, 0x00, 0},
	{dtypes.S8, 0x7f, fb(127)},
	{dtypes.S8, 0x80, fb(-128)},
	{dtypes.S8, 0xff, fb(-1)},

	{dtypes.U8, 0x00, 0},
	{dtypes.U8, 0x80, fb(128)},
	{dtypes.U8, 0xff, fb(255)},

	{dtypes.S32, 0, 0},
	{dtypes.S32, 0xffffffff, fb(-1)},
	{dtypes.S32, 0x01000001, fb(16777216)}, // 2^24 + 1, tie: to even
	{dtypes.S32, 0x01000002, fb(16777218)}, // exact
	{dtypes.S32, 0x01000003, fb(16777220)}, // 2^24 + 3, tie: to even
	{dtypes.S32, 0x7fffffff, fb(2147483648)},
	{dtypes.S32, 0x80000000, fb(-2147483648)},
}

// elemBytes returns the little-endian bytes of an element of size bytes
// with bits v.
func elemBytes(size int, v uint32) []byte {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return b[:size]
}

// elemBuffer returns three elements of size bytes filled with sentinel
// bytes, and the middle one replaced by mid when mid is not nil.
func elemBuffer(size int, mid []byte) []byte {
	b := bytes.Repeat([]byte{0xa5}, 3*size)
	copy(b[size:], mid)
	return b
}

// TestStoreF32 stores each case as the middle of three elements and checks
// the element's bytes and that its neighbours' are untouched.
func TestStoreF32(t *testing.T) {
	seen := map[dtypes.DataType]bool{}
	for _, c := range storeCases {
		seen[c.dt] = true
		size := c.dt.Size()
		b := elemBuffer(size, nil)
		dtypes.StoreF32(c.dt, b, 1, math.Float32frombits(c.in))
		if want := elemBuffer(size, elemBytes(size, c.want)); !bytes.Equal(b, want) {
			t.Errorf("StoreF32(%v, %#08x) wrote % x, want % x", c.dt, c.in, b, want)
		}
	}
	checkAllTypes(t, "storeCases", seen)
}

// TestLoadF32 loads each case from the middle of three elements.
func TestLoadF32(t *testing.T) {
	seen := map[dtypes.DataType]bool{}
	for _, c := range loadCases {
		seen[c.dt] = true
		size := c.dt.Size()
		b := elemBuffer(size, elemBytes(size, c.in))
		if got := math.Float32bits(dtypes.LoadF32(c.dt, b, 1)); got != c.want {
			t.Errorf("LoadF32(%v, %#x) = %#08x, want %#08x", c.dt, c.in, got, c.want)
		}
	}
	checkAllTypes(t, "loadCases", seen)
}

// checkAllTypes fails unless seen has every data type of tensor elements.
func checkAllTypes(t *testing.T, table string, seen map[dtypes.DataType]bool) {
	t.Helper()
	for _, dt := range []dtypes.DataType{dtypes.F32, dtypes.BF16, dtypes.F16, dtypes.S8, dtypes.U8, dtypes.S32} {
		if !seen[dt] {
			t.Errorf("%s has no %v case", table, dt)
		}
	}
}

// TestLoadStoreF32Conversions checks the pair against the scalar
// conversions on f32 patterns spread over all of them: StoreF32 writes
// their bits, and LoadF32 reads back the value they round to.
func TestLoadStoreF32Conversions(t *testing.T) {
	convs := []struct {
		dt    dtypes.DataType
		bits  func(float32) uint32
		value func(float32) float32
	}{
		{dtypes.F32, math.Float32bits, func(f float32) float32 { return f }},
		{dtypes.BF16, func(f float32) uint32 { return uint32(dtypes.F32ToBF16(f)) },
			func(f float32) float32 { return dtypes.BF16ToF32(dtypes.F32ToBF16(f)) }},
		{dtypes.F16, func(f float32) uint32 { return uint32(dtypes.F32ToF16(f)) },
			func(f float32) float32 { return dtypes.F16ToF32(dtypes.F32ToF16(f)) }},
		{dtypes.S8, func(f float32) uint32 { return uint32(uint8(dtypes.F32ToS8(f))) },
			func(f float32) float32 { return float32(dtypes.F32ToS8(f)) }},
		{dtypes.U8, func(f float32) uint32 { return uint32(dtypes.F32ToU8(f)) },
			func(f float32) float32 { return float32(dtypes.F32ToU8(f)) }},
		{dtypes.S32, func(f float32) uint32 { return uint32(dtypes.F32ToS32(f)) },
			func(f float32) float32 { return float32(dtypes.F32ToS32(f)) }},
	}
	var b [4]byte
	for _, c := range convs {
		size := c.dt.Size()
		for u := uint64(0); u < 1<<32; u += 0x10001 {
			f := math.Float32frombits(uint32(u))
			dtypes.StoreF32(c.dt, b[:size], 0, f)
			if want := elemBytes(size, c.bits(f)); !bytes.Equal(b[:size], want) {
				t.Fatalf("StoreF32(%v, %#08x) wrote % x, want % x", c.dt, u, b[:size], want)
			}
			got, want := dtypes.LoadF32(c.dt, b[:size], 0), c.value(f)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("LoadF32(%v, % x) = %#08x, want %#08x", c.dt, b[:size], math.Float32bits(got), math.Float32bits(want))
			}
		}
	}
}

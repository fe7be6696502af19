package dtypes_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// sliceLens are (len(dst), len(src)) pairs: empty, equal, and either side
// shorter, so that the count and the untouched tail are both exercised.
var sliceLens = [][2]int{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {3, 7}, {7, 3}, {33, 33}, {100, 64}, {64, 100}}

// guard is how many elements past each slice's length the tests keep in the
// backing array, filled with a sentinel that must survive.
const guard = 8

// sliceF32Inputs returns n f32 values: the special values first, then
// random patterns from sampleF32.
func sliceF32Inputs(n int) []float32 {
	specials := []uint32{
		0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
		0x7fc00000, 0x7f800001, 0xff800001, 0x00000001, 0x7f7fffff, 0x477ff000,
		0x3f808000, 0x3f818000, 0x33000000,
	}
	r := rand.New(rand.NewPCG(3, 4))
	out := make([]float32, n)
	for i := range out {
		if i < len(specials) {
			out[i] = math.Float32frombits(specials[i])
		} else {
			out[i] = math.Float32frombits(sampleF32(r, i))
		}
	}
	return out
}

// sliceU16Inputs returns n 16-bit patterns, all of the interesting ones
// (zeros, subnormals, Inf, NaN of either format) among random ones.
func sliceU16Inputs(n int) []uint16 {
	specials := []uint16{0x0000, 0x8000, 0x0001, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x3c00}
	r := rand.New(rand.NewPCG(5, 6))
	out := make([]uint16, n)
	for i := range out {
		if i < len(specials) {
			out[i] = specials[i]
		} else {
			out[i] = uint16(r.Uint32())
		}
	}
	return out
}

func TestWidenSlices(t *testing.T) {
	fns := []struct {
		name   string
		bulk   func([]float32, []uint16) int
		scalar func(uint16) float32
	}{
		{"BF16ToF32Slice", dtypes.BF16ToF32Slice, dtypes.BF16ToF32},
		{"F16ToF32Slice", dtypes.F16ToF32Slice, dtypes.F16ToF32},
	}
	const sentinel = 0x7fa5a5a5
	for _, fn := range fns {
		if n := fn.bulk(nil, nil); n != 0 {
			t.Errorf("%s(nil, nil) = %d, want 0", fn.name, n)
		}
		for _, l := range sliceLens {
			nd, ns := l[0], l[1]
			dstBuf := make([]float32, nd+guard)
			for i := range dstBuf {
				dstBuf[i] = math.Float32frombits(sentinel)
			}
			srcBuf := sliceU16Inputs(ns + guard)
			srcCopy := append([]uint16(nil), srcBuf...)
			n := fn.bulk(dstBuf[:nd], srcBuf[:ns])
			if want := min(nd, ns); n != want {
				t.Errorf("%s(dst[%d], src[%d]) = %d, want %d", fn.name, nd, ns, n, want)
				continue
			}
			for i := range n {
				got, want := math.Float32bits(dstBuf[i]), math.Float32bits(fn.scalar(srcBuf[i]))
				if got != want {
					t.Errorf("%s(dst[%d], src[%d]): dst[%d] = %#08x, want %#08x from %#04x",
						fn.name, nd, ns, i, got, want, srcBuf[i])
				}
			}
			for i := n; i < len(dstBuf); i++ {
				if math.Float32bits(dstBuf[i]) != sentinel {
					t.Errorf("%s(dst[%d], src[%d]) wrote dst backing [%d] past the count %d",
						fn.name, nd, ns, i, n)
				}
			}
			for i := range srcBuf {
				if srcBuf[i] != srcCopy[i] {
					t.Errorf("%s(dst[%d], src[%d]) changed src backing [%d]", fn.name, nd, ns, i)
				}
			}
		}
	}
}

func TestNarrowSlices(t *testing.T) {
	fns := []struct {
		name   string
		bulk   func([]uint16, []float32) int
		scalar func(float32) uint16
	}{
		{"F32ToBF16Slice", dtypes.F32ToBF16Slice, dtypes.F32ToBF16},
		{"F32ToF16Slice", dtypes.F32ToF16Slice, dtypes.F32ToF16},
	}
	const sentinel = 0xa5a5
	for _, fn := range fns {
		if n := fn.bulk(nil, nil); n != 0 {
			t.Errorf("%s(nil, nil) = %d, want 0", fn.name, n)
		}
		for _, l := range sliceLens {
			nd, ns := l[0], l[1]
			dstBuf := make([]uint16, nd+guard)
			for i := range dstBuf {
				dstBuf[i] = sentinel
			}
			srcBuf := sliceF32Inputs(ns + guard)
			srcCopy := append([]float32(nil), srcBuf...)
			n := fn.bulk(dstBuf[:nd], srcBuf[:ns])
			if want := min(nd, ns); n != want {
				t.Errorf("%s(dst[%d], src[%d]) = %d, want %d", fn.name, nd, ns, n, want)
				continue
			}
			for i := range n {
				if got, want := dstBuf[i], fn.scalar(srcBuf[i]); got != want {
					t.Errorf("%s(dst[%d], src[%d]): dst[%d] = %#04x, want %#04x from %#08x",
						fn.name, nd, ns, i, got, want, math.Float32bits(srcBuf[i]))
				}
			}
			for i := n; i < len(dstBuf); i++ {
				if dstBuf[i] != sentinel {
					t.Errorf("%s(dst[%d], src[%d]) wrote dst backing [%d] past the count %d",
						fn.name, nd, ns, i, n)
				}
			}
			for i := range srcBuf {
				if math.Float32bits(srcBuf[i]) != math.Float32bits(srcCopy[i]) {
					t.Errorf("%s(dst[%d], src[%d]) changed src backing [%d]", fn.name, nd, ns, i)
				}
			}
		}
	}
}

package dtypes_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gdnn/gdnn/dtypes"
)

// The bulk conversions run vector code on whole blocks (16 or 32 elements
// on amd64, 8 on arm64) and pure Go on the rest, which takes a fast path
// for groups of four ordinary values and a careful one otherwise. These
// tests hold every path this machine runs (dtypes.BulkPaths) to the same
// exact checks as the scalar conversions, and check that every lane and
// every mix of ordinary and special values agrees with the scalar bit for
// bit.

// bulkBlock is the block one value is converted in: a vector block of 32
// (two of 16, four of 8) and a tail of a group of four and one, so the
// value goes through every lane of every path.
const bulkBlock = 37

// eachBulkPath runs f once per bulk conversion path, as a subtest.
func eachBulkPath(t *testing.T, f func(t *testing.T)) {
	for _, name := range dtypes.BulkPaths() {
		t.Run(name, func(t *testing.T) {
			defer dtypes.UseBulkPath(name)()
			f(t)
		})
	}
}

// bulkWiden converts h with a bulk widening, as bulkBlock copies that must
// all agree, and returns the result.
func bulkWiden(t *testing.T, name string, bulk func([]float32, []uint16) int) func(uint16) float32 {
	l := &limiter{t: t}
	return func(h uint16) float32 {
		var src [bulkBlock]uint16
		var dst [bulkBlock]float32
		for i := range src {
			src[i] = h
		}
		if n := bulk(dst[:], src[:]); n != bulkBlock {
			l.errorf("%s: count %d, want %d", name, n, bulkBlock)
		}
		for i := 1; i < bulkBlock; i++ {
			if math.Float32bits(dst[i]) != math.Float32bits(dst[0]) {
				l.errorf("%s %#04x: element %d gave %#08x, element 0 %#08x", name, h, i, math.Float32bits(dst[i]), math.Float32bits(dst[0]))
			}
		}
		return dst[0]
	}
}

// bulkNarrow is bulkWiden for a bulk narrowing.
func bulkNarrow(t *testing.T, name string, bulk func([]uint16, []float32) int) func(float32) uint16 {
	l := &limiter{t: t}
	return func(f float32) uint16 {
		var src [bulkBlock]float32
		var dst [bulkBlock]uint16
		for i := range src {
			src[i] = f
		}
		if n := bulk(dst[:], src[:]); n != bulkBlock {
			l.errorf("%s: count %d, want %d", name, n, bulkBlock)
		}
		for i := 1; i < bulkBlock; i++ {
			if dst[i] != dst[0] {
				l.errorf("%s %#08x: element %d gave %#04x, element 0 %#04x", name, math.Float32bits(f), i, dst[i], dst[0])
			}
		}
		return dst[0]
	}
}

// The exact checks of the scalar conversions (all 65,536 patterns widened
// and round-tripped, every rounding midpoint, overflow, NaN, random f32),
// through the bulk conversions.
func TestBulkF16Exact(t *testing.T) { eachBulkPath(t, testBulkF16Exact) }

func testBulkF16Exact(t *testing.T) {
	c := conversion{f: f16Format,
		widen:  bulkWiden(t, "F16ToF32Slice", dtypes.F16ToF32Slice),
		narrow: bulkNarrow(t, "F32ToF16Slice", dtypes.F32ToF16Slice)}
	checkWiden(t, c)
	checkRoundTrip(t, c)
	checkMidpoints(t, c)
	checkOverflow(t, c, 65520)
	checkNaNInputs(t, c)
	checkRandom(t, c, 200_000, 3)
}

func TestBulkBF16Exact(t *testing.T) { eachBulkPath(t, testBulkBF16Exact) }

func testBulkBF16Exact(t *testing.T) {
	c := conversion{f: bf16Format,
		widen:  bulkWiden(t, "BF16ToF32Slice", dtypes.BF16ToF32Slice),
		narrow: bulkNarrow(t, "F32ToBF16Slice", dtypes.F32ToBF16Slice)}
	checkWiden(t, c)
	checkRoundTrip(t, c)
	checkMidpoints(t, c)
	checkOverflow(t, c, math.Ldexp(2-math.Ldexp(1, -8), 127))
	checkNaNInputs(t, c)
	checkRandom(t, c, 200_000, 4)
}

// All 65,536 patterns in one slice, started at each lane, so that special
// values share groups with ordinary ones in every position: the bulk result
// has the scalar's bits.
func TestBulkWidenMixed(t *testing.T) { eachBulkPath(t, testBulkWidenMixed) }

func testBulkWidenMixed(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	// A shuffled copy mixes zeros, subnormals, NaN and Inf among normals
	// far more than the sorted order does.
	mixed := append([]uint16(nil), all...)
	rand.New(rand.NewPCG(9, 10)).Shuffle(len(mixed), func(i, j int) { mixed[i], mixed[j] = mixed[j], mixed[i] })
	for _, fn := range []struct {
		name   string
		bulk   func([]float32, []uint16) int
		scalar func(uint16) float32
	}{{"F16ToF32Slice", dtypes.F16ToF32Slice, dtypes.F16ToF32}, {"BF16ToF32Slice", dtypes.BF16ToF32Slice, dtypes.BF16ToF32}} {
		l := &limiter{t: t}
		for _, src := range [][]uint16{all, mixed} {
			for off := range 33 {
				s := src[off:]
				dst := make([]float32, len(s))
				fn.bulk(dst, s)
				for i, h := range s {
					if got, want := math.Float32bits(dst[i]), math.Float32bits(fn.scalar(h)); got != want {
						l.errorf("%s at %d (offset %d): %#04x gave %#08x, want %#08x", fn.name, i, off, h, got, want)
					}
				}
			}
		}
	}
}

// f32 edge cases and random patterns in one slice, shuffled and started at
// each lane: the bulk narrowing has the scalar's bits.
func TestBulkNarrowMixed(t *testing.T) { eachBulkPath(t, testBulkNarrowMixed) }

func testBulkNarrowMixed(t *testing.T) {
	var src []float32
	add := func(u uint32) {
		src = append(src, math.Float32frombits(u), math.Float32frombits(u^0x80000000))
	}
	for _, u := range []uint32{
		0x00000000, 0x00000001, 0x007fffff, 0x00800000, // zero, f32 subnormals, smallest normal
		0x33000000, 0x33000001, 0x337fffff, 0x33800000, // around half the smallest f16 subnormal
		0x387fc000, 0x387fe000, 0x387fffff, 0x38800000, // around the smallest f16 normal
		0x477fe000, 0x477fefff, 0x477ff000, 0x477fffff, 0x47800000, // around f16's overflow
		0x7f7fffff, 0x7f800000, 0x7f800001, 0x7fc00000, 0x7fffffff, 0x7f801fff, // huge, Inf, NaN
		0x3f800000, 0x3f801000, 0x3f803000, 0x3f808000, 0x3f818000, // ties of f16 and bf16
	} {
		// Each edge and its f32 neighbours.
		add(u)
		if u&0x7fffffff > 0 {
			add(u - 1)
		}
		if u&0x7fffffff < 0x7fffffff {
			add(u + 1)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 100_000 {
		src = append(src, math.Float32frombits(sampleF32(r, i)))
	}
	r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	for _, fn := range []struct {
		name   string
		bulk   func([]uint16, []float32) int
		scalar func(float32) uint16
	}{{"F32ToF16Slice", dtypes.F32ToF16Slice, dtypes.F32ToF16}, {"F32ToBF16Slice", dtypes.F32ToBF16Slice, dtypes.F32ToBF16}} {
		l := &limiter{t: t}
		for off := range 33 {
			s := src[off:]
			dst := make([]uint16, len(s))
			fn.bulk(dst, s)
			for i, f := range s {
				if got, want := dst[i], fn.scalar(f); got != want {
					l.errorf("%s at %d (offset %d): %#08x gave %#04x, want %#04x", fn.name, i, off, math.Float32bits(f), got, want)
				}
			}
		}
	}
}

// Every upper half of an f32 with low halves that put it on, next to and
// between the rounding midpoints of bf16 (bit 15) and f16 (bit 12 of a
// normal, higher bits of a subnormal), through every path: the bulk
// narrowings have the scalar's bits.
func TestBulkNarrowAllHighHalves(t *testing.T) { eachBulkPath(t, testBulkNarrowAllHighHalves) }

func testBulkNarrowAllHighHalves(t *testing.T) {
	lows := []uint32{0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x2000, 0x3000, 0x7fff, 0x8000, 0x8001, 0x9000, 0xc000, 0xe000, 0xefff, 0xf000, 0xffff}
	r := rand.New(rand.NewPCG(13, 14))
	src := make([]float32, 0, (len(lows)+1)<<16)
	for hi := range uint32(1 << 16) {
		for _, lo := range lows {
			src = append(src, math.Float32frombits(hi<<16|lo))
		}
		src = append(src, math.Float32frombits(hi<<16|r.Uint32()&0xffff))
	}
	for _, fn := range []struct {
		name   string
		bulk   func([]uint16, []float32) int
		scalar func(float32) uint16
	}{{"F32ToF16Slice", dtypes.F32ToF16Slice, dtypes.F32ToF16}, {"F32ToBF16Slice", dtypes.F32ToBF16Slice, dtypes.F32ToBF16}} {
		l := &limiter{t: t}
		dst := make([]uint16, len(src))
		if n := fn.bulk(dst, src); n != len(src) {
			t.Fatalf("%s: count %d, want %d", fn.name, n, len(src))
		}
		for i, f := range src {
			if got, want := dst[i], fn.scalar(f); got != want {
				l.errorf("%s: %#08x gave %#04x, want %#04x", fn.name, math.Float32bits(f), got, want)
			}
		}
	}
}

// The counts: the shorter of the two slices, with nothing written past it
// in the longer one, on every path and around every block size.
func TestBulkCounts(t *testing.T) { eachBulkPath(t, testBulkCounts) }

func testBulkCounts(t *testing.T) {
	for n := range 70 {
		for _, extra := range []int{0, 1, 17} {
			f := make([]float32, n+extra)
			h := make([]uint16, n+extra)
			for i := range f {
				f[i], h[i] = 7, 0x4700
			}
			if got := dtypes.F32ToF16Slice(h[:n], f); got != n || (extra > 0 && h[n] != 0x4700) {
				t.Fatalf("F32ToF16Slice n=%d extra=%d: count %d, or wrote past dst", n, extra, got)
			}
			if got := dtypes.F32ToBF16Slice(h[:n], f); got != n || (extra > 0 && h[n] != 0x4700) {
				t.Fatalf("F32ToBF16Slice n=%d extra=%d: count %d, or wrote past dst", n, extra, got)
			}
			if got := dtypes.F16ToF32Slice(f[:n], h); got != n || (extra > 0 && f[n] != 7) {
				t.Fatalf("F16ToF32Slice n=%d extra=%d: count %d, or wrote past dst", n, extra, got)
			}
			if got := dtypes.BF16ToF32Slice(f[:n], h); got != n || (extra > 0 && f[n] != 7) {
				t.Fatalf("BF16ToF32Slice n=%d extra=%d: count %d, or wrote past dst", n, extra, got)
			}
		}
	}
}

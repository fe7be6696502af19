package bench

import (
	"math"
	"math/bits"

	"github.com/gdnn/gdnn/dtypes"
)

// fillMode selects how src data is generated.
type fillMode int

const (
	// fillExact: small integers scaled by a power of two, bounded so that
	// every partial sum of every output's reduction (in any order) is an
	// integer multiple of the scale below 2^24 in magnitude. Then f32
	// accumulation is exact whatever the blocking, the only rounding is
	// the f32 division by N and the final conversion, and the result can
	// be checked to the last bit of the dst type.
	fillExact fillMode = iota
	// fillRandom: uniform floats (rounded to the src type); checked against
	// a derived error bound instead.
	fillRandom
)

// exactRange is the largest |integer| the exact fill uses per src type
// (benchdnn's reduction fill uses ranges of this size too).
func exactRange(dt dtypes.DataType) int64 {
	if dt == dtypes.F32 {
		return 16
	}
	return 8
}

// exactLimit is the bound on the sum of |integers| per output: below
// 2^24 every partial sum is exact in f32.
const exactLimit = 1<<24 - 1

// splitmix64 is a counter-based generator: the value of element i
// depends only on (seed, i), so the data are the same whatever the layout.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// unit returns a uniform float64 in [0, 1) for element pos.
func unit(seed uint64, pos int64) float64 {
	return float64(splitmix64(seed^uint64(pos)*0xD1B54A32D192ED03)>>11) / (1 << 53)
}

// reductionViews returns, for dims with the reduced mask, the strides of
// the dense index within one output's reduction (0 in kept dims), the
// strides of the dense output index (0 in reduced dims), N, the number of
// elements per output, and the number of outputs.
func reductionViews(dims []int64, reduced []bool) (rview, oview []int64, n, outs int64) {
	rank := len(dims)
	rview, oview = make([]int64, rank), make([]int64, rank)
	r, o := int64(1), int64(1)
	for d := rank - 1; d >= 0; d-- {
		if reduced[d] {
			rview[d] = r
			r *= dims[d]
		} else {
			oview[d] = o
			o *= dims[d]
		}
	}
	return rview, oview, r, o
}

// srcFill says what the src data must suit: the reduction's kind (sums
// must stay exact, products in range), values kept non-negative for
// post-ops such as log and sqrt (posOnly), and narrow: an f16 src or dst,
// whose range is smaller (products use fewer and smaller factors).
type srcFill struct {
	kind    kind
	posOnly bool
	narrow  bool
	dst     dtypes.DataType // the dst type (the integer fill sizes sums by it)
}

// fillSrc writes src data in the layout given by strides.
func fillSrc(b buffer, dims, strides []int64, reduced []bool, mode fillMode, f srcFill, seed uint64) {
	rview, _, n, _ := reductionViews(dims, reduced)
	if b.dt.IsInt8() {
		fillInt8(b, dims, strides, rview, n, mode, f, seed)
		return
	}
	switch f.kind.combine {
	case combineMul:
		fillProduct(b, dims, strides, rview, n, mode, f, seed)
		return
	case combineMax, combineMin:
		if mode == fillExact {
			fillExtremes(b, dims, strides, f, seed)
			return
		}
	}
	if mode == fillRandom {
		lo, span := -1.0, 2.0
		if f.posOnly {
			lo, span = 0, 1
		}
		forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
			b.set(offs[0], lo+span*unit(seed, pos))
		})
		return
	}
	r := exactRange(b.dt)
	// The sum of the pre-op's results must stay below 2^24 units: n*r
	// for |x|, n*r*r for x*x.
	if f.kind.pre == "square" {
		if n > 0 && r*r > exactLimit/n {
			r = int64(math.Sqrt(float64(exactLimit / n)))
		}
	} else if n > 0 && r > exactLimit/n {
		r = exactLimit / n
	}
	if r >= 1 {
		scale := 1 / float64(int64(1)<<(bits.Len64(uint64(r))-1))
		lo := -r
		if f.posOnly {
			lo = 0
		}
		forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
			k := lo + int64(unit(seed, pos)*float64(r-lo+1))
			b.set(offs[0], float64(k)*scale)
		})
		return
	}
	// More than 2^24 elements per output: a sparse pattern of ones, at
	// most exactLimit per output, placed by the index within the reduction.
	m := (n + exactLimit - 1) / exactLimit
	forEachIndex(dims, [][]int64{strides, rview}, func(pos int64, offs []int64) {
		v := 0.0
		if offs[1]%m == 0 {
			v = 1
		}
		b.set(offs[0], v)
	})
}

// fillExtremes is the exact fill of max and min, which accumulate
// nothing: integers scaled by a power of two, all negative for max and
// all positive for min (unless posOnly), so that a kernel that lets the
// unused lanes of a partial vector take part as zeros gets a wrong result.
func fillExtremes(b buffer, dims, strides []int64, f srcFill, seed uint64) {
	r := 2 * exactRange(b.dt)
	sign := 1.0
	if f.kind.combine == combineMax && !f.posOnly {
		sign = -1
	}
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		k := 1 + int64(unit(seed, pos)*float64(r))
		b.set(offs[0], sign*float64(k)/4)
	})
}

// productFactors returns how many factors other than 1 a product may have
// per output, and the largest |exponent| of the exact fill's factors
// (benchdnn's bounds: 30 factors 2^[-3,3] in f32, 10 factors 2^[-1,1]
// where f16 is involved), so that no product leaves the type's range.
func productFactors(narrow bool) (k int64, e int) {
	if narrow {
		return 10, 1
	}
	return 30, 3
}

// fillProduct fills for a product: at most productFactors factors per
// output other than 1, at evenly spaced positions within the reduction
// (shifted by the seed), random in sign unless posOnly. The exact fill's
// factors are powers of two (every product is exact in f32); the random
// fill's have magnitudes in [0.5, 2).
func fillProduct(b buffer, dims, strides, rview []int64, n int64, mode fillMode, f srcFill, seed uint64) {
	k, e := productFactors(f.narrow)
	m := max((n+k-1)/k, 1)
	shift := int64(splitmix64(seed) % uint64(m))
	forEachIndex(dims, [][]int64{strides, rview}, func(pos int64, offs []int64) {
		v := 1.0
		if (offs[1]+shift)%m == 0 {
			u := unit(seed, pos)
			if mode == fillExact {
				v = math.Ldexp(1, int(u*float64(2*e+1))-e)
			} else {
				v = 0.5 + 1.5*u
			}
			if !f.posOnly && unit(seed+1, pos) < 0.5 {
				v = -v
			}
		}
		b.set(offs[0], v)
	})
}

// fillOperand writes a binary post-op operand: multiples of 1/4 in
// [0.25, 4], exact in every float type and never 0 (so division is safe).
func fillOperand(b buffer, dims, strides []int64, seed uint64) {
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		k := 1 + int64(unit(seed, pos)*16)
		if b.dt.IsInt() {
			b.set(offs[0], float64(k)) // integers, never 0 (a divisor)
			return
		}
		b.set(offs[0], float64(k)/4)
	})
}

// fillMask writes a mask for a fused Multiply before a reduction: 0 or
// 1, as an attention mask marks tokens and padding, mostly 1. Products
// by it are exact, so the src fill's promises (exact sums, error bounds
// from the magnitudes) hold for the masked src.
func fillMask(b buffer, dims, strides []int64, seed uint64) {
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		v := 0.0
		if unit(seed, pos) < 0.75 {
			v = 1
		}
		b.set(offs[0], v)
	})
}

// The 8-bit integer fill. Every value is an integer, so the reference is
// exact when every partial result is an integer below 2^24 in magnitude
// (exact in f32 too, whatever the order): the fill keeps each output's sum
// of magnitudes, and each product, below that. The two modes differ in
// what they stress:
//   - fillExact, dense: sums and means over every element with values from
//     the whole type (saturating 8-bit sums, means landing on .5), products
//     of up to 10 factors (saturating), max of negatives and min of
//     positives (as fillExtremes, for kernels that pad lanes with zeros);
//   - fillRandom, as benchdnn's reduction fill for integers: at most 10
//     non-neutral elements per output, sized so that a sum mostly fits an
//     8-bit dst, products of up to 4 small factors, max and min over the
//     whole type's range.

// int8Range returns the values of an 8-bit type, non-negative when posOnly.
func int8Range(dt dtypes.DataType, posOnly bool) (lo, hi int64) {
	if dt == dtypes.U8 || posOnly {
		if dt == dtypes.U8 {
			return 0, 255
		}
		return 0, 127
	}
	return -128, 127
}

// fillInt8 writes 8-bit integer src data (see above).
func fillInt8(b buffer, dims, strides, rview []int64, n int64, mode fillMode, f srcFill, seed uint64) {
	lo, hi := int8Range(b.dt, f.posOnly)
	uniform := func(pos int64, lo, hi int64) float64 {
		return float64(lo + int64(unit(seed, pos)*float64(hi-lo+1)))
	}
	switch f.kind.combine {
	case combineMax, combineMin:
		if mode == fillExact {
			switch {
			case f.kind.combine == combineMax && lo < 0:
				hi = -1
			case f.kind.combine == combineMin:
				lo = 1
			}
		}
		forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
			b.set(offs[0], uniform(pos, lo, hi))
		})
		return
	case combineMul:
		k, factors := int64(10), []float64{2, 3, -2, -3}
		if mode == fillRandom {
			k, factors = 4, []float64{2, 3, -1, -2, -3}
		}
		if lo >= 0 {
			factors = []float64{2, 3}
		}
		m := max((n+k-1)/k, 1)
		shift := int64(splitmix64(seed) % uint64(m))
		forEachIndex(dims, [][]int64{strides, rview}, func(pos int64, offs []int64) {
			v := 1.0
			if (offs[1]+shift)%m == 0 {
				v = factors[int(unit(seed, pos)*float64(len(factors)))]
			}
			b.set(offs[0], v)
		})
		return
	}
	// Sums: how many elements per output are non-zero (every m-th one of
	// the reduction), and their range.
	mag := max(-lo, hi)
	k := min(n, exactLimit/mag)
	if mode == fillRandom {
		k = min(n, 10)
		if f.kind.pre == "" && !f.kind.mean && f.dst.IsInt8() {
			// Ten values whose sum mostly fits the 8-bit dst.
			dlo, dhi := int8Range(f.dst, false)
			lo, hi = max(lo, dlo/10), min(hi, dhi/10)
		}
	}
	if f.kind.pre == "square" {
		// Squares of 8-bit integers: keep their sum exact too.
		k = min(k, exactLimit/(mag*mag))
	}
	if k < 1 {
		k = 1
	}
	m := max((n+k-1)/k, 1)
	shift := int64(splitmix64(seed) % uint64(m))
	forEachIndex(dims, [][]int64{strides, rview}, func(pos int64, offs []int64) {
		v := 0.0
		if (offs[1]+shift)%m == 0 {
			v = uniform(pos, lo, hi)
		}
		b.set(offs[0], v)
	})
}

package bench

import (
	"fmt"
	"math"

	"github.com/gdnn/gdnn/dtypes"
)

// checkResult summarises a comparison of an output with its reference.
type checkResult struct {
	total, errors int64
	worst         float64  // largest |got-ref| / allowed over the outputs
	lines         []string // the first mismatches, benchdnn style
}

// maxMismatchLines is how many mismatching outputs a failure lists.
const maxMismatchLines = 10

// compareOutput compares got (read through its strides, in row-major order
// over dims) with ref, allowing |got-ref| <= allow[i], or with any other
// outcome alts holds for the output (a value and its allowance: where
// the f32 pipeline may or may not overflow, chainOutput). The reference
// is rounded to got's type first: NaN matches only NaN, an infinity only
// the same infinity, and a finite value only a finite reference within
// the allowance (an infinite allowance, a bound the reference lost,
// accepts any finite value, never an infinity or a NaN).
func compareOutput(got buffer, dims, strides []int64, ref, allow []float64, alts map[int64][]outcome) checkResult {
	var c checkResult
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		c.total++
		g, want := got.get(offs[0]), ref[pos]
		ok, ratio := matchOutput(got.dt, g, want, allow[pos])
		for _, a := range alts[pos] {
			if !ok {
				ok, ratio = matchOutput(got.dt, g, a.v, a.e)
			}
		}
		if ratio > c.worst {
			c.worst = ratio
		}
		if !ok {
			if c.errors < maxMismatchLines {
				diff := math.Abs(g - want)
				rel := diff / math.Max(math.Abs(want), math.SmallestNonzeroFloat64)
				c.lines = append(c.lines, fmt.Sprintf("[%6d][DST] exp:%14.7g got:%14.7g diff:%10.3g rdiff:%10.3g allowed:%10.3g",
					pos, want, g, diff, rel, allow[pos]))
			}
			c.errors++
		}
	})
	return c
}

// matchOutput reports whether g, a value of type dt, matches the
// reference want allowed to be off by allow (see compareOutput), and
// how far off it is in allowances.
func matchOutput(dt dtypes.DataType, g, want, allow float64) (ok bool, ratio float64) {
	rounded := roundTo(dt, want)
	diff := math.Abs(g - want)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		return math.IsNaN(want) && math.IsNaN(g), 0
	case math.IsInf(rounded, 0) || math.IsInf(g, 0):
		return g == rounded, 0
	case math.IsInf(allow, 1):
		return true, 0
	case allow > 0:
		return diff <= allow, diff / allow
	case diff > 0:
		return false, math.Inf(1)
	}
	return true, 0
}

package bench

import (
	"fmt"
	"math"
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
// over dims) with ref, allowing |got-ref| <= allow[i]. NaN matches NaN;
// a finite reference with an infinite allowance (the reference cannot
// tell) matches anything else; an infinite reference (after rounding to
// got's type, e.g. f16 overflow) must be matched exactly.
func compareOutput(got buffer, dims, strides []int64, ref, allow []float64) checkResult {
	var c checkResult
	forEachIndex(dims, [][]int64{strides}, func(pos int64, offs []int64) {
		c.total++
		g, want := got.get(offs[0]), ref[pos]
		ok := false
		ratio := 0.0
		rounded := roundTo(got.dt, want)
		diff := math.Abs(g - want)
		switch {
		case math.IsNaN(want) || math.IsNaN(g):
			ok = math.IsNaN(want) && math.IsNaN(g)
		case math.IsInf(allow[pos], 1) && !math.IsInf(want, 0):
			// The reference cannot tell (an f32 overflow on the way that
			// may or may not happen, see chainOutput): any value is right.
			ok = true
		case math.IsInf(rounded, 0) || math.IsInf(g, 0):
			ok = g == rounded
		default:
			ok = diff <= allow[pos]
			if allow[pos] > 0 {
				ratio = diff / allow[pos]
			} else if diff > 0 {
				ratio = math.Inf(1)
			}
		}
		if ratio > c.worst {
			c.worst = ratio
		}
		if !ok {
			if c.errors < maxMismatchLines {
				rel := diff / math.Max(math.Abs(want), math.SmallestNonzeroFloat64)
				c.lines = append(c.lines, fmt.Sprintf("[%6d][DST] exp:%14.7g got:%14.7g diff:%10.3g rdiff:%10.3g allowed:%10.3g",
					pos, want, g, diff, rel, allow[pos]))
			}
			c.errors++
		}
	})
	return c
}

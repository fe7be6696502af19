package plan

import "math"

// Checked int64 arithmetic for sizes and spans. Inputs are non-negative
// (validation rejects negative sizes and strides before any product is
// formed), so only overflow past MaxInt64 needs catching.

// mulSize returns a*b and whether it fits in int64, for a, b >= 0.
func mulSize(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}

// addSize returns a+b and whether it fits in int64, for a, b >= 0.
func addSize(a, b int64) (int64, bool) {
	if a > math.MaxInt64-b {
		return 0, false
	}
	return a + b, true
}

// MulSat returns a*b for a, b >= 0, saturating at MaxInt64: for size
// estimates (budgets, chain lengths) where "too big" is all that matters.
func MulSat(a, b int64) int64 {
	if p, ok := mulSize(a, b); ok {
		return p
	}
	return math.MaxInt64
}

package execmem

import "testing"

// TestCacheLines checks the line sizes the icache flush strides: powers
// of two from one word to 2 KiB (CTR_EL0's range), so that the loops
// neither skip lines nor run past the range.
func TestCacheLines(t *testing.T) {
	d, i := cacheLines()
	for _, n := range []uintptr{d, i} {
		if n < 4 || n > 2048 || n&(n-1) != 0 {
			t.Errorf("cache lines %d (data) and %d (instruction): want powers of two in [4, 2048]", d, i)
		}
	}
	t.Logf("data cache lines %d bytes, instruction cache lines %d bytes", d, i)
}

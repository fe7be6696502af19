package kerneltest

import "testing"

// ShortPick reports whether case j of sweep i runs: every one, or in
// -short runs (AVX-512 under Bochs, whose cases the native run takes
// whole) every other one, the other half for the next i, so that every
// case still runs in the sweep as a whole.
func ShortPick(i, j int) bool {
	return !testing.Short() || (i+j)%2 == 0
}

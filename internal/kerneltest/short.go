package kerneltest

import "testing"

// ShortPick reports whether case j of sweep i runs: every one, or in
// -short runs (the arm64 stage under qemu, AVX-512 under Bochs) every
// other one, the other half for the next i, so that every case still
// runs in the sweep as a whole.
func ShortPick(i, j int) bool {
	return !testing.Short() || (i+j)%2 == 0
}

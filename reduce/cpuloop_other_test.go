//go:build !unix

package reduce_test

import "testing"

// cpuLoop times f (the CPU time per call is reported on unix only).
func cpuLoop(b *testing.B, f func() error) {
	b.ReportAllocs()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
}

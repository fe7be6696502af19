// Package cpubench is the benchmark loop the packages' benchmarks share:
// on a machine shared with other work the wall time also counts the time
// the threads wait for a core, so it reports the process's CPU time too.
package cpubench

import "testing"

// Loop times f, and reports besides the wall time the process's CPU time
// per call (cpu-ns/op, every thread's) where it is known, and the
// allocations per call.
//
// It loops over b.N, not b.Loop: go test -cpu sets a benchmark's
// GOMAXPROCS only after its one-call probe, which runs at the count the
// benchmark before left, and a b.Loop benchmark runs all its iterations
// in that probe (TestNoBLoop says more).
func Loop(b *testing.B, f func() error) {
	b.ReportAllocs()
	c0 := ProcessCPU()
	b.ResetTimer()
	for range b.N {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	if c0 != 0 {
		b.ReportMetric(float64(ProcessCPU()-c0)/float64(b.N), "cpu-ns/op")
	}
}

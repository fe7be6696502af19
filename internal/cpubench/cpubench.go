// Package cpubench is the benchmark loop the packages' benchmarks share:
// on a machine shared with other work the wall time also counts the time
// the threads wait for a core, so it reports the process's CPU time too.
package cpubench

import "testing"

// Loop times f, and reports besides the wall time the process's CPU time
// per call (cpu-ns/op, every thread's) where it is known, and the
// allocations per call.
func Loop(b *testing.B, f func() error) {
	b.ReportAllocs()
	c0 := ProcessCPU()
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	if c0 != 0 {
		b.ReportMetric(float64(ProcessCPU()-c0)/float64(b.N), "cpu-ns/op")
	}
}

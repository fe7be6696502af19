//go:build unix

package reduce_test

import (
	"syscall"
	"testing"
)

// cpuLoop times f, and reports besides the wall time the process's CPU
// time per call (cpu-ns/op, every thread's): on a machine shared with
// other work the wall time also counts the time the threads wait for a
// core, the CPU time only what they run.
func cpuLoop(b *testing.B, f func() error) {
	b.ReportAllocs()
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

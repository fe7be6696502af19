package reduce

import "golang.org/x/sys/unix"

// threadCPUNanos is the CPU time the calling thread has used, in ns.
func threadCPUNanos() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return -1
	}
	return ts.Nano()
}

//go:build unix

package cpubench

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the process has used so far, user and
// system; 0 if it cannot be read.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

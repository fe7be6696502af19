//go:build !unix

package cpubench

import "time"

// ProcessCPU is 0 where the process's CPU time is not read: Loop then
// reports none.
func ProcessCPU() time.Duration { return 0 }

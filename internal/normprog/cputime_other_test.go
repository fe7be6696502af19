//go:build !unix

package normprog

import "time"

// cpuTime is 0 where the process's CPU time is not read: timed then
// reports none.
func cpuTime() time.Duration { return 0 }

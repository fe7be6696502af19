//go:build unix && !openbsd

package bench

import "golang.org/x/sys/unix"

// addressSpaceLimit is the process's RLIMIT_AS (ulimit -v) in bytes, 0
// when unlimited or unknown.
func addressSpaceLimit() int64 {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &r); err != nil || r.Cur == unix.RLIM_INFINITY || r.Cur > 1<<62 {
		return 0
	}
	return int64(r.Cur)
}

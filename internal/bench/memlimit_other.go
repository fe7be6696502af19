//go:build !unix || openbsd

package bench

// addressSpaceLimit is unknown here (OpenBSD has no RLIMIT_AS).
func addressSpaceLimit() int64 { return 0 }

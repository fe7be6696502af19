//go:build !unix

package bench

// addressSpaceLimit is unknown here.
func addressSpaceLimit() int64 { return 0 }

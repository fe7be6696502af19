//go:build !amd64

package jit

// zenCore is false where there is no amd64 emitter to tune.
func zenCore() bool { return false }

// l3Bytes is 0 where gdnn reads no cache sizes.
func l3Bytes(bool) int64 { return 0 }

// l2Bytes is 0 where gdnn reads no cache sizes.
func l2Bytes() int64 { return 0 }

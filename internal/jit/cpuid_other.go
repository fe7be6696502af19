//go:build !amd64

package jit

// zenCore is false where there is no amd64 emitter to tune.
func zenCore() bool { return false }

//go:build !amd64

package jit

// pacedCore is false where there is no amd64 emitter to pace.
func pacedCore() bool { return false }

//go:build !amd64 && !arm64

package execmem

import "unsafe"

// call is never reached on this GOARCH: mapCode always fails here, so no
// Code exists to be called.
func call(code, args unsafe.Pointer) {}

// flushICache is never reached on this GOARCH (no code is mapped).
func flushICache(b []byte) {}

package execmem

import "unsafe"

// call jumps to code with args in DI (call_amd64.s). args must point to
// memory the Go GC keeps alive (go:noescape keeps a stack Args on the stack).
//
//go:noescape
func call(code, args unsafe.Pointer)

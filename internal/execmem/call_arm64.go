package execmem

import "unsafe"

// call branches-with-link to code with args in R0 (call_arm64.s). args
// must point to memory the Go GC keeps alive (go:noescape keeps a stack
// Args on the stack).
//
//go:noescape
func call(code, args unsafe.Pointer)

// flushICacheRange makes the instruction cache coherent with stores to
// [addr, addr+n), striding dline and iline bytes (flush_arm64.s).
//
//go:noescape
func flushICacheRange(addr unsafe.Pointer, n, dline, iline uintptr)

// flushICache makes freshly written code visible to instruction fetch:
// arm64 instruction caches are not coherent with data stores. mapCode
// calls it for every kernel it maps: code memory is never rewritten in
// place, and a fresh mapping may sit where freed code was (stale lines
// of that address go with the invalidation too).
func flushICache(b []byte) {
	if len(b) == 0 {
		return
	}
	dline, iline := cacheLines()
	flushICacheRange(unsafe.Pointer(&b[0]), uintptr(len(b)), dline, iline)
}

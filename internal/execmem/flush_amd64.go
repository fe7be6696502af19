//go:build !windows

package execmem

// flushICache is not needed on amd64: x86 keeps instruction fetch coherent
// with stores, and the mprotect system call that follows the copy
// serialises the writing thread. (Windows calls FlushInstructionCache
// instead, as its documentation asks: sys_windows.go.)
func flushICache(b []byte) {}

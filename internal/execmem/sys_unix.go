//go:build (linux && (amd64 || arm64)) || (darwin && (amd64 || arm64)) || (freebsd && amd64)

package execmem

import (
	"golang.org/x/sys/unix"

	"github.com/gdnn/gdnn/internal/status"
)

// mapCode maps code read-write, copies it in, makes the instruction cache
// coherent with the new bytes and flips the mapping to read+execute. On
// any failure the mapping is removed again, so nothing leaks.
//
// Linux, macOS and FreeBSD do this the same way, through mmap and
// mprotect. macOS needs no MAP_JIT for it: MAP_JIT is for memory that is
// writable and executable at once (switched per thread), which gdnn never
// has. What macOS checks instead is the code-signing policy: under the
// hardened runtime, pages made executable this way run only with an
// entitlement (execPolicy).
func mapCode(code []byte) ([]byte, error) {
	if err := execPolicy(); err != nil {
		return nil, err
	}
	page := unix.Getpagesize()
	size := (len(code) + page - 1) / page * page
	if err := injected("mmap"); err != nil {
		return nil, status.Errorf(status.OutOfMemory, "execmem: mmap of %d bytes refused: %v", size, err)
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, status.Errorf(status.OutOfMemory, "execmem: mmap of %d bytes: %v", size, err)
	}
	copy(mem, code)
	// Coherence first, then the flip: the bytes are final before any thread
	// can execute them.
	flushICache(mem[:len(code)])
	if err := injected("mprotect"); err != nil {
		_ = unix.Munmap(mem)
		return nil, status.Errorf(status.RuntimeError, "execmem: mprotect(PROT_READ|PROT_EXEC) of %d bytes refused: %v", size, err)
	}
	if err := unix.Mprotect(mem, unix.PROT_READ|unix.PROT_EXEC); err != nil {
		_ = unix.Munmap(mem)
		return nil, status.Errorf(status.RuntimeError, "execmem: mprotect(PROT_READ|PROT_EXEC) of %d bytes: %v", size, err)
	}
	return mem, nil
}

// unmap removes a mapping made by mapCode.
func unmap(mem []byte) error {
	if err := unix.Munmap(mem); err != nil {
		return status.Errorf(status.RuntimeError, "execmem: munmap of %d bytes: %v", len(mem), err)
	}
	return nil
}

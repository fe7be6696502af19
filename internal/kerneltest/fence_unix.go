//go:build unix

package kerneltest

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// mapPages maps n bytes (whole pages) read-write, away from the Go heap.
func mapPages(n int) ([]byte, error) {
	m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, fmt.Errorf("mmap of %d bytes: %w", n, err)
	}
	return m, nil
}

// noAccess makes the pages of b fault on any access.
func noAccess(b []byte) error {
	if err := unix.Mprotect(b, unix.PROT_NONE); err != nil {
		return fmt.Errorf("mprotect(PROT_NONE) of %d bytes: %w", len(b), err)
	}
	return nil
}

// unmapPages unmaps a mapping of mapPages.
func unmapPages(m []byte) error { return unix.Munmap(m) }

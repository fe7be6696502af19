package kerneltest

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// mapSparse maps n bytes read-write with MAP_NORESERVE, so that Linux's
// overcommit check does not count pages that are never touched.
func mapSparse(n int) ([]byte, error) {
	m, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("mmap(MAP_NORESERVE) of %d bytes: %w", n, err)
	}
	return m, nil
}

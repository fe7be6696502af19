package kerneltest

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// mapPages commits n bytes (whole pages) read-write, away from the Go
// heap.
func mapPages(n int) ([]byte, error) {
	p, err := windows.VirtualAlloc(0, uintptr(n), windows.MEM_COMMIT|windows.MEM_RESERVE, windows.PAGE_READWRITE)
	if err != nil {
		return nil, fmt.Errorf("VirtualAlloc of %d bytes: %w", n, err)
	}
	// The pages are outside the Go heap: the GC never moves or frees
	// them, so the address may become a pointer.
	return unsafe.Slice((*byte)(unsafe.Add(nil, p)), n), nil
}

// noAccess makes the pages of b fault on any access.
func noAccess(b []byte) error {
	var old uint32
	if err := windows.VirtualProtect(uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), windows.PAGE_NOACCESS, &old); err != nil {
		return fmt.Errorf("VirtualProtect(PAGE_NOACCESS) of %d bytes: %w", len(b), err)
	}
	return nil
}

// unmapPages releases a mapping of mapPages (the whole reservation).
func unmapPages(m []byte) error {
	return windows.VirtualFree(uintptr(unsafe.Pointer(unsafe.SliceData(m))), 0, windows.MEM_RELEASE)
}

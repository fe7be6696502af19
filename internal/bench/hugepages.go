package bench

import "unsafe"

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// largePageSlice returns n zeroed elements of T. Buffers of at least one
// huge page start on a 2 MiB boundary and are advised for transparent huge
// pages (see adviseHugePages), as the other tools of the anchors harness
// do with theirs (oneDNN's driver, numpy, the read-bandwidth probe). With
// THP in its common "madvise" mode a plain Go allocation gets 4 KiB pages,
// and the TLB misses of a large src would be timed as part of the kernel.
func largePageSlice[T uint16 | float32 | int8 | uint8 | int32 | float64](n int64) []T {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	if n*size < hugePage {
		return make([]T, n)
	}
	raw := make([]T, n+hugePage/size)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	off := int64((hugePage-addr%hugePage)%hugePage) / size
	s := raw[off : off+n : off+n]
	adviseHugePages(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n*size))
	return s
}

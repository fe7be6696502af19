package bench

import "golang.org/x/sys/unix"

// adviseHugePages asks the kernel to back b with transparent huge pages.
// It is advice only: if the kernel declines, b keeps its 4 KiB pages and
// everything works the same, a little slower.
func adviseHugePages(b []byte) { _ = unix.Madvise(b, unix.MADV_HUGEPAGE) }

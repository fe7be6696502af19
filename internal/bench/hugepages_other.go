//go:build !linux

package bench

// adviseHugePages does nothing where there is no MADV_HUGEPAGE.
func adviseHugePages([]byte) {}

//go:build !darwin

package execmem

// readCTR returns CTR_EL0 (ctr_arm64.s).
func readCTR() uint64

// cacheLines returns the smallest data and instruction cache line sizes
// in bytes, from CTR_EL0: DminLine (bits 19:16) and IminLine (bits 3:0)
// are log2 of the line size in 4-byte words. Read per flush: one MRS,
// and never stale.
func cacheLines() (dline, iline uintptr) {
	ctr := readCTR()
	return 4 << (ctr >> 16 & 15), 4 << (ctr & 15)
}
